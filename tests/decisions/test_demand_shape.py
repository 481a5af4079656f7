"""A demand given as a load shape by hour: the peak (its busiest hour) or the volume, the
other from the shape's mean; own builds sized for the busiest hour and priced hour by hour at
the shape (so a time-of-use tariff bills the hours the demand uses), capacity offers sized
for the busiest hour, per-Mtok offers billed on the volume; a scenario whose utilisation or
[load] disagrees with the shape refused, naming both. Expected numbers are hand arithmetic,
worked out in the comments; the scenario, tariff and offers are illustrative."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import auth

from costmodel import app
from costmodel.cli import main
from costmodel.decisions.demand import SECONDS_PER_MONTH, Shape, load_of, validate_demand
from costmodel.decisions.quotes import validate_quote
from costmodel.model.inputs import InputError

# 12 busy hours (08:00-20:00) at the peak, 12 quiet ones at half of it: mean 0.75
BUSY = range(8, 20)
HALF = [1.0 if h in BUSY else 0.5 for h in range(24)]
REQUEST = Shape(3.0, 1.0)
ON_PEAK = range(12, 18)  # the tariff's on-peak hours, all within the busy ones
TOU = [0.30 if h in ON_PEAK else 0.10 for h in range(24)]  # [USD/kWh] illustrative


def _scenario(rates: list[float], **extra) -> dict:
    """An illustrative own build: a B200 serving 1,000 token/s (mixed), its rated power at
    the chip, on a tariff of ``rates`` by hour every day."""
    return {"name": "own b200", "accelerator": "b200", "idle_power": 0.3,
            "operating_point": {"throughput": "1000 token/s", "token_kind": "mixed",
                                "label": "illustrative throughput"},
            "power": {"boundary": "chip", "basis": "rated"},
            "electricity": {"tariff": {"name": "illustrative", "source": "illustrative",
                                       "hourly": {"value": rates, "unit": "USD/kWh"}}},
            **extra}


PER_MTOK = {"name": "api", "vendor": "API Y", "form": "per_mtok", "term": "12 month",
            "price_input": "1 USD/Mtok", "price_output": "1 USD/Mtok"}
CAPACITY = {"name": "rent", "vendor": "Cloud X", "form": "per_accelerator_hour",
            "hourly_price": "2 USD/h", "term": "12 month", "hardware": "b200"}
DEMAND = {"load": {"hourly": HALF}, "peak": "4000 token/s"}


def _decide(demand=DEMAND, rates=TOU, **extra):
    spec = app.ScenarioSpec(app.InlineScenario(_scenario(rates, **extra)))
    return app.quotes_decide(app.LocalContext(), app.DecisionRequest(
        [validate_quote(PER_MTOK, "quotes[0]"), validate_quote(CAPACITY, "quotes[1]")],
        [spec], validate_demand(demand))).decision


def _by_name(d):
    return {p.option.name: p for p in d.ranked}


# ---- parsing -------------------------------------------------------------------------------

def test_a_shape_and_a_peak_give_the_volume():
    # mean (12 x 1 + 12 x 0.5) / 24 = 0.75; average 4,000 x 0.75 = 3,000 token/s;
    # volume 3,000 x 730 h x 3,600 s = 7,884 Mtok a month
    d = load_of(validate_demand(DEMAND), REQUEST)
    assert (d.peak, d.average) == (pytest.approx(4000), pytest.approx(3000))
    assert d.volume == pytest.approx(7884)


def test_a_shape_and_a_volume_give_the_peak():
    # 7,884 Mtok a month is 3,000 token/s on average; over a mean of 0.75: a 4,000 peak
    d = load_of(validate_demand({"load": {"hourly": HALF}, "volume": "7884 Mtok/month"}),
                REQUEST)
    assert d.peak == pytest.approx(4000)
    assert d.average == pytest.approx(7884e6 / SECONDS_PER_MONTH)


def test_weekend_days_weigh_two_sevenths():
    # weekdays at the peak all day, weekend days at 0.3: mean 5/7 + 2/7 x 0.3 = 0.8;
    # 1,000 Mtok a month is 380.52 token/s, so the peak is 380.52 / 0.8 = 475.65
    d = load_of(validate_demand({"load": {"hourly": [1.0] * 24, "weekend": [0.3] * 24},
                                 "volume": "1000 Mtok/month"}), REQUEST)
    assert d.peak == pytest.approx(1000e6 / SECONDS_PER_MONTH / (5 / 7 + 2 / 7 * 0.3))


def test_a_peak_in_output_tokens_is_converted_with_the_request_shape():
    # 1,000 output token/s at 3:1 is 4,000 mixed; the volume as above
    d = load_of(validate_demand({**DEMAND, "peak": "1000 token/s", "token_kind": "output"}),
                REQUEST)
    assert d.peak == pytest.approx(4000) and d.volume == pytest.approx(7884)


@pytest.mark.parametrize("data, path, words", [
    ({"load": {"hourly": [0.5] * 24}, "peak": "1 token/s"}, "demand.load.hourly",
     "the busiest hour is 0.5"),
    ({"load": {"hourly": [0.5] * 24, "weekend": [1.0] * 24}, "peak": "1 token/s"}, "",
     None),  # the busiest hour on a weekend day: fine
    ({"load": {"hourly": [0.5] * 24, "weekend": [0.9] * 24}, "peak": "1 token/s"},
     "demand.load.weekend", "the busiest hour is 0.9"),
    ({"load": {"hourly": HALF}, "peak": "1 token/s", "volume": "1 Mtok/month"},
     "demand.peak", "give the peak or the volume, not both"),
    ({"load": {"hourly": HALF}}, "demand", "a load shape needs the peak"),
    ({"load": {"hourly": HALF[:23]}, "peak": "1 token/s"}, "demand.load.hourly", None),
    ({"load": {"hourly": [1.5, *HALF[1:]]}, "peak": "1 token/s"}, "demand.load.hourly[0]",
     None),
    ({"load": {"hourly": HALF, "monthly": HALF}, "peak": "1 token/s"},
     "demand.load.monthly", None),
    ({"load": {"hourly": ["1 W"] * 24}, "peak": "1 token/s"}, "demand.load.hourly[0]", None),
])
def test_bad_shapes_name_the_field(data, path, words):
    if not path:
        validate_demand(data)
        return
    with pytest.raises(InputError) as exc:
        validate_demand(data)
    assert exc.value.errors[0][0] == path
    if words:
        assert words in exc.value.errors[0][1]


# ---- pricing -------------------------------------------------------------------------------

def test_every_offer_for_the_shape():
    d = _decide()
    offers = _by_name(d)
    # per-Mtok billed on the volume: 7,884 Mtok x 1 USD/Mtok
    assert offers["api"].charge.monthly == pytest.approx(7884)
    # capacity sized for the busiest hour: 4,000 / 1,000 = 4 accelerators x 2 x 730 h
    rent = offers["rent"].charge
    assert (rent.accelerators, rent.monthly) == (4, pytest.approx(4 * 2 * 730))
    assert rent.utilisation == pytest.approx(0.75)
    own = offers["own b200"].charge
    # own build sized for the busiest hour (4), at the utilisation the shape implies
    # (3,000 / 4,000 = 0.75)
    assert (own.accelerators, own.utilisation) == (4, pytest.approx(0.75))
    assert d.load.volume == pytest.approx(7884)
    assert any("the busiest hour is the peak, the average 0.75 of it" in a
               for a in d.assumptions)


def _energy_per_hour(rates: list[float], load: list[float], kw: float) -> float:
    """[USD/h] an accelerator drawing ``kw`` serving, 0.3 of it idle, at ``load`` by hour."""
    return sum(r * kw * (x + 0.3 * (1 - x)) for r, x in zip(rates, load, strict=True)) / 24


def test_a_time_of_use_tariff_bills_the_hours_the_shape_uses():
    # each hour's load is the shape x 4,000 / (4 x 1,000) = the shape: busy hours draw all
    # the power, quiet ones 0.5 + 0.3 x 0.5 = 0.65 of it. Per accelerator-hour per kW:
    #   TOU:  (6 x 0.30 x 1 + 6 x 0.10 x 1 + 12 x 0.10 x 0.65) / 24 = 3.18 / 24 = 0.1325
    #   flat: 0.10 x (12 x 1 + 12 x 0.65) / 24 = 1.98 / 24 = 0.0825 (as utilisation 0.75:
    #         0.10 x (0.75 + 0.3 x 0.25) = 0.0825)
    # so the tariff's hours add (0.1325 - 0.0825) x kW x 4 accelerators x 730 h a month
    tou = _by_name(_decide())["own b200"].charge.monthly
    flat = _by_name(_decide(rates=[0.10] * 24))["own b200"].charge.monthly
    priced = app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(
        _scenario([0.10] * 24)))).result
    kw = priced.values["power_per_accelerator"] / 1000
    assert _energy_per_hour(TOU, HALF, 1.0) == pytest.approx(0.1325)
    assert _energy_per_hour([0.10] * 24, HALF, 1.0) == pytest.approx(0.0825)
    assert tou - flat == pytest.approx((0.1325 - 0.0825) * kw * 4 * 730, rel=1e-9)
    # the same volume flat over the day: the on-peak hours draw 0.825 of the power, not 1
    flat_demand = {"load": {"hourly": [1.0] * 24}, "peak": "3000 token/s"}
    even = _by_name(_decide(flat_demand))["own b200"].charge
    # 3,000 / 1,000 = 3 accelerators at utilisation 1: 0.30 x 6 + 0.10 x 18 = 3.6 / 24 = 0.15
    # a kW-hour; against 3 accelerators at utilisation 1 on the flat 0.10
    even_flat = _by_name(_decide(flat_demand, rates=[0.10] * 24))["own b200"].charge
    assert even.accelerators == 3
    assert even.monthly - even_flat.monthly == pytest.approx((0.15 - 0.10) * kw * 3 * 730,
                                                             rel=1e-9)


def test_a_scenario_disagreeing_with_the_shape_is_refused_naming_both():
    with pytest.raises(InputError) as exc:
        _decide(utilisation=0.7)
    path, message = exc.value.errors[0]
    assert path.endswith("utilisation")
    assert "0.7 differs" in message and "demand.load" in message and "0.75" in message
    _decide(utilisation=0.75)  # the shape's own: agrees
    with pytest.raises(InputError) as exc:
        _decide(load={"hourly": [1.0] * 24})
    path, message = exc.value.errors[0]
    assert path.endswith("load.hourly")
    assert "the scenario's load shape (mean 1)" in message and "demand.load, mean 0.75" \
        in message
    # the same shape at another scale agrees: the fleet's own scale replaces it
    d = _decide(load={"hourly": [x * 0.8 for x in HALF]})
    assert _by_name(d)["own b200"].charge.monthly == pytest.approx(
        _by_name(_decide())["own b200"].charge.monthly, rel=1e-12)


def test_without_a_shape_a_scenarios_utilisation_is_still_replaced():
    # a flat demand of 3,000 token/s (7,884 Mtok/month): as before, no refusal
    d = _decide({"volume": "7884 Mtok/month"}, utilisation=0.7)
    assert _by_name(d)["own b200"].charge.accelerators == 3


# ---- faces ---------------------------------------------------------------------------------

def _files(tmp_path, demand):
    quotes = tmp_path / "quotes.json"
    quotes.write_text(json.dumps({"demand": demand, "quote": [PER_MTOK, CAPACITY]}))
    scenario = tmp_path / "own.json"
    scenario.write_text(json.dumps(_scenario(TOU)))
    return quotes, scenario


def test_cli_reads_the_shape_from_the_demand_table_and_the_api_answers_the_same(
        tmp_path, client, tokens):
    quotes, scenario = _files(tmp_path, DEMAND)
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario",
                                    str(scenario), "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    cli = json.loads(out.output)
    assert cli["demand"]["volume"]["value"] == pytest.approx(7884)
    assert cli["demand"]["load"]["mean"] == pytest.approx(0.75)
    r = client.post("/api/v1/quotes/decide", headers=auth(tokens["viewer"]), json={
        "quotes": [PER_MTOK, CAPACITY], "demand": DEMAND,
        "scenarios": [{"scenario": _scenario(TOU)}]})
    assert r.status_code == 200, r.get_data(as_text=True)
    api = r.get_json()
    assert [a["offer"] for a in api["ranked"]] == [c["offer"] for c in cli["ranked"]]
    for a, c in zip(api["ranked"], cli["ranked"], strict=True):
        assert a["monthly_cost"]["value"] == pytest.approx(c["monthly_cost"]["value"],
                                                           rel=1e-12)
    api_offer = next(a for a in api["ranked"] if a["offer"] == "api")
    assert api_offer["monthly_cost"]["value"] == pytest.approx(7884)
    # --peak over the file's shape: 8,000 token/s doubles the volume
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario",
                                    str(scenario), "--peak", "8000 token/s", "--json"],
                             catch_exceptions=False)
    assert json.loads(out.output)["demand"]["volume"]["value"] == pytest.approx(2 * 7884)
    # --demand over it: the volume replaces the file's peak, which follows from the shape
    # (3,942 Mtok a month is 1,500 token/s on average: a 2,000 peak)
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario",
                                    str(scenario), "--demand", "3942 Mtok/month", "--json"],
                             catch_exceptions=False)
    assert json.loads(out.output)["demand"]["peak"]["value"] == pytest.approx(2000)


def test_cli_bad_shape_is_one_line_and_api_a_422_naming_the_field(tmp_path, client, tokens):
    bad = {"load": {"hourly": [0.5] * 24}, "peak": "4000 token/s"}
    quotes, scenario = _files(tmp_path, bad)
    out = CliRunner().invoke(main, ["quotes", "decide", str(quotes), "--scenario",
                                    str(scenario)])
    assert out.exit_code == 2
    assert out.output.count("\n") == 1 and "demand.load.hourly" in out.output
    r = client.post("/api/v1/quotes/decide", headers=auth(tokens["viewer"]), json={
        "quotes": [PER_MTOK], "demand": bad, "scenarios": [{"scenario": _scenario(TOU)}]})
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == "demand.load.hourly"
    # a scenario disagreeing with the shape: the scenario's field, in the request's path
    r = client.post("/api/v1/quotes/decide", headers=auth(tokens["viewer"]), json={
        "quotes": [PER_MTOK], "demand": DEMAND,
        "scenarios": [{"scenario": _scenario(TOU, utilisation=0.7)}]})
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == "scenarios[0].scenario.utilisation"
