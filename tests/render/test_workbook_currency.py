"""The headline of a workbook in the scenario's currency: a scenario with a ``[money]`` table
(the sample TOU scenario: EUR at 0.92 EUR/USD, 2026-11-30) answers on its Summary and Cover
in EUR, the rate, its date and source beside the figures, live (each figure is its USD
figure times ``money_rate`` on Inputs: LibreOffice recalculates them after the rate is
edited); its charts say EUR. A USD scenario's headline is as it was.

The recalculations are skipped where LibreOffice is not installed, unless
COSTMODEL_REQUIRE_LIBREOFFICE is set (as .ci/run sets it).
"""
from __future__ import annotations

import zipfile

import pytest
from conftest import SCENARIOS, require_libreoffice, workbook_systems
from openpyxl import load_workbook

from costmodel.render.workbook.export import build_workbook, save_workbook
from costmodel.render.workbook.names import named_cells

EUR_PER_USD = 0.92  # fixtures/scenarios/sample-tou.toml
HEADLINE = {"Cost per million tokens": "cost_per_mtok_total",
            "Price per million tokens": "price_per_mtok_total",
            "  of which energy cost": "cost_per_mtok_energy",
            "  of which capital cost": "cost_per_mtok_capex",
            "  of which operating cost": "cost_per_mtok_opex"}


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    folder = tmp_path_factory.mktemp("currency")
    out = {}
    for sample in ("sample-tou", "sample-tco"):
        systems, _ = workbook_systems([SCENARIOS / f"{sample}.toml"])
        out[sample] = (save_workbook(build_workbook(systems), folder / f"{sample}.xlsx"),
                       systems[0].result)
    return out


def _rows(ws) -> dict[str, list]:
    """A sheet's rows by their label (column A): [label, -, unit, system 1, ...]."""
    return {row[0].value: [c.value for c in row] for row in ws.iter_rows() if row[0].value}


def _headline(path, data_only: bool):
    wb = load_workbook(path, data_only=data_only)
    return _rows(wb["Summary"]), _rows(wb["Cover"])


def test_the_summary_and_cover_answer_in_the_scenarios_currency(books):
    path, result = books["sample-tou"]
    assert result.currency == "EUR"
    summary, cover = _headline(path, data_only=False)
    cached, cached_cover = _headline(path, data_only=True)
    for label, name in HEADLINE.items():
        # the USD figure times the rate: 0.1709... USD/Mtok is 0.1573 EUR/Mtok
        eur = result.values[name] * EUR_PER_USD
        assert summary[label][2:4] == ["EUR/Mtok", f"={name}_shown"], label
        assert cached[label][3] == pytest.approx(eur, rel=1e-12), label
    assert cached["Cost per million tokens"][3] == pytest.approx(0.15725620, rel=1e-6)
    assert cover["cost per million tokens"][2:4] == ["EUR/Mtok", "=cost_per_mtok_total_shown"]
    assert cached_cover["cost per million tokens"][3] == pytest.approx(
        result.values["cost_per_mtok_total"] * EUR_PER_USD, rel=1e-12)
    for rows, values in ((summary, cached), (cover, cached_cover)):  # the rate, live
        assert rows["Exchange rate (EUR per USD)"][2:4] == ["EUR/USD", "=money_rate"]
        assert values["Exchange rate (EUR per USD)"][3] == EUR_PER_USD
        assert values["  the rate's date and source"][3] == (
            "2026-11-30; illustrative assumption for the example (use a published reference "
            "rate of the day)")
    assert cover["money"][3] == (
        "calculated in USD, shown in EUR at 0.92 EUR/USD (2026-11-30; illustrative "
        "assumption for the example (use a published reference rate of the day))")


def test_the_charts_say_the_currency(books):
    for sample, code in (("sample-tou", "EUR"), ("sample-tco", "USD")):
        with zipfile.ZipFile(books[sample][0]) as z:
            charts = [z.read(n).decode() for n in z.namelist()
                      if n.startswith("xl/charts/chart")]
        (summary,) = [c for c in charts if "<c:f>Summary!" in c]  # its cells: in the code
        assert f"{code} per million tokens" in summary, sample


def test_a_usd_scenarios_headline_is_unchanged(books):
    path, result = books["sample-tco"]
    summary, cover = _headline(path, data_only=False)
    cached, _ = _headline(path, data_only=True)
    assert summary["Cost per million tokens"][2:4] == ["USD/Mtok", "=cost_per_mtok_total"]
    assert cached["Cost per million tokens"][3] == pytest.approx(
        result.values["cost_per_mtok_total"], rel=1e-12)
    assert cover["cost per million tokens"][2:4] == ["USD/Mtok", "=cost_per_mtok_total"]
    for rows in (summary, cover):
        assert not any("Exchange rate" in str(k) for k in rows)
    assert "money" not in cover


def test_an_edited_rate_recalculates_the_headline(books, tmp_path):
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    path, result = books["sample-tou"]
    wb = load_workbook(path)
    (rate,) = named_cells(wb, "money_rate")
    rate.value = 0.5
    wb.save(tmp_path / "edited.xlsx")
    summary, cover = _headline(recalculate(tmp_path / "edited.xlsx", tmp_path / "out"),
                               data_only=True)
    for label, name in HEADLINE.items():
        assert summary[label][3] == pytest.approx(result.values[name] * 0.5, rel=1e-9), label
    assert cover["cost per million tokens"][3] == pytest.approx(
        result.values["cost_per_mtok_total"] * 0.5, rel=1e-9)
    assert summary["Exchange rate (EUR per USD)"][3] == cover["Exchange rate (EUR per USD)"][
        3] == 0.5
