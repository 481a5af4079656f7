"""A plain CSV of usage: a header line, then one record a row.

The columns costmodel reads, by these names or by the file's own names given in a mapping
(canonical name -> the header's name, ``{"tenant": "team", "input_tokens": "prompt"}``):

- ``time`` (a request's time: ``start == end``), or ``period_start`` and ``period_end`` (the
  end exclusive): ISO 8601 (``2026-11-01T08:00:00Z``, ``2026-11-01``; without a zone: UTC) or
  seconds since 1970;
- ``input_tokens``: NEW (uncached) input tokens, or instead ``total_input_tokens``: input
  tokens counting the cached ones, as OpenAI and LiteLLM count them (new input is then
  ``total_input_tokens - cached_input_tokens``, and more cached than total is an error);
- ``cached_input_tokens`` (absent: none), ``output_tokens``, ``requests`` (absent: 0);
- ``tenant``, ``model``: grouping keys, as is every other column, named as its header
  (``team``, ``project``, ``tag:env``). An empty value is the label ``""`` (unattributed).

Counts are numbers >= 0, finite, never empty (write 0 for none). The file is read in blocks
by pyarrow's CSV reader (numbers and keys converted in C, keys dictionary-encoded) and
checked column-wise with numpy; where a block is refused or a check fails, the file is read
again by Python's csv module as far as the row at fault, for its line and column. A row is at
most :data:`BLOCK` bytes, a key's value at most :data:`MAX_LABEL` characters.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .columns import CANONICAL, COUNTS, TIMES
from .errors import UsageError
from .json_input import MAX_TIME, parse_iso
from .records import MAX_KEYS, UsageRecords, make_records

__all__ = ["read_plain_csv", "CANONICAL", "BLOCK", "MAX_LABEL"]

BLOCK = 1 << 21  # [byte] pyarrow's block: no row may be longer
HEADER_LIMIT = 1 << 16  # [byte] the header line
MAX_LABEL = 1024  # [character] a key's value (a tenant's name...)

Opener = Callable[[], IO[bytes]]


def _opener(source: str | Path | bytes) -> Opener:
    if isinstance(source, bytes):
        return lambda: io.BytesIO(source)
    return lambda: open(source, "rb")  # closed by the caller (with)


class _Csv:
    def __init__(self, source: str | Path | bytes, name: str):
        self.source, self.name, self.open = source, name, _opener(source)

    def error(self, line: int | None, column: str | None, message: str) -> UsageError:
        return UsageError(self.name, line, column, message)

    # -- the slow reading, for a place -----------------------------------------------------

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """(the line a row starts on, its fields) for every data row, as pyarrow counts
        them (blank lines skipped), by Python's csv module."""
        with self.open() as f:
            text = io.TextIOWrapper(f, encoding="utf-8-sig", newline="")
            reader = csv.reader(text)
            previous, header = 0, True
            try:
                for fields in reader:
                    start, previous = previous + 1, reader.line_num
                    if not fields:
                        continue
                    if header:
                        header = False
                        continue
                    yield start, fields
            except UnicodeDecodeError:
                raise self.error(self._bad_utf8_line(), None, "is not UTF-8 text") from None
            except csv.Error as exc:
                raise self.error(reader.line_num, None, f"cannot read as CSV: {exc}") from None

    def _bad_utf8_line(self) -> int | None:
        with self.open() as f:
            for number, raw in enumerate(f, 1):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    return number
        return None

    def line_of(self, row: int) -> int | None:
        """The line data row ``row`` (0-based) starts on."""
        for k, (line, _) in enumerate(self.rows()):
            if k == row:
                return line
        return None

    def at_row(self, row: int, column: str, message: str) -> UsageError:
        return self.error(self.line_of(row), column, message)

    def arrow_error(self, exc: Exception, names: list[str], numbers: list[str]) -> UsageError:
        """The place of what pyarrow refused, found by reading the rows again and checking
        each as pyarrow does (its words are never read): a row of another number of fields
        than the header's, a value of a count column (``numbers``) that is no number, a row
        longer than :data:`BLOCK` bytes; a file that is not UTF-8 (:meth:`rows` says where);
        no row at all."""
        columns = [(i, n) for i, n in enumerate(names) if n in numbers]
        found = False
        for line, fields in self.rows():
            found = True
            if len(fields) != len(names):
                return self.error(line, None, f"expected {len(names)} fields (as the header "
                                              f"has), found {len(fields)}")
            for c, n in columns:
                if fields[c] and not _arrow_number(fields[c]):
                    return self.error(line, n, f"cannot read {fields[c]!r} as a number")
            if sum(len(f.encode()) + 1 for f in fields) > BLOCK:
                return self.error(None, None, f"a row is longer than {BLOCK:,} bytes")
        if not found:
            return self.error(None, None, "has a header but no records")
        text = str(exc)  # (shown, not read: a refusal none of the above explains)
        first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
        return self.error(None, None, f"cannot read as CSV: {first[:200]}")

    # -- the header --------------------------------------------------------------------------

    def header(self) -> list[str]:
        with self.open() as f:
            first = f.readline(HEADER_LIMIT + 1)
        if not first.strip():
            raise self.error(None, None, "is empty" if not first else
                             "has no header on its first line (the columns' names)")
        if len(first) > HEADER_LIMIT:
            raise self.error(1, None, f"the header line is longer than {HEADER_LIMIT:,} bytes")
        try:
            text = first.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise self.error(1, None, "is not UTF-8 text") from None
        try:
            names = [n.strip() for n in next(csv.reader([text.rstrip("\r\n")]))]
        except csv.Error as exc:  # e.g. a carriage return inside a name (a 500 before)
            raise self.error(1, None, f"the header does not read as CSV: {exc}") from None
        seen: set[str] = set()
        for i, n in enumerate(names):
            if not n:
                raise self.error(1, f"#{i + 1}", "a column without a name in the header")
            if n in seen:
                raise self.error(1, n, "named twice in the header")
            seen.add(n)
        return names


def _arrow_number(text: str) -> bool:
    """Whether pyarrow reads ``text`` as a float64, as its CSV reader converts a count."""
    try:
        pc.cast(pa.array([text], pa.string()), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def _roles(src: _Csv, names: list[str], mapping: Mapping[str, str] | None) -> dict[str, str]:
    """Header name -> its canonical name (a key column: its own name)."""
    mapping = dict(mapping or {})
    for canonical, column in mapping.items():
        if canonical not in CANONICAL:
            raise src.error(None, None, f"the mapping names {canonical!r}, which is not a "
                                        f"column costmodel reads ({', '.join(CANONICAL)})")
        if column not in names:
            raise src.error(1, None, f"the mapping reads {canonical} from column {column!r}, "
                                     f"which the header does not have ({', '.join(names)})")
    by_column: dict[str, str] = {}
    for canonical, column in mapping.items():
        if column in by_column:
            raise src.error(1, column, f"the mapping reads both {by_column[column]} and "
                                       f"{canonical} from this column")
        by_column[column] = canonical
    roles = {}
    for n in names:
        role = by_column.get(n, n)
        if n not in by_column and n in mapping:  # e.g. a "tenant" column and tenant -> team
            raise src.error(1, n, f"the mapping reads {n} from column {mapping[n]!r}, "
                                  f"but the header has a {n!r} column too")
        roles[n] = role
    return roles


def _counts_check(src: _Csv, values: np.ndarray, offset: int, column: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.argmax(bad))
        raise src.at_row(offset + k, column, f"{values[k]} is not a finite number")
    bad = values < 0
    if bad.any():
        k = int(np.argmax(bad))
        raise src.at_row(offset + k, column, f"{values[k]:g} is negative; a count is >= 0")


_TIME_KINDS = (pa.int64(), pa.float64(), pa.timestamp("s", tz="UTC"),
               pa.timestamp("us", tz="UTC"), pa.timestamp("s"), pa.timestamp("us"))


class _Times:
    """A time column's values as seconds since 1970 UTC (rounded down), block by block.

    The form (seconds, ISO 8601 with or without a zone, whole or fractional seconds) is
    found on a block's first value and tried first on the next blocks: a cast that fails
    costs as much as many that succeed."""

    def __init__(self):
        self.kind: pa.DataType | None = None

    def seconds(self, array: pa.Array) -> tuple[np.ndarray, int | None]:
        """The block's seconds, and the index of its first value that is no time (or
        None)."""
        first = array[:1]
        kinds = [k for k in _TIME_KINDS if k == self.kind] + [
            k for k in _TIME_KINDS if k != self.kind and _casts(first, k)]
        for kind in kinds:
            try:
                cast = pc.cast(array, kind)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue
            self.kind = kind
            return _checked(cast, kind)
        out = np.empty(len(array), dtype=np.int64)
        for k, text in enumerate(array.to_pylist()):  # mixed forms: each value on its own
            seconds = _one_time(text)
            if seconds is None:
                return out, k
            out[k] = seconds
        return out, None


def _casts(array: pa.Array, kind: pa.DataType) -> bool:
    try:
        pc.cast(array, kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def _checked(cast: pa.Array, kind: pa.DataType) -> tuple[np.ndarray, int | None]:
    if pa.types.is_timestamp(kind):
        values = cast.cast(pa.int64()).to_numpy(zero_copy_only=False)
        if kind.unit == "us":
            values = np.floor_divide(values, 1_000_000)
        bad = np.zeros(len(values), dtype=bool)
    else:
        values = cast.to_numpy(zero_copy_only=False)
        bad = ~np.isfinite(values) if kind == pa.float64() else np.zeros(len(values), bool)
        values = np.floor(np.where(bad, 0, values)) if kind == pa.float64() else values
    bad |= (values < 0) | (values >= MAX_TIME)
    return values.astype(np.int64), (int(np.argmax(bad)) if bad.any() else None)


def _one_time(text: str) -> int | None:
    try:
        number = float(text)
    except ValueError:
        return parse_iso(text)
    return math.floor(number) if math.isfinite(number) and 0 <= number < MAX_TIME else None


class _Keys:
    """A key column's labels, interned over the blocks."""

    def __init__(self):
        self.index: dict[str, int] = {}
        self.pieces: list[np.ndarray] = []

    def add(self, array: pa.Array) -> str | None:
        """One block's values; a value too long to be a key: the value (an error)."""
        if not isinstance(array, pa.DictionaryArray):
            array = pc.dictionary_encode(array)
        local = array.dictionary.to_pylist()
        remap = np.empty(len(local) + 1, dtype=np.int32)
        for i, label in enumerate(local):
            label = (label or "").strip()
            if len(label) > MAX_LABEL:
                return label
            remap[i] = self.index.setdefault(label, len(self.index))
        remap[len(local)] = self.index.setdefault("", len(self.index))
        indices = array.indices.to_numpy(zero_copy_only=False)
        if array.null_count:
            indices = np.where(array.is_null().to_numpy(zero_copy_only=False), len(local),
                               indices)
        self.pieces.append(remap[indices])
        return None


def read_plain_csv(source: str | Path | bytes, name: str,
                   mapping: Mapping[str, str] | None = None) -> UsageRecords:
    """A plain usage CSV (a path, streamed; or bytes) into records."""
    src = _Csv(source, name)
    names = src.header()
    roles = _roles(src, names, mapping)
    have = {role: n for n, role in roles.items()}
    if "time" in have and ("period_start" in have or "period_end" in have):
        raise src.error(1, have["time"], "give a time or a period (period_start, "
                                         "period_end), not both")
    if "time" not in have and not ("period_start" in have and "period_end" in have):
        raise src.error(1, None, "the header needs a time column, or period_start and "
                                 "period_end (or a mapping naming them)")
    if ("input_tokens" in have) == ("total_input_tokens" in have):
        raise src.error(1, None, "the header needs one of input_tokens (new input) or "
                                 "total_input_tokens (input counting the cached tokens)")
    if "output_tokens" not in have:
        raise src.error(1, None, "the header needs an output_tokens column (or a mapping "
                                 "naming it)")
    key_columns = [n for n in names if roles[n] not in TIMES and roles[n] not in COUNTS]
    if len(key_columns) > MAX_KEYS:
        raise src.error(1, None, f"more than {MAX_KEYS} grouping columns")
    types = {n: (pa.float64() if roles[n] in COUNTS else
                 pa.string() if roles[n] in TIMES else pa.dictionary(pa.int32(), pa.string()))
             for n in names}
    reader_options = pacsv.ReadOptions(column_names=names, skip_rows=1, block_size=BLOCK,
                                       encoding="utf8")
    convert = pacsv.ConvertOptions(column_types=types, null_values=[""],
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    counts: dict[str, list[np.ndarray]] = {have[c]: [] for c in COUNTS if c in have}
    times: dict[str, list[np.ndarray]] = {have[c]: [] for c in TIMES if c in have}
    parsers = {n: _Times() for n in times}
    keys = {n: _Keys() for n in key_columns}
    offset = 0
    stream = pa.BufferReader(source) if isinstance(source, bytes) else str(source)
    try:
        reader = pacsv.open_csv(stream, read_options=reader_options, parse_options=parse,
                                convert_options=convert)
        for batch in reader:
            for n, pieces in counts.items():
                column = batch.column(n)
                if column.null_count:
                    k = int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))
                    raise src.at_row(offset + k, n, "is empty; write 0 for none")
                values = column.to_numpy(zero_copy_only=False)
                _counts_check(src, values, offset, n)
                pieces.append(values)
            for n, pieces in times.items():
                seconds, bad = parsers[n].seconds(batch.column(n))
                if bad is not None:
                    value = batch.column(n)[bad].as_py()
                    raise src.at_row(offset + bad, n, f"cannot read {value!r} as a time "
                                                      "(ISO 8601, or seconds since 1970)")
                pieces.append(seconds)
            for n, column_keys in keys.items():
                long = column_keys.add(batch.column(n))
                if long is not None:
                    raise src.error(None, n, f"a value longer than {MAX_LABEL:,} characters "
                                             f"({long[:40]!r}...)")
            offset += batch.num_rows
    except StopIteration:  # pragma: no cover - pyarrow ends its iteration itself
        pass
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise src.arrow_error(exc, names, [n for n in names if roles[n] in COUNTS]) from None
    if offset == 0:
        raise src.error(None, None, "has a header but no records")

    columns: dict[str, np.ndarray] = {}
    for n, pieces in (*counts.items(), *times.items()):  # each block's pieces freed as joined
        columns[n] = np.concatenate(pieces)
        pieces.clear()
    for column_keys in keys.values():
        column_keys.pieces[:] = [np.concatenate(column_keys.pieces)]

    def joined(role: str) -> np.ndarray:
        return columns[have[role]]

    zeros = np.zeros(offset)
    cached = joined("cached_input_tokens") if "cached_input_tokens" in have else zeros
    if "total_input_tokens" in have:
        total = joined("total_input_tokens")
        over = cached > total
        if over.any():
            k = int(np.argmax(over))
            raise src.at_row(k, have["cached_input_tokens"],
                             f"{cached[k]:g} cached tokens are more than the {total[k]:g} "
                             f"input tokens ({have['total_input_tokens']}) that include them")
        new_input = total - cached
    else:
        new_input = joined("input_tokens")
    if "time" in have:
        start = end = joined("time")
    else:
        start, end = joined("period_start"), joined("period_end")
        before = end < start
        if before.any():
            k = int(np.argmax(before))
            raise src.at_row(k, have["period_end"], "the period ends before it starts")
    requests = joined("requests") if "requests" in have else zeros
    out_keys = {roles[n]: (k.pieces[0], tuple(k.index)) for n, k in keys.items()}
    return make_records(start, end, new_input, cached, joined("output_tokens"), requests,
                        keys=out_keys, sources=(f"{name} (csv)",))
