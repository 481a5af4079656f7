"""Batch pricing: one base scenario, up to thousands of rows of overrides, chosen outputs.

Each row means what ``price`` means for the base with the row's overrides; a batch gives
the same numbers as pricing its rows one by one, row for row. How it gets there:

- rows are grouped by what they change besides numeric inputs (a boundary, a basis, a token
  kind, a catalog reference, a label): the base plus a group's choices is loaded once;
- within a group, a row whose every other override is a numeric input of the calculation
  (``electricity.price``, ``utilisation``...) that keeps the group's choices as they are (an
  optional input already given, an operating point not read off a curve) is parsed by the
  scenario's own field parsers and evaluated with every other such row in ONE call of the
  vectorised evaluator (the machinery of :mod:`costmodel.decisions.sensitivity`: its
  :class:`~costmodel.decisions.sensitivity.base.Base` links, e.g. a defaulted normalising power
  moving
  with the rated power);
- every other row, a row whose value does not parse or whose costs are not finite, and every
  row of a group whose choices do not load by themselves, is priced alone: the answer and
  the error are then exactly ``price``'s.

For each set of keys evaluated together, one row is also priced alone: its sources give the
provenance of every row with those keys (``overrides electricity.price=...``, and the
citations an override replaces), and its figures must equal the vectorised ones, else those
rows are priced alone too.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import orjson

from ..decisions.sensitivity.base import DEFAULT_OUTPUT, Base
from ..decisions.sensitivity.inputs import VARS, SensitivityError, Var
from ..model.errors import InputError
from ..model.inputs import Scenario
from ..model.results import MUST_BE_FINITE, Result, out_of_bounds
from ..model.steps import MODEL
from ..sources.cells import neutralise_cell
from .context import Context
from .engine import Priced, price_rows
from .events import emit
from .pricing import price
from .specs import InlineScenario, Override, SavedRevision, ScenarioSpec, overrides_from_mapping
from .variants import read_value

__all__ = ["Batch", "RowError", "price_batch", "output_step", "read_value", "movable", "resolved",
           "MAX_ROWS", "ALONE_LIGHT"]

MAX_ROWS = 10_000  # rows of one batch
# rows (and groups) priced alone beyond which a batch is heavy work: the caller's ``heavy``
# guard is entered (the service holds a heavy-analysis slot)
ALONE_LIGHT = 200
REL = 1e-12  # the vectorised figures must equal a row priced alone within this


@dataclass(frozen=True)
class RowError:
    """Why row ``row`` has no figures: ``path`` names its override (``overrides[3].utilisation``)
    or the row (``overrides[3]``)."""
    row: int
    path: str
    detail: str


@dataclass
class Batch:
    """Figures of every row [each output's unit]: NaN where a row failed or a figure has no
    value; the shared disclosure (the base's, or the first priced row's when the base alone
    does not price), and each row's sources that differ from it (None: the source is gone)."""
    outputs: list[str]
    steps: list[str]  # the step of each output
    units: list[str]
    values: dict[str, np.ndarray]  # by output name as asked
    priced: np.ndarray  # bool, per row
    errors: list[RowError]
    shared: Result | None
    provenance: list[dict[str, str | None] | None]

    @property
    def rows(self) -> int:
        return len(self.priced)

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON data (NaN figures become null when serialised by orjson)."""
        return {
            "outputs": self.outputs, "rows": self.rows, "priced": int(self.priced.sum()),
            "columns": {name: {"unit": unit, "values": self.values[name].tolist()}
                        for name, unit in zip(self.outputs, self.units, strict=True)},
            # each error's words under "message", as in every problem's errors[]; "detail"
            # repeats them for clients written before (deprecated: removed in the next release)
            "errors": [{"row": e.row, "path": e.path, "message": e.detail, "detail": e.detail}
                       for e in self.errors],
            "disclosure": self.shared.disclosure() if self.shared is not None else None,
            "provenance": self.provenance,
        }

    def to_csv(self) -> str:
        """One line a row: ``row``, each output (header ``name [unit]``; empty where there is
        no figure; numbers written to round-trip exactly) and ``error`` (the row's errors,
        a formula-like start neutralised: the file is opened in spreadsheets)."""
        why: dict[int, list[str]] = {}
        for e in self.errors:
            why.setdefault(e.row, []).append(f"{e.path}: {e.detail}")
        header = ",".join(["row", *(_csv_cell(f"{n} [{u}]")
                                    for n, u in zip(self.outputs, self.units, strict=True)),
                           "error"])
        columns = [self.values[n].tolist() for n in self.outputs]
        lines = [header]
        for i in range(self.rows):
            cells = [str(i), *("" if v != v or v in (math.inf, -math.inf) else repr(v)
                               for v in (c[i] for c in columns)),
                     _csv_cell(neutralise_cell("; ".join(why.get(i, ()))))]
            lines.append(",".join(cells))
        return "\r\n".join(lines) + "\r\n"


def _csv_cell(text: str) -> str:
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def output_step(name: str) -> str:
    """An output by step name (``cost_per_mtok_total``) or dotted (``cost_per_mtok.total``)
    -> its step name; an :class:`InputError` at ``outputs`` otherwise."""
    from ..decisions.sensitivity.base import _output
    try:
        return _output(name)[0]
    except SensitivityError as exc:
        raise InputError([("outputs", exc.errors[0][1])]) from None


def resolved(ctx: Context, spec: ScenarioSpec) -> ScenarioSpec:
    """A saved revision read once, as the inline mapping every row starts from."""
    src = spec.source
    if isinstance(src, SavedRevision):
        data, label = ctx.revision(src.scenario_id, src.revision)
        return ScenarioSpec(InlineScenario(data, label), spec.overrides, spec.subject)
    return spec


def _group_key(items: list[tuple[str, Any]]) -> bytes:
    return orjson.dumps(sorted(items, key=lambda kv: kv[0]), option=orjson.OPT_SORT_KEYS)


class _Group:
    """The base with one set of choices, loaded once; which numeric keys its rows may move
    together, and how to read each value."""

    def __init__(self, ctx: Context, spec: ScenarioSpec, choices: list[tuple[str, Any]]):
        self.spec = ScenarioSpec(spec.source, spec.overrides + tuple(
            Override(k, v) for k, v in choices), spec.subject)
        self.choices = choices
        self.priced: Priced | None = None
        try:
            self.priced = price(ctx, self.spec)
        except InputError:
            return  # its rows are priced alone: their own overrides may complete it
        self.scenario = self.priced.result.scenario
        self.reads_curve = self.priced.curve is not None
        self._vars: dict[str, Var | None] = {}

    def var(self, key: str) -> Var | None:
        """The numeric input ``key`` if moving it keeps this group's choices, else None."""
        if key not in self._vars:
            self._vars[key] = self._movable(key)
        return self._vars[key]

    def _movable(self, key: str) -> Var | None:
        return movable(self.scenario, self.reads_curve, key)


def movable(scenario: Scenario, reads_curve: bool, key: str) -> Var | None:
    """The numeric input ``key`` if moving it keeps ``scenario``'s choices (``reads_curve``:
    its operating point is read off a curve), else None."""
    var = VARS.get(key)
    if var is None or (reads_curve and key.startswith("operating_point.")):
        return None
    op = scenario.operating_point
    if key == "operating_point.normalised_by":  # only beside a per-kW throughput
        return var if op.throughput_per_kw is not None else None
    # an optional input given or not is a choice (renting, an all-in power, a per-kW
    # throughput): moved only where the base gives it already
    return var if attrgetter(key)(scenario) is not None else None


def _label(source: str, value: Any) -> str | None:
    """The part of an override's source before its value (``overrides electricity.price=``),
    or None when the source does not end with the value as written."""
    shown = f"{value}"
    return source[:-len(shown)] if shown and source.endswith(shown) else None


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=REL, abs_tol=0.0)


def price_batch(ctx: Context, spec: ScenarioSpec, rows: Sequence[Mapping[str, Any]],
                outputs: Sequence[str] = (DEFAULT_OUTPUT,), *,
                heavy: Callable[[], AbstractContextManager] | None = None) -> Batch:
    """Price ``spec`` with each row of overrides (dotted key -> value as a request gives it)
    for ``outputs`` (step names or dotted). Raises :class:`InputError` only for the request
    itself (an unknown output, more than :data:`MAX_ROWS` rows); a row's own errors are in
    the batch's ``errors``."""
    if len(rows) > MAX_ROWS:
        raise InputError([("overrides", f"at most {MAX_ROWS:,} rows, got {len(rows):,}")])
    steps = [output_step(o) for o in outputs]
    evaluated = tuple(dict.fromkeys([*steps, *MUST_BE_FINITE]))
    spec = resolved(ctx, spec)
    run = _Run(ctx, spec, rows, evaluated)
    run.plan()
    guard = heavy() if heavy is not None and run.alone_count() > ALONE_LIGHT else nullcontext()
    with guard:
        run.evaluate()
        run.price_alone()
    shared = run.shared()
    provenance = run.provenance_against(shared)
    values = {o: run.values[s].copy() for o, s in zip(outputs, steps, strict=True)}
    for v in values.values():
        v[~run.ok] = math.nan
    emit("batch_rows", float(run.ok.sum()))
    return Batch(list(outputs), steps, [MODEL.steps[s].unit for s in steps], values,
                 run.ok.copy(), sorted(run.errors, key=lambda e: e.row), shared, provenance)


@dataclass
class _Run:
    ctx: Context
    spec: ScenarioSpec
    rows: Sequence[Mapping[str, Any]]
    steps: tuple[str, ...]
    values: dict[str, np.ndarray] = field(init=False)
    ok: np.ndarray = field(init=False)
    errors: list[RowError] = field(default_factory=list)
    sources: dict[int, dict[str, str]] = field(default_factory=dict)  # rows priced alone
    # rows evaluated together: (group, keys) -> row indices, and their figures' templates
    together: dict[tuple[bytes, tuple[str, ...]], list[int]] = field(default_factory=dict)
    alone: list[int] = field(default_factory=list)
    groups: dict[bytes, _Group] = field(default_factory=dict)
    read: dict[int, list[float]] = field(default_factory=dict)  # row -> parsed values
    # key set -> (the row priced alone, its sources, each key's label before its value)
    templates: dict[tuple[bytes, tuple[str, ...]],
                    tuple[int, dict[str, str], dict[str, str]]] = field(default_factory=dict)
    base: Priced | None = None

    def __post_init__(self) -> None:
        n = len(self.rows)
        self.values = {s: np.full(n, math.nan) for s in self.steps}
        self.ok = np.zeros(n, dtype=bool)

    # -- which rows go together ---------------------------------------------------------
    def plan(self) -> None:
        by_choice: dict[bytes, list[int]] = {}
        choices: dict[bytes, list[tuple[str, Any]]] = {}
        for i, row in enumerate(self.rows):
            picked = [(k, v) for k, v in row.items() if k not in VARS]
            key = _group_key(picked) if picked else b""
            by_choice.setdefault(key, []).append(i)
            choices.setdefault(key, picked)
        for key, members in by_choice.items():
            group = _Group(self.ctx, self.spec, choices[key])
            self.groups[key] = group
            if not key:
                self.base = group.priced
            if group.priced is None:
                self.alone += members
                continue
            for i in members:
                row = self.rows[i]
                names = tuple(k for k in row if k in VARS)
                parsed = []
                for k in names:
                    var = group.var(k)
                    value = None if var is None else read_value(var, row[k])
                    if value is None:
                        break
                    parsed.append(value)
                else:
                    self.together.setdefault((key, names), []).append(i)
                    self.read[i] = parsed
                    continue
                self.alone.append(i)
        if self.base is None and b"" not in self.groups:  # every row chose: the base alone
            try:
                self.base = price(self.ctx, self.spec)
            except InputError:
                self.base = None

    def alone_count(self) -> int:
        return len(self.alone) + len(self.groups) + len(self.together)

    # -- rows evaluated together, one evaluator call per group ---------------------------
    def evaluate(self) -> None:
        by_group: dict[bytes, list[tuple[tuple[str, ...], list[int]]]] = {}
        for (gkey, names), members in self.together.items():
            by_group.setdefault(gkey, []).append((names, members))
        for gkey, sets in by_group.items():
            group = self.groups[gkey]
            assert group.priced is not None
            base = Base(group.scenario, DEFAULT_OUTPUT)
            members = [i for _, m in sets for i in m]
            index = np.asarray(members)
            m = len(members)
            varied: dict[str, np.ndarray] = {}
            position = 0
            for names, rows in sets:
                span = slice(position, position + len(rows))
                for j, k in enumerate(names):
                    name = VARS[k].name
                    if name not in varied:
                        varied[name] = np.full(m, float(base.inputs[name]))
                    varied[name][span] = [self.read[i][j] for i in rows]
                position += len(rows)
            env = base.env(varied)
            out = price_rows(env, self.steps)
            figures = {s: np.broadcast_to(np.asarray(out[s], dtype=float), (m,))
                       for s in self.steps}
            finite = np.ones(m, dtype=bool)
            for s in MUST_BE_FINITE:
                finite &= np.isfinite(figures[s])
            finite &= ~out_of_bounds(figures)  # (the row alone names what drove it there)
            for s in self.steps:
                self.values[s][index] = figures[s]
            self.ok[index] = finite
            self.alone += index[~finite].tolist()  # the row alone names the overflow
            position = 0
            for names, rows in sets:
                self._check(gkey, names, rows, {s: figures[s][position:position + len(rows)]
                                                for s in self.steps})
                position += len(rows)

    def _check(self, gkey: bytes, names: tuple[str, ...], rows: list[int],
               figures: dict[str, np.ndarray]) -> None:
        """Price one row of a key set alone: its sources are the template of the set's, and
        its figures must be the vectorised ones (else the set is priced alone)."""
        first = next((j for j, i in enumerate(rows) if self.ok[i]), None)
        if first is None:
            return
        i = rows[first]
        priced = self._alone(i)
        labels: dict[str, str] = {}
        if priced is not None:
            sources = priced.result.provenance
            for k in names:
                label = _label(sources.get(k, ""), self.rows[i][k])
                if label is None:
                    break
                labels[k] = label
            else:
                if all(_close(priced.result.values[s], float(figures[s][first]))
                       for s in self.steps):
                    self.templates[(gkey, names)] = (i, sources, labels)
                    return
        # not as expected: every row of the set is priced alone
        rest = [r for r in rows if r != i and self.ok[r]]
        self.ok[rows] = False
        for r in rows:
            for s in self.steps:
                self.values[s][r] = math.nan
        if priced is not None:
            self._keep(i, priced)
        self.alone += rest

    # -- rows priced alone ------------------------------------------------------------------
    def price_alone(self) -> None:
        for i in dict.fromkeys(self.alone):
            if self.ok[i]:
                continue
            priced = self._alone(i)
            if priced is not None:
                self._keep(i, priced)

    def _keep(self, i: int, priced: Priced) -> None:
        for s in self.steps:
            self.values[s][i] = priced.result.values[s]
        self.ok[i] = True
        self.sources[i] = priced.result.provenance

    def _alone(self, i: int) -> Priced | None:
        """Row ``i`` priced as ``price`` prices it; its errors recorded at its paths."""
        row = self.rows[i]
        try:
            overrides = overrides_from_mapping(row)
        except InputError as exc:
            self.errors += [RowError(i, f"overrides[{i}].{k}", m) for k, m in exc.errors]
            return None
        try:
            return price(self.ctx, ScenarioSpec(self.spec.source,
                                                self.spec.overrides + overrides, None))
        except InputError as exc:
            for path, message in exc.errors:
                key = next((k for k in row if path == k or path.startswith(k + ".")
                            or k.startswith(path + ".")), None) if path else None
                self.errors.append(RowError(i, f"overrides[{i}].{key}", message)
                                   if key is not None else
                                   RowError(i, f"overrides[{i}]",
                                            f"{path}: {message}" if path else message))
            return None

    # -- the disclosure they share, and what each row changes -------------------------------
    def shared(self) -> Result | None:
        """The base's result; when the base alone does not price, the first priced row's."""
        if self.base is not None:
            return self.base.result
        first = next((i for i in range(len(self.rows)) if self.ok[i]), None)
        if first is None:
            return None
        priced = self._alone(first)
        assert priced is not None  # it priced already
        self.sources[first] = priced.result.provenance
        return priced.result

    def provenance_against(self, shared: Result | None) -> list[dict[str, str | None] | None]:
        """Each priced row's sources that differ from ``shared``'s (None: gone)."""
        out: list[dict[str, str | None] | None] = [None] * len(self.rows)
        if shared is None:
            return out
        base = shared.provenance

        def diff(sources: Mapping[str, str]) -> dict[str, str | None]:
            changed: dict[str, str | None] = {k: v for k, v in sources.items()
                                              if base.get(k) != v}
            changed.update((k, None) for k in base if k not in sources)
            return changed

        for i, sources in self.sources.items():
            if self.ok[i]:
                out[i] = dict(sorted(diff(sources).items()))
        for (gkey, names), rows in self.together.items():
            template = self.templates.get((gkey, names))
            if template is None:
                continue
            rep, sources, labels = template
            # each source of the row alone is the same for every row of the set, or is an
            # override's label and value (the override's own, and the citations it replaced)
            shown = {k: labels[k] + f"{self.rows[rep][k]}" for k in names}
            follows = {key: k for key, v in sources.items() for k in names if v == shown[k]}
            constant = {k: v for k, v in diff(sources).items() if k not in follows}
            for i in rows:
                if not self.ok[i] or i in self.sources:
                    continue
                row = self.rows[i]
                mine = dict(constant)
                for key, k in follows.items():
                    text = labels[k] + f"{row[k]}"
                    if base.get(key) != text:
                        mine[key] = text
                out[i] = dict(sorted(mine.items()))
        return out
