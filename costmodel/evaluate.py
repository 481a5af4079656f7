"""The numpy interpreter of a :class:`~costmodel.declaration.Declaration`.

Inputs arrive as plain float64 magnitudes in each input's declared unit (enums as integer
level indices); one scenario is a batch of one, a sweep is a batch of a million, and both run
closures compiled once from the same trees: on numpy arrays, or for a batch of one on plain
floats, which skips numpy's per-call overhead and gives the same IEEE results. Units were
checked once when the declaration was built, so nothing here touches pint.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np

from .declaration import (
    BinOp,
    Choose,
    Compare,
    Declaration,
    Name,
    Neg,
    Node,
    Num,
    Where,
)

__all__ = ["compile_node", "Evaluator", "NUMPY", "SCALAR"]

Env = Mapping[str, object]
_CMP: dict[str, Callable] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                             "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _numpy_where(c, t, e):
    return lambda env: np.where(c(env), t(env), e(env))


def _numpy_choose(selector, options):
    def choose(env):
        index = env[selector]
        if np.ndim(index) == 0:  # the common case: one level for the whole batch
            return options[int(index)](env)
        return np.choose(index, np.broadcast_arrays(*[o(env) for o in options]))
    return choose


@dataclass(frozen=True)
class _Ops:
    """What an interpreter does with each construct; the tree walk is shared."""
    binary: dict[str, Callable]
    neg: Callable
    where: Callable  # (condition, if_true, if_false closures) -> closure
    choose: Callable  # (selector name, option closures) -> closure


# Arrays: numpy ufuncs; where() computes both branches and picks per element.
NUMPY = _Ops({"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide,
              "**": np.power}, np.negative, _numpy_where, _numpy_choose)
# A batch of one in plain floats: only the branch taken is computed, so a division by zero
# in an untaken branch never happens; elsewhere it raises and the caller uses NUMPY.
SCALAR = _Ops({"+": operator.add, "-": operator.sub, "*": operator.mul,
               "/": operator.truediv, "**": operator.pow}, operator.neg,
              lambda c, t, e: (lambda env: t(env) if c(env) else e(env)),
              lambda sel, opts: (lambda env: opts[int(env[sel])](env)))


def compile_node(node: Node, decl: Declaration, ops: _Ops = NUMPY) -> Callable[[Env], object]:
    """Turn an expression tree into a closure ``env -> value``, once."""
    if isinstance(node, Name):
        key = node.id
        return lambda env: env[key]
    if isinstance(node, Num):
        value = float(node.value)
        return lambda env: value
    if isinstance(node, Neg):
        neg, inner = ops.neg, compile_node(node.operand, decl, ops)
        return lambda env: neg(inner(env))
    if isinstance(node, (BinOp, Compare)):
        f = ops.binary[node.op] if isinstance(node, BinOp) else _CMP[node.op]
        a, b = compile_node(node.left, decl, ops), compile_node(node.right, decl, ops)
        return lambda env: f(a(env), b(env))
    if isinstance(node, Where):
        return ops.where(compile_node(node.condition, decl, ops),
                         compile_node(node.if_true, decl, ops),
                         compile_node(node.if_false, decl, ops))
    if isinstance(node, Choose):
        return ops.choose(node.selector, [compile_node(o, decl, ops) for o in node.options])
    raise TypeError(node)


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

    ``Evaluator(MODEL)`` computes every step; ``Evaluator(MODEL, outputs=[...])`` computes what
    those outputs need and returns only them.
    """

    def __init__(self, decl: Declaration, outputs: Iterable[str] | None = None):
        self.decl = decl
        names = list(decl.steps) if outputs is None else decl.dependencies(outputs)
        self.outputs = list(decl.steps) if outputs is None else list(outputs)
        self.steps = {n: compile_node(decl.steps[n].tree, decl) for n in names}
        self.scalar_steps = {n: compile_node(decl.steps[n].tree, decl, SCALAR) for n in names}
        self.required = sorted(decl.inputs_read(names))
        self.constants = {c.name: c.value for c in decl.constants.values()}

    def __call__(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Run the steps. ``inputs`` maps input names to magnitudes [declared units].

        Enum inputs are level indices: a scalar (one level for the batch) or an integer array.
        Division by zero and overflow give inf/NaN rather than exceptions; inputs are
        validated before they get here, and unused branches of where/choose may divide by 0.
        """
        missing = [n for n in self.required if n not in inputs]
        if missing:
            raise KeyError(f"missing inputs: {', '.join(missing)}")
        if all(isinstance(v, (float, int, np.number)) for v in inputs.values()):  # one
            env = _LazyEnv(self.scalar_steps, self.constants)
            env.update(inputs)
            try:
                return {name: env[name] for name in self.outputs}
            except (ZeroDivisionError, OverflowError):
                pass  # numpy's inf/NaN semantics below
        env = _LazyEnv(self.steps, self.constants)
        env.update(inputs)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return {name: env[name] for name in self.outputs}
