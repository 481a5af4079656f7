"""Loading scenarios: a typed spec -> a validated scenario, read at a chosen target."""
from __future__ import annotations

from collections.abc import Sequence

from ..model.curves import matched_interactivity
from ..model.errors import InputError, UnknownReference
from ..sources.curve_point import Target
from ..sources.key_lines import file_key_lines
from ..sources.paths import shown_path
from ..sources.scenario_file import read_scenario_file
from .build import LoadedScenario, PreparedScenario, prepare_scenario
from .caps import MAX_SCENARIOS, check_count
from .context import Context
from .specs import (
    AtInteractivity,
    FileScenario,
    InlineScenario,
    Matched,
    OwnPoint,
    Reading,
    ScenarioSpec,
)

__all__ = ["prepare", "finish", "load", "load_all", "target_of", "NOT_FROM_CURVE"]

NOT_FROM_CURVE = ("a matched or named interactivity needs an operating point read from a "
                  "curve")


def prepare(ctx: Context, spec: ScenarioSpec) -> PreparedScenario:
    """The spec's scenario expanded, overridden and its curve located. Errors are marked
    with the spec's subject, and a file's with where their keys were given (:func:`_placed`)."""
    try:
        return _prepare(ctx, spec)
    except InputError as exc:
        raise exc.about(spec.subject) from None


def finish(ctx: Context, spec: ScenarioSpec, prepared: PreparedScenario,
           target: Target | None = None, *, sources: bool = True,
           elsewhere: tuple[str, ...] = ()) -> LoadedScenario:
    """``prepared`` (the spec's) read at ``target`` and validated
    (:meth:`~costmodel.app.build.PreparedScenario.finish`), its errors marked as
    :func:`prepare`'s are; ``elsewhere``: keys the request gave rather than the file (a
    target is: ``operating_point.at``), placed at no line of it."""
    try:
        return prepared.finish(target, sources=sources)
    except InputError as exc:
        given = (*elsewhere, *(("operating_point.at",) if target is not None else ()))
        raise _placed(ctx, spec, exc, given).about(spec.subject) from None


def _placed(ctx: Context, spec: ScenarioSpec, exc: InputError,
            elsewhere: tuple[str, ...] = ()) -> InputError:
    """An error about a scenario file's keys, marked with the file (as given) and each
    path's place: the override that set it (``ctx.override_label``: ``--set``), else its
    line in the file, when it is written there (a value from the catalog or a curve is
    not, nor one under the keys ``elsewhere``, which the request gave)."""
    if not isinstance(spec.source, FileScenario):
        return exc

    def under(path: str, keys: Sequence[str]) -> bool:
        return any(path == k or path.startswith((f"{k}.", f"{k}[")) for k in keys)
    keys = [o.key for o in spec.overrides]
    paths = [p for p, _ in exc.errors if p and not under(p, elsewhere)]
    lines = file_key_lines(spec.source.path) if paths else {}
    places: dict[str, int | str] = {}
    for p in paths:
        if under(p, keys):
            places[p] = ctx.override_label
        elif p in lines:
            places[p] = lines[p]
    return exc.placed(places, str(spec.source.path))


def _prepare(ctx: Context, spec: ScenarioSpec) -> PreparedScenario:
    src = spec.source
    base_dir = None
    if isinstance(src, FileScenario):  # (a file's read errors name the file)
        base_dir = src.path.resolve().parent
        data, origin = read_scenario_file(src.path), shown_path(src.path, base_dir)
        # an agent's task, a market beside the scenario (costmodel task, profit read them)
        if "task" in data or "market" in data:
            data = {k: v for k, v in data.items() if k not in ("task", "market")}
    elif isinstance(src, InlineScenario):
        data, origin = dict(src.data), src.label
    else:
        data, origin = ctx.revision(src.scenario_id, src.revision)
    overrides = [(o.key, o.value) for o in spec.overrides]
    for fresh in (False, True):
        try:
            return prepare_scenario(data, overrides, ctx.catalog(fresh), origin=origin,
                                    override_label=ctx.override_label, base_dir=base_dir,
                                    curves=ctx.curves(fresh),
                                    files_allowed=ctx.files_allowed)
        except UnknownReference as exc:
            if fresh:  # another writer may have added it a moment ago: looked again
                raise _placed(ctx, spec, exc) from None
        except InputError as exc:
            raise _placed(ctx, spec, exc) from None
    raise AssertionError("unreachable")


def load(ctx: Context, spec: ScenarioSpec, target: Target | None = None, *,
         sources: bool = True) -> LoadedScenario:
    """The spec's scenario, validated, at ``target`` (default: its own operating point);
    ``sources=False``: its provenance is not completed (for an answer without the per-input
    sources)."""
    return finish(ctx, spec, prepare(ctx, spec), target, sources=sources)


def target_of(prepared: Sequence[PreparedScenario], specs: Sequence[ScenarioSpec],
              reading: Reading) -> Target | None:
    """Where every curve is read for ``reading``; None for each scenario's own point."""
    if isinstance(reading, OwnPoint):
        return None
    for p, spec in zip(prepared, specs, strict=True):
        if p.curve is None:
            raise InputError([("operating_point", NOT_FROM_CURVE)]).about(spec.subject)
    if isinstance(reading, Matched):
        value = matched_interactivity([p.curve.frontier() for p in prepared])
        return Target.interactivity(value, f"matched interactivity: the best every system "
                                           f"reaches ({value:.4g} token/s/user)")
    assert isinstance(reading, AtInteractivity)
    return Target.interactivity(reading.value, reading.label or
                                f"every system read at {reading.value:.4g} token/s/user")


def load_all(ctx: Context, specs: Sequence[ScenarioSpec],
             reading: Reading) -> list[LoadedScenario]:
    """Scenarios for a comparison or workbook, every curve read where ``reading`` says."""
    check_count(ctx, len(specs), MAX_SCENARIOS, "scenarios", "scenarios")
    prepared = [prepare(ctx, s) for s in specs]
    target = target_of(prepared, specs, reading)
    return [finish(ctx, spec, p, target) for p, spec in zip(prepared, specs, strict=True)]
