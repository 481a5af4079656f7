"""The columnar forms of ``POST /api/v1/price/batch``: a JSON body of columns, an Apache
Arrow IPC stream or a Parquet file, read into the app's typed columns, priced by
:func:`costmodel.app.columns.price_columns`, and answered in the format the request came in
(or the one ``?format=`` or ``Accept`` asks for: JSON columns, Arrow, Parquet, CSV)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from flask import Response, request

from ..app import columns as use_case
from ..app.columns import Column, ColumnBatch
from ..http.errors import Problem, input_problem
from ..model.errors import InputError
from ..render.columnar import arrow_stream, arrow_table, csv_text, parquet_file
from ..sources.columnar import RawColumn, numbers, read_arrow, read_parquet
from .openapi import Forms, validated
from .schemas import (
    MAX_COLUMN_ROWS,
    MAX_COLUMNAR_BODY,
    ColumnsBase,
    ColumnsRequest,
    PriceRequest,
)
from .views import select

__all__ = ["ColumnarAsk", "FORMS", "ARROW", "PARQUET", "answer", "answer_format", "as_file"]

assert MAX_COLUMN_ROWS == use_case.MAX_COLUMN_ROWS
ARROW = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
PARQUET_OLD = "application/x-parquet"  # the name in use before the IANA registration
# a file's bytes as a generated client sends them: an Arrow stream or a Parquet file, told
# apart by their first bytes (Parquet's magic PAR1; an Arrow message's continuation marker)
OCTET = "application/octet-stream"
PARQUET_MAGIC = b"PAR1"
CSV = "text/csv"
JSON = "application/json"
_MEDIA = {"json": JSON, "csv": CSV, "arrow": ARROW, "parquet": PARQUET}
_FORMAT_OF = {JSON: "json", ARROW: "arrow", PARQUET: "parquet", PARQUET_OLD: "parquet"}
MAX_DECODED = use_case.MAX_CELLS * 8  # bytes of the columns decoded from a file


@dataclass(frozen=True)
class ColumnarAsk:
    """A columnar request as read: the base (a PriceRequest without overrides), the outputs,
    the columns, the format it came in, and whether it holds a heavy slot already."""
    base: PriceRequest
    outputs: list[str]
    columns: list[Column]
    format: str
    held: bool


def _read(raw: bytes, mimetype: str, data: Any, held: bool) -> ColumnarAsk | None:
    if data is not None or mimetype == JSON:
        if not (isinstance(data, dict) and "columns" in data):
            return None  # the row form
        body = validated(ColumnsRequest, data)
        assert isinstance(body, ColumnsRequest)
        try:
            columns = [Column(k, c.unit, numbers(c.values, f"columns.{k}"))
                       for k, c in body.columns.items()]
        except InputError as exc:
            raise Problem.from_input(exc, prefix="") from None
        base = PriceRequest(scenario=body.scenario, scenario_id=body.scenario_id,
                            revision=body.revision)
        return ColumnarAsk(base, list(body.outputs), columns, "json", held)
    if mimetype == OCTET:
        mimetype = PARQUET if raw[:4] == PARQUET_MAGIC else ARROW
    reader = read_arrow if mimetype == ARROW else read_parquet
    try:
        read = reader(raw, max_rows=MAX_COLUMN_ROWS, max_bytes=MAX_DECODED,
                      max_columns=use_case.MAX_COLUMNS)
    except InputError as exc:
        raise Problem.from_input(exc, prefix="") from None
    meta = validated(ColumnsBase, read.request if read.request is not None else {})
    assert isinstance(meta, ColumnsBase)
    base = PriceRequest(scenario=meta.scenario, scenario_id=meta.scenario_id,
                        revision=meta.revision)
    return ColumnarAsk(base, list(meta.outputs), [_column(c) for c in read.columns],
                       _FORMAT_OF[mimetype], held)


def _column(c: RawColumn) -> Column:
    return Column(c.name, c.unit, c.values)


_BINARY = {"schema": {"type": "string", "format": "binary"}}
FORMS = Forms(
    model=ColumnsRequest,
    media={OCTET: _BINARY},
    reads=(ARROW, PARQUET, PARQUET_OLD),
    limit=MAX_COLUMNAR_BODY,
    read=_read,
    description=(
        f"Rows of overrides (BatchRequest, up to 10,000 rows), or columns (ColumnsRequest, up "
        f"to {MAX_COLUMN_ROWS:,} rows): as JSON, or as an Apache Arrow IPC stream "
        f"({ARROW}) or a Parquet file ({PARQUET}, or {PARQUET_OLD}; as {OCTET}, either, "
        f"told apart by its first bytes) whose fields are the "
        f"columns (each of an integer or floating-point type, its unit in the field's "
        f"metadata `unit`) and whose schema's metadata `costmodel` is a JSON object with "
        f"scenario (or scenario_id and revision) and outputs. A columnar body is at most "
        f"{MAX_COLUMNAR_BODY // 2**20} MiB; one of more than {use_case.HEAVY_ROWS:,} rows, or "
        f"a body over the row form's limit, holds a heavy slot (429 with Retry-After when "
        f"none is free). A bad column (unknown key, wrong unit, lengths that differ, a value "
        f"that is not a finite number in the input's range) is a 422 naming it "
        f"(columns.electricity.price); nothing is priced."),
    heavy_note=(
        f"A columnar batch of more than {use_case.HEAVY_ROWS:,} rows, or a body over the row "
        f"form's 8 MiB (or sent without a length), holds a heavy slot while it is read and "
        f"priced; more than {MAX_COLUMN_ROWS:,} rows or {use_case.MAX_CELLS:,} cells (rows x "
        f"(columns + outputs)) is a 422, a body over {MAX_COLUMNAR_BODY // 2**20} MiB a 413."))


def answer_format(query: Any, came_in: str) -> str:
    """The answer's format: ``?format=``, else what Accept prefers to the request's own
    (``came_in``), else the request's own."""
    if query.format is not None:
        return query.format
    accept = request.accept_mimetypes
    if not accept:
        return came_in
    own = _MEDIA[came_in]
    best = accept.best_match([own, *(m for m in _MEDIA.values() if m != own)])
    if best is None or accept[best] <= accept[own]:
        return came_in
    return _FORMAT_OF.get(best, "csv")


def answer(ask: ColumnarAsk, batch: ColumnBatch, query: Any) -> Response:
    """The batch answered in the format asked (see module)."""
    fmt = answer_format(query, ask.format)
    out = batch.to_json()
    if query.view == "summary":
        out["disclosure"].pop("sources", None)
    if fmt == "json":
        if query.fields is not None:
            out = select(out, query.fields)
        return Response(orjson.dumps(out, option=orjson.OPT_SERIALIZE_NUMPY),
                        mimetype=JSON)
    columns = [(name, out["columns"][name]["unit"], batch.values[name])
               for name in batch.outputs]
    if fmt == "csv":
        why: dict[int, list[str]] = {}
        for e in batch.errors:
            why.setdefault(e.row, []).append(f"{e.path}: {e.detail}")
        return Response(csv_text(columns, {r: "; ".join(w) for r, w in why.items()}),
                        mimetype=CSV)
    return as_file(fmt, columns, out)


def as_file(fmt: str, columns: list[tuple[str, str, Any]], out: dict[str, Any]) -> Response:
    """A batch's answer (``out``, its JSON data) as an Arrow stream or a Parquet file: the
    ``columns`` (name, unit, values), the rest in the schema's metadata."""
    table = arrow_table(columns, {k: v for k, v in out.items() if k != "columns"})
    if fmt == "arrow":
        return Response(arrow_stream(table), mimetype=ARROW)
    return Response(parquet_file(table), mimetype=PARQUET)


def no_row_priced(batch: ColumnBatch) -> Problem:
    return input_problem(((e.path, e.detail) for e in batch.errors), prefix="no row priced: ")
