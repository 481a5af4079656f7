"""The Plan page (Flask test client): the fleet for the Price page's scenario, as
``POST /api/v1/plan`` answers it, rounded as displayed; bad fields marked; the one-page
summary and the JSON downloaded."""
from __future__ import annotations

import html
import math
import re
from io import BytesIO
from urllib.parse import urlencode

import pytest

from costmodel.render import display

QUERY = "accelerator=gb300&point=deepseek-r1/gb300/peak"




def figure(page: str, name: str) -> str:
    m = re.search(rf'<(\w+)[^>]*data-figure="{name}"[^>]*>(.*?)</\1>', page, re.S)
    assert m, f"no figure {name} on the page"
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", m.group(2))).split())


def test_the_fleet_for_a_demand_is_the_apis(web):
    r = web.get(f"/plan?{QUERY}&pl_demand=2.5e6&pl_availability=0.99")
    assert r.status_code == 200, r.text[:2000]
    api = web.post("/api/v1/plan", json={**_scenario_body(web),
                                         "demand": "2.5e6 token/s", "availability": 0.99})
    assert api.status_code == 200, api.get_json()
    j = api.get_json()
    assert figure(r.text, "accelerators") == f"{j['accelerators']:,}"
    assert figure(r.text, "nodes") == f"{j['nodes']:,}"
    assert figure(r.text, "cost_per_month") == display.format_quantity(
        j["cost_per_month"]["value"], "USD")
    # hand check: ceil(demand / (throughput x utilisation x availability))
    a = j["disclosure"]["plan"]
    t = a["throughput_per_accelerator"]["value"]
    assert j["accelerators"] == math.ceil(2.5e6 / (t * a["utilisation"] * 0.99))


def _scenario_body(web, more: str = "") -> dict:
    """The body of POST /api/v1/price the Price page shows for QUERY (its curl line)."""
    page = web.get(f"/?{QUERY}{more}").text
    m = re.search(r"-d '(.*?)'</pre>", html.unescape(page), re.S)
    assert m
    import json
    return json.loads(m.group(1))


def test_a_power_budget_rounds_down(web):
    r = web.get(f"/plan?{QUERY}&pl_budget=10%20MW")
    assert r.status_code == 200
    j = web.post("/api/v1/plan", json={**_scenario_body(web), "power_budget": "10 MW"}
                 ).get_json()
    # whole nodes: floor(budget / (power per accelerator x accelerators per node))
    a = j["disclosure"]["plan"]
    power, per_node = a["power_per_accelerator"]["value"], a["accelerators_per_node"]
    assert j["nodes"] == math.floor(10e6 / (power * per_node))
    assert j["accelerators"] == j["nodes"] * per_node
    assert j["power"]["value"] <= 10e6
    assert figure(r.text, "accelerators") == f"{j['accelerators']:,}"
    assert figure(r.text, "deployments") == f"{j['nodes']:,}"


@pytest.mark.parametrize("query, field", [
    ("pl_demand=5%20W", "pl_demand"),
    ("pl_demand=1e6&pl_budget=1%20MW", "pl_budget"),
    ("pl_budget=1%20MW&pl_availability=0.5", "pl_availability"),
    ("pl_demand=1e6&pl_availability=1.5", "pl_availability"),
])
def test_a_bad_field_is_marked_beside_it(web, query, field):
    r = web.get(f"/plan?{QUERY}&{query}")
    assert r.status_code == 422
    assert f'id="f-{field}"' in r.text
    assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', r.text), field


def test_the_summary_and_the_json_download(web):
    from pypdf import PdfReader
    q = f"{QUERY}&pl_demand=2.5e6"
    pdf = web.get(f"/plan.pdf?{q}")
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
    reader = PdfReader(BytesIO(pdf.data))
    j = web.get(f"/plan.json?{q}").get_json()
    assert len(reader.pages) == 1
    text = " ".join(reader.pages[0].extract_text().split())
    assert f"Accelerators {j['accelerators']:,}" in text


@pytest.mark.parametrize("typed, says", [
    ("150 %", "must be greater than zero and at most 100 %, got 150 %"),
    ("0 %", "must be greater than zero, got 0 %"),
    ("1.5", "must be greater than zero and at most 1, got 1.5"),  # typed as a fraction
])
def test_the_availability_is_answered_in_the_unit_typed(web, typed, says):
    r = web.get(f"/plan?{QUERY}&" + urlencode({"pl_demand": "1e6", "pl_availability": typed}))
    assert r.status_code == 422
    m = re.search(r'id="pl_availability-error"[^>]*>(.*?)</p>', r.text, re.S)
    assert m and html.unescape(m.group(1)) == says


# ---- the workbook ----------------------------------------------------------------------------

def _plan_workbook(web, query: str):
    """(the page's text, the plan's JSON, the downloaded workbook's bytes)."""
    import openpyxl
    page = web.get(f"/plan?{query}")
    assert page.status_code == 200
    link = re.search(r'href="(/plan\.xlsx\?[^"]+)"', page.text)
    assert link, "no workbook on the Plan page"
    book = web.get(html.unescape(link.group(1)))
    assert book.status_code == 200
    assert book.mimetype == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    assert re.fullmatch(r'attachment; filename="plan_[\w.,-]+\.xlsx"',
                        book.headers["Content-Disposition"])
    openpyxl.load_workbook(BytesIO(book.data))  # a valid workbook
    return page.text, web.get(f"/plan.json?{query}").get_json(), book.data


@pytest.mark.parametrize("sized", ["pl_demand=2.5e6&pl_availability=0.99",
                                   "pl_budget=10%20MW"])
def test_the_plan_workbook_holds_the_scenario_as_the_plan_prices_it(web, sized):
    import openpyxl

    from costmodel.app import reprice
    from costmodel.render.workbook.names import named_cells
    page, j, data = _plan_workbook(web, f"{QUERY}&{sized}")
    wb = openpyxl.load_workbook(BytesIO(data))
    # its inputs are the plan's: the utilisation priced (the fleet's, for a demand)
    a = j["disclosure"]["plan"]
    (u,) = named_cells(wb, "utilisation")
    assert u.value == pytest.approx(a["resulting_utilisation"], rel=1e-12)
    if "pl_demand" in sized:
        assert a["resulting_utilisation"] < a["utilisation"]  # rounded up: less busy
    # its figures are the page's: the workbook's inputs priced again give the page's cost
    # per million tokens, and the fleet's totals are the accelerators x its figures
    (result,) = reprice(data).results
    assert display.format_quantity(result.values["cost_per_mtok_total"], "USD/Mtok",
                                   "cost_per_mtok_total") == figure(page, "cost_per_mtok")
    n = j["accelerators"]
    assert n * result.values["cost_per_hour"] * 730 == pytest.approx(
        j["cost_per_month"]["value"], rel=1e-12)
    assert n * result.values["power_per_accelerator"] == pytest.approx(
        j["power"]["value"], rel=1e-12)
    # the cover names the fleet; the page says what the workbook holds and what it does not
    cover = " ".join(str(c) for row in wb["Cover"].iter_rows(values_only=True) for c in row
                     if c)
    assert f"Plan: {n:,} accelerators for " in cover
    pp = j["power_plan"]
    if pp is not None:  # a budget's whole nodes and the same per GW, as the page gives them
        assert (f"{pp['deployments']:,} whole nodes planned at " in cover and
                f"{pp['per_gw']['accelerators']:,} accelerators per GW" in cover)
        assert figure(page, "deployments") == f"{pp['deployments']:,}"
        assert figure(page, "accelerators_per_gw") == f"{pp['per_gw']['accelerators']:,}"
    note = " ".join(html.unescape(re.search(
        r'data-testid="plan-xlsx-note">(.*?)</p>', page, re.S).group(1)).split())
    assert "It has no plan sheet" in note and f"({n:,} \u00d7 the per-accelerator" in note


@pytest.mark.libreoffice
def test_the_plan_workbook_recalculated_shows_the_pages_figures(web, tmp_path):
    # the workbook's live formulas, recalculated by a spreadsheet (LibreOffice headless),
    # give the page's cost per million tokens and cost per hour
    import openpyxl

    from costmodel.render.workbook.names import named_cells
    from costmodel.render.workbook.recalc import recalculate, soffice
    if soffice() is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    page, j, data = _plan_workbook(web, f"{QUERY}&pl_demand=2.5e6")
    src = tmp_path / "plan.xlsx"
    src.write_bytes(data)
    wb = openpyxl.load_workbook(recalculate(src, tmp_path / "out"), data_only=True)
    (cost,) = named_cells(wb, "cost_per_mtok_total")
    assert cost.value == pytest.approx(j["cost_per_mtok"]["total"]["value"], rel=1e-9)
    assert display.format_quantity(cost.value, "USD/Mtok", "cost_per_mtok_total") == \
        figure(page, "cost_per_mtok")
    (per_hour,) = named_cells(wb, "cost_per_hour")
    assert j["accelerators"] * per_hour.value == pytest.approx(
        j["cost_per_hour"]["value"], rel=1e-9)


# ---- power planning: whole deployments with a headroom ----------------------------------------

PLANNED = "pl_budget=1%20GW&pl_headroom=10%20%25&pl_deployment=rack&boundary=facility"


def test_whole_racks_with_headroom_are_the_apis(web):
    r = web.get(f"/plan?{QUERY}&{PLANNED}")
    assert r.status_code == 200, r.text[:2000]
    body = {**_scenario_body(web, "&boundary=facility"), "power_budget": "1 GW",
            "headroom": 0.1, "deployment": "rack"}
    api = web.post("/api/v1/plan", json=body)
    assert api.status_code == 200, api.get_json()
    j = api.get_json()
    pp = j["power_plan"]
    # hand check: floor(1 GW / (power per accelerator x 32 in a rack x 1.1)), per GW alike
    a = j["disclosure"]["plan"]
    k = a["accelerators_per_node"] * a["nodes_per_rack"]
    racks = math.floor(1e9 / (a["power_per_accelerator"]["value"] * k * 1.1))
    assert (pp["deployments"], pp["accelerators"]) == (racks, racks * k)
    assert pp["per_gw"] == {"deployments": racks, "accelerators": racks * k}
    assert (j["racks"], j["accelerators"]) == (racks, racks * k)
    for name, value in (("deployments", pp["deployments"]),
                        ("deployment_accelerators", pp["accelerators"]),
                        ("deployments_per_gw", pp["per_gw"]["deployments"]),
                        ("accelerators_per_gw", pp["per_gw"]["accelerators"]),
                        ("accelerators", j["accelerators"]), ("racks", j["racks"])):
        assert figure(r.text, name) == f"{value:,}", name
    for name, key in (("ac_power", "ac"), ("facility_power", "facility"),
                      ("planning_power", "planning")):
        assert figure(r.text, name) == display.format_quantity(
            pp["power_per_deployment"][key]["value"], "W"), name
    divides = " ".join(html.unescape(re.search(
        r'data-testid="power-plan-divides">(.*?)</li>', r.text, re.S).group(1)).split())
    assert divides == pp["divides"]
    # the page's curl line is the same request (10 % as the API's 0.1)
    import json
    curl = json.loads(re.search(r"-d '(.*?)'</pre>", html.unescape(r.text), re.S).group(1))
    assert curl == body
    # the downloads: the JSON is the API's, the PDF gives the same counts
    assert web.get(f"/plan.json?{QUERY}&{PLANNED}").get_json() == j
    from pypdf import PdfReader
    pdf = web.get(f"/plan.pdf?{QUERY}&{PLANNED}")
    text = " ".join(PdfReader(BytesIO(pdf.data)).pages[0].extract_text().split())
    assert f"Whole racks per GW {racks:,} {racks * k:,} accelerators" in text


def test_a_budget_below_one_deployment_says_why_on_the_page(web):
    r = web.get(f"/plan?{QUERY}&pl_budget=1%20kW")
    assert r.status_code == 200
    assert figure(r.text, "deployments") == "0"
    note = re.search(r'data-testid="power-plan-note">(.*?)</p>', r.text, re.S)
    assert note and "it holds no whole node." in html.unescape(note.group(1))


@pytest.mark.parametrize("query, field, says", [
    ("pl_budget=1%20MW&pl_headroom=1", "pl_headroom",
     "must be at least 0 and less than 1, got 1"),
    ("pl_budget=1%20MW&pl_headroom=150%20%25", "pl_headroom",
     "must be at least 0 % and less than 100 %, got 150 %"),
    ("pl_budget=1%20MW&pl_headroom=-5%20%25", "pl_headroom",
     "must be at least 0 % and less than 100 %, got -5 %"),
    ("pl_demand=1e6&pl_headroom=0.1", "pl_headroom", "applies to a power budget only"),
    ("pl_budget=1%20MW&pl_deployment=chassis", "pl_deployment",
     "must be node or rack, got 'chassis'"),
])
def test_a_bad_headroom_or_deployment_is_marked_beside_it(web, query, field, says):
    r = web.get(f"/plan?{QUERY}&{query}")
    assert r.status_code == 422
    assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', r.text), field
    m = re.search(rf'id="{field}-error"[^>]*>(.*?)</p>', r.text, re.S)
    assert m and says in html.unescape(m.group(1))


# ---- a demand too small for one accelerator (issue 38, item 5) --------------------------------

def test_a_demand_too_small_to_price_is_marked_on_the_page_and_every_download(web):
    j = web.post("/api/v1/plan", json={**_scenario_body(web), "demand": "1e6 token/s"}
                 ).get_json()
    t = j["disclosure"]["plan"]["throughput_per_accelerator"]["value"]
    # one accelerator at the least utilisation a scenario is priced at (1e-6 of its hours),
    # said rounded up to 3 digits, so that typing it is enough
    step = 10.0 ** (math.floor(math.log10(t * 1e-6)) - 2)
    least = math.ceil(t * 1e-6 / step) * step
    for path in ("/plan", "/plan.pdf", "/plan.xlsx", "/plan.json"):
        r = web.get(f"{path}?{QUERY}&pl_demand=1e-6")
        assert r.status_code == 422 and r.mimetype == "text/html", path
        assert f"must be at least {least:g}, got 1e-06 (token/s)" in html.unescape(r.text)
    r = web.get(f"/plan.json?{QUERY}&pl_demand={least:g}")
    assert r.status_code == 200 and r.get_json()["accelerators"] == 1
    r = web.get(f"/plan?{QUERY}&pl_demand={least:g}")
    assert r.status_code == 200 and figure(r.text, "accelerators") == "1"
