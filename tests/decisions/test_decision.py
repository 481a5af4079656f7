"""Offers priced for the buyer's demand: per-Mtok bills (tiers, take-or-pay, overage, cached
input, batch), capacity and own builds sized in whole accelerators, availability, the
break-even volume of a pair, the demand at which the recommendation switches, and the
negotiator's example (an H100 capacity offer against an API offer, for a B200 buyer).
Expected numbers are hand arithmetic, worked out in the comments."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CURVE_SCENARIOS, auth

from costmodel import app
from costmodel.cli import main
from costmodel.decisions.decision import Option, decide
from costmodel.decisions.demand import (
    SECONDS_PER_MONTH,
    DemandLoad,
    Shape,
    capacity_monthly,
    load_of,
    per_mtok_monthly,
    size,
    validate_demand,
)
from costmodel.decisions.quotes import validate_quote
from costmodel.model.inputs import InputError

H100, B200 = CURVE_SCENARIOS[0], CURVE_SCENARIOS[1]
SHAPE = Shape(3.0, 1.0)  # 3 input tokens a request for 1 output: input share 0.75


def flat(volume: float, **kw) -> DemandLoad:
    """``volume`` [Mtok/month mixed], a flat demand (peak = average)."""
    average = volume * 1e6 / SECONDS_PER_MONTH
    return DemandLoad(volume, average, average, SHAPE, kw.get("batch", 0.0),
                      kw.get("cached", 0.0), False)


def bill(load, tiers=((None, 0.4, 2.0),), **kw):
    args = {"cached_fraction": None, "batch_discount": None, "committed_volume": None,
            "overage": None, "commitment_monthly": None, **kw}
    return per_mtok_monthly(list(tiers), load, **args)


# ---- per-Mtok offers ------------------------------------------------------------------------

def test_flat_price_blends_input_and_output_over_the_request():
    # 0.75 x 0.4 + 0.25 x 2.0 = 0.8 USD/Mtok mixed; 1,000 Mtok -> 800 USD
    assert bill(flat(1000)).monthly == pytest.approx(800)


def test_tiers_are_graduated():
    # first 500 Mtok at 0.8 (above); the next 500 at 0.75 x 0.2 + 0.25 x 1.0 = 0.4:
    # 400 + 200 = 600 USD
    tiers = ((500.0, 0.4, 2.0), (None, 0.2, 1.0))
    assert bill(flat(1000), tiers).monthly == pytest.approx(600)
    assert bill(flat(300), tiers).monthly == pytest.approx(240)  # all in the first tier


def test_take_or_pay_at_low_volume_and_overage_above():
    tiers = ((500.0, 0.4, 2.0), (None, 0.2, 1.0))
    # committed 2,000 Mtok, used 1,000: pays usage(2,000) = 500 x 0.8 + 1,500 x 0.4 = 1,000;
    # usage(1,000) = 600, so 400 USD of it is unused
    low = bill(flat(1000), tiers, committed_volume=2000.0)
    assert low.monthly == pytest.approx(1000)
    assert low.committed_unused == pytest.approx(400)
    # 3,000 used with overage 0.8 / 4.0 (0.75 x 0.8 + 0.25 x 4.0 = 1.6): 1,000 + 1,000 x 1.6
    high = bill(flat(3000), tiers, committed_volume=2000.0, overage=(0.8, 4.0))
    assert high.monthly == pytest.approx(2600)
    assert high.committed_unused == 0


def test_cached_input_and_batch_discount():
    # half the input tokens cached at 10% of the price: input factor 1 - 0.5 + 0.05 = 0.55;
    # 0.75 x 0.4 x 0.55 + 0.25 x 2.0 = 0.665 USD/Mtok -> 665 USD
    assert bill(flat(1000, cached=0.5), cached_fraction=0.1).monthly == pytest.approx(665)
    # a cache share without a cached price in the quote changes nothing
    assert bill(flat(1000, cached=0.5)).monthly == pytest.approx(800)
    # half the volume as batch at 50% off: 800 x (1 - 0.25) = 600
    assert bill(flat(1000, batch=0.5), batch_discount=0.5).monthly == pytest.approx(600)


def test_a_minimum_spend_floors_the_bill():
    # 12,000 USD over 12 months: at least 1,000 a month; 800 used, 200 unused
    c = bill(flat(1000), commitment_monthly=1000.0)
    assert (c.monthly, c.committed_unused) == (pytest.approx(1000), pytest.approx(200))


# ---- sizing ---------------------------------------------------------------------------------

def test_sizing_rounds_up_to_whole_accelerators():
    assert size(10_000, 800, 1.0) == 13  # 12.5 -> 13
    assert size(8_000, 800, 1.0) == 10  # exactly 10: no spurious 11th
    assert size(0.9, 0.3, 1.0) == 3  # 3.0000000000000004 in floats is still 3
    # availability 90%: 10,000 / 720 = 13.9 -> 14
    assert size(10_000, 800, 0.9) == 14


def test_availability_from_mtbi_and_recovery():
    q = validate_quote({"name": "c", "vendor": "V", "form": "per_accelerator_hour",
                        "hourly_price": "2 USD/h", "hardware": "h100", "mtbi": "99 h",
                        "recovery": "1 h"})
    assert q.available == pytest.approx(0.99)
    with pytest.raises(InputError, match="mtbi and recovery go together"):
        validate_quote({"name": "c", "vendor": "V", "form": "per_accelerator_hour",
                        "hourly_price": "2 USD/h", "mtbi": "99 h"})


def test_capacity_block_paid_whole_and_extra_at_the_unit_rate():
    c = capacity_monthly(13, 16, 1000.0, block_monthly=None, commitment_monthly=None)
    assert (c.monthly, c.accelerators, c.committed_unused) == (16_000, 16, 3_000)
    c = capacity_monthly(20, 16, 1000.0, block_monthly=16_000.0, commitment_monthly=None)
    assert (c.monthly, c.accelerators) == (20_000, 20)
    assert "the other 4 priced at the offer's rate" in c.lines[0]


def test_demand_in_requests_and_in_output_tokens():
    # 1e6 requests a day of 3 + 1 tokens: 4e6 tokens a day, x 730/24 days = 121.67 Mtok a
    # month; average 4e6 / 86,400 = 46.30 token/s
    d = load_of(validate_demand({"requests_per_day": "1e6 request/day", "isl": 3, "osl": 1}),
                SHAPE)
    assert d.volume == pytest.approx(4e6 * 730 / 24 / 1e6)
    assert d.average == pytest.approx(4e6 / 86_400)
    # 250 Mtok of output tokens at 3:1 are 1,000 Mtok mixed
    d = load_of(validate_demand({"volume": "250 Mtok/month", "token_kind": "output"}), SHAPE)
    assert d.volume == pytest.approx(1000)


@pytest.mark.parametrize("data, path", [
    ({"volume": "5 W"}, "demand.volume"),
    ({}, "demand"),
    ({"volume": "1 Mtok/month", "requests_per_day": "1 request/day"}, "demand"),
    ({"volume": "1 Mtok/month", "percentile": "p42"}, "demand.percentile"),
    ({"volume": "1 Mtok/month", "batch_share": 1.5}, "demand.batch_share"),
    ({"volume": "1 Mtok/month", "own": {"availability": 0}}, "demand.own.availability"),
])
def test_bad_demands_name_the_field(data, path):
    with pytest.raises(InputError) as exc:
        validate_demand(data)
    assert exc.value.errors[0][0] == path


def test_a_peak_below_the_average_is_refused():
    with pytest.raises(InputError, match="below the average"):
        load_of(validate_demand({"volume": "1000 Mtok/month", "peak": "1 token/s"}), SHAPE)


# ---- between offers -------------------------------------------------------------------------

def _api_and_block(volume: float):
    """An API at 0.8 USD/Mtok against a block of 10 accelerators for 7,000 USD a month, each
    serving exactly 1,000 Mtok a month (extra ones at 700)."""
    thr = 1000 * 1e6 / SECONDS_PER_MONTH  # [token/s] one accelerator serves 1,000 Mtok/month
    api = Option("api", "per_mtok", "A", 12, lambda L: bill(L))
    block = Option("block", "capacity", "B", 12, lambda L: capacity_monthly(
        size(L.peak, thr, 1.0), 10, 700.0, block_monthly=7000.0, commitment_monthly=None))
    return decide([api, block], flat(volume), 0.10)


def test_break_even_volume_of_an_api_offer_against_reserved_capacity():
    # 0.8 V = 7,000 at V = 8,750 Mtok a month; above it the block is cheaper, and stays
    # cheaper: each further accelerator costs 700 for 1,000 Mtok, the API 800
    d = _api_and_block(9000)
    assert d.recommendation["offer"] == "block"
    (pair,) = d.break_even
    assert pair["volume"]["value"] == pytest.approx(8750, rel=1e-6)
    assert pair["cheaper_below"] == "api"
    assert d.holds[0] == pytest.approx(8750, rel=1e-6) and d.holds[1] is None
    # margin: 0.8 x 9,000 - 7,000 = 200 USD a month
    assert d.recommendation["margin"]["value"] == pytest.approx(200)


def test_the_recommendation_switches_at_the_break_even():
    below = _api_and_block(8000)  # 6,400 against 7,000
    assert below.recommendation["offer"] == "api"
    assert below.holds[1] == pytest.approx(8750, rel=1e-6)
    assert below.ranked[0].charge.monthly == pytest.approx(6400)
    # the capacity winner's risk: at half of 9,000 (4,500 Mtok), 10 - 5 = 5 accelerators
    # idle, 3,500 USD a month paid for nothing
    above = _api_and_block(9000)
    assert any("at half the demand, 3,500 USD" in r for r in above.recommendation["risks"])


# ---- the negotiator's example ---------------------------------------------------------------

H100_OFFER = {"name": "h100-capacity", "vendor": "Cloud X", "date": "2026-11-20",
              "form": "per_accelerator_hour", "hourly_price": "2.10 USD/h", "accelerators": 64,
              "term": "12 month", "hardware": "h100"}
API_OFFER = {"name": "api-tokens", "vendor": "API Y", "date": "2026-11-20", "form": "per_mtok",
             "price_input": "0.60 USD/Mtok", "price_output": "0.60 USD/Mtok",
             "term": "12 month", "operating_point": {"interactivity": "100 token/s/user"}}
DEMAND = {"volume": "50000 Mtok/month", "interactivity": "100 token/s/user"}


def _decide(files, quotes=(H100_OFFER, API_OFFER), demand=DEMAND, improvement=None):
    specs = [app.ScenarioSpec(app.FileScenario(Path(f))) for f in files]
    request = app.DecisionRequest([validate_quote(q, f"quotes[{i}]")
                                   for i, q in enumerate(quotes)], specs,
                                  validate_demand(demand), improvement)
    return app.quotes_decide(app.LocalContext(), request)


def _priced(name: str, *overrides: str):
    spec = app.ScenarioSpec(app.FileScenario(Path(name)), app.overrides_from_text(overrides))
    return app.price(app.LocalContext(), spec).result


def test_a_capacity_offer_is_never_priced_at_another_accelerators_throughput():
    d = _decide([B200]).decision
    assert [p.option.name for p in d.ranked] == [
        "gpt-oss-120b b200 (illustrative curve)", "api-tokens"]
    (h100,) = d.unranked
    assert h100.name == "h100-capacity"
    assert "not priced at another accelerator's throughput" in h100.why
    # every ranked option is billed for the same 50,000 Mtok: the API 0.6 x 50,000
    api = d.ranked[1]
    assert api.charge.monthly == pytest.approx(30_000)
    assert api.per_mtok == pytest.approx(0.6)


def test_own_build_is_sized_for_the_peak_and_priced_at_the_utilisation_it_leaves():
    d = _decide([B200]).decision
    own = d.ranked[0]
    r = _priced(B200)  # the B200 scenario at its own point: 100 token/s/user, the service level
    thr = r.values["throughput"]  # mixed tokens
    average = 50_000 * 1e6 / SECONDS_PER_MONTH  # 19,026 token/s
    n = math.ceil(average / thr)
    assert own.charge.accelerators == n == 3
    u = average / (n * thr)
    assert own.charge.utilisation == pytest.approx(u)
    # the engine's cost an accelerator-hour at that utilisation, priced on its own path
    hourly = _priced(B200, f"utilisation={u!r}").values["cost_per_hour"]
    assert own.charge.monthly == pytest.approx(n * hourly * 730)
    assert own.option.details["nodes"] == 1 and own.option.details["racks"] == 1


def test_with_the_h100_scenario_the_capacity_offer_is_sized_on_h100_throughput():
    d = _decide([B200, H100]).decision
    cap = next(p for p in d.ranked if p.option.name == "h100-capacity")
    thr = _priced(H100).values["throughput"]
    needed = math.ceil(50_000 * 1e6 / SECONDS_PER_MONTH / thr)  # 19,026 / 1,798 -> 11
    assert needed == 11
    # 64 GPUs offered, paid whole: 64 x 2.10 x 730
    assert cap.charge.monthly == pytest.approx(64 * 2.10 * 730)
    assert cap.charge.committed_unused == pytest.approx((64 - needed) * 2.10 * 730)
    assert "h100" in cap.option.details["throughput_from"]
    # beside its public reference: h100/rental, the version in force at the quote's date
    ref = cap.option.details["reference_rate"]
    assert ref["key"].startswith("h100/rental@")
    assert ref["offer_over_reference"] == pytest.approx(2.10 / ref["hourly_price"]["value"] - 1)


def test_the_recommendation_says_which_why_and_until_when():
    rec = _decide([B200], improvement=0.3).decision.recommendation
    assert rec["offer"] == "gpt-oss-120b b200 (illustrative curve)"
    assert rec["next"] == "api-tokens"
    assert "below api-tokens, the next" in rec["text"]
    assert "The choice holds from" in rec["text"]
    low = rec["holds"]["from"]["value"]
    # below the break-even the API wins: check it by pricing the demand there
    d = _decide([B200], demand={**DEMAND, "volume": f"{low * 0.9} Mtok/month"}).decision
    assert d.recommendation["offer"] == "api-tokens"


def test_mismatches_are_flagged_for_every_form():
    quotes = [{**H100_OFFER, "operating_point": {"model": "Llama 3 70B"}},
              {**API_OFFER, "operating_point": {"interactivity": "100 token/s/user",
                                                "model": "Llama 3 70B", "isl": 1024,
                                                "osl": 1024}}]
    d = _decide([B200, H100], quotes).decision
    flags = {p.option.name: p.option.flags for p in d.ranked}
    assert any("models differ" in f for f in flags["h100-capacity"])
    assert any("models differ" in f for f in flags["api-tokens"])
    assert any("request shapes differ" in f for f in flags["api-tokens"])


def test_an_offer_below_the_service_level_is_not_ranked():
    slow = {**API_OFFER, "operating_point": {"interactivity": "50 token/s/user"}}
    d = _decide([B200], [slow]).decision
    assert [o.name for o in d.unranked] == ["api-tokens"]
    assert "below the demand's service level" in d.unranked[0].why


def test_a_capacity_offer_without_hardware_cannot_be_ranked():
    d = _decide([B200], [{k: v for k, v in H100_OFFER.items() if k != "hardware"}]).decision
    assert "names no hardware" in d.unranked[0].why


def test_form_fields_are_refused_on_another_form():
    with pytest.raises(InputError) as exc:
        validate_quote({**API_OFFER, "hardware": "h100"}, "quote")
    assert exc.value.errors[0][0] == "quote.hardware"
    with pytest.raises(InputError) as exc:
        tier = {"up_to": "10 Mtok/month", "price_input": "1 USD/Mtok",
                "price_output": "1 USD/Mtok"}
        validate_quote({**API_OFFER, "tiers": [tier]}, "quote")
    assert exc.value.errors[0][0] == "quote.tiers"


# ---- faces ----------------------------------------------------------------------------------

def _quote_file(tmp_path) -> Path:
    path = tmp_path / "quotes.json"
    path.write_text(json.dumps({"demand": DEMAND, "quote": [H100_OFFER, API_OFFER]}))
    return path


def test_cli_ranks_for_the_files_demand_and_the_api_answers_the_same(tmp_path, client, tokens):
    f = _quote_file(tmp_path)
    out = CliRunner().invoke(main, ["quotes", "compare", str(f), "--scenario", str(B200),
                                    "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    cli = json.loads(out.output)
    body = {"quotes": [H100_OFFER, API_OFFER], "demand": DEMAND,
            "scenarios": [{"scenario": {"name": "gpt-oss-120b b200 (illustrative curve)",
                                        "accelerator": "b200", "electricity":
                                        "eia-2026-05-us-industrial", "utilisation": 0.7,
                                        "operating_point": {
                                            "curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/"
                                                     "none/agg",
                                            "at": {"interactivity": "100 token/s/user"},
                                            "token_kind": "mixed"},
                                        "power": {"boundary": "facility", "basis": "rated"}}}]}
    r = client.post("/api/v1/quotes/decide", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_data(as_text=True)
    api = r.get_json()
    for a, c in zip(api["ranked"], cli["ranked"], strict=True):
        assert a["offer"] == c["offer"]
        assert a["monthly_cost"]["value"] == pytest.approx(c["monthly_cost"]["value"], rel=1e-9)
    assert api["recommendation"]["offer"] == cli["recommendation"]["offer"]
    text = CliRunner().invoke(main, ["quotes", "compare", str(f), "--scenario", str(B200)],
                              catch_exceptions=False).output
    assert text.startswith("For 50,000 million tokens per month")
    assert "=> Take gpt-oss-120b b200" in text
    assert max(len(line) for line in text.splitlines()) <= 120


def test_cli_demand_flag_errors_are_one_line(tmp_path):
    f = _quote_file(tmp_path)
    out = CliRunner().invoke(main, ["quotes", "compare", str(f), "--scenario", str(B200),
                                    "--demand", "5 W"])
    assert out.exit_code == 2
    assert out.output.count("\n") == 1 and "demand.volume" in out.output


def test_api_bad_demand_is_a_422_naming_the_field(client, tokens):
    r = client.post("/api/v1/quotes/decide", headers=auth(tokens["viewer"]), json={
        "quotes": [API_OFFER], "scenarios": [{"scenario": {"accelerator": "gb300",
                                                           "operating_point":
                                                           "deepseek-r1/gb300/peak"}}],
        "demand": {"volume": "5 W"}})
    assert r.status_code == 422
    assert r.get_json()["errors"][0]["path"] == "demand.volume"


def _pdf_text(content: bytes) -> tuple[int, str]:
    from io import BytesIO

    from pypdf import PdfReader
    reader = PdfReader(BytesIO(content))
    return len(reader.pages), " ".join(p.extract_text() for p in reader.pages)


def test_the_one_page_summary_holds_the_recommendation_and_the_ranking(tmp_path):
    f, out = _quote_file(tmp_path), tmp_path / "decision.pdf"
    r = CliRunner().invoke(main, ["quotes", "compare", str(f), "--scenario", str(B200),
                                  "--scenario", str(H100), "--improvement", "30 %",
                                  "--pdf", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    pages, text = _pdf_text(out.read_bytes())
    assert pages == 1
    text = " ".join(text.split())
    assert "Take gpt-oss-120b b200 (illustrative curve) (own build)" in text
    # the ranked table's monthly bills, as the terminal rounds them
    d = _decide([B200, H100], improvement=0.3).decision
    for p in d.ranked:
        assert f"{p.charge.monthly:,.0f}" in text
    assert "50,000 million mixed tokens a month" in text
    assert "power counted at the facility boundary" in text  # the disclosure


def test_the_api_answers_the_summary_as_a_pdf(client, tokens):
    body = {"quotes": [API_OFFER], "demand": DEMAND,
            "scenarios": [{"scenario": {"accelerator": "gb300",
                                        "operating_point": "deepseek-r1/gb300/matched"}}]}
    r = client.post("/api/v1/quotes/decide", json=body, headers={
        **auth(tokens["viewer"]), "Accept": "application/pdf"})
    assert r.status_code == 200 and r.mimetype == "application/pdf"
    pages, text = _pdf_text(r.data)
    assert pages == 1 and "Which offer for this demand" in text


def test_availability_raises_the_own_builds_count():
    # 19,026 token/s on B200s serving 7,610 each: 2.5002 -> 3 at full availability; at 50%
    # each serves half the hours: 19,026 / 3,805 = 5.0004 -> 6
    full = _decide([B200]).decision.ranked[0]
    half = _decide([B200], demand={**DEMAND, "own": {"availability": 0.5}}).decision
    own = next(p for p in half.ranked if p.option.kind == "own")
    assert (full.charge.accelerators, own.charge.accelerators) == (3, 6)
    assert any("availability 50.00%" in line for line in own.charge.lines)


def test_the_negotiation_example_file_ranks_and_recommends():
    from costmodel.sources.quote_file import demand_table, read_quotes
    path = Path(__file__).resolve().parents[2] / "fixtures" / "quotes" / "negotiation.toml"
    specs = [app.ScenarioSpec(app.FileScenario(f)) for f in (B200, H100)]
    answer = app.quotes_decide(app.LocalContext(), app.DecisionRequest(
        read_quotes(path), specs, validate_demand(demand_table(path))))
    d = answer.decision
    assert len(d.ranked) == 4 and not d.unranked
    api = next(p for p in d.ranked if p.option.name == "api-tokens")
    # 50,000 Mtok: 20,000 committed at the tiers, 30,000 overage; input share 8/9; 40% of
    # input cached at 25% (factor 0.7); 20% batch at 50% off (x 0.9)
    fin = 8192 / 9216
    blend = lambda pi, po: (fin * pi * 0.7 + (1 - fin) * po) * 0.9  # noqa: E731
    usage = 10_000 * blend(0.60, 2.40) + 10_000 * blend(0.45, 1.80)
    assert api.charge.monthly == pytest.approx(usage + 30_000 * blend(0.50, 2.00))
    cap = next(p for p in d.ranked if p.option.name == "h100-capacity")
    assert cap.option.details["availability"] == pytest.approx(500 / 502)


def test_a_ttft_ceiling_reads_the_curve_as_the_scenario_file_would(tmp_path):
    # the B200 curve under a 0.6 s median TTFT ceiling serves 6,500 token/s an accelerator at
    # 100 token/s/user (the scenario file with ttft_max = "0.6 s" prices the same point)
    curve = (B200.parent / "../curves/illustrative-gpt-oss-120b.csv").resolve()
    text = B200.read_text().replace('token_kind = "mixed"',
                                    'token_kind = "mixed"\nttft_max = "0.6 s"').replace(
        '"../curves/illustrative-gpt-oss-120b.csv"', json.dumps(str(curve)))
    capped = tmp_path / "ttft-capped.toml"
    capped.write_text(text)
    want = _priced(capped).values["throughput"]
    assert want == pytest.approx(6500)
    d = _decide([B200], demand={**DEMAND, "ttft_max": "0.6 s"}).decision
    own = next(p for p in d.ranked if p.option.kind == "own")
    assert own.option.details["throughput_per_accelerator"]["value"] == pytest.approx(want)
    assert own.charge.accelerators == math.ceil(50_000 * 1e6 / SECONDS_PER_MONTH / 6500)


def test_a_demand_too_large_to_count_is_an_error_naming_it():
    with pytest.raises(InputError) as exc:
        _decide([B200], demand={"volume": "1e300 Mtok/month"})
    assert exc.value.errors[0][0] == "demand"


def test_free_offers_are_ranked_first_and_recommended_without_a_division():
    # two offers priced at 0 (a trial and a credit): both cost 0 a month, the recommendation
    # says 0 USD below the next without a share of 0, and locking in a free price costs
    # nothing more than a market price falling 30 % a year
    free_api = {**API_OFFER, "name": "trial", "price_input": "0 USD/Mtok",
                "price_output": "0 USD/Mtok"}
    free_hours = {**H100_OFFER, "name": "credit", "hourly_price": "0 USD/h"}
    d = _decide([H100], quotes=(free_api, free_hours, API_OFFER), improvement=0.3).decision
    assert [p.option.name for p in d.ranked][:2] == ["trial", "credit"]
    assert [p.charge.monthly for p in d.ranked[:2]] == [0, 0]
    assert [p.per_mtok for p in d.ranked[:2]] == [0, 0]
    rec = d.recommendation
    assert rec["offer"] == "trial" and rec["margin"]["value"] == 0
    assert rec["margin_share"] is None
    assert "0 USD a month below credit, the next" in rec["text"]
    assert any("costs 0 USD (0.0%) more in present value" in r for r in rec["risks"])
