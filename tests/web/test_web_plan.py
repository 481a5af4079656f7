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


def _scenario_body(web) -> dict:
    """The body of POST /api/v1/price the Price page shows for QUERY (its curl line)."""
    page = web.get(f"/?{QUERY}").text
    m = re.search(r"-d '(.*?)'</pre>", html.unescape(page), re.S)
    assert m
    import json
    return json.loads(m.group(1))


def test_a_power_budget_rounds_down(web):
    r = web.get(f"/plan?{QUERY}&pl_budget=10%20MW")
    assert r.status_code == 200
    j = web.post("/api/v1/plan", json={**_scenario_body(web), "power_budget": "10 MW"}
                 ).get_json()
    power = j["disclosure"]["plan"]["power_per_accelerator"]["value"]
    assert j["accelerators"] == math.floor(10e6 / power)
    assert figure(r.text, "accelerators") == f"{j['accelerators']:,}"


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
