"""The one-page plan (PDF) in the scenario's currency: its money in EUR for the sample TOU
scenario (0.92 EUR/USD, 2026-11-30), the rate, its date and source in the table beside it;
a USD scenario's page without a rate."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import SCENARIOS

from costmodel import app

pypdf = pytest.importorskip("pypdf", reason="pypdf (the test extra) reads the page back")


def _page(sample: str) -> tuple[str, app.Plan]:
    spec = app.ScenarioSpec(app.FileScenario(Path(SCENARIOS / f"{sample}.toml")), ())
    planned = app.plan(app.LocalContext(), app.PlanRequest(spec, demand=100_000.0))
    text = pypdf.PdfReader(io.BytesIO(app.plan_pdf(planned))).pages[0].extract_text()
    return text, planned


def test_the_plan_page_shows_the_rate_beside_its_money():
    text, planned = _page("sample-tou")
    usd = planned.priced.result.values["cost_per_mtok_total"]  # 0.1709 USD/Mtok
    assert f"Cost per million tokens {usd * 0.92:.4f} EUR/Mtok" in text
    assert "Exchange rate (EUR per USD) 0.92 EUR/USD (2026-11-30; illustrative assumption" \
        in text


def test_a_usd_plan_page_has_no_rate():
    text, _ = _page("sample-tco")
    assert "USD/Mtok" in text and "Exchange rate" not in text
