"""Pricing use cases: one scenario, several side by side, and their workbook."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.chain import compare as compare_results
from ..model.chain import price as price_result
from ..model.errors import InputError
from ..model.results import Comparison, Result, check_finite
from ..sources.curve_point import CurveReading
from ..sources.scenario_file import LoadedScenario
from .context import Context
from .load import load, load_all
from .specs import OWN_POINT, Reading, ScenarioSpec

if TYPE_CHECKING:  # the reader loads openpyxl: only when a workbook is read
    pass

__all__ = ["Priced", "Compared", "WorkbookFile", "price", "price_loaded", "compare",
           "workbook", "render_workbook", "FlexibleShift",
           "shift_flexible", "FLEXIBLE_SHARE"]

# the what-if's share of the load moved [fraction]: its bounds, on every face
FLEXIBLE_SHARE = (0.0, 1.0)


@dataclass(frozen=True)
class Priced:
    """A priced scenario [every step in its declared unit] and, when its operating point was
    read off a curve, what was read."""
    result: Result
    curve: CurveReading | None = None
    loaded: LoadedScenario | None = None


@dataclass(frozen=True)
class Compared:
    """Scenarios priced side by side; ratios are against the first."""
    comparison: Comparison
    systems: list[Priced]


@dataclass(frozen=True)
class WorkbookFile:
    """A workbook's bytes and a file name that says what it holds."""
    content: bytes
    filename: str


def price_loaded(loaded: LoadedScenario, *, sources: bool = True,
                 defaults: list[str] | None = None) -> Priced:
    """A loaded scenario priced; costs that overflow are an error, never an answer.
    ``sources=False``: for an answer without the per-input sources (its provenance is not
    completed); ``defaults``: its defaults used, when known already."""
    result = price_result(loaded.scenario, loaded.provenance, sources=sources,
                          defaults=defaults)
    check_finite(result)
    return Priced(result, loaded.curve, loaded)


def price(ctx: Context, spec: ScenarioSpec, *, sources: bool = True) -> Priced:
    """One scenario at its own operating point (``sources=False``: for an answer without the
    per-input sources, whose provenance is not completed)."""
    loaded = load(ctx, spec, sources=sources)
    try:
        return price_loaded(loaded, sources=sources)
    except InputError as exc:
        raise exc.about(spec.subject) from None


def compare(ctx: Context, specs: Sequence[ScenarioSpec], reading: Reading = OWN_POINT
            ) -> Compared:
    """Several scenarios, every curve read where ``reading`` says."""
    loaded = load_all(ctx, specs, reading)
    comparison = compare_results([(x.scenario, x.provenance) for x in loaded])
    for result, spec in zip(comparison.results, specs, strict=True):
        try:
            check_finite(result)
        except InputError as exc:
            raise exc.about(spec.subject) from None
    return Compared(comparison, [Priced(r, x.curve, x)
                                 for r, x in zip(comparison.results, loaded, strict=True)])


@dataclass(frozen=True)
class FlexibleShift:
    """What if ``share`` of the load moved to the cheapest hours of its day: the scenario
    priced as given and with the load moved (same serving hours, same tokens)."""
    share: float
    before: Result
    after: Result

    def to_json(self) -> dict[str, Any]:
        """The what-if's answer; money in the result currency, as the result shows it."""
        def q(result: Result, name: str) -> dict[str, Any]:
            value, unit = result.shown(name)
            return {"value": value, "unit": unit}
        total = "cost_per_mtok_total"
        after, before = q(self.after, total), q(self.before, total)
        return {"flexible_share": self.share,
                "load": {"hourly": self.after.scenario.load.hourly,
                         "weekend": self.after.scenario.load.weekend},
                "cost_per_mtok": {"total": after,
                                  "energy": q(self.after, "cost_per_mtok_energy")},
                "electricity_effective_price": self.after.quantity(
                    "electricity_effective_price"),
                "change": {"value": after["value"] - before["value"], "unit": after["unit"]},
                "rule": "each day keeps its serving hours; the flexible share of every hour "
                        "moves to the same day's cheapest hours (the year's average rate), "
                        "each filled up to a whole hour"}

    def answer(self, view: str = "full") -> dict[str, Any]:
        """The scenario priced as given, with the what-if beside it (``what_if``): what
        ``costmodel price --flexible-share --json`` and ``POST /api/v1/price`` with a
        ``flexible_share`` answer."""
        return {**self.before.to_json(view), "what_if": self.to_json()}


def shift_flexible(priced: Priced, share: float) -> FlexibleShift:
    """The cost if ``share`` [fraction] of the load moved to the cheapest hours (needs a
    tariff: at a flat price every hour costs the same)."""
    from ..model.chain import price as price_scenario
    from ..model.evaluate import Evaluator
    from ..model.inputs import validate_scenario
    from ..model.profile import move_flexible
    from ..model.steps import MODEL
    scenario = priced.result.scenario
    if scenario.electricity.tariff is None:
        raise InputError([("flexible_share", "needs a tariff (electricity.tariff): at a flat "
                                             "price every hour costs the same")])
    low, high = FLEXIBLE_SHARE
    if not low <= share <= high:
        raise InputError([("flexible_share", f"a fraction from {low:g} to {high:g}, got "
                                             f"{share:g}")])
    inputs = scenario.to_inputs()
    got = Evaluator(MODEL, outputs=["tariff_rate_by_hour", "load_by_hour"])(inputs)
    hours = inputs["hour_weight"].shape[1]
    load = np.broadcast_to(got["load_by_hour"], (1, hours))
    moved = move_flexible(load, got["tariff_rate_by_hour"], share)[0].tolist()
    data = scenario.to_data()
    data["load"] = {"hourly": moved[:24], **({"weekend": moved[24:]} if hours > 24 else {})}
    data.pop("utilisation", None)  # the shape's mean, unchanged by the move
    after = price_scenario(validate_scenario(data), priced.result.provenance)
    check_finite(after)
    return FlexibleShift(share, priced.result, after)


def _filename(names: Sequence[str]) -> str:
    """``deepseek-r1-gb300_vs_jalapeno.xlsx``: the systems' names, safe for any file system."""
    stem = "_vs_".join(re.sub(r"[^A-Za-z0-9._-]+", "-", n).strip("-.") or "scenario"
                       for n in names[:3])
    return f"{stem[:120] or 'costmodel'}.xlsx"


def render_workbook(systems: Sequence[Priced], *, title: str | None = None,
                    quotes: Sequence[tuple[Any, Sequence[Any]]] = (),
                    sensitivity: Sequence[Any] = ()) -> WorkbookFile:
    """The workbook (live formulas) of priced systems, with optional Quotes and Sensitivity
    sheets."""
    from ..render.workbook.export import WorkbookSystem, build_workbook
    wb = build_workbook([WorkbookSystem(p.result, p.curve) for p in systems], title=title,
                        quotes=quotes, sensitivity=sensitivity)
    buf = BytesIO()
    wb.save(buf)
    return WorkbookFile(buf.getvalue(), _filename([p.result.name for p in systems]))


def workbook(ctx: Context, specs: Sequence[ScenarioSpec], reading: Reading = OWN_POINT, *,
             title: str | None = None) -> WorkbookFile:
    """The workbook of one scenario or a comparison."""
    loaded = load_all(ctx, specs, reading)
    priced = []
    for x, spec in zip(loaded, specs, strict=True):
        try:
            priced.append(price_loaded(x))
        except InputError as exc:
            raise exc.about(spec.subject) from None
    return render_workbook(priced, title=title)


