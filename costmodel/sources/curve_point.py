"""Scenario operating points read from a curve: ``[operating_point] curve = ..., at = ...``.

    [operating_point]
    curve = "curves/kimi.csv"      # a curve file (any format read_curves knows), relative to
                                   # the scenario file, or the id of a curve in fixtures/curves
    curve_id = "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg"   # when the file holds several
    at = "peak"                    # or { interactivity = "50 token/s/user" }, { tbt = "20 ms" },
                                   # { concurrency = 4 }; a read at another percentile of
                                   # interactivity: { interactivity = "40 token/s/user",
                                   # percentile = "p90" } (mean | median | p90 | p99)
    ttft_max = { value = "2 s", percentile = "p90" }   # optional: points above it leave
                                   # the curve first (or ttft_max = "2 s": the median)
    token_kind = "mixed"

The curve's reading fills ``throughput`` (per accelerator), ``interactivity``, latencies and
the disclosure's ``chosen`` (which says the percentile read and the ceiling); its key fills
``workload`` (the file's own keys win); measured power on the curve becomes
``accelerator.measured_power`` unless the scenario gives one. The scenario's percentile and
TTFT ceiling apply to every read of its curve, also at a matched or a quote's interactivity.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..model.curves import (
    PERCENTILES,
    SELECTIONS,
    AboveCeiling,
    Curve,
    Selection,
    TtftCeiling,
    Unreachable,
    select,
)
from ..model.errors import InputError, UnknownReference, UnreachablePoint
from ..model.inputs import MAX_TEXT
from ..model.steps import TOKEN_KINDS
from ..model.units import UnitInputError, parse_quantity
from .catalog import fixtures_dir
from .paths import shown_path

__all__ = ["find_curve", "CURVE_GIVES", "CurveReading", "CurveLibrary", "fixture_curves",
           "Target", "PEAK", "parse_target", "parse_ttft_max", "CurveRef", "locate_curve",
           "read_curve_point"]

# operating-point keys that a curve provides and a scenario must not also give
CURVE_GIVES = ("throughput", "throughput_per_kw", "normalised_by", "interactivity", "tbt",
               "ttft", "e2e_latency")
_UNITS = {"interactivity": "token/s/user", "tbt": "ms"}


@dataclass(frozen=True)
class CurveReading:
    """The curve a scenario's operating point was read from, and what was read."""
    curve: Curve
    selection: Selection
    kind: str  # mixed | output | input
    origin: str  # the file it came from


class CurveLibrary:
    """Curves by id: the fixture folder by default; the service passes its database's. A
    library may be given a reader instead of its curves: it reads them when first asked
    (once, whichever thread asks first), so a scenario that names no curve reads none."""

    def __init__(self, curves: dict[str, tuple[Curve, str]] | None = None, *,
                 read: Callable[[], dict[str, tuple[Curve, str]]] | None = None):
        self._curves = curves  # id -> (curve, where it came from)
        self._read = read
        self._lock = threading.Lock()

    def _all(self) -> dict[str, tuple[Curve, str]]:
        if self._curves is None:
            with self._lock:
                if self._curves is None:
                    self._curves = self._read() if self._read is not None else {}
        return self._curves

    def get(self, curve_id: str) -> tuple[Curve, str] | None:
        return self._all().get(curve_id)

    def ids(self) -> list[str]:
        return sorted(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def extended(self, more: dict[str, tuple[Curve, str]]) -> CurveLibrary:
        """A new library with ``more`` added (this one is shared between threads: never
        changed in place)."""
        return CurveLibrary({**self._all(), **more})


def _read_folder(folder: str) -> dict[str, tuple[Curve, str]]:
    from .curve_files import read_curves  # here: a scenario without a curve reads no file
    found: dict[str, tuple[Curve, str]] = {}
    for path in sorted(Path(folder).glob("*")):
        if path.suffix.lower() in (".csv", ".json"):
            for c in read_curves(path):
                found[c.key.id] = (c, shown_path(path))
    return found


@lru_cache(maxsize=1)
def _fixture_library(folder: str) -> CurveLibrary:
    return CurveLibrary(read=lambda: _read_folder(folder))


def fixture_curves() -> CurveLibrary:
    """The curves in ``fixtures/curves`` (read once per process)."""
    return _fixture_library(str(fixtures_dir() / "curves"))


def find_curve(ref: str, curve_id: str | None, base_dir: Path | None,
               where: str = "operating_point.curve", *, library: CurveLibrary | None = None,
               files_allowed: bool = True) -> tuple[Curve, str]:
    """A curve by file path (relative to ``base_dir``) or by id in ``library``.

    With ``files_allowed=False`` (input from the network) only ids are looked up: a request
    must never make the server read a file of its choosing.
    """
    library = library or fixture_curves()
    path = None
    if files_allowed:
        candidates = [Path(ref)] if Path(ref).is_absolute() else \
            [p for p in ((base_dir / ref) if base_dir else None, Path(ref)) if p is not None]
        path = next((p for p in candidates if p.is_file()), None)
    if path is not None:
        from .curve_files import read_curves
        curves = read_curves(path)
        if curve_id is None:
            if len(curves) > 1:
                ids = ", ".join(c.key.id for c in curves)
                raise InputError([("operating_point.curve_id", f"{path} holds {len(curves)} "
                                                               f"curves; name one of: {ids}")])
            return curves[0], shown_path(path, base_dir)
        for c in curves:
            if c.key.id == curve_id:
                return c, shown_path(path, base_dir)
        raise InputError([("operating_point.curve_id", f"no curve {curve_id!r} in {path}")])
    found = library.get(curve_id or ref)
    if found is not None:
        return found
    what = "a curve file nor a known curve id" if files_allowed else "a known curve id"
    raise UnknownReference(where, f"{ref!r} is neither {what} "
                                  f"(known: {', '.join(library.ids()) or 'none'})",
                           kind="curve", key=curve_id or ref)


@dataclass(frozen=True)
class Target:
    """Where to read a curve: ``how`` is peak | interactivity | tbt | concurrency and
    ``value`` its target [token/s/user | ms | requests] (None for peak); ``percentile`` the
    statistic of interactivity read (None: the scenario's own, else the median); ``label``
    says who chose it, for the disclosure's sources."""
    how: str
    value: float | None = None
    label: str | None = None
    percentile: str | None = None

    @classmethod
    def interactivity(cls, value: float, label: str) -> Target:
        """A target interactivity [token/s/user]."""
        return cls("interactivity", float(value), label)


PEAK = Target("peak")
_AT_HELP = ('expected "peak" or one of { interactivity = ... }, { tbt = ... }, '
            '{ concurrency = N }; interactivity and tbt may add percentile = '
            f'"{PERCENTILES[0]}" | ' + " | ".join(f'"{p}"' for p in PERCENTILES[1:]))


def _percentile(raw: Any, where: str) -> str:
    if raw not in PERCENTILES:
        raise InputError([(where, f"unknown percentile {_brief(raw)} (known: "
                                  f"{', '.join(PERCENTILES)})")])
    return raw


def _brief(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}..."


def parse_target(at: Any) -> Target:
    """A scenario's ``operating_point.at``: "peak", or a table of one selection (and, for
    interactivity or tbt, a ``percentile``), as a :class:`Target`."""
    if at == "peak":
        return PEAK
    if not isinstance(at, dict) or not 1 <= len(at) <= 2:
        raise InputError([("operating_point.at", _AT_HELP)])
    rest = {k: v for k, v in at.items() if k != "percentile"}
    if len(rest) != 1:
        raise InputError([("operating_point.at", _AT_HELP)])
    (how, raw), = rest.items()
    where = f"operating_point.at.{how}"
    if how not in SELECTIONS or how == "peak":
        raise InputError([("operating_point.at", f"unknown selection {_brief(how)} (known: "
                                                 f"{', '.join(SELECTIONS)})")])
    percentile = None
    if "percentile" in at:
        if how not in ("interactivity", "tbt"):
            raise InputError([("operating_point.at.percentile",
                               f"applies to a read at an interactivity or a TBT, not at "
                               f"{how}")])
        percentile = _percentile(at["percentile"], "operating_point.at.percentile")
    if how == "concurrency":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw <= 0:
            raise InputError([(where, f"must be a positive number, got {_brief(raw)}")])
        return Target(how, float(raw))
    try:
        return Target(how, parse_quantity(raw, _UNITS[how], allow_zero=False),
                      percentile=percentile)
    except UnitInputError as exc:
        raise InputError([(where, str(exc))]) from None


def parse_ttft_max(raw: Any) -> TtftCeiling:
    """A scenario's ``operating_point.ttft_max``: a time (the median TTFT's ceiling), or
    ``{ value = "2 s", percentile = "p90" }`` (a quantity table may add its ``unit``)."""
    where = "operating_point.ttft_max"
    percentile = "median"
    if isinstance(raw, dict):
        if "value" not in raw or not set(raw) <= {"value", "unit", "percentile"}:
            raise InputError([(where, 'expected a time, or { value = "2 s", percentile = '
                                      '"p90" }')])
        if "percentile" in raw:
            percentile = _percentile(raw["percentile"], f"{where}.percentile")
        raw = {k: v for k, v in raw.items() if k != "percentile"}
        if set(raw) == {"value"}:
            raw = raw["value"]
    try:
        value = parse_quantity(raw, "s", allow_zero=False)
    except UnitInputError as exc:
        raise InputError([(where, str(exc))]) from None
    return TtftCeiling(value, percentile)


def _bounded(text: str) -> str:
    """Text within a scenario's text limit."""
    return text if len(text) <= MAX_TEXT else f"{text[:MAX_TEXT - 3]}..."


def _joined(texts) -> str:
    return _bounded("; ".join(dict.fromkeys(t for t in texts if t)))


@dataclass(frozen=True)
class CurveRef:
    """A scenario's operating point as a curve reference, before it is read: the curve found
    and the scenario's own target and TTFT ceiling. Kept between locating and reading so that
    one scenario can be read at several targets (matched interactivity, each quote's) without
    loading again."""
    curve: Curve
    origin: str  # the file or library it came from
    kind: str  # token kind the frontier is taken on
    target: Target  # the scenario's own ``at``
    ttft_max: TtftCeiling | None = None  # the scenario's ``ttft_max``

    @property
    def percentile(self) -> str:
        """The statistic of interactivity the scenario reads its curve at."""
        return self.target.percentile or "median"

    def frontier(self):
        """The frontier the scenario's reads are taken on (its percentile and ceiling)."""
        try:
            return self.curve.frontier(self.kind, self.percentile, self.ttft_max)
        except AboveCeiling as exc:
            raise InputError([("operating_point.ttft_max", str(exc))]) from None
        except ValueError as exc:
            raise InputError([("operating_point.curve", str(exc))]) from None


def locate_curve(data: dict[str, Any], base_dir: Path | None, *,
                 library: CurveLibrary | None = None,
                 files_allowed: bool = True) -> CurveRef | None:
    """The curve a scenario mapping's operating point names, or None when its operating
    point is not read from a curve."""
    op = data.get("operating_point")
    if not isinstance(op, dict):
        return None
    if "curve" not in op:
        if "ttft_max" in op:
            raise InputError([("operating_point.ttft_max", "applies to a point read from a "
                                                           "curve: give operating_point.curve")])
        return None
    ref, curve_id = op["curve"], op.get("curve_id")
    if not isinstance(ref, str):
        raise InputError([("operating_point.curve", "must be a file path or curve id")])
    clash = [k for k in CURVE_GIVES if k in op]
    if clash:
        raise InputError([(f"operating_point.{clash[0]}",
                           "given by the curve; remove it or drop operating_point.curve")])
    target = parse_target(op.get("at", "peak"))
    ttft_max = parse_ttft_max(op["ttft_max"]) if op.get("ttft_max") is not None else None
    kind = op.get("token_kind", "mixed")
    kind = kind if kind in TOKEN_KINDS else "mixed"  # validation reports a bad one
    curve, origin = find_curve(ref, curve_id, base_dir, library=library,
                               files_allowed=files_allowed)
    return CurveRef(curve, origin, kind, target, ttft_max)


def read_curve_point(data: dict[str, Any], ref: CurveRef, target: Target | None,
                     provenance: dict[str, str]
                     ) -> tuple[dict[str, Any], CurveReading]:
    """``data`` with its curve reference replaced by the point read at ``target`` (default:
    the scenario's own), and what was read."""
    target = target or ref.target
    curve, how = ref.curve, target.how
    percentile = target.percentile or ref.percentile
    try:
        sel = select(curve, how, target.value, ref.kind, percentile=percentile,
                     ttft_max=ref.ttft_max)
    except Unreachable as exc:
        raise UnreachablePoint(f"operating_point.at.{how}", str(exc),
                               best=exc.reading.best_interactivity) from None
    except AboveCeiling as exc:
        raise InputError([("operating_point.ttft_max", str(exc))]) from None
    except LookupError as exc:
        raise InputError([(f"operating_point.at.{how}" if how != "peak"
                           else "operating_point.curve", str(exc))]) from None
    except ValueError as exc:  # a token kind the curve has no throughput of
        raise InputError([("operating_point.token_kind", str(exc))]) from None
    if target.label:
        provenance["operating_point.at"] = target.label
    op = {k: v for k, v in data["operating_point"].items()
          if k not in ("curve_id", "at", "ttft_max")}
    label = f"curve {curve.key.id} ({ref.origin}; {curve.source})"
    # the source and note of the point(s) read: an InferenceX row's date and run_url
    point_sources = _joined(curve.point_sources[i] for i in sel.points)
    op.update({"throughput": {"value": sel.throughput, "unit": "token/s"},
               "chosen": sel.description, "curve": curve.key.id, "read_status": sel.status,
               "source": point_sources or _bounded(curve.source) or ref.origin})
    point_notes = _joined(curve.point_notes[i] for i in sel.points)
    if point_notes and "note" not in op:
        op["note"] = point_notes
    for name, value, unit in (("interactivity", sel.interactivity, "token/s/user"),
                              ("ttft", sel.ttft, "s"), ("e2e_latency", sel.e2e_latency, "s")):
        if value is not None:
            op[name] = {"value": value, "unit": unit}
    for k in ("throughput", "interactivity", "ttft", "e2e_latency", "chosen", "curve"):
        if k in op:
            provenance[f"operating_point.{k}"] = label
    out = dict(data)
    out["operating_point"] = op
    workload = dict(out.get("workload") or {})
    k = curve.key
    for name, value in (("model", k.model), ("isl", k.isl), ("osl", k.osl),
                        ("precision", k.precision), ("framework", k.framework),
                        ("speculative_decoding", k.spec_decoding),
                        ("disaggregated", k.disaggregated)):
        if value is not None and name not in workload:
            workload[name] = value
            provenance[f"workload.{name}"] = label
    out["workload"] = workload
    accelerator = out.get("accelerator")
    if sel.power is not None and isinstance(accelerator, dict) \
            and "measured_power" not in accelerator:
        out["accelerator"] = {**accelerator, "measured_power": {"value": sel.power, "unit": "W"}}
        provenance["accelerator.measured_power"] = f"measured on {label}"
    return out, CurveReading(curve, sel, ref.kind, ref.origin)
