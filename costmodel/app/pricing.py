"""Pricing use cases: one scenario, several side by side, and their workbook; and a
worker's :class:`Pricer`, the one entry every face prices through.

:func:`price` loads and prices a spec (the command line, the web pages); a service worker's
:class:`Pricer` answers the same through its caches: equal requests share one answer
(serialised once, selected before serialising), and an inline scenario met again with other
numbers is built from the known one (:mod:`costmodel.app.variants`) rather than expanded and
validated again. Both price through :mod:`costmodel.app.engine`, the one door into the
engine.
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from io import BytesIO
from typing import Any

from ..model.errors import InputError
from ..model.results import Comparison, Result, check_finite
from .context import Context
from .engine import Priced, compare_scenarios, price_loaded, price_scenario
from .events import emit
from .load import load, load_all
from .specs import OWN_POINT, InlineScenario, Reading, ScenarioSpec

__all__ = ["Priced", "Compared", "WorkbookFile", "price", "price_loaded", "compare",
           "workbook", "render_workbook", "FlexibleShift",
           "shift_flexible", "FLEXIBLE_SHARE", "Pricer", "PriceAnswer"]

# the what-if's share of the load moved [fraction]: its bounds, on every face
FLEXIBLE_SHARE = (0.0, 1.0)


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
    comparison = compare_scenarios([(x.scenario, x.provenance) for x in loaded])
    for result, spec in zip(comparison.results, specs, strict=True):
        try:
            check_finite(result)
        except InputError as exc:
            raise exc.about(spec.subject) from None
    return Compared(comparison, [Priced(r, x.curve, x)
                                 for r, x in zip(comparison.results, loaded, strict=True)])


class PriceAnswer:
    """A price's answer as the service sends it: its JSON data, the bytes of that data
    (serialised once, when first asked) and their ETag."""
    __slots__ = ("_content", "_digest", "_etag", "data")

    def __init__(self, data: dict[str, Any], digest: Callable[[bytes], str]):
        self.data = data  # never changed: shared by every request that meets it
        self._content: bytes | None = None
        self._etag: str | None = None
        self._digest = digest

    @property
    def content(self) -> bytes:
        if self._content is None:  # (two threads may both serialise: the same bytes)
            import orjson
            self._content = orjson.dumps(self.data)
        return self._content

    @property
    def etag(self) -> str:
        if self._etag is None:
            self._etag = self._digest(self.content)
        return self._etag

    def selected(self, select: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
        """The parts of the answer ``select`` picks from its data, serialised (the whole
        answer is not)."""
        import orjson
        return orjson.dumps(select(self.data))


class Pricer:
    """A worker's door into the engine: :func:`price` with its memory. Answers are kept by
    the caller's key (the request's content and the catalog's marker) while they stay among
    the ``cache_size`` last used; an inline scenario without overrides that differs from a
    known one only in numeric inputs is built from it (:class:`~costmodel.app.variants.Variants`)
    and priced by :func:`price_loaded` like any other."""

    def __init__(self, digest: Callable[[bytes], str], *, cache_size: int = 4096):
        from .variants import Variants  # (the service's: the command line never loads it)
        self._digest = digest
        self._answers: OrderedDict[Hashable, PriceAnswer] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.variants = Variants()

    def price(self, ctx: Context, spec: ScenarioSpec, *, sources: bool = True,
              catalog: Hashable = None, view: str = "full") -> Priced:
        """``spec`` priced as :func:`price` prices it; ``catalog``: a marker of the catalog
        ``ctx`` reads (its entries are only ever added), which lets an inline scenario be
        built from a known one priced with the same catalog; ``view``: how the answer is
        rendered (the first build for each set of changed keys is compared with the
        ordinary answer, in that view)."""
        def ordinary() -> Priced:
            return price(ctx, spec, sources=sources)
        src = spec.source
        if catalog is None or spec.overrides or not isinstance(src, InlineScenario):
            return ordinary()
        return self.variants.price(src.data, catalog, ordinary, sources=sources,
                                   answer=lambda p: p.result.to_json(view))

    def answer(self, key: Hashable, ctx: Context, spec: ScenarioSpec, *, view: str = "full",
               share: float | None = None, catalog: Hashable = None) -> PriceAnswer:
        """The answer to a price request (``share``: with the what-if of moving that share
        of the load), computed once while ``key`` stays in the cache. ``key`` must name
        everything the answer depends on: the scenario, its overrides, the catalog's
        marker, the view and the share."""
        with self._lock:
            hit = self._answers.get(key)
            if hit is not None:
                self._answers.move_to_end(key)
        if hit is not None:
            emit("price_cache", 1.0, "hit")
            return hit
        emit("price_cache", 1.0, "miss")
        priced = self.price(ctx, spec, sources=view != "summary", catalog=catalog, view=view)
        data = priced.result.to_json(view) if share is None else \
            shift_flexible(priced, share).answer(view)
        out = PriceAnswer(data, self._digest)
        with self._lock:
            self._answers[key] = out
            if len(self._answers) > self._cache_size:
                self._answers.popitem(last=False)
        return out


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
    from ..model.inputs import validate_scenario
    from ..model.profile import hourly_profile, move_flexible
    scenario = priced.result.scenario
    if scenario.electricity.tariff is None:
        raise InputError([("flexible_share", "needs a tariff (electricity.tariff): at a flat "
                                             "price every hour costs the same")])
    low, high = FLEXIBLE_SHARE
    if not low <= share <= high:
        raise InputError([("flexible_share", f"a fraction from {low:g} to {high:g}, got "
                                             f"{share:g}")])
    profile = hourly_profile(scenario)
    assert profile is not None  # (a tariff is a profile)
    hours = profile.hours
    moved = move_flexible(profile.values["load_by_hour"], profile.values["tariff_rate_by_hour"],
                          share)[0].tolist()
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


