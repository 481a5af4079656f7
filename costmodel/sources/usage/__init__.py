"""Usage records (STAND-IN: a minimal plain-CSV reader with the usage readers' interface).

The usage readers (the OpenAI-compatible organization usage API, gateway spend logs, plain
CSV with a mapping) are another branch's; this module only lets the chargeback run and be
tested until they land, and is replaced by theirs at merge. It reads one shape: a CSV with a
header naming ``time`` (or ``start`` and ``end``), ``model``, ``input_tokens``,
``cached_input_tokens``, ``output_tokens``, ``requests`` and any other column as a grouping
key (``tenant``, ``team``, ``tag:<name>``...). Times are ISO 8601 (UTC; a trailing ``Z`` or
no offset) or seconds since the epoch. ``mapping`` renames columns: {our name: theirs}.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["UsageRecords", "UsageError", "read_usage", "read_usage_bytes"]

_NUMBERS = ("input_tokens", "cached_input_tokens", "output_tokens", "requests")
_TIMES = ("time", "start", "end")


@dataclass(frozen=True)
class UsageRecords:
    """Usage records, one a row, as arrays: each record's period [s since the epoch, UTC;
    ``end`` exclusive, ``start == end`` for one request], its tokens [token] and requests
    [request], and its grouping columns as int32 codes into ``labels[name]`` ("" is
    unattributed); ``sources``: the files read."""
    start: np.ndarray
    end: np.ndarray
    input_tokens: np.ndarray
    cached_input_tokens: np.ndarray
    output_tokens: np.ndarray
    requests: np.ndarray
    keys: Mapping[str, np.ndarray] = field(default_factory=dict)
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sources: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.start)


class UsageError(ValueError):
    """A usage file that does not read whole: the file, the line (1-based), the column and
    what is wrong."""

    def __init__(self, file: str, line: int | None, column: str | None, message: str):
        self.file, self.line, self.column, self.message = file, line, column, message
        where = ":".join(str(x) for x in (file, line) if x is not None)
        super().__init__(f"{where}: {f'column {column}: ' if column else ''}{message}")


def _times(values: list[str], name: str, column: str, first_line: int) -> np.ndarray:
    try:
        return np.array(values, dtype=np.float64).astype(np.int64)
    except ValueError:
        pass
    out = np.empty(len(values), dtype=np.int64)
    for k, v in enumerate(values):
        text = v.strip().removesuffix("Z").removesuffix("+00:00")
        try:
            out[k] = np.datetime64(text, "s").astype(np.int64)
        except ValueError:
            try:
                out[k] = int(float(v))
            except ValueError:
                raise UsageError(name, first_line + k, column,
                                 f"not a time (ISO 8601 UTC or seconds since the epoch): "
                                 f"{v[:40]!r}") from None
    return out


def _numbers(values: list[str], name: str, column: str, first_line: int) -> np.ndarray:
    try:
        out = np.array(values, dtype=np.float64)
    except ValueError:
        try:
            out = np.array([v if v.strip() else "0" for v in values], dtype=np.float64)
        except ValueError:
            out = None
    if out is not None and np.isfinite(out).all() and (out >= 0).all():
        return out
    for k, v in enumerate(values):
        try:
            x = float(v) if v.strip() else 0.0
        except ValueError:
            raise UsageError(name, first_line + k, column,
                             f"not a number: {v[:40]!r}") from None
        if not np.isfinite(x) or x < 0:
            raise UsageError(name, first_line + k, column,
                             f"a count of 0 or more, got {v[:40]!r}")
    raise AssertionError("unreachable")


def read_usage_bytes(data: bytes, name: str, *, shape: str | None = None,
                     mapping: Mapping[str, str] | None = None) -> UsageRecords:
    """The records of one CSV file's bytes (``name``: the file, on every error)."""
    if shape not in (None, "csv"):
        raise UsageError(name, None, None, f"this build reads plain CSV only, not {shape!r}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(name, None, None, f"not UTF-8 text: {exc.reason}") from None
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise UsageError(name, 1, None, "empty file: a header is needed")
    renamed = {theirs: ours for ours, theirs in (mapping or {}).items()}
    header = [renamed.get(h.strip(), h.strip()) for h in header]
    if "time" not in header and "start" not in header:
        raise UsageError(name, 1, None, "no time column: name one 'time' (or 'start' and "
                                        "'end')")
    width = len(header)
    data = [row for row in rows if row]
    if any(len(row) != width for row in data):
        line = next(k for k, row in enumerate(csv.reader(io.StringIO(text)), start=1)
                    if row and len(row) != width)
        found = len(next(r for r in data if len(r) != width))
        raise UsageError(name, line, None, f"{found} fields, the header has {width}")
    columns = [list(c) for c in zip(*data, strict=True)] if data else [[] for _ in header]
    by = dict(zip(header, columns, strict=True))
    n = len(columns[0]) if columns else 0
    start = _times(by["time"] if "time" in by else by["start"], name,
                   "time" if "time" in by else "start", 2)
    end = _times(by["end"], name, "end", 2) if "end" in by else start.copy()
    numbers = {c: (_numbers(by[c], name, c, 2) if c in by else np.zeros(n)) for c in _NUMBERS}
    keys: dict[str, np.ndarray] = {}
    labels: dict[str, tuple[str, ...]] = {}
    for col in header:
        if col in _NUMBERS or col in _TIMES:
            continue
        uniques, codes = np.unique(np.array(by[col], dtype=str), return_inverse=True)
        keys[col] = codes.astype(np.int32)
        labels[col] = tuple(str(u).strip() for u in uniques)
    return UsageRecords(start, end, numbers["input_tokens"], numbers["cached_input_tokens"],
                        numbers["output_tokens"], numbers["requests"], keys, labels, (name,))


def _concat(parts: list[UsageRecords]) -> UsageRecords:
    if len(parts) == 1:
        return parts[0]
    names = sorted({k for p in parts for k in p.labels})
    labels: dict[str, tuple[str, ...]] = {}
    keys: dict[str, np.ndarray] = {}
    for name in names:
        merged = sorted({"", *(x for p in parts for x in p.labels.get(name, ()))})
        index = {x: k for k, x in enumerate(merged)}
        codes = []
        for p in parts:
            if name in p.labels:
                table = np.array([index[x] for x in p.labels[name]], dtype=np.int32)
                codes.append(table[p.keys[name]])
            else:
                codes.append(np.full(len(p), index[""], dtype=np.int32))
        keys[name], labels[name] = np.concatenate(codes), tuple(merged)
    cat = lambda a: np.concatenate([getattr(p, a) for p in parts])  # noqa: E731
    return UsageRecords(cat("start"), cat("end"), cat("input_tokens"),
                        cat("cached_input_tokens"), cat("output_tokens"), cat("requests"),
                        keys, labels, tuple(s for p in parts for s in p.sources))


def read_usage(paths: Iterable[str | Path], *, shape: str | None = None,
               mapping: Mapping[str, str] | None = None) -> UsageRecords:
    """The records of every file in ``paths``, together (nothing from a file that does not
    read whole: :class:`UsageError`)."""
    parts = []
    for p in paths:
        path = Path(p)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UsageError(str(path), None, None, f"cannot read: {exc.strerror}") from None
        parts.append(read_usage_bytes(data, str(path), shape=shape, mapping=mapping))
    if not parts:
        raise UsageError("", None, None, "no usage file given")
    return _concat(parts)
