"""The numpy interpreter of a :class:`~costmodel.declaration.Declaration`.

Inputs arrive as plain float64 magnitudes in each input's declared unit (enums as integer
level indices); one scenario is a batch of one, a sweep is a batch of a million, and both run
the same compiled closures. Units were checked once when the declaration was built, so nothing
here touches pint.
"""
from __future__ import annotations

import operator
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

__all__ = ["compile_node", "Evaluator"]

Env = Mapping[str, object]
_BIN: dict[str, Callable] = {"+": np.add, "-": np.subtract, "*": np.multiply,
                             "/": np.divide, "**": np.power}
_CMP: dict[str, Callable] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                             "<=": operator.le, ">": operator.gt, ">=": operator.ge}


_SCALAR_BIN: dict[str, Callable] = {"+": operator.add, "-": operator.sub, "*": operator.mul,
                                    "/": operator.truediv, "**": operator.pow}


def compile_scalar(node: Node, decl: Declaration) -> Callable[[Env], float]:
    """Like :func:`compile_node` for plain Python floats: the batch of one without numpy's
    per-call overhead. ``where`` and ``choose`` evaluate only the branch taken, so a
    division by zero in an untaken branch never happens; elsewhere it raises
    ZeroDivisionError, and the caller falls back to the numpy closures."""
    if isinstance(node, Name):
        key = node.id
        return lambda env: env[key]
    if isinstance(node, Num):
        value = float(node.value)
        return lambda env: value
    if isinstance(node, Neg):
        inner = compile_scalar(node.operand, decl)
        return lambda env: -inner(env)
    if isinstance(node, BinOp):
        f = _SCALAR_BIN[node.op]
        a, b = compile_scalar(node.left, decl), compile_scalar(node.right, decl)
        return lambda env: f(a(env), b(env))
    if isinstance(node, Compare):
        f, a, b = _CMP[node.op], compile_scalar(node.left, decl), compile_scalar(node.right, decl)
        return lambda env: f(a(env), b(env))
    if isinstance(node, Where):
        c = compile_scalar(node.condition, decl)
        t, e = compile_scalar(node.if_true, decl), compile_scalar(node.if_false, decl)
        return lambda env: t(env) if c(env) else e(env)
    if isinstance(node, Choose):
        selector = node.selector
        options = [compile_scalar(o, decl) for o in node.options]
        return lambda env: options[int(env[selector])](env)
    raise TypeError(node)


def compile_node(node: Node, decl: Declaration) -> Callable[[Env], object]:
    """Turn an expression tree into a closure ``env -> array``, once."""
    if isinstance(node, Name):
        key = node.id
        return lambda env: env[key]
    if isinstance(node, Num):
        value = float(node.value)
        return lambda env: value
    if isinstance(node, Neg):
        inner = compile_node(node.operand, decl)
        return lambda env: np.negative(inner(env))
    if isinstance(node, BinOp):
        f, a, b = _BIN[node.op], compile_node(node.left, decl), compile_node(node.right, decl)
        return lambda env: f(a(env), b(env))
    if isinstance(node, Compare):
        f, a, b = _CMP[node.op], compile_node(node.left, decl), compile_node(node.right, decl)
        return lambda env: f(a(env), b(env))
    if isinstance(node, Where):
        c = compile_node(node.condition, decl)
        t, e = compile_node(node.if_true, decl), compile_node(node.if_false, decl)
        return lambda env: np.where(c(env), t(env), e(env))
    if isinstance(node, Choose):
        selector = node.selector
        options = [compile_node(o, decl) for o in node.options]

        def choose(env):
            index = env[selector]
            if np.ndim(index) == 0:  # the common case: one level for the whole batch
                return options[int(index)](env)
            return np.choose(index, np.broadcast_arrays(*[o(env) for o in options]))
        return choose
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
        self.scalar_steps = {n: compile_scalar(decl.steps[n].tree, decl) for n in names}
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
        if all(type(v) in (float, int) for v in inputs.values()):  # one scenario
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
