"""The Price, Compare and Sensitivity pages with Flask's test client: the figures a page shows
are the API's for the same request, rounded as displayed (costmodel.render.display); a bad field is
marked beside it with the API's message; the downloads are the API's JSON and a workbook that
holds what is on screen; no page names another host.

Every expected figure comes from the API's answer to the same request (the page and the API
share the application layer; this checks the page renders what it computed, for the right
scenario), plus hand arithmetic where the numbers are simple: price = cost / (1 - margin).
"""
from __future__ import annotations

import html
import io
import json
import re
import shlex
from urllib.parse import urlencode

import openpyxl
import pytest

from costmodel.model.steps import MODEL
from costmodel.render import display
from costmodel.web.pages import COMPARE_ROWS, EFFICIENCY, HEADLINE, fixture_scenarios
from costmodel.web.scenario_form import scenario_form

H100 = "fixture:curve-gpt-oss-120b-h100"
B200 = "fixture:curve-gpt-oss-120b-b200"
MI300X = "fixture:curve-gpt-oss-120b-mi300x"
H100_CURVE = "curve:h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
# fixtures/curves/illustrative-gpt-oss-120b.csv: each frontier's best interactivity
BEST = {"h100": 180.0, "b200": 320.0, "mi300x": 150.0}

FORMS = {
    "default": {},
    "curve-at-100": {"accelerator": "h100", "system": "", "point": H100_CURVE,
                     "interactivity": "100", "electricity_price": "8 cent/kWh",
                     "boundary": "node", "utilisation": "60", "margin": "40"},
    "rent": {"accelerator": "gb300", "point": "deepseek-r1/gb300/peak", "financing": "rent",
             "rate": "rental@2026-09", "boundary": "rack"},
}




def figure_html(page: str, name: str) -> str:
    """The text of the element marked ``data-figure="name"`` (a card or a table row)."""
    m = re.search(rf'<(\w+)[^>]*data-figure="{name}"[^>]*>(.*?)</\1>', page, re.S)
    assert m, f"no figure {name} on the page"
    return html.unescape(re.sub(r"<[^>]+>", " ", m.group(2)))


def shown(q: dict, name: str) -> str:
    """The API's quantity as the page rounds it."""
    return display.format_quantity(q["value"], q["unit"], name)


def api_value(answer: dict, name: str) -> dict:
    return answer["steps"][name]


def ratio(answer: dict, name: str) -> list:
    """A comparison's ratios of step ``name`` (nested by group like the results)."""
    step = MODEL.steps[name]
    ratios = answer["ratios"]
    return ratios[step.group][step.member] if step.group else ratios[name]


def page_text(resp) -> str:
    return resp.get_data(as_text=True)


def api_price(web, form) -> dict:
    resp = web.post("/api/v1/price", json=form.price_request())
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


@pytest.mark.parametrize("case", list(FORMS))
def test_price_page_shows_the_apis_figures(web, case):
    form = scenario_form(FORMS[case])
    assert form.valid, form.errors
    resp = web.get("/?" + urlencode(FORMS[case]))
    assert resp.status_code == 200
    page = page_text(resp)
    answer = api_price(web, form)
    for name in (*HEADLINE, "cost_per_mtok_energy", "cost_per_mtok_capex",
                 "cost_per_mtok_opex", *EFFICIENCY):
        expected = shown(api_value(answer, name), name)
        if name == "embodied_per_mtok" and api_value(answer, name)["value"] is None:
            expected = display.NOT_STATED  # no product carbon footprint: not a dash, not 0
        assert expected in figure_html(page, name), (name, expected)
    # the answer comes first: the headline card precedes the breakdown and the form
    assert page.index('data-figure="price_per_mtok_total"') < page.index("What the cost is")
    assert page.index("What the cost is") < page.index('id="f-accelerator"')
    # price = cost / (1 - gross margin)
    margin = {"default": 0.5, "curve-at-100": 0.4, "rent": 0.5}[case]
    cost = api_value(answer, "cost_per_mtok_total")["value"]
    assert api_value(answer, "price_per_mtok_total")["value"] == pytest.approx(
        cost / (1 - margin))


def test_price_page_default_figures(web):
    # the default form is the engine's defaults (as the API's example and a two-line scenario
    # file): GB300 at DeepSeek R1's published peak, 11,781 token/s/kW x 1,400 W = 16,493
    # token/s per GPU, at the chip boundary and 100 % utilisation; price = cost / (1 - 0.5)
    page = page_text(web.get("/"))
    assert "16,493 token/s" in figure_html(page, "throughput")
    assert "0.0411 USD/Mtok" in figure_html(page, "cost_per_mtok_total")
    assert "0.0821 USD/Mtok" in figure_html(page, "price_per_mtok_total")
    # ... and says so beside the figure
    assumed = re.search(r'data-testid="assumed">([^<]*)<', page)[1]
    assert assumed.startswith("At the engine&#39;s defaults: utilisation 100.0%; power at the "
                              "chip boundary, rated basis; electricity 0.0871 USD/kWh;")


# ---- per request ------------------------------------------------------------------------------

KIMI_CURVE = "curve:mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg"


# the sample system priced by hand below, every input named (whatever the form's defaults)
GB300_PEAK = {"accelerator": "gb300", "system": "gb300-nvl72", "point": "deepseek-r1/gb300/peak",
              "electricity_kind": "flat", "electricity": "eia-2026-05-us-industrial",
              "boundary": "facility", "basis": "rated", "utilisation": "70", "financing": "own",
              "life": "5", "cost_of_capital": "10", "salvage": "10", "margin": "50"}


@pytest.mark.parametrize("values,isl,osl", [
    (GB300_PEAK, 8192, 1024),  # DeepSeek R1 at GB300's published peak: 8k in, 1k out
    ({"accelerator": "mi355x", "system": "", "point": KIMI_CURVE}, 1024, 1024),
])
def test_price_and_cost_per_request_beside_the_per_million_figures(web, values, isl, osl):
    page = page_text(web.get("/?" + urlencode(values)))
    answer = api_price(web, scenario_form(values))
    price = api_value(answer, "price_per_mtok_total")["value"]  # [USD/Mtok]
    cost = api_value(answer, "cost_per_mtok_total")["value"]
    tokens = isl + osl  # a request's tokens: the workload's input + output lengths
    # by hand: a request is `tokens` of the million tokens the per-Mtok figures divide by
    by_hand = {"price_per_request": price * tokens / 1e6,
               "cost_per_request": cost * tokens / 1e6}
    for name, value in by_hand.items():
        assert api_value(answer, name)["value"] == pytest.approx(value, rel=1e-12)
        assert figure_html(page, name).split()[-2:] == \
            display.format_quantity(value, "USD", name).split(), name
    assert api_value(answer, "tokens_per_request")["value"] == tokens
    denominator = " ".join(html.unescape(re.search(
        r'data-testid="per-request-denominator">(.*?)</p>', page, re.S).group(1)).split())
    assert f"{isl:,} input + {osl:,} output tokens = {tokens:,} tokens" in denominator
    assert f"per million tokens \u00d7 {tokens:,} \u00f7 1,000,000" in denominator
    # beside the per-million figures: after the answer's cards, before the breakdown
    assert page.index('data-figure="price_per_mtok_output"') < \
        page.index('data-figure="price_per_request"') < page.index("What the cost is")


def test_the_price_per_request_by_hand(web):
    # 0.1354 USD/Mtok x 9,216 tokens / 1e6 = 0.001248 USD; the cost is half (50 % margin)
    page = page_text(web.get("/?" + urlencode(GB300_PEAK)))
    assert "0.001248 USD" in figure_html(page, "price_per_request")
    assert "0.000624 USD" in figure_html(page, "cost_per_request")


def test_per_request_of_output_tokens_divides_by_the_output_length():
    from costmodel import app
    from costmodel.web.pages import per_request_view
    spec = app.ScenarioSpec(app.InlineScenario(scenario_form({}).mapping),
                            app.overrides_from_text(['operating_point.token_kind="output"']))
    r = app.price(app.LocalContext(), spec).result
    view = per_request_view(r)
    assert view["tokens"] == 1024  # the OSL: the price per million counts output tokens
    assert view["price"] == pytest.approx(r.value("price_per_mtok_total") * 1024 / 1e6)
    assert view["words"].startswith("1,024 output tokens (") and "8,192 input" in view["words"]


def test_typed_price_in_cents_equals_usd(web):
    cents = page_text(web.get("/?" + urlencode({"electricity_price": "8 cent/kWh"})))
    usd = page_text(web.get("/?" + urlencode({"electricity_price": "0.08"})))
    energy = figure_html(cents, "cost_per_mtok_energy")
    assert energy == figure_html(usd, "cost_per_mtok_energy")
    default = figure_html(page_text(web.get("/")), "cost_per_mtok_energy")
    assert energy != default  # 8 cents, not the catalog's 8.71


def test_input_change_moves_the_figure(web):
    low = figure_html(page_text(web.get("/?utilisation=50")), "price_per_mtok_total")
    high = figure_html(page_text(web.get("/?utilisation=90")), "price_per_mtok_total")
    value = [float(re.search(r"[\d.]+", t).group()) for t in (low, high)]
    assert value[0] > value[1]  # fewer hours at the point: dearer tokens


def _marked(page: str, field: str) -> str | None:
    """The message marked beside ``field`` (its ``field-error``), or None."""
    m = re.search(rf'<p class="field-error" id="{field}-error"[^>]*>(.*?)</p>', page, re.S)
    return html.unescape(m.group(1)) if m else None


@pytest.mark.parametrize("field,typed,api_path", [
    ("electricity_price", "8 kg", "scenario.electricity.price"),
    ("accelerator_price", "-5", "scenario.accelerator.price"),
])
def test_bad_value_marked_at_its_field_with_the_apis_message(web, field, typed, api_path):
    # a field typed in the engine's own unit: the API's words as they are
    form = scenario_form({field: typed})
    resp = web.post("/api/v1/price", json=form.price_request())
    assert resp.status_code == 422
    message = next(e["message"] for e in resp.get_json()["errors"] if e["path"] == api_path)
    page_resp = web.get("/?" + urlencode({field: typed}))
    assert page_resp.status_code == 422
    page = page_text(page_resp)
    assert _marked(page, field) == message
    assert f'id="f-{field}"' in page and 'aria-invalid="true"' in page
    assert "data-figure" not in page  # nothing computed from an invalid form


# fields typed in percent or years: the API's check, its bounds and the value said in the
# unit typed (the engine keeps shares as fractions: the API says "at most 1, got 1.7")
IN_TYPED_UNIT = [
    ("utilisation", "170", "scenario.utilisation", "must be at most 1, got 1.7",
     "must be at most 100 %, got 170 %"),
    ("utilisation", "170 %", "scenario.utilisation", "must be at most 1, got 1.7",
     "must be at most 100 %, got 170 %"),
    ("utilisation", "0.00001", "scenario.utilisation", "must be at least 1e-06, got 1e-07",
     "must be at least 0.0001 %, got 0.00001 %"),
    ("utilisation", "0", "scenario.utilisation", "must be greater than zero, got 0 percent",
     "must be greater than zero, got 0 %"),
    ("utilisation", "5 W", "scenario.utilisation",
     "plain number expected (e.g. 'dimensionless'), got watt",
     "a percentage expected (e.g. 70 or 70 %), got watt"),
    ("cost_of_capital", "300", "scenario.financing.cost_of_capital",
     "must be at most 1, got 3", "must be at most 100 %, got 300 %"),
    ("cost_of_capital", "-1", "scenario.financing.cost_of_capital",
     "must not be negative, got -1 percent", "must not be negative, got -1 %"),
    ("salvage", "150", "scenario.financing.salvage", "must be at most 1, got 1.5",
     "must be at most 100 %, got 150 %"),
    ("margin", "100", "scenario.pricing.gross_margin", "must be below 1, got 1",
     "must be below 100 %, got 100 %"),
    ("margin", "120 %", "scenario.pricing.gross_margin", "must be below 1, got 1.2",
     "must be below 100 %, got 120 %"),
    ("life", "60", "scenario.financing.life", "must be at most 50, got 60",
     "must be at most 50 years, got 60 years"),
    ("life", "700 month", "scenario.financing.life", "must be at most 50, got 58.3333",
     "must be at most 50 years, got 700 month (58.33 years)"),
    ("life", "-3", "scenario.financing.life", "must not be negative, got -3 year",
     "must not be negative, got -3 years"),
]


@pytest.mark.parametrize("field,typed,api_path,api_says,page_says", IN_TYPED_UNIT,
                         ids=[f"{c[0]}={c[1]}" for c in IN_TYPED_UNIT])
def test_a_bound_is_said_in_the_unit_the_field_is_typed_in(web, field, typed, api_path,
                                                            api_says, page_says):
    form = scenario_form({field: typed})
    resp = web.post("/api/v1/price", json=form.price_request())
    assert resp.status_code == 422
    # the same check as the API's (the same value refused, for the same reason) ...
    assert [e["message"] for e in resp.get_json()["errors"] if e["path"] == api_path] == \
        [api_says]
    # ... said in the field's unit
    assert form.errors == {field: page_says}
    page_resp = web.get("/?" + urlencode({field: typed}))
    assert page_resp.status_code == 422
    page = page_text(page_resp)
    assert _marked(page, field) == page_says
    assert re.search(rf'id="f-{field}"[^>]*aria-invalid="true"', page)
    # the summary above the form says the same
    assert f'<a href="#f-{field}">' in page and html.escape(page_says) in page


def test_an_application_error_beside_a_percent_field_is_said_in_percent():
    # errors raised after the form's own checks (the application layer's, or the API's
    # words on the Saved page) are put beside their field in its unit too
    # (a bound's kind carries its numbers: the words alone are never read)
    from costmodel.model.errors import Bound, InputError
    form = scenario_form({"utilisation": "170", "salvage": "", "margin": "120 %"})
    form.errors.clear()
    form.add_errors(InputError([("scenario.utilisation", Bound("at most", 1, 1.7)),
                                ("scenario.pricing.gross_margin", Bound("below", 1, 1.2)),
                                ("scenario.financing.salvage", Bound("at most", 1, 1.5)),
                                ("scenario.accelerator", "unknown accelerator 'x'")]),
                    prefix="scenario.")
    words = scenario_form({"utilisation": "170"})
    words.errors.clear()
    words.add_errors(InputError([("scenario.utilisation", "must be at most 1, got 1.7")]),
                     prefix="scenario.")
    # words without their kind are shown as they are, never read
    assert words.errors == {"utilisation": "must be at most 1, got 1.7"}
    assert form.errors == {
        "utilisation": "must be at most 100 %, got 170 %",
        "margin": "must be below 100 %, got 120 %",
        "salvage": "must be at most 1, got 1.5",  # not typed: nothing to restate it in
        "accelerator": "unknown accelerator 'x'"}


@pytest.mark.parametrize("typed,says", [("150", "must be at most 100 %, got 150 %"),
                                        ("150 %", "must be at most 100 %, got 150 %"),
                                        ("-5", "must not be negative, got -5 %")])
def test_the_flexible_share_is_answered_in_percent(web, typed, says):
    query = urlencode({"electricity_kind": "tariff", "tariff": "illustrative-tou-peak-16-21",
                       "flexible_share": typed})
    resp = web.get("/?" + query)
    assert resp.status_code == 422
    assert _marked(page_text(resp), "flexible_share") == says


def test_unreachable_interactivity_on_the_price_page(web):
    page = page_text(web.get("/?" + urlencode({"accelerator": "h100", "point": H100_CURVE,
                                                "interactivity": "1000"})))
    marked = re.search(r'id="interactivity-error"[^>]*>(.*?)</p>', page, re.S)
    assert marked and "the frontier's best is 180 token/s/user" in html.unescape(marked.group(1))


def compare_query(systems, **extra) -> str:
    return urlencode([("sys", s) for s in systems] + list(extra.items()))


def test_compare_matched_shows_the_apis_numbers(web):
    systems = [H100, B200, MI300X]
    resp = web.get("/compare?" + compare_query(systems, at="matched"))
    assert resp.status_code == 200
    page = page_text(resp)
    body = {"scenarios": [{"scenario": fixture_scenarios()[s][1]} for s in systems],
            "matched": True}
    api = web.post("/api/v1/compare", json=body)
    assert api.status_code == 200, api.get_json()
    answer = api.get_json()
    for name in COMPARE_ROWS:
        row = figure_html(page, name).split()
        for i, scenario in enumerate(answer["scenarios"]):
            q = scenario["steps"][name]
            assert display.format_number(q["value"], q["unit"], name) in row, (name, i)
            if i:
                assert display.format_ratio(ratio(answer, name)[i]) in row, (name, i)
    # matched: every system read at the slowest system's best (mi300x, 150 token/s/user)
    inter = figure_html(page, "interactivity").split()
    assert inter.count("150") == 3
    assert "Side by side at 150 token/s/user" in page
    assert '<svg class="chart frontier"' in page


def test_compare_default_is_the_three_curves_matched(web):
    page = page_text(web.get("/compare"))
    for hw in ("h100", "b200", "mi300x"):
        assert f"gpt-oss-120b {hw} (illustrative curve)" in page
    assert 'value="matched" checked' in page


def test_compare_published_deepseek_points(web):
    systems = ["fixture:published/deepseek-r1_gb300_peak",
               "fixture:published/deepseek-r1_jalapeno_peak"]
    page = page_text(web.get("/compare?" + compare_query(systems, at="own")))
    body = {"scenarios": [{"scenario": fixture_scenarios()[s][1]} for s in systems]}
    answer = web.post("/api/v1/compare", json=body).get_json()
    shown_ratio = display.format_ratio(ratio(answer, "cost_per_mtok_total")[1])
    assert shown_ratio in figure_html(page, "cost_per_mtok_total")


def test_unreachable_target_explained(web):
    resp = web.get("/compare?" + compare_query([H100, B200], at="named", interactivity="500"))
    page = " ".join(html.unescape(page_text(resp)).split())
    assert "That interactivity is out of reach" in page
    assert "its best reachable interactivity is 180 token/s/user" in page
    assert "its best reachable interactivity is 320 token/s/user" in page
    assert "at=named&interactivity=180" in page  # the offer: compare at what all reach
    api = web.post("/api/v1/compare", json={
        "scenarios": [{"scenario": fixture_scenarios()[s][1]} for s in (H100, B200)],
        "at_interactivity": "500 token/s/user"})
    assert api.status_code == 422 and api.get_json()["type"].endswith("unreachable")


def test_compare_needs_two_systems(web):
    resp = web.get("/compare?" + compare_query([H100], at="own"))
    assert resp.status_code == 422
    assert "pick 2 to 6 systems" in page_text(resp)


def test_compare_bad_interactivity_marked(web):
    resp = web.get("/compare?" + compare_query([H100, B200], at="named", interactivity="5 W"))
    page = html.unescape(page_text(resp))
    api = web.post("/api/v1/compare", json={
        "scenarios": [{"scenario": fixture_scenarios()[s][1]} for s in (H100, B200)],
        "at_interactivity": "5 W"}).get_json()
    message = api["errors"][0]["message"]
    assert re.search(r'id="interactivity-error"[^>]*>' + re.escape(message), page)


# ---- downloads ---------------------------------------------------------------------------------

def defined_value(wb, name: str):
    sheet, cell = next(iter(wb.defined_names[name].destinations))
    return wb[sheet][cell.replace("$", "")].value


def test_price_workbook_holds_the_scenario(web):
    query = urlencode(FORMS["curve-at-100"])
    resp = web.get("/price.xlsx?" + query)
    assert resp.status_code == 200
    assert resp.mimetype.endswith("spreadsheetml.sheet")
    assert "attachment" in resp.headers["Content-Disposition"]
    wb = openpyxl.load_workbook(io.BytesIO(resp.data))
    assert defined_value(wb, "electricity_price") == pytest.approx(0.08)  # 8 cent/kWh
    assert defined_value(wb, "utilisation") == pytest.approx(0.6)
    assert defined_value(wb, "pricing_gross_margin") == pytest.approx(0.4)
    values = [c for row in wb["Inputs"].iter_rows(values_only=True) for c in row]
    assert "h100, h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg at 100 token/s/user" in values


def test_price_json_is_the_apis(web):
    form = scenario_form(FORMS["rent"])
    got = web.get("/price.json?" + urlencode(FORMS["rent"]))
    assert got.status_code == 200 and got.mimetype == "application/json"
    assert got.get_json() == api_price(web, form)


def test_curl_line_is_the_api_call(web):
    page = html.unescape(page_text(web.get("/?" + urlencode(FORMS["curve-at-100"]))))
    line = re.search(r'<pre id="curl-line"[^>]*>(.*?)</pre>', page, re.S).group(1)
    argv = shlex.split(line)
    assert argv[:4] == ["curl", "-X", "POST", "http://localhost/api/v1/price"]
    body = json.loads(argv[argv.index("-d") + 1])
    assert body == scenario_form(FORMS["curve-at-100"]).price_request()


def test_compare_downloads(web):
    query = compare_query([H100, B200, MI300X], at="matched")
    body = {"scenarios": [{"scenario": fixture_scenarios()[s][1]} for s in
                          (H100, B200, MI300X)], "matched": True}
    assert web.get("/compare.json?" + query).get_json() == \
        web.post("/api/v1/compare", json=body).get_json()
    wb = openpyxl.load_workbook(io.BytesIO(web.get("/compare.xlsx?" + query).data))
    text = {str(c) for ws in wb for row in ws.iter_rows(values_only=True) for c in row if c}
    for hw in ("h100", "b200", "mi300x"):
        assert f"gpt-oss-120b {hw} (illustrative curve)" in text


def test_sensitivity_page_and_downloads(web):
    query = urlencode({"sa_draws": "2000"})
    resp = web.get("/sensitivity?" + query)
    assert resp.status_code == 200
    page = html.unescape(page_text(resp))
    form = scenario_form({})
    tornado = web.post("/api/v1/sensitivity/tornado", json={
        "scenario": form.price_request(), "output": "cost_per_mtok_total",
        "swing": 0.2}).get_json()
    assert shown(tornado["base"], "cost_per_mtok_total") in page
    assert '<svg class="chart tornado"' in page and '<svg class="chart histogram"' in page
    mc_json = web.get("/sensitivity.json?" + query + "&analysis=montecarlo").get_json()
    api_mc = web.post("/api/v1/sensitivity/montecarlo", json={
        "scenario": form.price_request(), "output": "cost_per_mtok_total",
        "distributions": {k: v["text"] for k, v in mc_json["distributions"].items()},
        "draws": 2000, "seed": 1, "bins": 40, "truncate": True}).get_json()
    assert api_mc["p50"] == mc_json["p50"]
    assert shown(api_mc["p50"], "cost_per_mtok_total") in page
    assert web.get("/sensitivity.json?" + query).get_json() == tornado
    wb = openpyxl.load_workbook(io.BytesIO(web.get("/sensitivity.xlsx?" + query).data))
    assert "Sensitivity" in wb.sheetnames


def test_sensitivity_bounds_draws(web):
    resp = web.get("/sensitivity?sa_draws=5000000")
    assert resp.status_code == 422
    assert "must be a whole number from 1 to 200,000" in page_text(resp)


# ---- feel --------------------------------------------------------------------------------------

PAGES = ["/", "/compare", "/sensitivity?sa_draws=1000",
         "/?" + urlencode(FORMS["curve-at-100"]), "/?electricity_price=8+kg"]


@pytest.mark.parametrize("path", PAGES)
def test_no_external_url(web, path):
    page = page_text(web.get(path))
    without_curl = re.sub(r'<pre id="curl-line".*?</pre>', "", page, flags=re.S)
    assert not re.findall(r"https?://", without_curl)
    for src in re.findall(r'(?:src|href)="([^"]+)"', page):
        assert src.startswith(("/", "#", "?")), src
    css = re.search(r'href="(/assets/[^"]+\.css)"', page).group(1)
    assert web.get(css).status_code == 200


@pytest.mark.parametrize("path", PAGES)
def test_every_input_has_a_label(web, path):
    page = page_text(web.get(path))
    ids = re.findall(r'<(?:input|select)[^>]*\bid="([^"]+)"', page)
    assert ids
    for i in ids:
        assert f'for="{i}"' in page, i
    for tag in re.findall(r"<input[^>]*>", page):
        assert 'id="' in tag or 'type="radio"' in tag or 'type="hidden"' in tag, tag


def test_an_unexpected_failure_is_a_plain_page(web, monkeypatch):
    import costmodel.app

    def broken(*a, **k):
        raise RuntimeError("secret internals")
    monkeypatch.setattr(costmodel.app, "price", broken)
    resp = web.get("/")
    assert resp.status_code == 500
    page = page_text(resp)
    assert "Something went wrong" in page
    assert "secret internals" not in page and "Traceback" not in page


def test_unknown_address_is_a_page_for_a_browser_and_a_problem_for_the_api(web):
    page = web.get("/no-such-page", headers={"Accept": "text/html"})
    assert page.status_code == 404 and page.mimetype == "text/html"
    assert "There is no page or saved scenario at this address." in page_text(page)
    api = web.get("/api/v1/no-such-thing", headers={"Accept": "text/html"})
    assert api.status_code == 404 and api.mimetype == "application/problem+json"
    plain = web.get("/no-such-page")  # a client that does not ask for HTML
    assert plain.status_code == 404 and plain.mimetype == "application/problem+json"


def test_a_curve_point_shows_its_frontier(web):
    page = page_text(web.get("/?" + urlencode(FORMS["curve-at-100"])))
    assert '<svg class="chart frontier"' in page
    assert "100 token/s/user" in html.unescape(page)


def test_unreachable_shows_the_frontiers_ending_before_the_target(web):
    page = page_text(web.get("/compare?" + compare_query(
        ["fixture:curve-gpt-oss-120b-h100", "fixture:curve-gpt-oss-120b-b200"],
        at="named", interactivity="500")))
    assert '<svg class="chart frontier"' in page and ">target<" in page
