"""A batch of a declaration's steps fused into one generated numpy function.

:class:`~costmodel.model.evaluate.Evaluator` evaluates a batch on whole arrays, one closure
per node of each step's tree: every operation allocates an array of the batch's length and
reads its operands back from memory. Here the same operations, in the same order and with
the same numpy functions (so the same IEEE results), run over the batch in blocks of rows
small enough that the intermediates stay in the processor's caches, each written into a
buffer reused from block to block (``out=``):

1. **Specialise** to the batch's categorical levels (one level for the whole batch): each
   ``choose`` is its chosen option, and only the steps and inputs the asked outputs then
   read are kept (the dependency closure).
2. **Share** equal subexpressions: the steps become one graph of operations, each computed
   once (two steps that read the same product compute it once).
3. **Hoist** what does not vary by row (constants, batch-wide inputs, a profile's weights and
   rates): computed once per call, exactly as the plain evaluator computes it.
4. **Drop** operations that leave every bit of their operand as it is (``x * 1``, ``x / 1``
   and ``x - 0`` with a declared constant or literal; not ``x + 0``, which turns -0 into +0).
5. **Generate** one Python function per case (levels, and each input's kind: batch-wide,
   by row, or a profile of a shape), compiled once and cached: a loop over blocks of rows
   whose body calls each operation's ufunc with ``out=`` a buffer; a buffer is reused as
   soon as its value is read for the last time (in place where shapes allow); an output is
   written straight into its result array.

The block's length is chosen so that the buffers of one block fit in :data:`BLOCK_BYTES`.
One scenario with a profile (plain floats beside a tariff's or a load shape's arrays) has no
rows: its function is the hoisted part alone, the plain evaluator's operations without a
closure call per node. Anything the fused function does not cover (a categorical input that
varies by row or is out of range, inputs of mixed lengths, a profile of an unexpected rank,
plain numbers alone, which the scalar paths take) is evaluated by the plain evaluator, which
stays the reference.

Units [declared units of each input and step] were checked when the declaration was built;
nothing here touches pint.
"""
from __future__ import annotations

import math
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .declaration import (
    REDUCE,
    Algebra,
    Declaration,
    fold,
    literal_source,
)

__all__ = ["Fused", "BLOCK_BYTES"]

# the buffers of one block of rows together [bytes]: blocks much smaller pay numpy's call
# overhead once per operation per block; much larger fall out of the cache. Measured with
# bench/sweep.py on 2 cores (512 KiB L2 each, 32 MiB L3 shared): 2-8 MiB alike at a flat price
# (32,768 rows), 4 MiB best on a 24-hour tariff (6,543 rows: 24 slots a row for the hourly
# values), 2 MiB 20 % slower there
BLOCK_BYTES = 4 << 20
MIN_BLOCK, MAX_BLOCK = 1024, 32768  # rows per block, whatever the buffers' size
_MAX_PLANS = 64  # generated functions kept per evaluator (levels x kinds of inputs)
# buffers kept for the next call, over every plan of the process [bytes]: a call that finds
# none allocates its own (a block's worth at most); the sets used longest ago are dropped
POOL_BYTES = 64 << 20
_POOL_PLANS = 256  # plans with buffers kept (each set kept keeps its plan)


class _Pool:
    """Sets of buffers not in use, by plan (two at most: a second for another thread), the
    process's together at most :data:`POOL_BYTES`, of at most ``_POOL_PLANS`` plans."""

    def __init__(self) -> None:
        self._sets: OrderedDict[object, list[list]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def take(self, plan: object) -> list | None:
        with self._lock:
            sets = self._sets.get(plan)
            if not sets:
                return None
            entry = sets.pop()
            if not sets:
                del self._sets[plan]
            self._bytes -= entry[-1]
            return entry

    def give(self, plan: object, entry: list) -> None:
        with self._lock:
            sets = self._sets.setdefault(plan, [])
            self._sets.move_to_end(plan)
            if len(sets) >= 2:
                return  # (a list with entries: never left empty)
            sets.append(entry)
            self._bytes += entry[-1]
            while self._bytes > POOL_BYTES or len(self._sets) > _POOL_PLANS:
                oldest, kept = next(iter(self._sets.items()))
                self._bytes -= kept.pop(0)[-1]
                if not kept:
                    del self._sets[oldest]


_POOL = _Pool()

_BINARY: dict[str, Callable] = {"+": np.add, "-": np.subtract, "*": np.multiply,
                                "/": np.divide, "**": np.power}
# as the plain evaluator compares (operator.*), which on arrays are these ufuncs
_COMPARE: dict[str, Callable] = {"==": operator.eq, "!=": operator.ne, "<": operator.lt,
                                 "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_COMPARE_UFUNC: dict[str, Callable] = {"==": np.equal, "!=": np.not_equal, "<": np.less,
                                       "<=": np.less_equal, ">": np.greater,
                                       ">=": np.greater_equal}


@dataclass(frozen=True)
class _Op:
    """One operation of the graph: ``kind`` is input, const, num, neg, bin, cmp, where or
    reduce; ``what`` the input's or constant's name, the literal, the operator, or the
    reduction's (operation, axis); ``args`` the operands' indices in the graph."""
    kind: str
    what: Any
    args: tuple[int, ...] = ()


class _Graph(Algebra[int]):
    """The steps reached from the outputs at fixed categorical levels, as one list of
    operations in an order where each comes after its operands; equal operations (same
    kind and operands) are one."""

    def __init__(self, decl: Declaration, levels: Mapping[str, int]):
        self.decl, self.levels = decl, levels
        self.ops: list[_Op] = []
        self._index: dict[_Op, int] = {}
        self._steps: dict[str, int] = {}

    def _add(self, op: _Op) -> int:
        k = self._index.get(op)
        if k is None:
            k = self._index[op] = len(self.ops)
            self.ops.append(op)
        return k

    def step(self, name: str) -> int:
        k = self._steps.get(name)
        if k is None:
            k = self._steps[name] = fold(self.decl.steps[name].tree, self)
        return k

    def name(self, id: str) -> int:
        if id in self.decl.steps:
            return self.step(id)
        return self._add(_Op("const" if id in self.decl.constants else "input", id))

    def num(self, value: int) -> int:
        return self._add(_Op("num", float(value)))

    def neg(self, x: int) -> int:
        return self._add(_Op("neg", None, (x,)))

    def binop(self, op: str, a: int, b: int) -> int:
        return self._add(_Op("bin", op, (a, b)))

    def compare(self, op: str, a: int, b: int) -> int:
        return self._add(_Op("cmp", op, (a, b)))

    def where(self, condition: int, if_true: int, if_false: int) -> int:
        return self._add(_Op("where", None, (condition, if_true, if_false)))

    def choose(self, selector: str, options: tuple[int, ...]) -> int:
        # the option at the batch's level (the others were built, and are left unread)
        return options[self.levels[selector]]

    def reduce(self, op: str, axis: str, x: int) -> int:
        return self._add(_Op("reduce", (op, axis), (x,)))


class _Case:
    """The graph at one combination of categorical levels, reduced to what the outputs
    read; its generated functions, one per kind of inputs."""

    def __init__(self, decl: Declaration, outputs: list[str], levels: Mapping[str, int]):
        graph = _Graph(decl, levels)
        roots = [graph.step(n) if n in decl.steps else graph.name(n) for n in outputs]
        live = set(roots)
        for k in range(len(graph.ops) - 1, -1, -1):  # operands come before their users
            if k in live:
                live.update(graph.ops[k].args)
        keep = sorted(live)
        renumber = {old: new for new, old in enumerate(keep)}
        self.ops = [_Op(graph.ops[k].kind, graph.ops[k].what,
                        tuple(renumber[a] for a in graph.ops[k].args)) for k in keep]
        self.roots = [renumber[k] for k in roots]
        self.inputs = sorted({op.what for op in self.ops if op.kind == "input"})
        self.profile: list[bool] = []  # whether each input is a profile (Fused sets it)
        self.outputs = outputs
        self.plans: dict[tuple, _Plan | None] = {}


_ROW = ("row",)  # a float64 array by row (the common kind; compared by identity)
_FLOAT, _INT = ("scalar", float), ("scalar", int)


def _kind(value: object, profile: bool) -> tuple | None:
    """How an input's value takes part in a batch: batch-wide (a scalar), by row (1-D), or a
    profile shared by the batch (2-D); None for anything else (the plain evaluator's)."""
    t = type(value)
    if t is float:
        return _FLOAT
    if t is np.ndarray:
        dtype, ndim = value.dtype, value.ndim  # type: ignore[attr-defined]
        if ndim == 1 and not profile:
            return _ROW if dtype == _F8 else ("row", dtype) if dtype.kind in "biuf" else None
        if dtype.kind not in "biuf":
            return None
        if ndim == 0:
            return ("scalar", dtype)
        return ("profile", value.shape, dtype) \
            if ndim == 2 and profile else None  # type: ignore[attr-defined]
    if t is int:
        return _INT
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return ("scalar", value.dtype)
    return None


_F8 = np.dtype(np.float64)


def _hoisted(op: _Op, vals: list, constants: Mapping[str, object]) -> object:
    """One operation on values that do not vary by row, as the plain evaluator does it."""
    kind, a = op.kind, op.args
    if kind == "const":
        return constants[op.what]
    if kind == "num":
        return op.what
    if kind == "neg":
        return np.negative(vals[a[0]])
    if kind == "bin":
        return _BINARY[op.what](vals[a[0]], vals[a[1]])
    if kind == "cmp":
        return _COMPARE[op.what](vals[a[0]], vals[a[1]])
    if kind == "where":
        return np.where(vals[a[0]], vals[a[1]], vals[a[2]])
    if kind == "reduce":
        return REDUCE[op.what](vals[a[0]])
    raise TypeError(kind)


def _reduction(shape: tuple[int, ...], reduced: tuple[int, ...]) -> tuple | None:
    """What a reduction of an operand of ``shape`` (rows last) giving ``reduced`` is: () the
    operand itself (the axes it removes have one slot, or it has none), (axis, keepdims) a
    numpy sum or maximum over those, None neither (then the plan calls the function)."""
    if reduced == shape:
        return ()
    if len(shape) == 3:
        for axis, keep in (((0, 1), False), ((0,), True), ((1,), True)):
            expect = tuple(1 if i in axis else d for i, d in enumerate(shape)) if keep \
                else tuple(d for i, d in enumerate(shape) if i not in axis)
            if expect == reduced:
                return axis, keep
    return None


_NUMPY_REDUCE: dict[str, Callable] = {"sum": np.sum, "max": np.max}


class _Plan:
    """The generated function of one case for one kind of inputs."""

    def __init__(self, case: _Case, constants: Mapping[str, object], sample: Mapping,
                 kinds: Mapping[str, tuple]):
        """``sample``: one batch of this kind (its first row is traced for the shapes and
        types of every row-wise value)."""
        ops = case.ops
        self.case, self.kinds = case, kinds
        row = [False] * len(ops)
        for k, op in enumerate(ops):
            row[k] = (op.kind == "input" and np.ndim(sample[op.what]) == 1) \
                or any(row[a] for a in op.args)
        self.row = row
        self.row_inputs = [n for n in case.inputs if np.ndim(sample[n]) == 1]
        self.batch = bool(self.row_inputs)  # else one scenario: profiles keep their shape
        # the first row's values: each row-wise value's shape (rows last) and type
        vals: list = [None] * len(ops)
        for k, op in enumerate(ops):  # the values that do not vary by row
            if not row[k] and op.kind == "input":
                v = sample[op.what]
                vals[k] = np.asarray(v)[..., None] if np.ndim(v) == 2 and self.batch else v
            elif not row[k]:
                vals[k] = _hoisted(op, vals, constants)
        shapes: list[tuple[int, ...] | None] = [None] * len(ops)
        how: dict[int, tuple | None] = {}  # each row-wise reduction's numpy arguments
        dtypes: list[np.dtype | None] = [None] * len(ops)
        for k, op in enumerate(ops):
            if row[k]:
                if op.kind == "input":
                    v = np.asarray(sample[op.what])[:1]
                else:
                    v = np.asarray(_hoisted(op, vals, constants))
                vals[k] = v
                shapes[k], dtypes[k] = v.shape[:-1], v.dtype
                if op.kind == "reduce":  # which numpy reduction it is, checked on the row
                    how[k] = _reduction(vals[op.args[0]].shape, v.shape)
                    if how[k] and (op.what[0] not in _NUMPY_REDUCE or not np.array_equal(
                            _NUMPY_REDUCE[op.what[0]](vals[op.args[0]], axis=how[k][0],
                                                      keepdims=how[k][1]),
                            v, equal_nan=True)):
                        how[k] = None
        self._generate(ops, constants, shapes, dtypes, how)

    # -- generation ------------------------------------------------------------------------
    def _generate(self, ops: list[_Op], constants: Mapping[str, object],
                  shapes: list, dtypes: list, how: Mapping[int, tuple | None]) -> None:
        row = self.row
        alias = list(range(len(ops)))  # the operation whose value each one is

        def known(k: int) -> float | None:  # a declared constant or literal's value
            op = ops[k]
            value = op.what if op.kind == "num" else \
                constants.get(op.what) if op.kind == "const" else None
            return value if type(value) is float else None

        for k, op in enumerate(ops):  # operations that keep every bit of an operand
            if not row[k]:
                continue
            if op.kind == "bin":
                a, b = op.args
                same = None
                if op.what in ("*", "/") and known(b) == 1.0:
                    same = a
                elif op.what == "*" and known(a) == 1.0:
                    same = b
                elif op.what == "-" and known(b) == 0.0 and math.copysign(1, known(b)) > 0:
                    same = a
                if same is not None and row[same] and shapes[same] == shapes[k] \
                        and dtypes[same] == dtypes[k]:
                    alias[k] = alias[same]
            elif op.kind == "reduce" and how[k] == ():
                alias[k] = alias[op.args[0]]

        roots = [alias[r] for r in self.case.roots]
        computed = [k for k in range(len(ops)) if row[k] and alias[k] == k
                    and ops[k].kind != "input"]
        # which computed values are read, and for the last time where
        needed = {r for r in roots if row[r]}
        for k in reversed(computed):
            if k in needed:
                needed.update(alias[a] for a in ops[k].args)
        computed = [k for k in computed if k in needed]
        last: dict[int, int] = {}
        for k in computed:
            for a in ops[k].args:
                last[alias[a]] = k
        # the outputs each written straight into its result (the first output of a value)
        self.results: list[tuple[int, tuple, np.dtype]] = []  # (op, shape, dtype)
        written: dict[int, int] = {}
        for r in roots:
            if row[r] and ops[r].kind != "input" and r not in written:
                written[r] = len(self.results)
                self.results.append((r, shapes[r], dtypes[r]))
        # buffers: a free one of the same shape and type, an operand's in place if this is
        # its last reading (elementwise, so each element is read before it is written)
        slots: list[tuple[tuple, np.dtype]] = []
        free: dict[tuple, list[int]] = {}
        slot_of: dict[int, int] = {}
        for k in computed:
            op = ops[k]
            dying = list(dict.fromkeys(alias[a] for a in op.args if row[alias[a]]
                                       and last.get(alias[a]) == k and alias[a] in slot_of))
            if k not in written:
                key = (shapes[k], dtypes[k])
                inplace = [a for a in dying if (shapes[a], dtypes[a]) == key
                           and op.kind in ("bin", "neg", "cmp", "where")]
                if inplace:
                    slot_of[k] = slot_of[inplace[0]]
                    dying.remove(inplace[0])
                elif free.get(key):
                    slot_of[k] = free[key].pop()
                else:
                    slot_of[k] = len(slots)
                    slots.append(key)
            for a in dying:
                free.setdefault((shapes[a], dtypes[a]), []).append(slot_of[a])
        self.slots = slots
        row_bytes = sum(math.prod(s) * d.itemsize for s, d in slots) or 8
        self.block = max(MIN_BLOCK, min(MAX_BLOCK, BLOCK_BYTES // row_bytes))
        self.operations = len(computed)
        self.source = self._source(ops, constants, shapes, dtypes, how, alias, computed,
                                   written, slot_of)

    def _source(self, ops: list[_Op], constants: Mapping[str, object], shapes: list,
                dtypes: list, how: Mapping[int, tuple | None], alias: list[int],
                computed: list[int], written: Mapping[int, int],
                slot_of: Mapping[int, int]) -> str:
        """One function ``run(inputs, n, blocks)``: the values that do not vary by row, as
        the plain evaluator computes them; then, block by block, every row-wise operation
        into its buffer or its result; the answers by name."""
        row, roots = self.row, [alias[r] for r in self.case.roots]
        namespace: dict[str, object] = {"np": np, "_reduce": REDUCE, "_where": np.where,
                                        "_negative": np.negative, "_empty": np.empty,
                                        "_array": np.array, "_copyto": np.copyto}
        for f in (*_BINARY.values(), *_COMPARE_UFUNC.values()):
            namespace[f"_{f.__name__}"] = f
        for f in _COMPARE.values():
            namespace[f"_py{f.__name__}"] = f
        for (op, axis), f in REDUCE.items():
            namespace[f"_{op}_{axis}"] = f
        # the hoisted values read by a row-wise operation or answered, and what they read
        hoisted = {alias[a] for k in computed for a in ops[k].args if not row[alias[a]]}
        hoisted |= {r for r in roots if not row[r]}
        for k in range(len(ops) - 1, -1, -1):
            if k in hoisted:
                hoisted.update(ops[k].args)
        names: dict[int, str] = {}
        lines = ["def run(inputs, n, blocks):"]
        for k in sorted(hoisted):
            op, v = ops[k], f"v{k}"
            names[k] = v
            a = [names[x] for x in op.args]
            if op.kind == "input":
                profile = self.kinds[op.what][0] == "profile" and self.batch
                lines.append(f"    {v} = inputs[{op.what!r}]" + ("[..., None]" if profile else ""))
            elif op.kind == "const":
                namespace[f"c{k}"] = constants[op.what]
                lines.append(f"    {v} = c{k}")
            elif op.kind == "num":
                lines.append(f"    {v} = {literal_source(op.what)}")
            elif op.kind == "neg":
                lines.append(f"    {v} = _negative({a[0]})")
            elif op.kind == "bin":
                lines.append(f"    {v} = _{_BINARY[op.what].__name__}({a[0]}, {a[1]})")
            elif op.kind == "cmp":
                lines.append(f"    {v} = _py{_COMPARE[op.what].__name__}({a[0]}, {a[1]})")
            elif op.kind == "where":
                lines.append(f"    {v} = _where({a[0]}, {a[1]}, {a[2]})")
            elif op.kind == "reduce":
                lines.append(f"    {v} = _{op.what[0]}_{op.what[1]}({a[0]})")
            else:
                raise TypeError(op.kind)
        for i, name in enumerate(self.row_inputs):
            lines.append(f"    X{i} = inputs[{name!r}]")
            for k, op in enumerate(ops):
                if op.kind == "input" and op.what == name:
                    names[k] = f"x{i}"
        for i, (_, shape, dtype) in enumerate(self.results):
            namespace[f"d{i}"] = dtype
            lines.append(f"    R{i} = _empty({shape!r} + (n,), d{i})")
        for k in computed:
            names[k] = f"r{written[k]}" if k in written else f"b{slot_of[k]}"
        lines.append("    for lo, hi, B in blocks:")
        body = [f"{', '.join(f'b{i}' for i in range(len(self.slots)))}, = B"] \
            if self.slots else []
        body += [f"x{i} = X{i}[lo:hi]" for i in range(len(self.row_inputs))]
        body += [f"r{i} = R{i}[..., lo:hi]" for i in range(len(self.results))]
        for k in computed:
            op, out = ops[k], names[k]
            a = [names[alias[x]] for x in op.args]
            if op.kind in ("bin", "cmp"):
                f = (_BINARY if op.kind == "bin" else _COMPARE_UFUNC)[op.what]
                body.append(f"_{f.__name__}({a[0]}, {a[1]}, out={out})")
            elif op.kind == "neg":
                body.append(f"_negative({a[0]}, out={out})")
            elif op.kind == "where":  # np.where itself: a masked copy (copyto's where=)
                # mispredicts its branches on a mixed condition, 4x slower than np.where
                body.append(f"_copyto({out}, _where({a[0]}, {a[1]}, {a[2]}))")
            elif op.kind == "reduce" and how[k]:
                axis, keep = how[k]
                body.append(f"np.{op.what[0]}({a[0]}, axis={axis}, keepdims={keep}, "
                            f"out={out})")
            elif op.kind == "reduce":  # not a sum or maximum numpy repeats: the function's
                body.append(f"_copyto({out}, _{op.what[0]}_{op.what[1]}({a[0]}))")
            else:
                raise TypeError(op.kind)
        lines += [f"        {line}" for line in body or ["pass"]]
        answers, given = [], set()
        for name, r in zip(self.case.outputs, roots, strict=True):
            if not row[r]:
                value = names[r]
            elif ops[r].kind == "input":  # a copy: an answer is never the caller's input
                value = f"_array({names[r].upper()})"
            elif r in given:  # the same value under another name: its own array
                value = f"R{written[r]}.copy()"
            else:
                value = f"R{written[r]}"
                given.add(r)
            answers.append(f"{name!r}: {value}")
        lines.append(f"    return {{{', '.join(answers)}}}")
        source = "\n".join(lines)
        exec(compile(source, f"<fused: {len(computed)} operations>", "exec"), namespace)
        self._run = namespace["run"]
        return source

    # -- running -----------------------------------------------------------------------------
    def _blocks(self, n: int) -> list:
        """A set of buffers, and the blocks of ``n`` rows over it: (first row, end, the
        buffers' views of the block's length), blocks of equal length bar the last. A set
        holds a block of rows, or fewer when its batches were all shorter than that."""
        chunks = -(-n // self.block)
        size = -(-n // chunks)
        entry = _POOL.take(self)
        if entry is None or entry[0] < size:  # [rows a buffer holds, buffers, n, blocks, bytes]
            buffers = [np.empty(math.prod(s) * size, d) for s, d in self.slots]
            entry = [size, buffers, None, None, sum(b.nbytes for b in buffers)]
        if entry[2] != n:
            blocks, views = [], {}
            for lo in range(0, n, size):
                m = min(size, n - lo)
                if m not in views:
                    views[m] = [f[:math.prod(s) * m].reshape((*s, m))
                                for f, (s, _) in zip(entry[1], self.slots, strict=True)]
                blocks.append((lo, lo + m, views[m]))
            entry[2], entry[3] = n, blocks
        return entry

    def __call__(self, inputs: Mapping, n: int) -> dict[str, object]:
        if not n:  # one scenario: no rows, no buffers
            return self._run(inputs, 0, ())
        entry = self._blocks(n)
        try:
            return self._run(inputs, n, entry[3])
        finally:
            _POOL.give(self, entry)  # kept for the next call


class Fused:
    """The fused evaluation of ``outputs`` of ``decl`` on batches (see the module's
    docstring); :meth:`__call__` answers None when the batch is not one it covers."""

    def __init__(self, decl: Declaration, outputs: Iterable[str], enums: Iterable[str],
                 constants: Mapping[str, object], profiles: Iterable[str],
                 required: Iterable[str] = ()):
        """``required``: every input the plain evaluator requires (an array among those that
        are not profiles makes a batch, whose profiles gain a trailing axis)."""
        self.decl = decl
        self.scalars = sorted(set(required) - set(profiles) - set(decl.enums))
        self.outputs = list(outputs)
        self.enums = [(e, len(decl.enums[e].levels)) for e in enums]
        self.constants = constants
        self.profiles = frozenset(profiles)
        self._cases: dict[tuple[int, ...], _Case] = {}
        self._plans = 0

    def _levels(self, inputs: Mapping) -> tuple[int, ...] | None:
        """Each categorical input's level for the whole batch, or None (a level by row, or
        one the plain evaluator refuses)."""
        levels = []
        for name, count in self.enums:
            v = inputs[name]
            if type(v) is not int:
                if np.ndim(v) != 0:
                    return None  # a level by row: np.choose's, the plain evaluator's
                try:
                    v = int(v)  # as the plain evaluator indexes its options
                except (TypeError, ValueError, OverflowError):
                    return None
            if not -count <= v < count:
                return None  # IndexError there
            levels.append(v % count)
        return tuple(levels)

    def plan(self, inputs: Mapping) -> tuple[_Plan, int] | None:
        """The generated function for these inputs and the batch's length, or None."""
        levels = self._levels(inputs)
        if levels is None:
            return None
        case = self._cases.get(levels)
        if case is None:
            if len(self._cases) >= _MAX_PLANS:
                return None
            case = self._cases[levels] = _Case(
                self.decl, self.outputs, dict(zip((e for e, _ in self.enums), levels,
                                                  strict=True)))
            case.profile = [name in self.profiles for name in case.inputs]
        values = [inputs[name] for name in case.inputs]
        kinds = tuple(map(_kind, values, case.profile))
        if None in kinds:
            return None  # a value of a shape or type only the plain evaluator takes
        if _ROW in kinds or any(k[0] == "row" for k in kinds):
            rows = {len(v) for v, k in zip(values, kinds, strict=True)  # type: ignore
                    if k[0] == "row"}
            if len(rows) != 1:
                return None  # broadcasting of unequal rows: the plain evaluator's
            n = rows.pop()
            if n == 0:
                return None
        elif any(k[0] == "profile" for k in kinds) and not any(
                type(inputs[name]) is not float and np.ndim(inputs[name])
                for name in self.scalars):
            n = 0  # one scenario with a profile: its operations as one function all the same
        else:  # plain numbers (the scalar paths' own), or an array read by no step
            return None
        plan = case.plans.get(kinds)
        if plan is None:
            if self._plans >= _MAX_PLANS:
                return None
            try:
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    plan = _Plan(case, self.constants, inputs,
                                 dict(zip(case.inputs, kinds, strict=True)))
            except (ValueError, ArithmeticError):
                return None  # numpy refuses the first row (integers to a negative power):
                # the plain evaluator says so of the whole batch
            case.plans[kinds] = plan
            self._plans += 1
        return plan, n

    def __call__(self, inputs: Mapping) -> dict[str, object] | None:
        found = self.plan(inputs)
        if found is None:
            return None
        plan, n = found
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return plan(inputs, n)
