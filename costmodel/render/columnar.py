"""A columnar batch's answer as bytes: an Apache Arrow IPC stream, a Parquet file or CSV.

Each output is a float64 column named as asked, its unit in the field's metadata (``unit``),
null where a row has no figure; the rest of the answer (rows, priced, errors, disclosure,
sources) is the schema's metadata ``costmodel``, the JSON answer without its columns. CSV has
the row form's layout: ``row``, each output (header ``name [unit]``, numbers that read back
to the same float) and ``error``.
"""
from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import orjson

from ..sources.cells import neutralise_cell
from ..sources.columnar import REQUEST_KEY, UNIT_KEY

__all__ = ["arrow_table", "arrow_stream", "parquet_file", "csv_text"]


def arrow_table(columns: Sequence[tuple[str, str, np.ndarray]],
                rest: Mapping[str, Any]) -> Any:
    """The answer as a ``pyarrow.Table``: ``columns`` (name, unit, values [unit], NaN: no
    figure) and ``rest`` of the answer in the schema's metadata."""
    import pyarrow as pa
    arrays, fields = [], []
    for name, unit, values in columns:
        missing = np.isnan(values)
        arrays.append(pa.array(values, type=pa.float64(), mask=missing if missing.any()
                               else None))
        fields.append(pa.field(name, pa.float64(), metadata={UNIT_KEY: unit.encode()}))
    schema = pa.schema(fields, metadata={REQUEST_KEY: orjson.dumps(
        rest, option=orjson.OPT_SERIALIZE_NUMPY)})
    return pa.Table.from_arrays(arrays, schema=schema)


def arrow_stream(table: Any) -> bytes:
    import pyarrow as pa
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def parquet_file(table: Any) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq
    sink = pa.BufferOutputStream()
    # (the Arrow schema is stored in the file: the fields' units and the answer's metadata)
    pq.write_table(table, sink, compression="zstd", use_dictionary=False)
    return sink.getvalue().to_pybytes()


def csv_text(columns: Sequence[tuple[str, str, np.ndarray]],
             errors: Mapping[int, str]) -> bytes:
    """One line a row: ``row``, each output (empty where there is no figure) and ``error``
    (the row's errors, a formula-like start neutralised: the file is opened in
    spreadsheets)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    n = len(columns[0][2]) if columns else 0
    arrays = [pa.array(np.arange(n, dtype=np.int64))]
    names = ["row"]
    for name, unit, values in columns:
        missing = np.isnan(values)
        arrays.append(pa.array(values, type=pa.float64(), mask=missing if missing.any()
                               else None))
        names.append(f"{name} [{unit}]")
    why = [None] * n
    for row, text in errors.items():
        why[row] = neutralise_cell(text)
    arrays.append(pa.array(why, type=pa.string()))
    names.append("error")
    out = io.BytesIO()
    pcsv.write_csv(pa.Table.from_arrays(arrays, names=names), out,
                   write_options=pcsv.WriteOptions(quoting_style="needed",
                                                   batch_size=65536))
    return out.getvalue()
