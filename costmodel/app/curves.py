"""Curve use cases: a stored or file curve, its frontier, and a point read off it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.curves import Curve, Selection, Unreachable, select
from ..model.errors import InputError, UnreachablePoint
from ..sources.curve_point import find_curve
from .context import Context

__all__ = ["CurveView", "show_curve"]


@dataclass(frozen=True)
class CurveView:
    curve: Curve
    origin: str  # the file or library it came from
    kind: str  # token kind of the frontier
    reading: Selection | None  # the point read at the asked interactivity, if any


def show_curve(ctx: Context, ref: str, curve_id: str | None, kind: str,
               at_interactivity: float | None = None) -> CurveView:
    """A curve by file (where files are allowed) or id, and optionally its reading at
    ``at_interactivity`` [token/s/user]. Errors name ``curve`` and ``at_interactivity``."""
    base = Path.cwd() if ctx.files_allowed else None
    curve, origin = find_curve(ref, curve_id, base, where="curve", library=ctx.curves(),
                               files_allowed=ctx.files_allowed)
    reading = None
    if at_interactivity is not None:
        try:
            reading = select(curve, "interactivity", at_interactivity, kind)
        except Unreachable as exc:
            raise UnreachablePoint("at_interactivity", str(exc),
                                   best=exc.reading.best_interactivity) from None
        except LookupError as exc:
            raise InputError([("at_interactivity", str(exc))]) from None
    return CurveView(curve, origin, kind, reading)
