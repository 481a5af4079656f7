"""Scenario operating points read from a curve: ``[operating_point] curve = ..., at = ...``.

    [operating_point]
    curve = "curves/kimi.csv"      # a curve file (any format read_curves knows), relative to
                                   # the scenario file, or the id of a curve in fixtures/curves
    curve_id = "mi355x/kimik2.5/vllm/int4/1024x1024/mtp/agg"   # when the file holds several
    at = "peak"                    # or { interactivity = "50 token/s/user" }, { tbt = "20 ms" },
                                   # { concurrency = 4 }
    token_kind = "mixed"

The curve's reading fills ``throughput`` (per accelerator), ``interactivity``, latencies and
the disclosure's ``chosen``; its key fills ``workload`` (the file's own keys win); measured
power on the curve becomes ``accelerator.measured_power`` unless the scenario gives one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..curves import SELECTIONS, Curve, Selection, Unreachable, select
from ..errors import InputError, UnknownReference, UnreachablePoint
from ..model import TOKEN_KINDS
from ..units import UnitInputError, parse_quantity
from .catalog import fixtures_dir
from .curve_files import read_curves

__all__ = ["find_curve", "CURVE_GIVES", "CurveReading", "CurveLibrary", "fixture_curves",
           "Target", "PEAK", "parse_target", "CurveRef", "locate_curve", "read_curve_point"]

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
    """Curves by id: the fixture folder by default; the service passes its database's."""

    def __init__(self, curves: dict[str, tuple[Curve, str]]):
        self._curves = curves  # id -> (curve, where it came from)

    def get(self, curve_id: str) -> tuple[Curve, str] | None:
        return self._curves.get(curve_id)

    def ids(self) -> list[str]:
        return sorted(self._curves)

    def __len__(self) -> int:
        return len(self._curves)

    def extended(self, more: dict[str, tuple[Curve, str]]) -> CurveLibrary:
        """A new library with ``more`` added (this one is shared between threads: never
        changed in place)."""
        return CurveLibrary({**self._curves, **more})


@lru_cache(maxsize=1)
def _fixture_library(folder: str) -> CurveLibrary:
    found: dict[str, tuple[Curve, str]] = {}
    for path in sorted(Path(folder).glob("*")):
        if path.suffix.lower() in (".csv", ".json"):
            for c in read_curves(path):
                found[c.key.id] = (c, str(path))
    return CurveLibrary(found)


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
        curves = read_curves(path)
        if curve_id is None:
            if len(curves) > 1:
                ids = ", ".join(c.key.id for c in curves)
                raise InputError([("operating_point.curve_id", f"{path} holds {len(curves)} "
                                                               f"curves; name one of: {ids}")])
            return curves[0], str(path)
        for c in curves:
            if c.key.id == curve_id:
                return c, str(path)
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
    ``value`` its target [token/s/user | ms | requests] (None for peak); ``label`` says who
    chose it, for the disclosure's sources."""
    how: str
    value: float | None = None
    label: str | None = None

    @classmethod
    def interactivity(cls, value: float, label: str) -> Target:
        """A target interactivity [token/s/user]."""
        return cls("interactivity", float(value), label)


PEAK = Target("peak")


def parse_target(at: Any) -> Target:
    """A scenario's ``operating_point.at`` ("peak" or a one-key table) as a :class:`Target`."""
    if at == "peak":
        return PEAK
    if not isinstance(at, dict) or len(at) != 1:
        raise InputError([("operating_point.at", 'expected "peak" or one of '
                                                 '{ interactivity = ... }, { tbt = ... }, '
                                                 '{ concurrency = N }')])
    (how, raw), = at.items()
    where = f"operating_point.at.{how}"
    if how not in SELECTIONS or how == "peak":
        raise InputError([("operating_point.at", f"unknown selection {how!r} (known: "
                                                 f"{', '.join(SELECTIONS)})")])
    if how == "concurrency":
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw <= 0:
            raise InputError([(where, f"must be a positive number, got {raw!r}")])
        return Target(how, float(raw))
    try:
        return Target(how, parse_quantity(raw, _UNITS[how], allow_zero=False))
    except UnitInputError as exc:
        raise InputError([(where, str(exc))]) from None


@dataclass(frozen=True)
class CurveRef:
    """A scenario's operating point as a curve reference, before it is read: the curve found
    and the scenario's own target. Kept between locating and reading so that one scenario can
    be read at several targets (matched interactivity, each quote's) without loading again."""
    curve: Curve
    origin: str  # the file or library it came from
    kind: str  # token kind the frontier is taken on
    target: Target  # the scenario's own ``at``

    def frontier(self):
        try:
            return self.curve.frontier(self.kind)
        except ValueError as exc:
            raise InputError([("operating_point.curve", str(exc))]) from None


def locate_curve(data: dict[str, Any], base_dir: Path | None, *,
                 library: CurveLibrary | None = None,
                 files_allowed: bool = True) -> CurveRef | None:
    """The curve a scenario mapping's operating point names, or None when its operating
    point is not read from a curve."""
    op = data.get("operating_point")
    if not isinstance(op, dict) or "curve" not in op:
        return None
    ref, curve_id = op["curve"], op.get("curve_id")
    if not isinstance(ref, str):
        raise InputError([("operating_point.curve", "must be a file path or curve id")])
    clash = [k for k in CURVE_GIVES if k in op]
    if clash:
        raise InputError([(f"operating_point.{clash[0]}",
                           "given by the curve; remove it or drop operating_point.curve")])
    target = parse_target(op.get("at", "peak"))
    kind = op.get("token_kind", "mixed")
    kind = kind if kind in TOKEN_KINDS else "mixed"  # validation reports a bad one
    curve, origin = find_curve(ref, curve_id, base_dir, library=library,
                               files_allowed=files_allowed)
    return CurveRef(curve, origin, kind, target)


def read_curve_point(data: dict[str, Any], ref: CurveRef, target: Target | None,
                     provenance: dict[str, str]
                     ) -> tuple[dict[str, Any], CurveReading]:
    """``data`` with its curve reference replaced by the point read at ``target`` (default:
    the scenario's own), and what was read."""
    target = target or ref.target
    curve, how = ref.curve, target.how
    try:
        sel = select(curve, how, target.value, ref.kind)
    except Unreachable as exc:
        raise UnreachablePoint(f"operating_point.at.{how}", str(exc),
                               best=exc.reading.best_interactivity) from None
    except LookupError as exc:
        raise InputError([(f"operating_point.at.{how}" if how != "peak"
                           else "operating_point.curve", str(exc))]) from None
    if target.label:
        provenance["operating_point.at"] = target.label
    op = {k: v for k, v in data["operating_point"].items() if k not in ("curve_id", "at")}
    label = f"curve {curve.key.id} ({ref.origin}; {curve.source})"
    op.update({"throughput": {"value": sel.throughput, "unit": "token/s"},
               "chosen": sel.description, "curve": curve.key.id, "read_status": sel.status,
               "source": curve.source or ref.origin})
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
