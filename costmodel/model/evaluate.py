"""The numpy evaluator of a whole :class:`~costmodel.model.declaration.Declaration`.

The interpreter of one expression (:func:`compile_node`, :data:`NUMPY`, :data:`SCALAR`) is the
declaration's own, beside its pint unit check, so the declaration does not import this module
(re-exported here).

Inputs arrive as plain float64 magnitudes in each input's declared unit (enums as integer
level indices); one scenario is a batch of one, a sweep is a batch of a million, and both run
closures compiled once from the same trees: on numpy arrays, or for a batch of one on plain
floats, which skips numpy's per-call overhead and gives the same IEEE results. Every step of
one scenario (the chain's price) runs as one generated Python function of those same float
operations, which skips a call per node of the tree. Units were
checked once when the declaration was built, so nothing here touches pint. A batch (and one
scenario with a profile) runs fused where it can (:mod:`costmodel.model.fused`: the same
operations as one generated function over blocks of rows); the closures on whole arrays
remain its reference (:meth:`Evaluator.reference`) and take the rest.

Profiles (inputs along the month and hour axes) are numpy arrays of shape (months, hours),
(months, 1) or (1, hours); in a batch each gains a trailing axis of 1, so a batch of
scalars (shape (n,)) broadcasts over them. A value with fewer than two dimensions is a
scalar: a reduction of it is the value itself (a profile of one slot). A batch shares one
profile: rows that change a profile are evaluated per group by the caller.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .declaration import (
    NUMPY,
    REDUCE,
    SCALAR,
    Algebra,
    ChosenNames,
    Declaration,
    compile_node,
    fold,
    literal_source,
)
from .fused import Fused

__all__ = ["compile_node", "Evaluator", "NUMPY", "SCALAR"]

_FLOATS = frozenset({float, int})
_MAX_SPECIALISED = 256  # combinations of categorical levels compiled per evaluator


class _SourceOps(Algebra[str]):
    """A batch of one as Python source: each expression is one Python expression over
    plain floats, with the same operations in the same order as :class:`_ScalarOps`'s
    closures (so the same IEEE results), and only the branch taken of a where/choose
    computed. ``local`` names the variable of an input, constant or step."""

    def __init__(self, local: Mapping[str, str], levels: Mapping[str, int] | None = None):
        self.local = local
        self.levels = levels  # each categorical input's level, when known at compile time
        self.chosen = 0  # choose()s so far: each names its level variable

    def name(self, id: str) -> str:
        return self.local[id]

    def num(self, value: float) -> str:
        return literal_source(value)

    def neg(self, x: str) -> str:
        return f"(-{x})"

    def binop(self, op: str, a: str, b: str) -> str:
        return f"({a} {op} {b})"

    def compare(self, op: str, a: str, b: str) -> str:
        return f"({a} {op} {b})"

    def where(self, condition: str, if_true: str, if_false: str) -> str:
        return f"({if_true} if {condition} else {if_false})"

    def reduce(self, op: str, axis: str, x: str) -> str:
        return f"_{op}_{axis}({x})"

    def choose(self, selector: str, options: tuple[str, ...]) -> str:
        if self.levels is not None:  # the level is known: its option alone
            return options[self.levels[selector]]
        # option k of the selector's level k, indexed as _ScalarOps indexes its options
        # (from the end when negative; IndexError beyond); no closure, so every variable of
        # the function stays a fast local
        self.chosen += 1
        k, n = f"_k{self.chosen}", len(options)
        chain = "_out_of_range()"
        for level in reversed(range(n)):
            test = f"{k} == {level}" if level else f"({k} := int({self.local[selector]})) == 0"
            chain = f"({options[level]} if {test} or {k} == {level - n} else {chain})"
        return chain


def _out_of_range() -> float:
    raise IndexError("tuple index out of range")  # as options[k] says


def _compile_scalar(decl: Declaration, names: list[str], inputs: Iterable[str],
                    answers: Iterable[str], levels: Mapping[str, int] | None = None
                    ) -> Callable[[Mapping[str, object]], dict]:
    """One Python function computing every step of ``names`` (declaration order: a step
    reads only earlier ones) from a mapping of ``inputs``, answering ``answers`` by name.
    ``levels``: every categorical input's level, fixed: each ``choose`` is its option, and
    only the steps and inputs the answers then read are computed and read."""
    answers = list(answers)
    local = {n: f"v{i}" for i, n in enumerate([*inputs, *decl.constants, *names])}
    ops = _SourceOps(local, levels)
    if levels is not None:  # what the answers read at these levels, and nothing else
        needed = decl.reached(answers, ChosenNames(levels))
        names = [n for n in names if n in needed]
        inputs = [n for n in inputs if n in needed]
    lines = ["def run(env):"]
    lines += [f"    {local[n]} = env[{n!r}]" for n in inputs]
    lines += [f"    {local[n]} = {c.value!r}" for n, c in decl.constants.items()]
    lines += [f"    {local[n]} = {fold(decl.steps[n].tree, ops)}" for n in names]
    lines.append("    return {" + ", ".join(f"{n!r}: {local[n]}" for n in answers) + "}")
    namespace: dict[str, object] = {"_out_of_range": _out_of_range,
                                    **{f"_{op}_{axis}": f for (op, axis), f in REDUCE.items()}}
    exec(compile("\n".join(lines), f"<steps of {len(names)}>", "exec"), namespace)
    return namespace["run"]  # type: ignore[return-value]


class _LazyEnv(dict):
    """Names -> values; a step is computed the first time something reads it.

    Laziness means a ``choose`` on a batch-wide level only ever computes the chosen branch
    (the facility boundary does not compute node power it will not use).
    """

    def __init__(self, steps: Mapping[str, Callable], values: Mapping[str, object]):
        super().__init__(values)
        self._steps = steps

    def __missing__(self, name: str):
        value = self._steps[name](self)
        self[name] = value
        return value


class Evaluator:
    """Evaluates chosen steps of a declaration on numpy arrays.

    ``Evaluator(MODEL)`` computes every step with one value per scenario (a profile's steps
    are computed as they are needed); ``Evaluator(MODEL, outputs=[...])`` computes what those
    outputs need and returns only them. A batch, or one scenario with a profile, runs fused
    (:mod:`costmodel.model.fused`) where it can, else on whole arrays (:meth:`reference`,
    the fused path's reference);
    ``fused=False``: always on whole arrays.
    """

    def __init__(self, decl: Declaration, outputs: Iterable[str] | None = None, *,
                 fused: bool = True):
        self.decl = decl
        scalar = decl.scalar_steps
        names = decl.dependencies(scalar) if outputs is None else decl.dependencies(outputs)
        self.outputs = scalar if outputs is None else list(outputs)
        self._profiles = frozenset(decl.profile_inputs)
        self.steps = {n: compile_node(decl.steps[n].tree) for n in names}
        self.scalar_steps = {n: compile_node(decl.steps[n].tree, SCALAR) for n in names}
        self.required = sorted(decl.inputs_read(names))
        self.constants = {c.name: c.value for c in decl.constants.values()}
        # every step asked for: one compiled function computes them all, as the env would
        self._inputs = frozenset(decl.inputs) | frozenset(decl.enums)
        self._required = frozenset(self.required)
        self._scalar = _compile_scalar(decl, names, self.required, self.outputs) \
            if outputs is None \
            and all(type(c.value) in (int, float) for c in decl.constants.values()) else None
        # the scalar function for each combination of categorical levels met so far: only
        # the options chosen and the steps they read (a flat price computes no profile)
        self._names = names
        self._enum_levels = [(e.name, len(e.levels)) for e in decl.enums.values()
                             if e.name in self._required]
        self._by_levels: dict[tuple[int, ...], Callable] = {}
        enums = [n for n, _ in self._enum_levels]  # (one enum: a tuple of its level too)
        self._level_key = operator.itemgetter(*enums) if len(enums) > 1 else \
            (lambda env, name=enums[0]: (env[name],)) if enums else (lambda env: ())
        # a batch: one generated function per combination of levels and kinds of inputs
        self._fused = Fused(decl, self.outputs, [n for n, _ in self._enum_levels],
                            self.constants, self._profiles, self.required) if fused else None

    def _at_levels(self, inputs: Mapping[str, object]) -> Callable:
        """The scalar function specialised to the inputs' categorical levels (compiled the
        first time a combination is met; the general one for a level out of range)."""
        key = self._level_key(inputs)
        run = self._by_levels.get(key)
        if run is None:
            if len(self._by_levels) >= _MAX_SPECIALISED or not all(
                    type(k) is int and 0 <= k < n
                    for k, (_, n) in zip(key, self._enum_levels, strict=True)):
                return self._scalar
            levels = dict(zip((name for name, _ in self._enum_levels), key, strict=True))
            run = self._by_levels[key] = _compile_scalar(
                self.decl, self._names, self.required, self.outputs, levels)
        return run

    def __call__(self, inputs: Mapping[str, object], *,
                 plain: bool = False) -> dict[str, np.ndarray]:
        """Run the steps. ``inputs`` maps input names to magnitudes [declared units].

        Enum inputs are level indices: a scalar (one level for the batch) or an integer array.
        Division by zero and overflow give inf/NaN rather than exceptions; inputs are
        validated before they get here, and unused branches of where/choose may divide by 0.
        ``plain=True``: ``inputs`` are what :meth:`Scenario.to_inputs` answers (every
        declared input, each a float or an int, nothing else), not checked again.
        """
        if plain and self._scalar is not None:  # one scenario, plain numbers
            try:
                return self._at_levels(inputs)(inputs)
            except (ZeroDivisionError, OverflowError):
                return self._numpy(inputs)  # numpy's inf/NaN semantics
        if not self._required.issubset(inputs.keys()):
            missing = [n for n in self.required if n not in inputs]
            raise KeyError(f"missing inputs: {', '.join(missing)}")
        if self._scalar is not None and _FLOATS.issuperset(map(type, inputs.values())) \
                and self._inputs.issuperset(inputs):  # one scenario, plain numbers
            try:
                return self._at_levels(inputs)(inputs)
            except (ZeroDivisionError, OverflowError):
                pass  # numpy's inf/NaN semantics below
        elif all(isinstance(v, (float, int, np.number)) for v in inputs.values()):  # one
            env = _LazyEnv(self.scalar_steps, self.constants)
            env.update(inputs)
            try:
                return {name: env[name] for name in self.outputs}
            except (ZeroDivisionError, OverflowError):
                pass  # numpy's inf/NaN semantics below
        elif self._fused is not None:
            fused = self._fused(inputs)
            if fused is not None:
                return fused
        return self._numpy(inputs)

    def reference(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """The steps on whole arrays, one closure per node (never fused): what the fused
        path must equal. ``inputs`` as :meth:`__call__`'s."""
        if not self._required.issubset(inputs.keys()):
            missing = [n for n in self.required if n not in inputs]
            raise KeyError(f"missing inputs: {', '.join(missing)}")
        return self._numpy(inputs)

    def _numpy(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        env = _LazyEnv(self.steps, self.constants)
        env.update(inputs)
        if any(np.ndim(inputs[n]) for n in self._required - self._profiles):
            for name in self._profiles & inputs.keys():  # a batch: profiles gain its axis
                if np.ndim(inputs[name]) == 2:
                    env[name] = np.asarray(inputs[name])[..., None]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return {name: env[name] for name in self.outputs}
