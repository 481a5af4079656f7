"""The regional electricity catalog (fixtures/catalog/electricity.toml).

Every entry is a cited average price: it validates in a scenario, carries its source, date,
region, sector and period, and a carbon intensity never comes without its own source. A few
figures are checked by hand against the publication they cite, and a scenario file can name
an entry and see the region's price and source in the disclosure.
"""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from costmodel.cli import main
from costmodel.model.inputs import validate_scenario
from costmodel.model.units import parse_quantity
from costmodel.sources.catalog import default_catalog

CATALOG = default_catalog()
# the average prices (the tariffs, electricity entries with a tariff table, are checked below)
KEYS = [k for k in CATALOG.keys("electricity")
        if "tariff" not in CATALOG.get("electricity", k, "electricity").data]
TARIFFS = [k for k in CATALOG.keys("electricity") if k not in KEYS]
EUR_RATE = {"fx": {"EUR": {"rate": "0.92 EUR/USD", "date": "2026-11-30",
                           "source": "illustrative assumption for the test"}}}
BASE = {"accelerator": {"rated_power": "700 W", "price": "30000 USD"},
        "operating_point": {"throughput": "1000 token/s"}, "money": EUR_RATE}
# The entry the published scenarios use predates region/sector/period; setting them changes
# the electricity provenance those scenarios disclose (tests/test_disclosure_sources.py pins
# it), and a `--set electricity.price` would keep them although they describe the replaced
# price. Until the engine drops them with the price's source and date, it goes without.
UNDESCRIBED = {"eia-2026-05-us-industrial"}


def entry(key: str):
    return CATALOG.get("electricity", key, "electricity")


def test_the_catalog_covers_several_regions():
    regions = {entry(k).data["region"] for k in KEYS if k not in UNDESCRIBED}
    us_states = {r for r in regions if r.startswith("US-")}
    assert len(us_states) >= 5, sorted(regions)


@pytest.mark.parametrize("key", KEYS)
def test_every_entry_validates_in_a_scenario(key):
    scenario = validate_scenario({**BASE, "electricity": entry(key).data})
    e = scenario.electricity
    assert 0 < e.price < 1  # USD/kWh: a retail average, not cents read as dollars
    assert e.region == entry(key).data.get("region")


@pytest.mark.parametrize("key", KEYS)
def test_every_entry_is_cited(key):
    e = entry(key)
    assert e.provenance.get("price"), f"{key}: the price has no source"
    fields = ("source", "date") if key in UNDESCRIBED else (
        "source", "date", "region", "sector", "period")
    for field in fields:
        assert str(e.data.get(field) or "").strip(), f"{key}: no {field}"
    assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", e.data["date"]), e.data["date"]
    if key not in UNDESCRIBED:
        assert re.fullmatch(r"[A-Z]{2}(-[A-Z0-9]{1,3})?", e.data["region"]), e.data["region"]
    # an entry's price is in its published currency: USD, cents or EUR (read at a stated rate)
    assert e.data["price"]["unit"] in ("USD/kWh", "cent/kWh", "EUR/kWh"), e.data["price"]


@pytest.mark.parametrize("key", KEYS)
def test_a_carbon_intensity_has_its_own_source(key):
    e = entry(key)
    if "carbon_intensity" not in e.data:
        assert "carbon_source" not in e.data, f"{key}: a carbon source without a figure"
        return
    assert e.provenance.get("carbon_intensity"), f"{key}: carbon intensity without a source"
    assert str(e.data.get("carbon_source") or "").strip(), f"{key}: no carbon_source"
    text = e.provenance["carbon_intensity"]
    if "lb/MWh" in text:  # a hand conversion shows its arithmetic
        assert "453.592" in text or "0.453592" in text, text


@pytest.mark.parametrize("key", KEYS)
def test_the_figure_in_the_source_text_is_the_figure_entered(key):
    """Where the price's source quotes the published figure, the entry holds that figure."""
    e = entry(key)
    quoted = re.search(r"(\d+(?:\.\d+)?) cents/kWh", e.provenance["price"])
    if quoted is None:
        pytest.skip("the source text does not quote the figure")
    assert e.data["price"] == {"value": pytest.approx(float(quoted.group(1))),
                               "unit": "cent/kWh"}


# ---- hand-checked against the publication ------------------------------------------------------

# EIA, Electric Power Annual, data for 2023 (released 2024-10-17), average revenue per kWh by
# state (cents/kWh), https://www.eia.gov/electricity/annual/secrev-map.php
EIA_2023 = {"eia-2023-us-tx-industrial": 6.60, "eia-2023-us-tx-commercial": 8.82,
            "eia-2023-us-ca-industrial": 18.64, "eia-2023-us-va-industrial": 8.92,
            "eia-2023-us-wa-industrial": 6.35, "eia-2023-us-oh-industrial": 7.03}


@pytest.mark.parametrize(("key", "cents"), sorted(EIA_2023.items()))
def test_usd_per_kwh_is_the_published_cents_over_100(key, cents):
    e = validate_scenario({**BASE, "electricity": entry(key).data}).electricity
    assert e.price == pytest.approx(cents / 100)
    assert e.period == "2023" and entry(key).data["date"] == "2024-10-17"


def test_lb_per_mwh_to_g_per_kwh_is_times_0_453592():
    """The conversion a hand-converted eGRID figure must show: x lb/MWh = x * 0.453592
    g/kWh (453.592 g per lb, 1000 kWh per MWh). pint does not read lb/MWh as a carbon
    intensity, so the engine is given kgCO2e/MWh, which it reads directly."""
    lb_per_mwh = 815.0
    g_per_kwh = lb_per_mwh * 453.592 / 1000
    assert g_per_kwh == pytest.approx(lb_per_mwh * 0.453592)
    assert parse_quantity(f"{g_per_kwh} kgCO2e/MWh", "gCO2e/kWh",
                          per=("[energy]",)) == pytest.approx(g_per_kwh)
    assert g_per_kwh / 0.453592 == pytest.approx(lb_per_mwh)


def test_a_price_in_another_currency_is_read_only_at_a_stated_rate():
    """Eurostat's 0.276 EUR/kWh for Cyprus: refused without a rate, naming the field; at a
    stated 0.92 EUR/USD it is 0.276 / 0.92 = 0.3 USD/kWh."""
    from costmodel.model.inputs import InputError
    from costmodel.model.units import UnitInputError
    with pytest.raises(UnitInputError):
        parse_quantity("0.276 EUR/kWh", "USD/kWh", per=("[energy]",))
    cyprus = entry("eurostat-2023s2-cy-non-household").data
    with pytest.raises(InputError) as info:
        validate_scenario({**BASE, "money": {}, "electricity": cyprus})
    assert [p for p, _ in info.value.errors] == ["electricity.price"]
    e = validate_scenario({**BASE, "electricity": cyprus}).electricity
    assert e.price == pytest.approx(0.276 / 0.92) == pytest.approx(0.3)
    assert e.carbon_intensity == pytest.approx(512.24)


@pytest.mark.parametrize("key", TARIFFS)
def test_every_tariff_is_cited_and_validates(key):
    tariff = entry(key).data["tariff"]
    assert str(tariff.get("source") or "").strip(), f"{key}: no source"
    assert tariff.get("effective") or "illustrative assumption" in tariff["source"], key
    e = validate_scenario({**BASE, "electricity": entry(key).data}).electricity
    assert e.pricing == "tariff" and e.price is None


# ---- a scenario file names an entry --------------------------------------------------------------

@pytest.mark.parametrize("key", ["eia-2023-us-tx-industrial", "eia-2023-us-va-commercial"])
def test_a_scenario_file_can_name_an_entry(tmp_path, key):
    path = tmp_path / "regional.toml"
    path.write_text('name = "regional electricity"\naccelerator = "h100"\n'
                    f'electricity = "{key}"\n'
                    '[operating_point]\nthroughput = "1000 token/s"\n', encoding="utf-8")
    e = entry(key)
    r = CliRunner().invoke(main, ["price", "--json", str(path)])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.stdout)["disclosure"]["electricity"]
    assert shown["price"] == {"value": pytest.approx(e.data["price"]["value"] / 100),
                              "unit": "USD/kWh"}
    assert shown["source"] == e.data["source"]
    assert shown["date"] == e.data["date"]

    r = CliRunner().invoke(main, ["price", str(path)])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    cited = f" USD per kWh ({e.data['source']}; {e.data['date']})"
    shown_price = re.search(r"Electricity ([0-9.]+)" + re.escape(cited), flat)
    assert shown_price, flat
    assert float(shown_price.group(1)) == pytest.approx(e.data["price"]["value"] / 100)


def test_a_price_set_by_hand_drops_the_averages_sector_and_period(tmp_path):
    path = tmp_path / "regional.toml"
    path.write_text('accelerator = "h100"\nelectricity = "eia-2023-us-tx-industrial"\n'
                    '[operating_point]\nthroughput = "1000 token/s"\n', encoding="utf-8")
    r = CliRunner().invoke(main, ["price", "--json", str(path), "--set",
                                  "electricity.price=0.05 USD/kWh"])
    assert r.exit_code == 0, r.output
    shown = json.loads(r.stdout)["disclosure"]["electricity"]
    assert shown["price"]["value"] == pytest.approx(0.05)
    assert shown["region"] == "US-TX"  # still where it applies
    assert "sector" not in shown and "period" not in shown
    assert shown["source"] == "--set electricity.price=0.05 USD/kWh"
