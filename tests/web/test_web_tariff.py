"""Tariffs and load shapes on the Price page, with Flask's test client: the page prices what
the API prices for the same scenario (the curl line and the JSON carry the tariff and the
load), the chart's table of rates and loads by hour holds numbers derived by hand from
fixtures/catalog/tariffs.toml, the what-if line is the application layer's, and bad input
(a malformed load row, a fraction above 1, an unknown tariff key) is marked beside its field
with nothing priced.
"""
from __future__ import annotations

import html
import json
import re
import shlex
from urllib.parse import urlencode

import pytest

from costmodel import app
from costmodel.render import display
from costmodel.render.report import flexible_line
from costmodel.web.pages import EFFICIENCY, HEADLINE
from costmodel.web.scenario_form import LOAD_PRESETS, parse_load_row, scenario_form

TOU = "illustrative-tou-peak-16-21"
URDB = "urdb-2013-wallingford-ct-primary-northford"
# a night-heavy batch load (the shape of the CLI's example): 0.9 at night, 0.2 in the
# 16:00-21:00 peak
NIGHT = [0.9] * 6 + [0.6] + [0.5] * 9 + [0.2] * 5 + [0.6] + [0.9] * 2
NIGHT_TEXT = ", ".join(f"{v:g}" for v in NIGHT)
WEEKEND = " ".join(["0.4"] * 24)

FORMS = {
    "tou-typed-load": {"electricity_kind": "tariff", "tariff": TOU, "load": "custom",
                       "load_hourly": NIGHT_TEXT, "load_weekend": WEEKEND},
    "tou-preset": {"electricity_kind": "tariff", "tariff": TOU, "load": "daytime-chat"},
    "urdb-no-load": {"electricity_kind": "tariff", "tariff": URDB, "accelerator": "h100",
                     "system": "", "point": "curve:h100/gpt-oss-120b/vllm/fp8/8192x1024/"
                                            "none/agg", "boundary": "node"},
    "flat-with-load": {"load": "night-batch", "electricity_price": "0.08"},
}


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def figure_html(page: str, name: str) -> str:
    m = re.search(rf'<(\w+)[^>]*data-figure="{name}"[^>]*>(.*?)</\1>', page, re.S)
    assert m, f"no figure {name} on the page"
    return text_of(m.group(2))


def hour_row(page: str, hour: int) -> list[tuple[float | None, float]]:
    """(rate, load) per day type of the hourly table's row for ``hour``."""
    m = re.search(rf'<tr data-hour="{hour}">(.*?)</tr>', page, re.S)
    assert m, f"no row for hour {hour}"
    rates = [float(x) if x else None for x in re.findall(r'data-rate="([^"]*)"', m.group(1))]
    loads = [float(x) for x in re.findall(r'data-load="([^"]*)"', m.group(1))]
    return list(zip(rates, loads, strict=True))


def api_price(web, form) -> dict:
    resp = web.post("/api/v1/price", json=form.price_request())
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def get(web, values: dict, **extra):
    return web.get("/?" + urlencode({**values, **extra}))


# ---- the form's scenario ---------------------------------------------------------------------

def test_the_form_sends_the_tariff_and_the_load():
    form = scenario_form(FORMS["tou-typed-load"])
    assert form.valid, form.errors
    assert form.mapping["electricity"] == {"tariff": TOU}
    assert form.mapping["load"] == {"hourly": NIGHT, "weekend": [0.4] * 24}
    assert "utilisation" not in form.mapping  # the shape's mean is the utilisation
    preset = scenario_form(FORMS["tou-preset"]).mapping["load"]
    assert preset == {"hourly": list(LOAD_PRESETS["daytime-chat"].hourly),
                      "weekend": list(LOAD_PRESETS["daytime-chat"].weekend)}
    # a flat price: the tariff picked earlier is not sent
    flat = scenario_form({"tariff": TOU, "electricity_price": "0.08"}).mapping
    assert flat["electricity"] == {"price": "0.08 USD/kWh"} and "load" not in flat
    # typed rows without picking "Custom" price the rows
    typed = scenario_form({"load_hourly": NIGHT_TEXT}).mapping
    assert typed["load"] == {"hourly": NIGHT}


def test_a_load_row_is_read_with_commas_semicolons_or_spaces():
    assert parse_load_row("0.5 " * 24) == [0.5] * 24
    assert parse_load_row(";".join(["1"] * 24)) == [1.0] * 24
    assert parse_load_row(", ".join(["0"] * 12 + ["0.25"] * 12))[12] == 0.25


# ---- the page prices what the API prices -----------------------------------------------------

@pytest.mark.parametrize("case", list(FORMS))
def test_page_figures_are_the_apis(web, case):
    values = FORMS[case]
    form = scenario_form(values)
    resp = get(web, values)
    assert resp.status_code == 200, text_of(resp.get_data(as_text=True))[:2000]
    page = resp.get_data(as_text=True)
    answer = api_price(web, form)
    for name in (*HEADLINE, "cost_per_mtok_energy", *EFFICIENCY):
        q = answer["steps"][name]
        # no product carbon footprint: the API's null is "not stated" on the page, not a dash
        expected = display.NOT_STATED if q["value"] is None and \
            name in display.EMBODIED_FIGURES else display.format_quantity(q["value"],
                                                                          q["unit"], name)
        assert expected in figure_html(page, name), name
    # the curl line and the JSON download are the same request and answer
    line = html.unescape(re.search(r'<pre id="curl-line"[^>]*>(.*?)</pre>', page,
                                   re.S).group(1))
    argv = shlex.split(line)
    assert json.loads(argv[argv.index("-d") + 1]) == form.price_request()
    assert web.get("/price.json?" + urlencode(values)).get_json() == answer
    # the chart: drawn, titled, described, with every hour in the table
    assert '<svg class="chart hourly"' in page
    assert '<title id="hourly-t">Energy rate and load by hour of the day</title>' in page
    assert re.search(r'<desc id="hourly-d">[^<]*load', page)
    assert len(re.findall(r'<tr data-hour="\d+">', page)) == 24


def test_rates_and_loads_by_hour_by_hand(web):
    page = get(web, FORMS["tou-typed-load"]).get_data(as_text=True)
    # the illustrative tariff: weekdays 0.22 USD/kWh from 16:00 to 21:00, 0.32 in its
    # Jun-Sep season (122 of 365 days); weekend days 0.08, 0.09 in season. The year's
    # average of weekday 17:00-18:00 is (243 x 0.22 + 122 x 0.32) / 365 = 0.253425
    weekday, weekend = hour_row(page, 17)
    assert weekday[0] == pytest.approx((243 * 0.22 + 122 * 0.32) / 365)
    assert weekend[0] == pytest.approx((243 * 0.08 + 122 * 0.09) / 365)
    assert weekday[1] == 0.2 and weekend[1] == 0.4  # the typed load rows
    assert hour_row(page, 3)[0] == (pytest.approx((243 * 0.09 + 122 * 0.10) / 365), 0.9)
    row = text_of(re.search(r'<tr data-hour="17">(.*?)</tr>', page, re.S).group(1))
    assert row.startswith("17:00-18:00 0.2534 0.2 0.0833 0.4")
    assert "Weekdays: rate 0.0933 USD/kWh to 0.2534 USD/kWh, highest 16:00-21:00" in page
    # the utilisation is the shape's mean: weekdays 13.9/24 weigh 5/7, weekend 0.4 2/7
    mean = 5 / 7 * sum(NIGHT) / 24 + 2 / 7 * 0.4
    assert f"Utilisation {display.format_percent(mean)} of hours" in text_of(page)


def test_a_tariff_without_weekend_rates_or_load_has_one_day(web):
    page = get(web, FORMS["urdb-no-load"]).get_data(as_text=True)
    # Wallingford: 0.070276 USD/kWh Nov-Apr (181 days), 0.077076 May-Oct (184 days), no
    # weekend rates, no load shape: the utilisation (the engine's 100%) in every hour
    rate = (181 * 0.070276 + 184 * 0.077076) / 365
    for hour in (0, 12, 23):
        assert hour_row(page, hour) == [(pytest.approx(rate), pytest.approx(1.0))]
    chart = re.search(r'<svg class="chart hourly".*?</svg>', page, re.S).group(0)
    assert "Weekend days" not in chart and ">Every day<" in chart
    assert "Every day: rate 0.0737 USD/kWh in every hour" in page


def test_a_load_shape_at_a_flat_price(web):
    page = get(web, FORMS["flat-with-load"]).get_data(as_text=True)
    assert '<h2 id="hourly-h">Load by hour</h2>' in page
    assert hour_row(page, 18) == [(0.08, 0.2)]
    assert hour_row(page, 0) == [(0.08, 0.9)]


def test_the_tariffs_disclosure_reads_well(web):
    page = text_of(get(web, FORMS["tou-typed-load"]).get_data(as_text=True))
    line = re.search(r"Electricity (Tariff .*?) Source: (.*?) Financing", page)
    assert line, page
    said, source = line.groups()
    assert said.startswith("Tariff Illustrative TOU, weekday peak 16:00-21:00: energy at ")
    assert "demand charge 15.00 USD/kW/month" in said  # money per kW per month: 2 places
    assert "rates differ by season (Jun-Sep); weekend days have their own rates" in said
    assert "the tariff is undated" in said
    assert source.startswith(f"catalog tariff '{TOU}': illustrative assumption")
    urdb = text_of(get(web, FORMS["urdb-no-load"]).get_data(as_text=True))
    assert ("Tariff Primary Service - Northford (Town of Wallingford, Connecticut (Utility "
            "Company), effective 2013-07-01)") in urdb
    assert "rates differ by season (May-Oct)" in urdb


def test_the_tariff_picker_lists_the_catalogs_tariffs(web):
    page = web.get("/").get_data(as_text=True)
    picker = re.search(r'<select id="f-tariff".*?</select>', page, re.S).group(0)
    assert f'value="{URDB}"' in picker and f'value="{TOU}"' in picker
    assert ("Primary Service - Northford; Town of Wallingford, Connecticut (Utility "
            "Company); effective 2013-07-01") in html.unescape(picker)
    assert "Illustrative TOU, weekday peak 16:00-21:00; undated" in picker
    flat = re.search(r'<select id="f-electricity".*?</select>', page, re.S).group(0)
    assert TOU not in flat and "eia-2026-05-us-industrial" in flat
    # the presets are shown with their numbers
    assert ", ".join(f"{v}" for v in LOAD_PRESETS["night-batch"].hourly) in page


def test_the_what_if_line_is_the_application_layers(web):
    values = FORMS["tou-typed-load"]
    page = text_of(get(web, values, flexible_share="30").get_data(as_text=True))
    priced = app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(
        scenario_form(values).mapping)))
    expected = flexible_line(app.shift_flexible(priced, 0.3)).replace(" -> ", " → ")
    assert expected in page
    assert page.index(expected) < page.index("What the cost is made of")
    # the price itself is the scenario's, not the shifted one
    assert get(web, values, flexible_share="30").status_code == 200
    assert figure_html(get(web, values, flexible_share="30").get_data(as_text=True),
                       "price_per_mtok_total") == figure_html(
        get(web, values).get_data(as_text=True), "price_per_mtok_total")


def test_no_chart_without_a_tariff_or_a_load(web):
    page = web.get("/").get_data(as_text=True)
    assert "chart hourly" not in page and 'data-hour="' not in page


# ---- bad input: beside its field, nothing priced ---------------------------------------------

BAD = [
    ("load_hourly", {"load": "custom", "load_hourly": "0.5, 0.5, x"},
     "hour 02:00-03:00: 'x' is not a number"),
    ("load_hourly", {"load": "custom", "load_hourly": "0.5 " * 23},
     "needs 24 fractions, one for each hour from 00:00-01:00 to 23:00-24:00; got 23"),
    ("load_hourly", {"load_hourly": " ".join(["0.5"] * 17 + ["1.2"] + ["0.5"] * 6)},
     "hour 17:00-18:00: 1.2 is above 1"),
    ("load_weekend", {"load_hourly": NIGHT_TEXT, "load_weekend": "-0.1 " + "0 " * 23},
     "hour 00:00-01:00: -0.1 is below 0"),
    ("load_hourly", {"load": "custom"}, "type 24 fractions"),
    ("load_hourly", {"load_weekend": WEEKEND}, "type 24 fractions for weekdays too"),
    ("load_hourly", {"load_hourly": "0 " * 24}, "serves in no hour"),
    ("load", {"load": "night-batch", "load_hourly": NIGHT_TEXT}, "a preset and typed rows"),
    ("load", {"load": "weekend-only"}, "unknown load shape 'weekend-only'"),
    ("tariff", {"electricity_kind": "tariff", "tariff": "no-such-tariff"},
     f"'no-such-tariff' is not a tariff in the catalog: choose one of {TOU}, {URDB}"),
    ("tariff", {"electricity_kind": "tariff", "tariff": "eia-2026-05-us-industrial"},
     "is a flat price, not a tariff"),
    ("tariff", {"electricity_kind": "tariff"}, "choose a tariff"),
    ("flexible_share", {"electricity_kind": "tariff", "tariff": TOU, "flexible_share": "150"},
     "must be at most 100 %, got 150 %"),
    ("flexible_share", {"electricity_kind": "tariff", "tariff": TOU, "flexible_share": "3 W"},
     ""),
    ("flexible_share", {"flexible_share": "30"}, "needs a tariff"),
]


@pytest.mark.parametrize("field,values,message", BAD, ids=[f"{b[0]}-{i}" for i, b in
                                                            enumerate(BAD)])
def test_bad_input_is_marked_beside_its_field(web, field, values, message):
    resp = get(web, values)
    assert resp.status_code == 422
    page = resp.get_data(as_text=True)
    marked = re.search(rf'<p class="field-error" id="{field}-error"[^>]*>(.*?)</p>', page,
                       re.S)
    assert marked, text_of(page)[:1500]
    assert message in html.unescape(marked.group(1))
    assert re.search(rf'<(?:input|select|textarea)[^>]*id="f-{field}" name="{field}" '
                     rf'aria-invalid="true"', page, re.S)
    assert "data-figure" not in page and "chart hourly" not in page  # nothing priced
    assert f'href="#f-{field}"' in page  # the summary above links to the field


def test_a_fraction_above_one_is_refused_by_the_api_too(web):
    # the page refuses it before pricing; the API refuses the same scenario at the same hour
    hourly = [0.5] * 17 + [1.2] + [0.5] * 6
    form = scenario_form({})
    body = {"scenario": {**{k: v for k, v in form.mapping.items() if k != "utilisation"},
                         "load": {"hourly": hourly}}}
    resp = web.post("/api/v1/price", json=body)
    assert resp.status_code == 422
    assert any(e["path"] == "scenario.load.hourly[17]" for e in resp.get_json()["errors"])


def test_values_typed_are_kept_on_the_page(web):
    values = {"load_hourly": "0.5, 0.5, x", "electricity_kind": "tariff", "tariff": TOU,
              "flexible_share": "30"}
    page = get(web, values).get_data(as_text=True)
    assert '>0.5, 0.5, x</textarea>' in page
    assert re.search(rf'<option value="{TOU}" selected>', page)
    assert 'value="tariff" checked' in page
    assert re.search(r'value="30"[^>]*id="f-flexible_share"', page, re.S)


def test_a_saved_tariff_scenario_opens_on_the_price_page():
    from urllib.parse import parse_qs

    from costmodel.web.saved import price_query
    mapping = scenario_form(FORMS["tou-typed-load"]).mapping
    query, dropped = price_query(mapping)
    assert dropped == []
    again = scenario_form({k: v[0] for k, v in parse_qs(query).items()})
    assert again.valid and again.mapping == mapping


def test_every_textarea_has_a_label(web):
    page = get(web, FORMS["tou-typed-load"]).get_data(as_text=True)
    ids = re.findall(r'<textarea[^>]*\bid="([^"]+)"', page)
    assert ids == ["f-load_hourly", "f-load_weekend"]
    for i in ids:
        assert f'for="{i}"' in page
