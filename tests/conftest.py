"""Shared helpers: price a scenario mapping or a fixture file through the whole chain."""
from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.chain import price
from costmodel.sources.scenario_file import build_scenario, load_scenario_file

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "fixtures" / "scenarios" / "published"
UPSTREAM = ROOT.parent / "shared" / "fixtures-upstream"


def price_data(data: dict, overrides=()):
    """Price a scenario mapping (optionally with (key, value) overrides)."""
    loaded = build_scenario(data, list(overrides))
    return price(loaded.scenario, loaded.provenance)


def price_file(path, overrides=()):
    loaded = load_scenario_file(path, list(overrides))
    return price(loaded.scenario, loaded.provenance)


@pytest.fixture
def published():
    """``published("deepseek-r1", "gb300", "peak", *overrides)`` -> Result."""
    def _price(model: str, system: str, point: str, *overrides: str):
        return price_file(PUBLISHED / f"{model}_{system}_{point}.toml", overrides)
    return _price


SCENARIOS = ROOT / "fixtures" / "scenarios"
CURVE_SCENARIOS = [SCENARIOS / f"curve-gpt-oss-120b-{hw}.toml" for hw in ("h100", "b200", "mi300x")]


def workbook_systems(files, overrides=(), extra=()):
    """Price scenario files the way `costmodel workbook` does: (systems, loaded)."""
    from costmodel.workbook.export import WorkbookSystem
    loaded = [load_scenario_file(f, list(overrides), extra=list(extra)) for f in files]
    return [WorkbookSystem(price(x.scenario, x.provenance), x.curve) for x in loaded], loaded


def matched_extra(files):
    """The override that reads every curve at the matched interactivity."""
    from costmodel.curves import matched_interactivity
    from costmodel.sources.scenario_file import scenario_frontier
    target = matched_interactivity([scenario_frontier(f) for f in files])
    return [("operating_point.at", {"interactivity": {"value": target, "unit": "token/s/user"}})]
