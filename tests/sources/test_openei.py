"""OpenEI Utility Rate Database tariffs into [electricity.tariff] (costmodel.sources.openei)
and ``costmodel tariff import``. Expected numbers are read by hand from the JSON (the real
records in tests/data/openei/, see SOURCE.md) or written out by hand for the samples here."""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel.cli import main
from costmodel.model.errors import InputError
from costmodel.sources.openei import (
    MAX_ITEMS,
    parse_openei_json,
    read_openei,
    season_name,
    tariff_toml,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "openei"
WALLINGFORD = DATA / "wallingford_primary_northford.json"
SCE = DATA / "sce_gs2_tou_b.json"
WAIVE = ("demandratchetpercentage", "demandreactivepowercharge")


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def errors(data, item=None, **kw) -> list[tuple[str, str]]:
    with pytest.raises(InputError) as exc:
        read_openei(data, item, **kw)
    return exc.value.errors


def rates_in(table: dict, month: int, weekend: bool = False) -> list[float]:
    """The 24 rates the table gives a month (its season's, else the top level's)."""
    key = "weekend" if weekend else "hourly"
    for s in table.get("seasons", []):
        if month in s["months"]:
            return s.get(key, s["hourly"])["value"]
    return table.get(key, table["hourly"])["value"]


# ---- (a) real records -----------------------------------------------------------------------

def test_wallingford_refuses_its_ratchet_and_reactive_charge_by_name():
    errs = dict(errors(load(WALLINGFORD)))
    assert set(errs) == {"demandratchetpercentage", "demandreactivepowercharge"}
    assert "0.35" in errs["demandratchetpercentage"]
    assert "ratchet" in errs["demandratchetpercentage"]
    assert "--ignore demandratchetpercentage" in errs["demandratchetpercentage"]
    assert "2.7" in errs["demandreactivepowercharge"]


def test_wallingford_read_by_hand():
    t = read_openei(load(WALLINGFORD), ignore=WAIVE)
    assert t["name"] == "Primary Service - Northford"
    assert t["utility"] == "Town of Wallingford, Connecticut (Utility Company)"
    assert t["effective"] == "2013-07-01"  # startdate 1372658400 = 2013-07-01 06:00 UTC
    assert t["source"].startswith(
        "OpenEI Utility Rate Database, https://openei.org/apps/USURDB/rate/view/"
        "539f6a23ec4f024411ec8bf9, Primary Service - Northford, Town of Wallingford, "
        "Connecticut (Utility Company), effective 2013-07-01")
    # the waived charges are named, never dropped silently
    assert "demandratchetpercentage = 0.35" in t["source"]
    assert "demandreactivepowercharge = 2.7" in t["source"]
    # July weekday hour 15: energyweekdayschedule[6][15] = 0 -> period 0: 0.0687 + 0.008376
    assert rates_in(t, 7)[15] == pytest.approx(0.0687 + 0.008376)
    # January: period 1: 0.0619 + 0.008376, every hour, weekends alike
    assert rates_in(t, 1) == pytest.approx([0.0619 + 0.008376] * 24)
    assert "weekend" not in t
    # six months each way: the top level is January's (Nov-Apr), the season May-Oct
    assert [(s["name"], s["months"]) for s in t["seasons"]] == [("May-Oct", [5, 6, 7, 8, 9, 10])]
    assert t["hourly"]["value"] == pytest.approx([0.070276] * 24)
    assert t["seasons"][0]["hourly"]["value"] == pytest.approx([0.077076] * 24)
    # flatdemandmonths: Jan-Apr, Nov-Dec -> period 1 (10.5), May-Oct -> period 0 (11.5)
    assert t["demand_charge"] == {"value": pytest.approx(10.5), "unit": "USD/kW/month"}
    assert t["seasons"][0]["demand_charge"] == {"value": pytest.approx(11.5),
                                                "unit": "USD/kW/month"}
    assert t["fixed_charge"] == {"value": pytest.approx(275), "unit": "USD/month"}
    json.dumps(t, allow_nan=False)  # plain data


def test_sce_time_of_use_demand_read_by_hand():
    t = read_openei(load(SCE))
    # demandratestructure 0 / 5.3 / 18.11 USD/kW; demandweekdayschedule Jun-Sep: period 1 at
    # hours 8-11 and 18-22, period 2 at 12-17, period 0 elsewhere; Jan-May and Oct-Dec
    # period 0 all day; weekends period 0 all year. Period 0 bills nothing.
    assert t["demand_periods"] == [
        {"name": "period 1", "demand_charge": {"value": 5.3, "unit": "USD/kW/month"},
         "hours": [8, 9, 10, 11, 18, 19, 20, 21, 22], "weekend_hours": [],
         "months": [6, 7, 8, 9]},
        {"name": "period 2", "demand_charge": {"value": 18.11,
                                                        "unit": "USD/kW/month"},
         "hours": [12, 13, 14, 15, 16, 17], "weekend_hours": [], "months": [6, 7, 8, 9]}]
    # the flat demand charge (flatdemandstructure 13.2, flatdemandmonths all period 0) stays
    # the all-hours charge of every month
    assert t["demand_charge"]["value"] == pytest.approx(13.2)
    assert t["seasons"][0]["demand_charge"]["value"] == pytest.approx(13.2)
    assert "time-of-use demand charges (demandratestructure)" in t["source"]
    # written as TOML it reads back into a scenario's tariff
    doc = tomllib.loads(tariff_toml(t))
    assert doc["electricity"]["tariff"]["demand_periods"] == t["demand_periods"]


def test_sce_energy_read_by_hand_without_its_time_of_use_demand():
    # the real record less its time-of-use demand charge (demandratestructure and its
    # schedules): its energy, flat demand and fixed charge as read by hand
    rec = load(SCE)
    for field in ("demandratestructure", "demandweekdayschedule", "demandweekendschedule"):
        del rec[field]
    t = read_openei(rec)
    assert t["effective"] == "2015-06-01"  # 1433116800
    assert t["source"].startswith("OpenEI Utility Rate Database, http://en.openei.org/apps/"
                                  "IURDB/rate/view/55fc81d7682bea28da64f9ae, Time of Use,")
    # July weekday: hours 0-7 period 2 (0.066), 8-11 period 3 (0.08888), 12-17 period 4
    # (0.1355), 18-22 period 3, 23 period 2; July weekend: period 2 all day
    july = [0.066] * 8 + [0.08888] * 4 + [0.1355] * 6 + [0.08888] * 5 + [0.066]
    assert rates_in(t, 7) == pytest.approx(july)
    assert rates_in(t, 7, weekend=True) == pytest.approx([0.066] * 24)
    # January weekday: hours 0-7 period 0 (0.0712), 8-20 period 1 (0.09368), 21-23 period 0
    january = [0.0712] * 8 + [0.09368] * 13 + [0.0712] * 3
    assert t["hourly"]["value"] == pytest.approx(january)
    assert t["weekend"]["value"] == pytest.approx([0.0712] * 24)
    assert [(s["name"], s["months"]) for s in t["seasons"]] == [("Jun-Sep", [6, 7, 8, 9])]
    assert t["demand_charge"]["value"] == pytest.approx(13.2)
    assert t["seasons"][0]["demand_charge"]["value"] == pytest.approx(13.2)
    assert t["fixed_charge"]["value"] == pytest.approx(259.2)  # fixedmonthlycharge


# ---- (b) a hand-written sample --------------------------------------------------------------

def sample() -> dict:
    """Two seasons (Jun-Sep summer), a weekday peak 16:00-21:00, flat weekends, a $/day fixed
    charge and a summer demand charge."""
    winter_wd = [0] * 16 + [1] * 5 + [0] * 3
    summer_wd = [2] * 16 + [3] * 5 + [2] * 3
    wd = [winter_wd] * 5 + [summer_wd] * 4 + [winter_wd] * 3
    we = [[0] * 24] * 5 + [[2] * 24] * 4 + [[0] * 24] * 3
    return {"items": [{
        "label": "abc", "uri": "https://apps.openei.org/USURDB/rate/view/abc",
        "utility": 'Acme "Power" Co', "name": "LGS-TOU\\2", "startdate": 1704067200,
        "energyratestructure": [[{"rate": 0.08, "unit": "kWh"}],
                                [{"rate": 0.15, "adj": 0.01, "unit": "kWh"}],
                                [{"rate": 0.10}],
                                [{"rate": 0.30, "adj": -0.02}]],
        "energyweekdayschedule": wd, "energyweekendschedule": we,
        "flatdemandstructure": [[{"rate": 4.0}], [{"rate": 9.0, "adj": 1.0}]],
        "flatdemandmonths": [0] * 5 + [1] * 4 + [0] * 3, "flatdemandunit": "kW",
        "fixedchargefirstmeter": 1.5, "fixedchargeunits": "$/day",
    }]}


def test_sample_by_hand():
    t = read_openei(sample())
    assert t["effective"] == "2024-01-01"
    assert t["name"] == "LGS-TOU\\2" and t["utility"] == 'Acme "Power" Co'
    assert t["hourly"]["value"] == pytest.approx(
        [0.08] * 16 + [0.16] * 5 + [0.08] * 3)
    assert t["weekend"]["value"] == pytest.approx([0.08] * 24)
    assert t["demand_charge"]["value"] == pytest.approx(4.0)
    (summer,) = t["seasons"]
    assert summer["name"] == "Jun-Sep" and summer["months"] == [6, 7, 8, 9]
    assert summer["hourly"]["value"] == pytest.approx(
        [0.10] * 16 + [0.28] * 5 + [0.10] * 3)
    assert summer["weekend"]["value"] == pytest.approx([0.10] * 24)
    assert summer["demand_charge"]["value"] == pytest.approx(10.0)
    # 1.5 USD/day x 365/12 day/month = 45.625 USD/month, and the conversion is stated
    assert t["fixed_charge"] == {"value": pytest.approx(45.625), "unit": "USD/month"}
    assert "1.5 USD/day x 365/12" in t["source"]


def test_year_fixed_charge_and_no_weekend_or_demand():
    rec = sample()["items"][0]
    rec.update(energyweekendschedule=rec["energyweekdayschedule"], fixedchargeunits="$/year",
               fixedchargefirstmeter=1200)
    del rec["flatdemandstructure"], rec["flatdemandmonths"]
    t = read_openei(rec)
    assert "weekend" not in t and "demand_charge" not in t
    assert "weekend" not in t["seasons"][0] and "demand_charge" not in t["seasons"][0]
    assert t["fixed_charge"]["value"] == pytest.approx(100.0)


def test_demand_structure_flat_within_each_month_is_a_monthly_charge_added_to_the_flat():
    rec = sample()["items"][0]
    # two periods of the same charge in January (a schedule that is not really time-of-use),
    # 2.0 in every other month
    dwd = [[0] * 12 + [1] * 12] + [[2] * 24] * 11
    rec.update(demandratestructure=[[{"rate": 3.0}], [{"rate": 2.5, "adj": 0.5}],
                                    [{"rate": 2.0}]],
               demandweekdayschedule=dwd, demandweekendschedule=[[0] * 24] + [[2] * 24] * 11,
               demandrateunit="kW")
    t = read_openei(rec)
    # Jan: flat 4.0 + 3.0; Feb-May, Oct-Dec: 4.0 + 2.0; Jun-Sep: 10.0 + 2.0
    assert t["demand_charge"]["value"] == pytest.approx(6.0)
    by_months = {tuple(s["months"]): s["demand_charge"]["value"] for s in t["seasons"]}
    assert by_months == {(1,): pytest.approx(7.0), (6, 7, 8, 9): pytest.approx(12.0)}
    assert "flatdemandstructure + demandratestructure" in t["source"]


def test_fuel_adjustments_are_added_month_by_month():
    rec = sample()["items"][0]
    rec["fueladjustmentsmonthly"] = [0.01] * 6 + [0.02] + [0.01] * 5
    t = read_openei(rec)
    july = next(s for s in t["seasons"] if 7 in s["months"])
    assert july["months"] == [7]
    assert july["hourly"]["value"][17] == pytest.approx(0.28 + 0.02)
    assert t["hourly"]["value"][0] == pytest.approx(0.08 + 0.01)


def test_season_names():
    assert season_name([6, 7, 8, 9]) == "Jun-Sep"
    assert season_name([1, 2, 3, 11, 12]) == "Nov-Mar"
    assert season_name([1, 3, 4, 5]) == "Jan, Mar-May"
    assert season_name([7]) == "Jul"


def test_tie_goes_to_january_then_the_earliest():
    rec = sample()["items"][0]
    wd = [[0] * 24] * 4 + [[1] * 24] * 4 + [[2] * 24] * 4
    rec.update(energyweekdayschedule=wd, energyweekendschedule=wd)
    del rec["flatdemandstructure"], rec["flatdemandmonths"]
    t = read_openei(rec)
    assert t["hourly"]["value"] == pytest.approx([0.08] * 24)
    assert [s["months"] for s in t["seasons"]] == [[5, 6, 7, 8], [9, 10, 11, 12]]


def test_items_choice():
    two = {"items": sample()["items"] * 2}
    (path, message), = errors(two)
    assert path == "items" and "--item N" in message and "0 = LGS-TOU" in message
    assert read_openei(two, 1)["name"] == "LGS-TOU\\2"
    assert errors(two, 2)[0][0] == "item"
    assert read_openei(sample()["items"][0], 0)["name"] == "LGS-TOU\\2"


# ---- (c) refusals, each naming its field --------------------------------------------------

def with_(**fields) -> dict:
    data = sample()
    data["items"][0].update(fields)
    return data


def refused(data, **kw) -> dict[str, str]:
    return dict(errors(data, **kw))


def test_tiered_energy():
    data = sample()
    data["items"][0]["energyratestructure"][2] = [{"rate": 0.1, "max": 1000, "unit": "kWh"},
                                                   {"rate": 0.12, "unit": "kWh"}]
    assert refused(data) == {"items[0].energyratestructure[2]":
                             "2 tiers (max 1000 kWh): tiered energy rates are not supported"}


@pytest.mark.parametrize("unit", ["kWh/kW", "kWh daily", "kWh/kW daily"])
def test_energy_units(unit):
    data = sample()
    data["items"][0]["energyratestructure"][1][0]["unit"] = unit
    (path, message), = errors(data)
    assert path == "items[0].energyratestructure[1][0].unit" and unit in message


def test_time_of_use_demand():
    rec = sample()["items"][0]
    # every month: 8 USD/kW on the weekday busiest hour 16:00-21:00, 1 USD/kW on the
    # busiest hour of the others (all of a weekend day's hours)
    rec.update(demandratestructure=[[{"rate": 1.0}], [{"rate": 8.0}]],
               demandweekdayschedule=[[0] * 16 + [1] * 5 + [0] * 3] * 12,
               demandweekendschedule=[[0] * 24] * 12)
    t = read_openei(rec)
    assert t["demand_periods"] == [
        {"name": "period 0", "demand_charge": {"value": 1.0, "unit": "USD/kW/month"},
         "hours": [*range(16), 21, 22, 23], "weekend_hours": list(range(24))},
        {"name": "period 1", "demand_charge": {"value": 8.0, "unit": "USD/kW/month"},
         "hours": [16, 17, 18, 19, 20], "weekend_hours": []}]
    # the flat demand charges stand as they were: 4.0, and 10.0 Jun-Sep
    assert t["demand_charge"]["value"] == pytest.approx(4.0)
    assert t["seasons"][0]["demand_charge"]["value"] == pytest.approx(10.0)


def test_time_of_use_demand_left_out_of_the_table_is_refused_by_name():
    rec = sample()["items"][0]
    schedule = dict(demandweekdayschedule=[[0] * 16 + [1] * 5 + [0] * 3] * 12,
                    demandweekendschedule=[[0] * 24] * 12)
    # tiers within a demand period
    rec.update(demandratestructure=[[{"rate": 0}], [{"rate": 8.0, "max": 50},
                                                    {"rate": 6.0}]], **schedule)
    assert dict(errors(rec)) == {"demandratestructure[1]": "2 tiers (max 50 kW): tiered "
                                                           "demand rates are not supported"}
    # a period billed on weekend days alone
    rec.update(demandratestructure=[[{"rate": 0}], [{"rate": 8.0}]],
               demandweekdayschedule=[[0] * 24] * 12,
               demandweekendschedule=[[0] * 10 + [1] * 4 + [0] * 10] * 12)
    (path, message), = errors(rec)
    assert path == "demandweekendschedule[0]"
    assert "period 1 (8 USD/kW) only on weekend days in Jan" in message
    assert "not supported" in message
    # more periods than a tariff holds: each month its own peak hour
    rec.update(demandratestructure=[[{"rate": 0}], [{"rate": 8.0}]],
               demandweekdayschedule=[[0] * m + [1] + [0] * (23 - m) for m in range(12)],
               demandweekendschedule=[[0] * 24] * 12)
    assert len(read_openei(rec)["demand_periods"]) == 12  # within the limit
    # ... and period 0 charging too: its hours differ by month as well (12 more), and a
    # third period at 23:00 every month (one more): 25
    rec.update(demandratestructure=[[{"rate": 1.0}], [{"rate": 8.0}], [{"rate": 9.0}]],
               demandweekdayschedule=[[0] * m + [1] + [0] * (22 - m) + [2]
                                      for m in range(12)])
    (path, message), = errors(rec)
    assert path == "demandratestructure"
    assert message == ("25 time-of-use demand periods (a period's hours differing by month "
                       "count apart); the limit is 24 a tariff")


def test_tiered_demand():
    data = with_(flatdemandstructure=[[{"rate": 4.0, "max": 100}, {"rate": 3.0}], [{"rate": 9}]])
    assert refused(data) == {"items[0].flatdemandstructure[0]":
                             "2 tiers (max 100 kW): tiered demand rates are not supported"}


@pytest.mark.parametrize("fields, path", [
    ({"flatdemandunit": "kVA"}, "items[0].flatdemandunit"),
    ({"flatdemandunit": "kW daily"}, "items[0].flatdemandunit"),
    ({"flatdemandunit": None, "demandunits": "hp"}, "items[0].demandunits"),
])
def test_demand_units(fields, path):
    errs = refused(with_(**fields))
    assert list(errs) == [path] and "only kW" in errs[path]


@pytest.mark.parametrize("fields, path, words", [
    ({"coincidentratestructure": [[{"rate": 2.0}]],
      "coincidentrateschedule": [[0] * 24] * 12}, "items[0].coincidentratestructure",
     "coincident demand"),
    ({"mincharge": 25.0, "minchargeunits": "$/month"}, "items[0].mincharge", "minimum charge"),
    ({"demandratchetpercentage": [0.8] * 12}, "items[0].demandratchetpercentage", "ratchet"),
    ({"lookbackpercent": 0.5}, "items[0].lookbackpercent", "ratchet"),
    ({"fixedchargeeaaddl": 3.0}, "items[0].fixedchargeeaaddl", "additional meter"),
    ({"fixedchargeunits": "$/kWh"}, "items[0].fixedchargeunits", "$/kWh"),
    ({"fixedchargeunits": None}, "items[0].fixedchargeunits", "missing"),
    ({"fixedmonthlycharge": 40.0}, "items[0].fixedmonthlycharge", "disagrees"),
    ({"energyweekendschedule": None}, "items[0].energyweekendschedule", "missing"),
    ({"energyweekdayschedule": [[0] * 24] * 11}, "items[0].energyweekdayschedule", "12"),
    ({"energyweekdayschedule": [[0] * 24] * 11 + [[0] * 23]},
     "items[0].energyweekdayschedule[11]", "24 hours"),
    ({"energyweekdayschedule": [[0] * 24] * 3 + [[0] * 7 + [4] + [0] * 16] + [[0] * 24] * 8},
     "items[0].energyweekdayschedule[3][7]", "out of range"),
    ({"energyweekdayschedule": [[0.5] * 24] * 12}, "items[0].energyweekdayschedule[0][0]",
     "period index"),
    ({"energyratestructure": [[{"rate": -0.01}]] * 4}, "items[0].energyratestructure[0]",
     "negative"),
    ({"energyratestructure": [[{"rate": float("nan")}]] * 4},
     "items[0].energyratestructure[0][0].rate", "finite"),
    ({"energyratestructure": [[{"rate": "0.1"}]] * 4},
     "items[0].energyratestructure[0][0].rate", "number"),
    ({"energyratestructure": [[{"rate": 0.1, "max": 500}]] * 4},
     "items[0].energyratestructure[0][0].max", "limit"),
    ({"fixedchargefirstmeter": -5}, "items[0].fixedchargefirstmeter", "negative"),
    ({"flatdemandmonths": [0] * 11 + [2]}, "items[0].flatdemandmonths[11]", "period"),
    ({"startdate": None}, "items[0].startdate", "missing"),
    ({"name": ""}, "items[0].name", "missing"),
])
def test_refusals_name_their_field(fields, path, words):
    errs = refused(with_(**fields))
    assert path in errs, errs
    assert words in errs[path]


def test_negative_adj_is_fine_while_the_sum_is_not_negative():
    # period 3 of the sample is 0.30 + (-0.02)
    assert read_openei(sample())["seasons"][0]["hourly"]["value"][16] == pytest.approx(0.28)


def test_waiving_names_the_charge_and_unknown_waivers_are_refused():
    t = read_openei(with_(mincharge=25.0, minchargeunits="$/month"), ignore=["mincharge"])
    assert ("minimum charge (a floor on the monthly bill) (mincharge = 25.0 $/month) left out "
            "at the user's request") in t["source"]
    assert refused(sample(), ignore=["coincidentratestructure"]).keys() == {"ignore"}


def test_bounds():
    assert errors({"items": [{}] * (MAX_ITEMS + 1)})[0][0] == "items"
    with pytest.raises(InputError, match="the limit is"):
        parse_openei_json("[" + " " * 32_000_000 + "]", name="big.json")
    with pytest.raises(InputError, match="nested too deeply"):
        parse_openei_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match="malformed JSON"):
        parse_openei_json("{")
    data = sample()
    data["items"][0]["energyratestructure"] = [[{"rate": 0.1}]] * 1000
    assert "limit" in refused(data)["items[0].energyratestructure"]
    assert errors([1, 2])[0][1].startswith("expected a URDB response")


# ---- TOML and (d) the CLI -------------------------------------------------------------------

def test_toml_round_trips_escapes_included():
    t = read_openei(sample())
    assert tomllib.loads(tariff_toml(t))["electricity"]["tariff"] == t
    odd = dict(t, name='a "b" \\ c\n\td\x01', source="é\x7f")
    back = tomllib.loads(tariff_toml(odd))["electricity"]["tariff"]
    assert back["name"] == odd["name"] and back["source"] == odd["source"]


def run(args: list) -> object:
    return CliRunner().invoke(main, ["tariff", "import", *[str(a) for a in args]])


def test_cli_writes_the_table(tmp_path):
    out = tmp_path / "tariff.toml"
    r = run([WALLINGFORD, "--ignore", "demandratchetpercentage", "--ignore",
             "demandreactivepowercharge", "-o", out])
    assert r.exit_code == 0, r.stderr
    parsed = tomllib.loads(out.read_text(encoding="utf-8"))["electricity"]["tariff"]
    assert parsed == read_openei(load(WALLINGFORD), ignore=WAIVE)
    assert parsed["seasons"][0]["demand_charge"]["value"] == pytest.approx(11.5)
    f = tmp_path / "response.json"
    f.write_text(json.dumps(sample()), encoding="utf-8")
    r = run([f])
    assert r.exit_code == 0 and r.stderr == ""
    assert tomllib.loads(r.stdout)["electricity"]["tariff"] == read_openei(sample())


@pytest.mark.parametrize("content, words", [
    (None, "cannot read"),
    ("{not json", "malformed JSON"),
    (json.dumps({"items": sample()["items"] * 2}), "--item N"),
])
def test_cli_bad_file_one_line_nothing_written(tmp_path, content, words):
    f = tmp_path / "in.json"
    if content is not None:
        f.write_text(content, encoding="utf-8")
    out = tmp_path / "out.toml"
    r = run([f, "-o", out])
    assert r.exit_code != 0
    assert r.stderr.count("\n") == 1 and words in r.stderr
    assert r.stderr.startswith("costmodel: error: ")
    assert not out.exists() and list(tmp_path.iterdir()) == ([f] if content else [])


def test_cli_refusal_names_the_field(tmp_path):
    out = tmp_path / "out.toml"
    tiered = load(SCE)
    tiered["demandratestructure"][2] = [{"rate": 18.11, "max": 100}, {"rate": 20.0}]
    f = tmp_path / "tiered.json"
    f.write_text(json.dumps(tiered), encoding="utf-8")
    r = run([f, "-o", out])
    assert r.exit_code == 2 and not out.exists()
    assert "demandratestructure[2]: 2 tiers (max 100 kW)" in r.stderr
    assert r.stderr.count("\n") == 1
    r = run([WALLINGFORD, "--item", "3"])
    assert r.exit_code == 2 and "--item: 3" in r.stderr


def test_cli_keeps_an_existing_output_on_error(tmp_path):
    out = tmp_path / "out.toml"
    out.write_text("keep", encoding="utf-8")
    bad = copy.deepcopy(sample())
    bad["items"][0]["energyweekdayschedule"] = None
    f = tmp_path / "in.json"
    f.write_text(json.dumps(bad), encoding="utf-8")
    assert run([f, "-o", out]).exit_code == 2
    assert out.read_text(encoding="utf-8") == "keep"
