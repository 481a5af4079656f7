"""Money in the buyer's currency: amounts given in any currency with a stated rate, results
shown in the chosen one; no rate is ever applied unless the scenario states it."""
from __future__ import annotations

import pytest

from costmodel.model.chain import price
from costmodel.model.inputs import InputError, validate_scenario
from costmodel.model.steps import SHOWN

EUR_PER_USD = 0.92
GBP_PER_USD = 0.79
FX = {"EUR": {"rate": f"{EUR_PER_USD} EUR/USD", "date": "2026-11-30",
              "source": "illustrative assumption for the test"},
      "GBP": {"rate": {"value": GBP_PER_USD, "unit": "GBP/USD"}, "date": "2026-11-30",
              "source": "illustrative assumption for the test"}}


def usd(**more) -> dict:
    return {"name": "usd", "accelerator": {"rated_power": "1000 W", "price": "30000 USD"},
            "operating_point": {"throughput": "1000 token/s"},
            "electricity": {"price": "0.10 USD/kWh"}, "facility": {"hosting": "150 USD/kW/month"},
            **more}


def test_an_eur_scenario_is_the_usd_one_times_the_rate():
    dollars = price(validate_scenario(usd()))
    euros = price(validate_scenario(usd(money={"currency": "EUR", "fx": FX})))
    body = euros.to_json()
    for name in SHOWN:
        value, unit = euros.shown(name)
        assert value == pytest.approx(dollars.values[name] * EUR_PER_USD, rel=1e-12), name
        assert unit.startswith("EUR"), unit
    assert body["cost_per_mtok"]["total"] == {
        "value": pytest.approx(dollars.values["cost_per_mtok_total"] * 0.92, rel=1e-12),
        "unit": "EUR/Mtok"}
    assert body["disclosure"]["money"]["rate"] == {
        "value": 0.92, "unit": "EUR/USD", "date": "2026-11-30",
        "source": "illustrative assumption for the test"}
    # the calculation itself stays in USD: the same figures underneath
    assert euros.values["cost_per_mtok_total"] == dollars.values["cost_per_mtok_total"]


def test_amounts_in_other_currencies_are_converted_at_their_stated_rates():
    # 27,600 EUR at 0.92 EUR/USD is 30,000 USD; 0.079 GBP/kWh at 0.79 GBP/USD is 0.10 USD/kWh;
    # 138 EUR/kW/month is 150 USD/kW/month
    mixed = usd(money={"currency": "EUR", "fx": FX})
    mixed["accelerator"] = {"rated_power": "1000 W", "price": "27600 EUR"}
    mixed["electricity"] = {"price": "0.079 GBP/kWh"}
    mixed["facility"] = {"hosting": "138 EUR/kW/month"}
    s = validate_scenario(mixed)
    assert s.accelerator.price == pytest.approx(30000, rel=1e-12)
    assert s.electricity.price == pytest.approx(0.10, rel=1e-12)
    assert s.facility.hosting == pytest.approx(150, rel=1e-12)
    assert s.money.converted == ["EUR", "GBP"]
    dollars = price(validate_scenario(usd()))
    assert price(s).shown("cost_per_mtok_total")[0] == pytest.approx(
        dollars.values["cost_per_mtok_total"] * EUR_PER_USD, rel=1e-12)


def test_a_currency_without_a_rate_is_refused_naming_every_field():
    data = usd()
    data["accelerator"] = {"rated_power": "1000 W", "price": "27600 EUR"}
    data["electricity"] = {"price": "0.08 EUR/kWh"}
    with pytest.raises(InputError) as info:
        validate_scenario(data)
    paths = [p for p, _ in info.value.errors]
    assert paths == ["accelerator.price", "electricity.price"]
    assert "money.fx.EUR" in info.value.errors[0][1]
    # a GBP input in an EUR scenario needs the GBP rate too
    data["money"] = {"currency": "EUR", "fx": {"EUR": FX["EUR"]}}
    data["electricity"] = {"price": "0.08 GBP/kWh"}
    with pytest.raises(InputError) as info:
        validate_scenario(data)
    assert [p for p, _ in info.value.errors] == ["electricity.price"]
    assert "GBP" in info.value.errors[0][1]


@pytest.mark.parametrize("money,path", [
    ({"currency": "EUR"}, "money.currency"),
    ({"fx": {"EUR": {**FX["EUR"], "rate": "0.92 GBP/USD"}}}, "money.fx.EUR.rate"),
    ({"fx": {"EUR": {**FX["EUR"], "rate": "0.92"}}}, "money.fx.EUR"),
    ({"fx": {"EUR": {"rate": "0.92 EUR/USD"}}}, "money.fx.EUR.date"),
    ({"fx": {"EUR": {**FX["EUR"], "rate": "0 EUR/USD"}}}, "money.fx.EUR"),
    ({"currency": "euro"}, "money.currency"),
])
def test_bad_money_tables_are_refused_by_field(money, path):
    with pytest.raises(InputError) as info:
        validate_scenario(usd(money=money))
    assert path in [p for p, _ in info.value.errors], info.value.errors


def test_no_rate_is_applied_silently():
    # a USD scenario says so and converts nothing
    r = price(validate_scenario(usd()))
    assert r.to_json()["disclosure"]["money"] == {"currency": "USD", "calculated_in": "USD"}
    assert r.to_json()["cost_per_mtok"]["total"]["unit"] == "USD/Mtok"


def test_the_workbook_carries_the_rate_live_and_reads_an_edited_one_back(tmp_path):
    from openpyxl import load_workbook

    from costmodel import app
    from costmodel.app.build import build_scenario
    from costmodel.app.pricing import price_loaded, render_workbook
    from costmodel.render.workbook.names import named_cells
    priced = price_loaded(build_scenario(usd(money={"currency": "EUR", "fx": FX})))
    path = tmp_path / "eur.xlsx"
    path.write_bytes(render_workbook([priced]).content)
    wb = load_workbook(path)
    (rate,) = named_cells(wb, "money_rate")
    assert rate.value == EUR_PER_USD
    (total,) = named_cells(wb, "cost_per_mtok_total_shown")
    assert total.value == "=cost_per_mtok_total*money_rate"
    rate.value = 0.5
    wb.save(path)
    read = app.reprice(path)
    (result,) = read.results
    assert result.shown("cost_per_mtok_total") == (
        pytest.approx(priced.result.values["cost_per_mtok_total"] * 0.5, rel=1e-12), "EUR/Mtok")
    assert "edited in the workbook" in result.disclosure()["money"]["rate"]["source"]


def test_the_what_if_answers_in_the_result_currency():
    from costmodel import app
    from costmodel.app.build import build_scenario
    from costmodel.app.pricing import price_loaded
    tariff = {"tariff": {"hourly": ["0.20 USD/kWh"] * 8 + ["0.08 USD/kWh"] * 16}}
    load = {"hourly": [0.5] * 24}
    dollars = app.shift_flexible(price_loaded(build_scenario(
        usd(electricity=tariff, load=load))), 0.5).to_json()
    euros = app.shift_flexible(price_loaded(build_scenario(
        usd(electricity=tariff, load=load, money={"currency": "EUR", "fx": FX}))), 0.5).to_json()
    assert euros["change"]["unit"] == "EUR/Mtok" and dollars["change"]["unit"] == "USD/Mtok"
    assert euros["change"]["value"] == pytest.approx(dollars["change"]["value"] * EUR_PER_USD,
                                                     rel=1e-9)
    assert euros["cost_per_mtok"]["total"]["value"] == pytest.approx(
        dollars["cost_per_mtok"]["total"]["value"] * EUR_PER_USD, rel=1e-12)


@pytest.mark.parametrize("rate", ["0.92EUR/USD", "0.92 EUR / USD", " 0.92   EUR/USD ",
                                  {"value": 0.92, "unit": "EUR / USD"}])
def test_a_rate_is_read_however_its_quantity_is_spaced(rate):
    # the currency is the rate's unit as the quantity reader reads it, not the text after a
    # first space (schemathesis: "0AED/  USD" was refused as naming no currency)
    money = {"currency": "EUR", "fx": {"EUR": {**FX["EUR"], "rate": rate}}}
    euros = price(validate_scenario(usd(money=money)))
    dollars = price(validate_scenario(usd()))
    assert euros.to_json()["cost_per_mtok"]["total"]["value"] == pytest.approx(
        dollars.to_json()["cost_per_mtok"]["total"]["value"] * 0.92, rel=1e-12)


def test_a_zero_rate_spaced_oddly_is_refused_for_its_sign():
    money = {"currency": "AED", "fx": {"AED": {**FX["EUR"], "rate": "  0AED/     USD"}}}
    with pytest.raises(InputError) as info:
        validate_scenario(usd(money=money))
    (path, message), = info.value.errors
    assert path == "money.fx.AED" and "must be greater than zero, got 0 AED / USD" in message
