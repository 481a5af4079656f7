"""Columns of numbers read from a request body: a JSON array, an Apache Arrow IPC stream or a
Parquet file, each column into one numpy array, read strictly and within bounds.

Only numbers are read: a JSON array of numbers (no bool, no text, no null), an Arrow or
Parquet column of an integer or floating-point type (no other type, no null). A column's unit
is its field's metadata ``unit`` (or its name written ``key [unit]``); the request around the
columns (the base scenario, the outputs) is the schema's metadata ``costmodel``, a JSON object.

A hostile file is read within bounds fixed before any column is decoded: an Arrow stream's
rows and the uncompressed size of each buffer are read from each record batch's own metadata
(:func:`_batch_header`, the IPC format's flatbuffer) before the batch is decoded; a Parquet
file's rows and uncompressed sizes from its footer and each page's header (what the reader
allocates for it) before a row group is read. Every problem
is an :class:`~costmodel.model.errors.InputError` at ``columns.<name>`` (a column) or ``body``.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from ..model.errors import InputError

__all__ = ["RawColumn", "ColumnarBody", "numbers", "read_arrow", "read_parquet",
           "REQUEST_KEY", "UNIT_KEY", "split_name", "MAX_CHUNKS"]

REQUEST_KEY = b"costmodel"  # the schema's metadata: the request around the columns (JSON)
UNIT_KEY = b"unit"  # a field's metadata: its values' unit
MAX_REQUEST_METADATA = 1 << 20  # bytes of the request's JSON in the schema's metadata
_WIDEST = 8  # bytes of the widest numeric value read (int64, float64)
_PAGE_SLACK = 1 << 20  # bytes of a Parquet column chunk beyond its values (a dictionary page)
# record batches of an Arrow stream, row groups of a Parquet file: each costs a few Python
# steps, so a file of many tiny ones would cost seconds (a writer makes one a 64k-1M rows)
MAX_CHUNKS = 4096
MAX_PAGES = 65_536  # pages of one Parquet file (a writer makes one a MiB or so)


@dataclass(frozen=True)
class RawColumn:
    """A column as read: its name (a dotted key), unit as written, values (float64 or int64)."""
    name: str
    unit: str
    values: np.ndarray


@dataclass(frozen=True)
class ColumnarBody:
    """The request in the schema's metadata (None when absent) and the columns."""
    request: dict[str, Any] | None
    columns: list[RawColumn]


def _bad(path: str, message: str) -> InputError:
    return InputError([(path, message)])


def numbers(values: Any, path: str) -> np.ndarray:
    """A JSON array of numbers -> a float64 array (int64 when every value is an integer);
    InputError at ``path`` naming the first value that is not a number (a bool, text, null,
    an array...)."""
    if type(values) is not list:
        raise _bad(path, f"must be an array of numbers, got {_kind(values)}")
    kinds = set(map(type, values))
    if kinds <= {int, float}:
        try:
            if kinds == {int}:
                return np.array(values, dtype=np.int64)
            return np.array(values, dtype=np.float64)
        except OverflowError:
            first = next(i for i, v in enumerate(values) if type(v) is int
                         and not -2**63 <= v < 2**63)
            raise _bad(path, f"values[{first}]: {values[first]} is beyond the numbers a "
                             f"column holds (64-bit)") from None
    first = next(i for i, v in enumerate(values) if type(v) not in (int, float))
    raise _bad(path, f"values[{first}]: must be a number, got {_kind(values[first])}")


def _kind(value: Any) -> str:
    return {bool: "a boolean", str: "text", type(None): "null", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)


def split_name(name: str, unit: bytes | None) -> tuple[str, str]:
    """A field's (key, unit): the ``unit`` metadata if given, else a name written
    ``key [unit]``, else no unit (a plain number)."""
    if unit is not None:
        return name, unit.decode("utf-8", "replace")
    key, sep, rest = name.partition(" [")
    if sep and rest.endswith("]"):
        return key.strip(), rest[:-1].strip()
    return name, ""


def _request(metadata: dict[bytes, bytes] | None) -> dict[str, Any] | None:
    raw = (metadata or {}).get(REQUEST_KEY)
    if raw is None:
        return None
    if len(raw) > MAX_REQUEST_METADATA:
        raise _bad("body", f"the schema's metadata {REQUEST_KEY.decode()} is larger than "
                           f"{MAX_REQUEST_METADATA // 1024} KiB")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _bad("body", f"the schema's metadata {REQUEST_KEY.decode()} is not JSON: "
                           f"{exc}") from None
    if not isinstance(data, dict):
        raise _bad("body", f"the schema's metadata {REQUEST_KEY.decode()} must be a JSON "
                           f"object (scenario or scenario_id, outputs)")
    return data


def _fields(schema: Any, max_columns: int) -> list[tuple[str, str]]:
    """(key, unit) of each field, each of a numeric type; InputError naming another."""
    import pyarrow as pa
    if len(schema) > max_columns:
        raise _bad("columns", f"at most {max_columns} columns (one a numeric input), got "
                              f"{len(schema):,}")
    seen: set[str] = set()
    out = []
    for field in schema:
        key, unit = split_name(field.name, (field.metadata or {}).get(UNIT_KEY))
        path = f"columns.{key}"
        t = field.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
            raise _bad(path, f"is of type {t}: a column holds numbers (an integer or "
                             f"floating-point type)")
        if key in seen:
            raise _bad(path, "given twice")
        seen.add(key)
        out.append((key, unit))
    if not out:
        raise _bad("columns", "give at least one column")
    return out


def _values(chunks: list[Any], path: str) -> np.ndarray:
    """Arrow arrays of one column -> one float64 or int64 array; InputError for a null."""
    import pyarrow as pa
    offset = 0
    parts = []
    for a in chunks:
        if a.null_count:
            first = offset + int(np.flatnonzero(~a.is_valid().to_numpy(zero_copy_only=False))[0])
            raise _bad(path, f"values[{first}]: must be a number, got null")
        offset += len(a)
        t = a.type
        if pa.types.is_floating(t):
            parts.append(a.to_numpy(zero_copy_only=False).astype(np.float64, copy=False))
        else:
            x = a.to_numpy(zero_copy_only=False)
            if x.dtype == np.uint64 and len(x) and x.max() >= 2**63:
                first = offset - len(a) + int(np.argmax(x >= 2**63))
                raise _bad(path, f"values[{first}]: {x[first]} is beyond the numbers a column "
                                 f"holds (64-bit)")
            parts.append(x.astype(np.int64, copy=False))
    if not parts:
        return np.zeros(0)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


# ---- Arrow IPC stream ---------------------------------------------------------------------------

_RECORD_BATCH = 3  # MessageHeader: RecordBatch


def _table_field(buf: bytes, table: int, index: int) -> int | None:
    """The position of field ``index`` of the flatbuffer table at ``table`` (None: absent)."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    size = struct.unpack_from("<H", buf, vtable)[0]
    at = 4 + 2 * index
    if at + 2 > size:
        return None
    off = struct.unpack_from("<H", buf, vtable + at)[0]
    return table + off if off else None


def _deref(buf: bytes, pos: int) -> int:
    return pos + struct.unpack_from("<I", buf, pos)[0]


def _batch_header(metadata: bytes) -> tuple[int, list[tuple[int, int]], bool]:
    """A record batch message's (rows, buffers as (offset, length) in its body, compressed),
    read from its flatbuffer (Arrow's Message.fbs: Message {version, header_type, header,
    bodyLength}; RecordBatch {length, nodes, buffers, compression}) before pyarrow decodes
    it. struct.error or ValueError when it is not one."""
    buf = bytes(metadata)
    message = _deref(buf, 0)
    kind = _table_field(buf, message, 1)
    if kind is None or buf[kind] != _RECORD_BATCH:
        raise ValueError("not a record batch")
    header = _table_field(buf, message, 2)
    if header is None:
        raise ValueError("no header")
    batch = _deref(buf, header)
    at = _table_field(buf, batch, 0)
    rows = struct.unpack_from("<q", buf, at)[0] if at is not None else 0
    buffers = []
    at = _table_field(buf, batch, 2)
    if at is not None:
        vec = _deref(buf, at)
        count = struct.unpack_from("<I", buf, vec)[0]
        if count > 1 << 16:
            raise ValueError("too many buffers")
        for j in range(count):
            buffers.append(struct.unpack_from("<qq", buf, vec + 4 + 16 * j))
    compressed = _table_field(buf, batch, 3) is not None
    return rows, buffers, compressed


def read_arrow(raw: bytes, *, max_rows: int, max_bytes: int,
               max_columns: int = 64) -> ColumnarBody:
    """An Arrow IPC stream's columns: at most ``max_rows`` rows in all, at most ``max_bytes``
    of decoded buffers, each checked from the batch's metadata before it is decoded."""
    import pyarrow as pa
    try:
        reader = pa.ipc.MessageReader.open_stream(pa.py_buffer(raw))
        first = reader.read_next_message()
        schema = pa.ipc.read_schema(first)
    except (pa.ArrowException, StopIteration, OSError) as exc:
        raise _bad("body", f"not an Arrow IPC stream: {_short(exc)}") from None
    fields = _fields(schema, max_columns)
    request = _request(schema.metadata)
    chunks: list[list[Any]] = [[] for _ in fields]
    rows = decoded = count = 0
    while True:
        try:
            message = reader.read_next_message()
        except StopIteration:
            break
        except (pa.ArrowException, OSError) as exc:
            raise _bad("body", f"the Arrow stream does not read whole: {_short(exc)}") from None
        if message is None:
            break
        count += 1
        if count > MAX_CHUNKS:
            raise _bad("body", f"an Arrow stream of more than {MAX_CHUNKS:,} record batches: "
                               f"write larger ones")
        if message.type != "record batch":
            raise _bad("body", f"an Arrow {message.type} message: only record batches of "
                               f"numbers are read")
        try:
            length, buffers, compressed = _batch_header(message.metadata)
        except (struct.error, ValueError, IndexError) as exc:
            raise _bad("body", f"an Arrow record batch whose metadata does not read: "
                               f"{exc}") from None
        rows += length
        if length < 0 or rows > max_rows:
            raise _bad("columns", f"at most {max_rows:,} rows, got more (the stream's "
                                  f"metadata)")
        body = message.body
        size = 0
        for offset, n in buffers:
            if offset < 0 or n < 0 or offset + n > body.size:
                raise _bad("body", "an Arrow buffer beyond its message's body")
            if compressed and n >= 8:  # its first 8 bytes: the length once decompressed
                declared = struct.unpack_from("<q", body, offset)[0]
                n = n - 8 if declared == -1 else declared
            if n > length * _WIDEST + 64:  # no numeric buffer is larger than its rows
                raise _bad("body", "an Arrow buffer larger than its rows of numbers")
            size += n
        decoded += size
        if decoded > max_bytes:
            raise _bad("body", f"the Arrow stream decodes to more than "
                               f"{max_bytes // 2**20} MiB")
        try:
            batch = pa.ipc.read_record_batch(message, schema)
            batch.validate(full=True)
        except (pa.ArrowException, OSError) as exc:
            raise _bad("body", f"the Arrow stream does not read whole: {_short(exc)}") from None
        for j in range(len(fields)):
            chunks[j].append(batch.column(j))
    return ColumnarBody(request, [RawColumn(k, u, _values(c, f"columns.{k}"))
                                  for (k, u), c in zip(fields, chunks, strict=True)])


# ---- Parquet ------------------------------------------------------------------------------------

class _Thrift:
    """Just enough of Thrift's compact protocol to read a Parquet page header's sizes and
    skip the rest of it (parquet.thrift: PageHeader {1: type, 2: uncompressed_page_size,
    3: compressed_page_size, ...}), within ``end``."""
    MAX_DEPTH = 16

    def __init__(self, buf: bytes, pos: int, end: int):
        self.buf, self.pos, self.end = buf, pos, end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise ValueError("a page header beyond its column chunk")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = out = 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise ValueError("a varint longer than 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int, depth: int) -> None:
        if depth > self.MAX_DEPTH:
            raise ValueError("a page header nested too deep")
        if kind in (1, 2):  # a boolean, in its field header
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind == 7:
            self.pos += 8
        elif kind == 8:
            length = self.varint()  # (read before pos is: varint moves it)
            self.pos += length
        elif kind in (9, 10):  # list, set: size and element type
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip(head & 0x0F if head & 0x0F not in (1, 2) else 3, depth + 1)
        elif kind == 11:  # map
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4, depth + 1)
                    self.skip(types & 0x0F, depth + 1)
        elif kind == 12:
            self.struct(depth + 1)
        else:
            raise ValueError(f"a Thrift type {kind} in a page header")
        if self.pos > self.end:
            raise ValueError("a page header beyond its column chunk")

    def struct(self, depth: int = 0, wanted: frozenset[int] = frozenset()) -> dict[int, int]:
        """Skip a struct; the i32 fields ``wanted`` by id."""
        field = 0
        found = {}
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == 0:
                return found
            delta = head >> 4
            field = field + delta if delta else self.zigzag()
            if kind == 5 and field in wanted:
                found[field] = self.zigzag()
            else:
                self.skip(kind, depth)


def _page_sizes(raw: bytes, start: int, end: int, budget: int = 10**9) -> list[int]:
    """The uncompressed size of each page of a column chunk, from the page headers; at most
    ``budget`` pages."""
    sizes = []
    pos = start
    while pos < end:
        reader = _Thrift(raw, pos, end)
        found = reader.struct(wanted=frozenset((2, 3)))
        if 2 not in found or 3 not in found or found[3] < 0:
            raise ValueError("a page header without its sizes")
        sizes.append(found[2])
        pos = reader.pos + found[3]
        if len(sizes) > budget:
            raise ValueError(f"more than {MAX_PAGES:,} pages (each costs Python steps)")
    return sizes


def read_parquet(raw: bytes, *, max_rows: int, max_bytes: int,
                 max_columns: int = 64) -> ColumnarBody:
    """A Parquet file's columns: its footer's row count (at most ``max_rows``) and
    uncompressed sizes (at most ``max_bytes`` in all, none larger than its rows of numbers)
    checked before a row group is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    try:
        file = pq.ParquetFile(pa.BufferReader(raw))
        meta = file.metadata
        schema = file.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise _bad("body", f"not a Parquet file: {_short(exc)}") from None
    fields = _fields(schema, max_columns)
    request = _request(schema.metadata)
    if meta.num_rows > max_rows or meta.num_rows < 0:
        raise _bad("columns", f"at most {max_rows:,} rows, got {meta.num_rows:,} (the file's "
                              f"metadata)")
    if meta.num_row_groups > MAX_CHUNKS:
        raise _bad("body", f"a Parquet file of more than {MAX_CHUNKS:,} row groups: write "
                           f"larger ones")
    total = pages_read = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for j in range(group.num_columns):
            chunk = group.column(j)
            # (a dictionary page beside the values, page headers and levels: at most its
            # rows of numbers twice, and a page's worth)
            bound = 2 * group.num_rows * _WIDEST + _PAGE_SLACK
            # the footer's size, and each page's own (what the reader allocates for it)
            start = chunk.dictionary_page_offset if chunk.has_dictionary_page \
                else chunk.data_page_offset
            end = start + chunk.total_compressed_size if start is not None else -1
            try:
                if start is None or start < 0 or end > len(raw):
                    raise ValueError("a column chunk beyond the file")
                pages = _page_sizes(raw, start, end, MAX_PAGES - pages_read)
                pages_read += len(pages)
            except (ValueError, IndexError) as exc:
                raise _bad("body", f"the Parquet file does not read whole: {exc}") from None
            size = max(chunk.total_uncompressed_size, sum(pages))
            if chunk.total_uncompressed_size < 0 or min(pages, default=0) < 0 \
                    or size > bound:
                raise _bad("body", "a Parquet column chunk larger than its rows of numbers")
            total += size
    if total > max_bytes:
        raise _bad("body", f"the Parquet file decodes to more than {max_bytes // 2**20} MiB")
    try:
        table = file.read(use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        raise _bad("body", f"the Parquet file does not read whole: {_short(exc)}") from None
    if table.num_rows != meta.num_rows:
        raise _bad("body", "the Parquet file does not read whole: its rows differ from its "
                           "metadata's")
    return ColumnarBody(request, [RawColumn(k, u, _values(table.column(j).chunks,
                                                         f"columns.{k}"))
                                  for j, (k, u) in enumerate(fields)])


def _short(exc: Exception, n: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= n else text[:n] + "..."
