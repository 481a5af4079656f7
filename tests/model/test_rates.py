"""Public reference rates: which version a reference names, the catalog's dated versions, and
a scenario priced from a rate ALL IN, through the engine, the CLI, the API and a workbook.

Every expected number is hand arithmetic from the rate table (/work/shared/MARKET_RATES.md,
fixtures/catalog/rates.toml), written out below; none is pasted from a run of the code.
"""
from __future__ import annotations

import json
import random
import tomllib
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, auth, price_data, workbook_systems

from costmodel.cli import main
from costmodel.model.errors import InputError, UnknownReference
from costmodel.model.inputs import RateEntry, ReferenceRate, validate_scenario
from costmodel.model.rates import (
    ALL_IN,
    RateError,
    RateNotFound,
    on_or_before,
    parse_rate_date,
    parse_rate_ref,
    resolve_rate,
)
from costmodel.sources.catalog import default_catalog

API = "/api/v1"
RATES = tomllib.loads((ROOT / "fixtures" / "catalog" / "rates.toml").read_text("utf-8"))
ACCELERATORS = tomllib.loads((ROOT / "fixtures" / "catalog" / "accelerators.toml")
                            .read_text("utf-8"))

# The hand example of the brief: 1,000 token/s per GPU at 5 USD per GPU-hour (GB300, rental,
# version 2026-09), mixed tokens, utilisation 1:
# 5 USD/h / (1,000 token/s x 3,600 s/h / 1e6 token/Mtok) = 5 / 3.6 = 1.389 USD/Mtok.
RATE_USD_H = 5.0
TOKEN_S = 1000.0
HAND_USD_MTOK = RATE_USD_H / (TOKEN_S * 3600 / 1e6)
GB300_ALL_IN_W = 2120.0  # 2.12 kW all in (versions 2026-07-14 and 2026-09)
PUE = 1.3  # the default
GB300_RENTAL = {"name": "gb300 rental", "utilisation": 1,
                "accelerator": {"catalog": "gb300", "rate": "rental@2026-09"},
                "operating_point": {"throughput": f"{TOKEN_S:g} token/s"}}


def test_hand_figure():
    assert round(HAND_USD_MTOK, 3) == 1.389


# ---- resolution: a pure function of the reference and the keys ----------------------------

GB300_KEYS = ["gb300/rental@2026-04", "gb300/rental@2026-07-14", "gb300/rental@2026-09",
              "gb300/owning@2026-09", "h100/rental@2026-09", "gb300/rental@draft"]


@pytest.mark.parametrize("ref,version", [
    ("gb300/rental", "2026-09"),  # no date: the latest
    ("gb300/rental@2026-09", "2026-09"),  # a version's own date names it
    ("gb300/rental@2026-08", "2026-07-14"),  # the brief's example: latest on or before
    ("gb300/rental@2026-07", "2026-07-14"),  # a month holds each of its days
    ("gb300/rental@2026-07-31", "2026-07-14"),
    ("gb300/rental@2026-07-14", "2026-07-14"),
    ("gb300/rental@2026-07-13", "2026-04"),  # the day before the power change
    ("gb300/rental@2026-05", "2026-04"),
    ("gb300/rental@2026-04-01", "2026-04"),
    ("gb300/rental@2026-04-30", "2026-04"),
    ("gb300/rental@2026-09-01", "2026-09"),
    ("gb300/rental@2027-01", "2026-09"),
    ("gb300/rental@2027-01-31", "2026-09"),
])
def test_a_date_picks_the_latest_version_on_or_before_it(ref, version):
    assert resolve_rate(ref, GB300_KEYS) == f"gb300/rental@{version}"
    shuffled = GB300_KEYS[:]
    random.Random(7).shuffle(shuffled)
    assert resolve_rate(ref, shuffled) == f"gb300/rental@{version}"  # order does not matter


def test_the_accelerator_may_come_from_the_context():
    assert resolve_rate("rental@2026-08", GB300_KEYS, "gb300") == "gb300/rental@2026-07-14"
    assert resolve_rate("owning", GB300_KEYS, "gb300") == "gb300/owning@2026-09"
    assert resolve_rate("gb300/rental", GB300_KEYS, "gb300") == "gb300/rental@2026-09"
    with pytest.raises(RateError, match="implies gb300"):
        resolve_rate("h100/rental", GB300_KEYS, "gb300")
    with pytest.raises(RateError, match="name the accelerator"):
        resolve_rate("rental", GB300_KEYS)


def test_an_exact_version_wins_over_later_days_of_its_month():
    keys = ["x/rental@2026-09", "x/rental@2026-09-15"]
    assert resolve_rate("x/rental@2026-09", keys) == "x/rental@2026-09"
    assert resolve_rate("x/rental@2026-09-10", keys) == "x/rental@2026-09"
    assert resolve_rate("x/rental@2026-09-15", keys) == "x/rental@2026-09-15"
    assert resolve_rate("x/rental@2026-09-20", keys) == "x/rental@2026-09-15"
    assert resolve_rate("x/rental@2026-10", keys) == "x/rental@2026-09-15"
    assert resolve_rate("x/rental", keys) == "x/rental@2026-09-15"


@pytest.mark.parametrize("ref,kind,fragment", [
    ("gb300/rental@2026-03", RateNotFound, "no version on or before 2026-03"),
    ("gb300/rental@2026-03-31", RateNotFound, "versions: 2026-04, 2026-07-14, 2026-09"),
    ("gb300/neocloud", RateNotFound, "unknown catalog entry 'gb300/neocloud'"),
    ("rubin/rental", RateNotFound, "unknown catalog entry"),
    ("gb300/rent", RateError, "unknown kind of rate 'rent'"),
    ("gb300/rental@2026-13", RateError, "not a date"),
    ("gb300/rental@2026-02-30", RateError, "not a date"),
    ("gb300/rental@26-09", RateError, "not a date"),
    ("gb300/rental@2026-٠٩", RateError, "not a date"),  # ASCII digits only
    ("gb300/rental@", RateError, "expected"),
    (" gb300/rental", RateError, "expected"),
    ("a/b/rental", RateError, "expected"),
    ("", RateError, "expected"),
])
def test_references_that_name_no_version(ref, kind, fragment):
    with pytest.raises(kind, match=fragment.replace("(", r"\(")):
        resolve_rate(ref, GB300_KEYS)


def test_dates_are_compared_at_the_precision_both_give():
    assert parse_rate_date("2026-07-14") == (2026, 7, 14)
    assert parse_rate_date("2026-09") == (2026, 9)
    assert on_or_before((2026, 7, 14), (2026, 7))  # July holds the 14th
    assert on_or_before((2026, 7), (2026, 7, 1))
    assert on_or_before((2026, 7, 14), (2026, 7, 14))
    assert not on_or_before((2026, 7, 14), (2026, 7, 13))
    assert not on_or_before((2026, 9), (2026, 8, 31))
    assert parse_rate_ref("rental@2026-09").text("gb300") == "gb300/rental@2026-09"


def test_neocloud_ends_at_the_version_that_last_had_it():
    # the 2026-09 version has no neocloud tier: the latest neocloud rate is 2026-07-14's
    keys = default_catalog().keys("rate")
    assert resolve_rate("h100/neocloud", keys) == "h100/neocloud@2026-07-14"
    assert resolve_rate("h100/neocloud@2026-12", keys) == "h100/neocloud@2026-07-14"
    with pytest.raises(RateNotFound):
        resolve_rate("vr200/neocloud", keys)


# ---- the catalog's versions --------------------------------------------------------------------

# the shared notes' table, version by version: gpu -> (power kW, owning, [neocloud,] rental)
V2026_04 = {"h100": (1.73, 1.30, 1.69, 1.30), "h200": (1.73, 1.41, 1.74, 1.60),
            "b200": (2.17, 1.95, 2.34, 2.90), "b300": (2.17, 2.34, 2.808, 3.48),
            "gb200": (2.10, 2.21, 2.75, 3.30), "gb300": (2.10, 2.652, 3.30, 3.96),
            "mi300x": (1.79, 1.12, 1.40, 1.55), "mi325x": (2.18, 1.28, 1.59, 1.80),
            "mi355x": (2.65, 1.48, 1.90, 2.10)}
V2026_07_14 = {"h100": 1.37, "h200": 1.37, "b200": 1.71, "b300": 1.90, "gb200": 1.87,
               "gb300": 2.12, "mi300x": 1.39, "mi325x": 1.69, "mi355x": 2.09}
V2026_09 = {"vr200": (3.30, 3.61, 3.61), "h100": (1.37, 1.17, 2.00), "h200": (1.37, 1.22, 2.90),
            "b200": (1.71, 1.73, 3.70), "b300": (1.90, 2.26, 4.25), "gb200": (1.87, 1.86, 4.00),
            "gb300": (2.12, 2.31, 5.00), "mi300x": (1.39, 0.95, 1.30),
            "mi325x": (1.69, 1.10, 1.60), "mi355x": (2.09, 1.50, 2.90),
            "rtx6000pro": (0.975, 0.68, 0.52), "jalapeno": (1.125, 1.47, 1.79),
            "tpuv7": (1.207, 1.21, 2.00)}
ORIGINS = {"2026-04": "77ca49a679198bbf593bd1a57fe26a27c9967bb3",
           "2026-07-14": "be3524c04cff273b0ab1e2ced7381fda044434ee",
           "2026-09": "gpu-keys.ts, September 2026"}


def _expected() -> dict[str, tuple[float, float]]:
    """key -> (USD/h, kW) from the table above."""
    out = {}
    for gpu, (kw, own, neo, rent) in V2026_04.items():
        for kind, usd in (("owning", own), ("neocloud", neo), ("rental", rent)):
            out[f"{gpu}/{kind}@2026-04"] = (usd, kw)
            out[f"{gpu}/{kind}@2026-07-14"] = (usd, V2026_07_14[gpu])  # prices carried forward
    for gpu, (kw, own, rent) in V2026_09.items():
        out[f"{gpu}/owning@2026-09"] = (own, kw)
        out[f"{gpu}/rental@2026-09"] = (rent, kw)
    return out


def test_every_version_of_the_table_is_an_entry_and_nothing_else():
    expected = _expected()
    assert set(RATES) == set(expected)
    assert len(RATES) == 27 + 27 + 26
    for key, (usd, kw) in expected.items():
        e = RATES[key]
        assert e["hourly_price"]["value"] == pytest.approx(usd) and \
            e["hourly_price"]["unit"] == "USD/h", key
        assert e["all_in_power"]["value"] == pytest.approx(kw) and \
            e["all_in_power"]["unit"] == "kW", key


def test_every_entry_is_a_valid_version_citing_its_origin():
    accelerators = set(default_catalog().keys("accelerator"))
    for key, body in RATES.items():
        entry = RateEntry.model_validate({k: (v if not isinstance(v, dict) else
                                              {"value": v["value"], "unit": v["unit"]})
                                          for k, v in body.items()})
        assert entry.catalog_key() == key
        assert entry.accelerator in accelerators, key
        origin = ORIGINS[entry.date]
        for text in (body["source"], body["hourly_price"]["source"],
                     body["all_in_power"]["source"]):
            assert origin in text, key
        for text in (body["source"], body["hourly_price"]["source"]):
            assert "assumption, not a quote" in text, key
        assert "All-In" in body["all_in_power"]["source"], key


def test_the_power_only_version_carries_the_prices_forward_and_says_so():
    for key, body in RATES.items():
        if not key.endswith("@2026-07-14"):
            continue
        earlier = RATES[key.replace("@2026-07-14", "@2026-04")]
        assert body["hourly_price"]["value"] == earlier["hourly_price"]["value"]
        assert "carried forward" in body["note"] and "carried forward" in \
            body["hourly_price"]["source"]
        assert "changed only the all-in power" in body["note"]
    # H100's all-in power fell 21 % between April and July with no change of label
    assert 1 - RATES["h100/rental@2026-07-14"]["all_in_power"]["value"] / \
        RATES["h100/rental@2026-04"]["all_in_power"]["value"] == pytest.approx(0.208, abs=1e-3)


def test_placeholders_are_marked():
    for key in ("b300/rental@2026-04", "gb300/rental@2026-04", "gb300/rental@2026-07-14"):
        assert "placeholder" in RATES[key]["hourly_price"]["source"]


@pytest.mark.parametrize("key,tdp", [("vr200", 1800), ("mi325x", 1000), ("rtx6000pro", 600),
                                     ("tpuv7", 980)])
def test_the_accelerators_the_table_names_are_in_the_catalog(key, tdp):
    entry = ACCELERATORS[key]
    assert entry["rated_power"] == {**entry["rated_power"], "value": tdp, "unit": "W"}
    assert "InferenceX" in entry["rated_power"]["source"]
    assert entry["price"]["source"].startswith("illustrative assumption")
    assert "memory" not in entry and "memory_bandwidth" not in entry  # none was checked


# ---- a scenario priced from a rate, all in -----------------------------------------------------

def test_all_in_pricing_by_hand():
    r = price_data(GB300_RENTAL)
    v = r.values
    assert v["cost_per_mtok_total"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)
    assert v["cost_per_mtok_capex"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)  # the rate
    assert v["cost_per_mtok_energy"] == 0 and v["cost_per_mtok_opex"] == 0
    assert v["cost_per_hour"] == pytest.approx(RATE_USD_H)
    # the rate's all-in power is the power per accelerator at the rack boundary
    assert r.scenario.power.boundary == "rack"
    assert v["power_per_accelerator"] == pytest.approx(GB300_ALL_IN_W)
    assert v["power_rack"] == v["power_rack_rated"] == pytest.approx(GB300_ALL_IN_W)
    assert v["power_facility"] == pytest.approx(GB300_ALL_IN_W * PUE)  # PUE still applies
    assert v["power_chip"] == 1400  # the chip is still the chip
    assert v["tokens_per_kwh"] == pytest.approx(TOKEN_S * 3600 / 2.12)


def test_the_disclosure_says_which_rate_and_what_all_in_means():
    r = price_data(GB300_RENTAL)
    d = r.disclosure()
    rate = d["reference_rate"]
    assert rate["key"] == "gb300/rental@2026-09" and rate["version"] == "2026-09"
    assert rate["kind"] == "rental" and rate["accelerator"] == "gb300"
    assert "gpu-keys.ts, September 2026" in rate["origin"]
    assert rate["hourly_price"] == {"value": 5.0, "unit": "USD/h"}
    assert rate["all_in_power"] == {"value": GB300_ALL_IN_W, "unit": "W"}
    assert ALL_IN == "all-in: energy and hosting inside the rate"
    assert rate["all_in"].startswith(ALL_IN)
    assert "not a quote" in rate["status"]
    assert rate["departures"] == []
    assert d["financing"]["cost_basis"] == "rent"
    assert d["electricity"]["price"]["value"] == 0
    assert "inside the all-in reference rate gb300/rental@2026-09" in d["electricity"]["source"]
    assert d["electricity"]["date"] == "2026-09"
    src = d["sources"]
    assert src["accelerator.hourly_price"].startswith("reference rate 'gb300/rental@2026-09'")
    assert "All-In" in src["accelerator.all_in_power"]
    assert ALL_IN in src["electricity.price"] and ALL_IN in src["facility.hosting"]
    assert "rack boundary" in src["power.boundary"]
    # the zeroes are the rate's, not defaults
    assert not {"electricity.price", "facility.hosting", "power.boundary"} & \
        set(d["defaults_used"])


def test_no_date_is_the_latest_and_a_date_the_version_on_or_before_it():
    latest = price_data({**GB300_RENTAL, "accelerator": {"catalog": "gb300", "rate": "rental"}})
    assert latest.scenario.reference_rate.key == "gb300/rental@2026-09"
    august = price_data({**GB300_RENTAL, "accelerator": {"catalog": "gb300",
                                                         "rate": "rental@2026-08"}})
    assert august.scenario.reference_rate.key == "gb300/rental@2026-07-14"
    # 3.96 USD/h (the 2026-04 placeholder, carried forward) over 3.6 Mtok an hour
    assert august.values["cost_per_mtok_total"] == pytest.approx(3.96 / 3.6, rel=1e-12)
    april = price_data({**GB300_RENTAL, "accelerator": {"catalog": "gb300",
                                                        "rate": "rental@2026-04"}})
    assert april.values["power_per_accelerator"] == pytest.approx(2100.0)


def test_what_the_scenario_says_wins_and_the_disclosure_says_so():
    data = {**GB300_RENTAL, "electricity": "eia-2026-05-us-industrial",
            "facility": {"hosting": "150 USD/kW/month"},
            "accelerator": {"catalog": "gb300", "rate": "rental@2026-09",
                            "hourly_price": "4 USD/h"}}
    r = price_data(data)
    v = r.values
    assert r.scenario.accelerator.hourly_price == 4.0
    # energy on top: 2,120 W at the rack x 0.0871 USD/kWh; hosting on the all-in power:
    # 150 USD/kW/month x 2.12 kW x 12 / 8,760 h
    energy = GB300_ALL_IN_W / 1000 * 0.0871
    hosting = 150 * 2.12 * 12 / 8760
    assert v["cost_per_hour"] == pytest.approx(4.0 + energy + hosting, rel=1e-12)
    departures = " ".join(r.disclosure()["reference_rate"]["departures"])
    assert "hourly_price is 4 USD/h, not the rate's 5 USD/h" in departures
    assert "energy is charged on top" in departures and "hosting is charged on top" in departures


def test_an_override_replaces_the_rates_value_and_its_citation():
    r = price_data(GB300_RENTAL, [("accelerator.all_in_power", "2 kW"),
                                  ("power.boundary", "facility")])
    assert r.values["power_per_accelerator"] == pytest.approx(2000 * PUE)
    assert r.provenance["accelerator.all_in_power"].startswith("--set")
    departures = r.disclosure()["reference_rate"]["departures"]
    assert any("all_in_power is 2000 W" in x for x in departures)
    assert any("power.boundary is facility" in x for x in departures)


def test_a_priced_scenario_reads_back_the_same():
    r = price_data(GB300_RENTAL)
    again = validate_scenario(json.loads(json.dumps(r.scenario.to_data())))
    assert again.to_inputs() == r.scenario.to_inputs()
    assert again.reference_rate == r.scenario.reference_rate


@pytest.mark.parametrize("accelerator,path,kind,fragment", [
    ({"catalog": "gb300", "rate": "rental@2025-01"}, "accelerator.rate", UnknownReference,
     "no version on or before 2025-01"),
    ({"catalog": "rubin", "rate": "rental"}, "accelerator.rate", UnknownReference,
     "unknown catalog entry 'rubin/rental'"),
    ({"catalog": "gb300", "rate": "h100/rental"}, "accelerator.rate", InputError, "implies"),
    ({"catalog": "gb300", "rate": "rental@2026-13"}, "accelerator.rate", InputError,
     "not a date"),
    ({"catalog": "gb300", "rate": 5}, "accelerator.rate", InputError, "rate reference"),
    ({"rated_power": "1 kW", "rate": "gb300/rental"}, "accelerator.rate", InputError,
     "needs accelerator.catalog"),
])
def test_a_rate_that_names_no_version_is_an_error_at_its_key(accelerator, path, kind, fragment):
    with pytest.raises(kind) as exc:
        price_data({**GB300_RENTAL, "accelerator": accelerator})
    assert exc.value.errors[0][0] == path
    assert fragment in exc.value.errors[0][1]


def test_a_hand_written_reference_must_name_its_own_version():
    data = price_data(GB300_RENTAL).scenario.to_data()
    data["reference_rate"]["key"] = "gb300/rental@2026-04"
    with pytest.raises(InputError, match="imply 'gb300/rental@2026-09'"):
        validate_scenario(data)
    with pytest.raises(ValueError):
        ReferenceRate.model_validate({**data["reference_rate"], "date": "2026-13"})


# ---- the CLI -----------------------------------------------------------------------------------

def _scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "rental.toml"
    path.write_text('name = "gb300 rental"\nutilisation = 1\n'
                    'accelerator = { catalog = "gb300", rate = "rental@2026-09" }\n'
                    '[operating_point]\nthroughput = "1000 token/s"\n', encoding="utf-8")
    return path


def _cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_cli_prices_a_rate_all_in(tmp_path):
    path = _scenario_file(tmp_path)
    d = json.loads(_cli("price", path, "--json"))
    assert d["cost_per_mtok"]["total"]["value"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)
    assert d["cost_per_mtok"]["energy"]["value"] == 0
    assert d["power_per_accelerator"]["value"] == pytest.approx(GB300_ALL_IN_W)
    assert d["disclosure"]["reference_rate"]["key"] == "gb300/rental@2026-09"
    text = " ".join(_cli("price", path).split())  # wrapped lines and padding as one line
    # 5 USD/h over 3.6 Mtok an hour = 1.38889 USD/Mtok, shown to the cent above 1 USD/Mtok
    assert "=> Cost per million tokens 1.39 USD per million tokens" in text
    assert "Reference rate gb300/rental@2026-09 (version 2026-09; 5.000 USD per hour, all-in " \
           "power 2,120 watts); a public dashboard's assumption, not a quote" in text
    assert ALL_IN in text
    later = json.loads(_cli("price", path, "--json", "--set",
                            'accelerator={catalog="gb300", rate="rental@2026-08"}'))
    assert later["cost_per_mtok"]["total"]["value"] == pytest.approx(3.96 / 3.6, rel=1e-12)


def test_cli_lists_the_rates():
    out = _cli("catalog", "rate")
    assert "gb300/rental@2026-09" in out and "5 USD/h, all-in 2.12 kW" in out


def test_cli_quotes_compare_at_a_reference_rate(tmp_path):
    quotes = tmp_path / "q.toml"
    quotes.write_text('[[quote]]\nname = "market"\nrate = "gb300/rental@2026-09"\n',
                      encoding="utf-8")
    out = " ".join(_cli("quotes", "compare", quotes, "--scenario",
                        _scenario_file(tmp_path)).split())
    assert " 1 market hourly" in out and "=>" not in out  # no demand: no recommendation
    assert "reference rate gb300/rental@2026-09" in out and "not a quote" in out


# ---- quotes -------------------------------------------------------------------------------------

def test_a_reference_quote_is_per_accelerator_hour_at_the_rate():
    from costmodel import app
    from costmodel.decisions.quotes import validate_quote
    quote = validate_quote({"name": "market", "rate": "gb300/rental@2026-08"}, "quotes[0]")
    assert quote.form == "per_accelerator_hour" and quote.vendor == "reference rate"
    spec = app.ScenarioSpec(app.InlineScenario({**GB300_RENTAL, "accelerator": "gb300",
                                                "operating_point": {"throughput":
                                                                    "1000 token/s"}}))
    ranking = app.quotes_compare(app.LocalContext(), [quote], [spec])
    c = ranking.rows[0][0]
    # the 2026-07-14 version: 3.96 USD/h over 3.6 Mtok an hour
    assert c.price_per_mtok == pytest.approx(3.96 / 3.6, rel=1e-12)
    assert c.to_json()["reference_rate"]["key"] == "gb300/rental@2026-07-14"
    assert "not a quote" in c.flags[0] and ALL_IN in c.flags[0]
    assert c.quote.source.startswith("InferenceX dashboard (SemiAnalysis), version 2026-07-14")


@pytest.mark.parametrize("quote,path,fragment", [
    ({"name": "q", "rate": "rental"}, "q.rate", "name the accelerator"),
    ({"name": "q", "rate": "gb300/rental", "form": "per_mtok"}, "q.form", "per_accelerator"),
    ({"name": "q", "rate": "gb300/rental", "hourly_price": "1 USD/h"}, "q.hourly_price",
     "one of rate or hourly_price"),
    ({"name": "q", "rate": "gb300/rental@2026-13"}, "q.rate", "not a date"),
])
def test_a_reference_quote_is_checked_when_read(quote, path, fragment):
    from costmodel.decisions.quotes import validate_quote
    with pytest.raises(InputError) as exc:
        validate_quote(quote, "q")
    assert exc.value.errors[0][0] == path and fragment in exc.value.errors[0][1]


# ---- the API (catalog from the seeded database) ------------------------------------------------

def _uid(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def test_api_prices_a_rate_all_in(client, tokens):
    r = client.post(f"{API}/price", json={"scenario": GB300_RENTAL},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.json
    assert r.json["cost_per_mtok"]["total"]["value"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)
    assert r.json["power_per_accelerator"]["value"] == pytest.approx(GB300_ALL_IN_W)
    rate = r.json["disclosure"]["reference_rate"]
    assert rate["key"] == "gb300/rental@2026-09" and rate["all_in"].startswith(ALL_IN)


def test_api_lists_and_gets_the_rates(client, tokens):
    viewer = auth(tokens["viewer"])
    page = client.get(f"{API}/rates", query_string={"q": "gb300/rental"}, headers=viewer).json
    assert [e["key"] for e in page["items"]] == ["gb300/rental@2026-04",
                                                "gb300/rental@2026-07-14",
                                                "gb300/rental@2026-09"]
    one = client.get(f"{API}/rates/gb300/rental@2026-09", headers=viewer)
    assert one.status_code == 200 and one.json["kind"] == "rate"
    assert one.json["data"]["hourly_price"] == {"value": 5, "unit": "USD/h"}
    assert "not a quote" in one.json["provenance"]["hourly_price"]
    assert client.get(f"{API}/rates/gb300/rental@2030-01", headers=viewer).status_code == 404


def test_api_a_new_version_is_a_new_entry_and_the_latest(client, tokens):
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    acc = _uid("acc-")
    r = client.post(f"{API}/accelerators", json={"key": acc, "data": {
        "rated_power": "1000 W", "price": "30000 USD"}}, headers=editor)
    assert r.status_code == 201, r.json

    def version(when: str, usd: float) -> dict:
        return {"key": f"{acc}/rental@{when}", "data": {
            "accelerator": acc, "kind": "rental", "date": when,
            "hourly_price": {"value": usd, "unit": "USD/h", "source": "a test rate card"},
            "all_in_power": "1.5 kW", "source": "a test"}}

    assert client.post(f"{API}/rates", json=version("2026-09", 5.0),
                       headers=editor).status_code == 201
    scenario = {**GB300_RENTAL, "accelerator": {"catalog": acc, "rate": "rental"}}
    first = client.post(f"{API}/price", json={"scenario": scenario}, headers=viewer).json
    assert first["cost_per_mtok"]["total"]["value"] == pytest.approx(HAND_USD_MTOK)
    # never overwritten: the same version again is a conflict
    assert client.post(f"{API}/rates", json=version("2026-09", 9.0),
                       headers=editor).status_code == 409
    # a later version is a new entry, and the latest from now on (the answer is not cached)
    assert client.post(f"{API}/rates", json=version("2026-10-02", 3.6),
                       headers=editor).status_code == 201
    again = client.post(f"{API}/price", json={"scenario": scenario}, headers=viewer).json
    assert again["disclosure"]["reference_rate"]["key"] == f"{acc}/rental@2026-10-02"
    assert again["cost_per_mtok"]["total"]["value"] == pytest.approx(1.0)  # 3.6 / 3.6
    pinned = {**scenario, "accelerator": {"catalog": acc, "rate": "rental@2026-09"}}
    old = client.post(f"{API}/price", json={"scenario": pinned}, headers=viewer).json
    assert old["cost_per_mtok"]["total"]["value"] == pytest.approx(HAND_USD_MTOK)


@pytest.mark.parametrize("key,data,path,fragment", [
    ("x1/rental@2026-09", {"kind": "owning"}, "key", "imply 'x1/owning@2026-09'"),
    ("x1/rental@2026-09", {"date": "2026-13"}, "data.date", "not a date"),
    ("x1/rental@2026-09", {"hourly_price": "5 W"}, "data.hourly_price", ""),
    ("x1/rental@2026-09", {"all_in_power": "0 kW"}, "data.all_in_power", ""),
    ("x1/rental@2026-09", {"kind": "spot"}, "data.kind", ""),
    ("x1/rental@2026-09", {"bogus": 1}, "data.bogus", ""),
    ("x1/rental", {}, "key", ""),
    ("x1-rental-2026-09", {}, "key", ""),
])
def test_api_refuses_a_rate_a_scenario_could_not_use(client, tokens, key, data, path, fragment):
    body = {"accelerator": "x1", "kind": "rental", "date": "2026-09",
            "hourly_price": "5 USD/h", "all_in_power": "2 kW", **data}
    r = client.post(f"{API}/rates", json={"key": key, "data": body},
                    headers=auth(tokens["editor"]))
    assert r.status_code == 422, r.json
    assert r.json["errors"][0]["path"] == path
    assert fragment in r.json["errors"][0]["message"]


def test_api_quotes_at_a_reference_rate(client, tokens):
    viewer = auth(tokens["viewer"])
    body = {"quotes": [{"name": "market", "rate": "gb300/rental@2026-09"}],
            "scenarios": [{"scenario": {**GB300_RENTAL, "accelerator": "gb300"}}]}
    r = client.post(f"{API}/quotes/compare", json=body, headers=viewer)
    assert r.status_code == 200, r.json
    (c,) = r.json["scenarios"][0]["ranked"]
    assert c["form"] == "per_accelerator_hour"
    assert c["price_per_mtok"]["value"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)
    assert c["reference_rate"]["key"] == "gb300/rental@2026-09"
    assert "not a quote" in c["flags"][0]
    body["quotes"][0]["rate"] = "gb300/rental@2025-01"
    r = client.post(f"{API}/quotes/compare", json=body, headers=viewer)
    assert r.status_code == 422
    assert r.json["errors"][0]["path"] == "quotes[0].rate"
    assert "unknown catalog entry" in r.json["errors"][0]["message"]


# ---- workbooks ----------------------------------------------------------------------------------

def _rate_workbook(tmp_path):
    from costmodel.render.workbook.export import build_workbook, save_workbook
    systems, _ = workbook_systems([_scenario_file(tmp_path)])
    return save_workbook(build_workbook(systems), tmp_path / "rate.xlsx"), systems


def test_workbook_carries_the_rate_as_inputs_and_live_formulas(tmp_path):
    from openpyxl import load_workbook

    from costmodel.render.workbook.names import named_cells
    path, systems = _rate_workbook(tmp_path)
    wb = load_workbook(path)
    cell = {n: named_cells(wb, n)[0].value for n in (
        "accelerator_hourly_price", "accelerator_all_in_power", "electricity_price",
        "facility_hosting", "accelerator_rack_power_basis", "accelerator_cost_basis",
        "power_boundary", "operating_point_throughput")}
    assert cell == {"accelerator_hourly_price": 5.0, "accelerator_all_in_power": 2120.0,
                    "electricity_price": 0.0, "facility_hosting": 0.0,
                    "accelerator_rack_power_basis": "all_in", "accelerator_cost_basis": "rent",
                    "power_boundary": "rack", "operating_point_throughput": 1000.0}
    # the all-in power, which the switch selects, is read as #N/A if its cell is emptied
    # (never as 0: see docs/finance.md, Absent and unused inputs)
    assert named_cells(wb, "power_rack")[0].value == (
        "=CHOOSE(MATCH(accelerator_rack_power_basis,accelerator_rack_power_basis_levels,0),"
        'rack_wall_power/accelerators_per_rack,'
        'IF(accelerator_all_in_power="",NA(),accelerator_all_in_power))')
    cover = {row[0].value: row[3].value for row in wb["Cover"].iter_rows() if row[0].value}
    assert cover["reference rate"].startswith("gb300/rental@2026-09 (version 2026-09)")
    assert ALL_IN in cover["reference rate"]
    sources = " ".join(str(c.value) for row in wb["Sources"].iter_rows() for c in row)
    assert "reference rate 'gb300/rental@2026-09'" in sources
    assert systems[0].result.values["cost_per_mtok_total"] == pytest.approx(HAND_USD_MTOK)


def test_workbook_reads_back_with_the_rate(tmp_path):
    from costmodel import app
    path, _ = _rate_workbook(tmp_path)
    imported = app.reprice(path.read_bytes(), name="rate.xlsx")
    (result,) = imported.results
    assert imported.changes == []
    assert result.values["cost_per_mtok_total"] == pytest.approx(HAND_USD_MTOK, rel=1e-12)
    assert result.scenario.reference_rate.key == "gb300/rental@2026-09"


def test_workbook_recalculates_to_the_hand_figure(tmp_path):
    from openpyxl import load_workbook

    from costmodel.render.workbook.names import named_cells
    from costmodel.render.workbook.recalc import recalculate, soffice
    if soffice() is None:
        pytest.skip("LibreOffice (soffice) is not installed: formulas and inputs checked above")
    path, _ = _rate_workbook(tmp_path)
    out = load_workbook(recalculate(path, tmp_path / "out"), data_only=True)
    assert named_cells(out, "cost_per_mtok_total")[0].value == pytest.approx(HAND_USD_MTOK,
                                                                             rel=1e-9)
    assert named_cells(out, "power_per_accelerator")[0].value == pytest.approx(GB300_ALL_IN_W)
    assert named_cells(out, "power_facility")[0].value == pytest.approx(GB300_ALL_IN_W * PUE)
    # the rate is a live input: 4 USD/h gives 4 / 3.6 USD/Mtok
    wb = load_workbook(path)
    named_cells(wb, "accelerator_hourly_price")[0].value = 4.0
    wb.save(tmp_path / "edited.xlsx")
    out = load_workbook(recalculate(tmp_path / "edited.xlsx", tmp_path / "out2"),
                        data_only=True)
    assert named_cells(out, "cost_per_mtok_total")[0].value == pytest.approx(4.0 / 3.6,
                                                                             rel=1e-9)


def test_the_fixture_scenario_prices_a_published_point_at_the_rate():
    from conftest import price_file
    r = price_file(ROOT / "fixtures" / "scenarios" / "rate-gb300-rental.toml")
    # 11,781 token/s/kW x 1.4 kW rated = 16,493.4 token/s; 5 USD/h over its Mtok an hour
    assert r.values["cost_per_mtok_total"] == pytest.approx(
        5.0 / (11781 * 1.4 * 3600 / 1e6), rel=1e-12)
    assert r.disclosure()["reference_rate"]["departures"] == []


def test_expanding_scenarios_never_changes_the_catalog():
    """A section taken from a catalog entry shares the entry's quantity tables (a shallow
    copy): overriding, extending and pricing from a reference rate leave every entry as it
    was, and the same scenario expands alike again."""
    import copy

    from costmodel.app.build import build_scenario

    catalog = default_catalog()
    kinds = ("accelerator", "operating_point", "system", "electricity", "rate")
    before = {(k, key): copy.deepcopy(catalog.get(k, key, k).data)
              for k in kinds for key in catalog.keys(k)}
    point = "deepseek-r1/gb300/peak"
    cases = [
        ({"accelerator": "gb300", "operating_point": point},
         [("accelerator.price", "1 USD"), ("accelerator.rated_power", "900 W"),
          ("operating_point.throughput_per_kw", "5 token/s/kW"), ("workload.isl", 100),
          ("electricity.price", "0.2 USD/kWh")]),
        ({"accelerator": {"catalog": "gb300", "rate": "rental", "all_in_power": "2 kW"},
          "operating_point": {"catalog": point, "note": "mine"}}, []),
        ({"accelerator": "gb300", "operating_point": point, "system": "gb300-nvl72",
          "node": {"accelerators": 4}, "workload": {"osl": 2048},
          "electricity": {"catalog": "eia-2026-05-us-industrial", "price": "0.3 USD/kWh"}},
         [("accelerator", "b200"), ("rack.nodes", 2)]),
    ]
    for data, overrides in cases:
        first = build_scenario(copy.deepcopy(data), overrides, catalog)
        again = build_scenario(copy.deepcopy(data), overrides, catalog)
        assert first.scenario == again.scenario and first.provenance == again.provenance
    assert {(k, key): catalog.get(k, key, k).data for k, key in before} == before
