"""POST /api/v1/price/batch, the columnar forms: columns of numbers as JSON, an Arrow IPC
stream or a Parquet file, each answered in its own format (or the one asked for); every
row's figures equal POST /price's for that row (sampled), by hand arithmetic too; a bad column
refuses the request naming it; a body that does not read whole prices nothing."""
from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import auth

from costmodel.app.columns import HEAVY_ROWS, MAX_CELLS, MAX_COLUMN_ROWS
from costmodel.model.errors import InputError
from costmodel.sources.columnar import read_arrow, read_parquet

API = "/api/v1"
ARROW = "application/vnd.apache.arrow.stream"
PARQUET = "application/vnd.apache.parquet"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
# a per-kW point whose normalising power is left to default (the rated power): moving the
# rated power moves the throughput with it
PER_KW = {"name": "per kW, defaulted", "accelerator": {"rated_power": "1000 W",
                                                       "price": "30000 USD"},
          "operating_point": {"throughput_per_kw": "4000 token/s/kW"}}
OUTPUTS = ["cost_per_mtok_total", "cost_per_mtok.energy", "price_per_mtok_output",
           "tokens_per_kwh"]
UNITS = {"cost_per_mtok_total": "USD/Mtok", "cost_per_mtok.energy": "USD/Mtok",
         "price_per_mtok_output": "USD/Mtok", "tokens_per_kwh": "token/kWh"}
N = 2_000
RNG = np.random.default_rng(42)
PRICES = RNG.uniform(20, 200, N)  # USD/MWh
UTIL = RNG.uniform(30, 100, N)  # %
LIFE = RNG.integers(3, 8, N)  # year
NODES = RNG.integers(1, 9, N)  # accelerators a node (a count)
COLUMNS = {"electricity.price": ("USD/MWh", PRICES), "utilisation": ("%", UTIL),
           "financing.life": ("year", LIFE), "node.accelerators": ("", NODES)}
SAMPLE = [0, 1, 17, 999, 1234, N - 1]


def json_body(scenario=GB300, columns=COLUMNS, outputs=OUTPUTS) -> dict:
    return {"scenario": scenario, "outputs": outputs,
            "columns": {k: {"unit": u, "values": np.asarray(v).tolist()}
                        for k, (u, v) in columns.items()}}


def table(scenario=GB300, columns=COLUMNS, outputs=OUTPUTS, request=None) -> pa.Table:
    fields = [pa.field(k, pa.array(v).type, metadata={"unit": u}) for k, (u, v) in
              columns.items()]
    meta = request if request is not None else {"scenario": scenario, "outputs": outputs}
    schema = pa.schema(fields, metadata={"costmodel": json.dumps(meta)})
    return pa.Table.from_arrays([pa.array(v) for _, v in columns.values()], schema=schema)


def arrow_bytes(t: pa.Table, **options) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema, options=pa.ipc.IpcWriteOptions(**options)) as w:
        w.write_table(t)
    return sink.getvalue().to_pybytes()


def parquet_bytes(t: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink)
    return sink.getvalue().to_pybytes()


def post(client, headers, data, kind, query=""):
    return client.post(f"{API}/price/batch{query}", data=data,
                       headers={**headers, "Content-Type": kind})


def alone(client, headers, scenario, columns, i) -> dict:
    """Row ``i`` priced through POST /price, each value with its column's unit."""
    overrides = {k: (int(v[i]) if not u else {"value": float(v[i]), "unit": u})
                 for k, (u, v) in columns.items()}
    r = client.post(f"{API}/price", json={"scenario": scenario, "overrides": overrides},
                    headers=headers)
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def assert_rows_equal_price(client, headers, scenario, columns, figures: dict, rows) -> None:
    for i in rows:
        result = alone(client, headers, scenario, columns, i)
        for name in OUTPUTS:
            want = result["steps"][name.replace(".", "_")]["value"]
            assert figures[name][i] == pytest.approx(want, rel=1e-12, abs=0), (i, name)


@pytest.mark.parametrize("scenario", [GB300, PER_KW], ids=["catalog", "per-kw"])
def test_json_columns_equal_price_row_for_row(client, tokens, scenario):
    headers = auth(tokens["viewer"])
    columns = dict(COLUMNS)
    if scenario is PER_KW:  # moving the rated power moves the per-kW throughput with it
        columns["accelerator.rated_power"] = ("kW", RNG.uniform(0.8, 1.4, N))
    r = client.post(f"{API}/price/batch", json=json_body(scenario, columns), headers=headers)
    assert r.status_code == 200 and r.mimetype == "application/json", r.get_data()[:400]
    answer = r.get_json()
    assert (answer["rows"], answer["priced"], answer["errors"]) == (N, N, [])
    assert answer["outputs"] == OUTPUTS
    assert {k: c["unit"] for k, c in answer["columns"].items()} == UNITS
    figures = {k: c["values"] for k, c in answer["columns"].items()}
    assert_rows_equal_price(client, headers, scenario, columns, figures, SAMPLE)
    # the base's disclosure; each column named where it replaces the base's sources
    plain = client.post(f"{API}/price", json={"scenario": scenario}, headers=headers).json
    assert answer["disclosure"]["sources"] == plain["disclosure"]["sources"]
    assert answer["sources"]["electricity.price"] == "columns.electricity.price [USD/MWh]"
    assert answer["sources"]["node.accelerators"] == "columns.node.accelerators"
    assert "provenance" not in answer


def test_json_columns_hand_arithmetic(client, tokens):
    """GB300 at peak, chip boundary: energy = price x 1.4 kW / (11,781 token/s/kW x 1.4 kW x
    3,600 s/h) x 1e6, the price given in USD/MWh (x 1e-3) and in cent/kWh (x 1e-2)."""
    headers = auth(tokens["viewer"])
    for unit, values, factor in (("USD/MWh", [50, 100, 120.5], 1e-3),
                                 ("cent/kWh", [5, 10, 12.05], 1e-2)):
        body = json_body(columns={"electricity.price": (unit, values)},
                         outputs=["cost_per_mtok.energy"])
        energy = client.post(f"{API}/price/batch", json=body,
                             headers=headers).json["columns"]["cost_per_mtok.energy"]["values"]
        for v, e in zip(values, energy, strict=True):
            assert e == pytest.approx(v * factor / (11781 * 3600) * 1e6, rel=1e-12)


@pytest.mark.parametrize("kind,file", [(ARROW, ARROW), (PARQUET, PARQUET),
                                       ("application/x-parquet", PARQUET),
                                       ("application/octet-stream", ARROW),
                                       ("application/octet-stream", PARQUET)])
def test_arrow_and_parquet_answer_in_their_format_with_units(client, tokens, kind, file):
    headers = auth(tokens["viewer"])
    t = table()
    data = arrow_bytes(t) if file == ARROW else parquet_bytes(t)
    r = post(client, headers, data, kind)
    assert r.status_code == 200, r.get_data()[:400]
    if file == ARROW:
        assert r.mimetype == ARROW
        out = pa.ipc.open_stream(r.get_data()).read_all()
    else:
        assert r.mimetype == PARQUET
        out = pq.read_table(io.BytesIO(r.get_data()))
    assert out.column_names == OUTPUTS and out.num_rows == N
    assert {f.name: f.metadata[b"unit"].decode() for f in out.schema} == UNITS
    rest = json.loads(out.schema.metadata[b"costmodel"])
    assert (rest["rows"], rest["priced"], rest["errors"]) == (N, N, [])
    assert rest["disclosure"]["boundary"] == "chip"
    # the same figures as the JSON form's, bit for bit
    answer = client.post(f"{API}/price/batch", json=json_body(), headers=headers).json
    for name in OUTPUTS:
        assert out.column(name).to_pylist() == answer["columns"][name]["values"], name
    figures = {n: out.column(n).to_pylist() for n in OUTPUTS}
    assert_rows_equal_price(client, headers, GB300, COLUMNS, figures, SAMPLE[:3])


def test_float32_and_narrow_integers_read_as_price_reads_them(client, tokens):
    headers = auth(tokens["viewer"])
    prices = np.array([0.05, 0.07, 0.125], dtype=np.float32)
    nodes = np.array([4, 8, 2], dtype=np.uint8)
    cols = {"electricity.price": ("USD/kWh", prices), "node.accelerators": ("", nodes)}
    out = pa.ipc.open_stream(post(client, headers, arrow_bytes(table(columns=cols)),
                                  ARROW).get_data()).read_all()
    for i in range(3):  # the float32's own value, as a float64 (what a client means by it)
        cols64 = {"electricity.price": ("USD/kWh", prices.astype(float)),
                  "node.accelerators": ("", nodes.astype(int))}
        result = alone(client, headers, GB300, cols64, i)
        assert out.column("cost_per_mtok_total")[i].as_py() == pytest.approx(
            result["steps"]["cost_per_mtok_total"]["value"], rel=1e-12, abs=0)


def test_csv_by_accept_and_by_format(client, tokens):
    headers = auth(tokens["viewer"])
    answer = client.post(f"{API}/price/batch", json=json_body(), headers=headers).json
    by_accept = client.post(f"{API}/price/batch", json=json_body(),
                            headers={**headers, "Accept": "text/csv"})
    by_query = post(client, headers, arrow_bytes(table()), ARROW, "?format=csv")
    for r in (by_accept, by_query):
        assert r.status_code == 200 and r.mimetype == "text/csv"
        lines = list(csv.reader(io.StringIO(r.get_data(as_text=True))))
        assert lines[0] == ["row", *(f"{n} [{UNITS[n]}]" for n in OUTPUTS), "error"]
        assert len(lines) == N + 1
        for i in (0, 5, N - 1):
            line = lines[i + 1]
            assert line[0] == str(i) and line[-1] == ""
            for name, cell in zip(OUTPUTS, line[1:-1], strict=True):
                assert float(cell) == answer["columns"][name]["values"][i]  # round-trips
    # JSON asked of an Arrow body, Arrow asked of a JSON body
    r = post(client, {**headers, "Accept": "application/json"}, arrow_bytes(table()), ARROW)
    assert r.mimetype == "application/json" and r.json["columns"] == answer["columns"]
    r = client.post(f"{API}/price/batch?format=arrow", json=json_body(), headers=headers)
    assert r.mimetype == ARROW
    # a row-form batch answers in the columnar formats too: the same figures
    rows = [{"electricity.price": "0.05 USD/kWh"}, {"utilisation": 2}]
    as_json = client.post(f"{API}/price/batch", json={
        "scenario": GB300, "overrides": rows}, headers=headers).json
    r = client.post(f"{API}/price/batch?format=parquet", json={
        "scenario": GB300, "overrides": rows}, headers=headers)
    assert r.status_code == 200 and r.mimetype == PARQUET
    out = pq.read_table(io.BytesIO(r.get_data()))
    assert out.column("cost_per_mtok_total").to_pylist() == \
        as_json["columns"]["cost_per_mtok_total"]["values"]
    rest = json.loads(out.schema.metadata[b"costmodel"])
    assert rest["errors"] == as_json["errors"] and rest["provenance"] == as_json["provenance"]


def test_summary_and_fields(client, tokens):
    headers = auth(tokens["viewer"])
    body = json_body(columns={"electricity.price": ("USD/kWh", [0.05, 0.1])},
                     outputs=["cost_per_mtok_total"])
    full = client.post(f"{API}/price/batch", json=body, headers=headers).json
    summary = client.post(f"{API}/price/batch?view=summary", json=body, headers=headers).json
    assert "sources" not in summary["disclosure"] and "sources" in full["disclosure"]
    picked = client.post(f"{API}/price/batch?fields=columns.cost_per_mtok_total.values",
                         json=body, headers=headers).json
    assert picked == {"columns": {"cost_per_mtok_total": {
        "values": full["columns"]["cost_per_mtok_total"]["values"]}}}


# ---- bad columns: refused, named, nothing priced ------------------------------------------------

BAD_JSON = [  # (columns, path, words in the message)
    ({"electricity.price": {"unit": "W", "values": [1, 2]}}, "columns.electricity.price",
     "energy price expected"),
    ({"electricity.price": {"unit": "USD/kWh", "values": [0.1, 0.2]},
      "utilisation": {"values": [0.5]}}, "columns.utilisation", "has 1 values where"),
    ({"electricity.price": {"unit": "USD/kWh", "values": [0.1, "0.2"]}},
     "columns.electricity.price", "values[1]: must be a number, got text"),
    ({"electricity.price": {"unit": "USD/kWh", "values": [0.1, True]}},
     "columns.electricity.price", "values[1]: must be a number, got a boolean"),
    ({"electricity.price": {"unit": "USD/kWh", "values": [None, 0.1]}},
     "columns.electricity.price", "values[0]: must be a number, got null"),
    ({"utilization": {"values": [0.5]}}, "columns.utilization",
     "unknown key; did you mean utilisation?"),
    ({"power.boundary": {"values": [1]}}, "columns.power.boundary", "set it in the scenario"),
    ({"utilisation": {"values": [0.5, 1.5, 2]}}, "columns.utilisation",
     "values[1]: must be at most 1, got 1.5 (1 more row out of range)"),
    ({"node.accelerators": {"values": [4.0, 8.0]}}, "columns.node.accelerators",
     "whole numbers"),
    ({"accelerator.hourly_price": {"unit": "USD/h", "values": [2.5]}},
     "columns.accelerator.hourly_price", "does not give this input"),
    ({"electricity.price": {"values": [0.1]}}, "columns.electricity.price",
     "needs a unit"),
]


@pytest.mark.parametrize("columns,path,words", BAD_JSON,
                         ids=["unit", "length", "text", "bool", "null", "unknown",
                              "categorical", "range", "count", "not-given", "no-unit"])
def test_a_bad_json_column_is_refused_by_name(client, tokens, columns, path, words):
    r = client.post(f"{API}/price/batch", json={"scenario": GB300, "columns": columns},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.mimetype == "application/problem+json", r.json
    (error,) = r.json["errors"]
    assert error["path"] == path and words in error["message"], error


def test_infinity_is_no_json_number(client, tokens):
    body = b'{"scenario": {"accelerator": "gb300"}, "columns": {"utilisation": ' \
           b'{"values": [1e400]}}}'
    r = client.post(f"{API}/price/batch", data=body, headers={
        **auth(tokens["viewer"]), "Content-Type": "application/json"})
    assert r.status_code == 400 and r.mimetype == "application/problem+json"


@pytest.mark.parametrize("kind", [ARROW, PARQUET])
@pytest.mark.parametrize("bad,path,words", [
    ({"electricity.price": ("USD/kWh", np.array([0.1, np.nan]))}, "columns.electricity.price",
     "values[1]: must be a finite number, got nan"),
    ({"electricity.price": ("USD/kWh", np.array([0.1, np.inf]))}, "columns.electricity.price",
     "values[1]: must be a finite number, got inf"),
    ({"electricity.price": ("USD/kWh", pa.array([0.1, None]))}, "columns.electricity.price",
     "values[1]: must be a number, got null"),
    ({"electricity.price": ("USD/kWh", pa.array(["0.1", "0.2"]))}, "columns.electricity.price",
     "is of type string"),
    ({"electricity.price": ("USD/kWh", pa.array([True, False]))}, "columns.electricity.price",
     "is of type bool"),
    ({"electricity.price": ("kW", np.array([0.1]))}, "columns.electricity.price",
     "energy price expected"),
    ({"utilization": ("", np.array([0.5]))}, "columns.utilization", "unknown key"),
], ids=["nan", "inf", "null", "text", "bool", "unit", "unknown"])
def test_a_bad_file_column_is_refused_by_name(client, tokens, kind, bad, path, words):
    # (an Arrow or Parquet table is rectangular: its columns cannot differ in length)
    headers = auth(tokens["viewer"])
    t = table(columns=bad)
    data = arrow_bytes(t) if kind == ARROW else parquet_bytes(t)
    r = post(client, headers, data, kind)
    assert r.status_code == 422 and r.mimetype == "application/problem+json", r.get_data()
    (error,) = r.json["errors"]
    assert error["path"] == path and words in error["message"], error


def test_a_unit_in_the_name_when_the_field_has_no_metadata(client, tokens):
    schema = pa.schema([pa.field("electricity.price [USD/MWh]", pa.float64())],
                       metadata={"costmodel": json.dumps({"scenario": GB300,
                                                          "outputs": ["cost_per_mtok.energy"]})})
    t = pa.Table.from_arrays([pa.array([50.0, 100.0])], schema=schema)
    r = post(client, auth(tokens["viewer"]), parquet_bytes(t), PARQUET, "?format=json")
    energy = r.json["columns"]["cost_per_mtok.energy"]["values"]
    assert energy[0] == pytest.approx(0.05 / (11781 * 3600) * 1e6, rel=1e-12)


def test_the_request_in_the_metadata_is_checked(client, tokens):
    headers = auth(tokens["viewer"])
    cols = {"utilisation": ("", np.array([0.5]))}
    for request, path in (({}, "scenario"),
                          ({"scenario": GB300, "outputs": ["cost_per_mtok_totl"]}, "outputs"),
                          ({"scenario": GB300, "colour": "red"}, "colour")):
        r = post(client, headers, arrow_bytes(table(columns=cols, request=request)), ARROW)
        assert r.status_code == 422, r.get_data()
        assert r.json["errors"][0]["path"].startswith(path), r.json


def test_a_body_that_does_not_read_whole_prices_nothing(client, tokens, monkeypatch):
    from costmodel.app import columns as use_case
    priced = []
    monkeypatch.setattr(use_case, "price_rows", lambda *a: priced.append(a))
    headers = auth(tokens["viewer"])
    whole = arrow_bytes(table())
    for cut in (len(whole) // 2, len(whole) - 9, 12):
        r = post(client, headers, whole[:cut], ARROW)
        assert r.status_code == 422 and r.json["errors"][0]["path"] == "body", (cut, r.json)
    whole = parquet_bytes(table())
    for cut in (len(whole) // 2, len(whole) - 3):
        r = post(client, headers, whole[:cut], PARQUET)
        assert r.status_code == 422 and r.json["errors"][0]["path"] == "body", (cut, r.json)
    body = json.dumps(json_body()).encode()
    r = client.post(f"{API}/price/batch", data=body[:-20],
                    headers={**headers, "Content-Type": "application/json"})
    assert r.status_code == 400
    assert priced == []


def test_rows_over_the_bound_are_refused_from_the_metadata(monkeypatch):
    """The row count is read from each record batch's metadata, and from Parquet's footer,
    before a column is decoded."""
    decoded = []
    real = pa.ipc.read_record_batch
    monkeypatch.setattr(pa.ipc, "read_record_batch",
                        lambda *a: decoded.append(1) or real(*a))
    t = table(columns={"utilisation": ("", np.full(100, 0.5))})
    with pytest.raises(InputError) as info:
        read_arrow(arrow_bytes(t), max_rows=99, max_bytes=10**6)
    assert info.value.errors == [("columns", "at most 99 rows, got more (the stream's "
                                             "metadata)")]
    assert decoded == []
    with pytest.raises(InputError) as info:
        read_parquet(parquet_bytes(t), max_rows=99, max_bytes=10**6)
    assert "at most 99 rows, got 100" in info.value.errors[0][1]
    assert len(read_arrow(arrow_bytes(t), max_rows=100, max_bytes=10**6).columns[0].values) \
        == 100


def test_a_compressed_buffer_claiming_more_than_its_rows_is_refused():
    """A zstd-compressed stream whose buffer says it decompresses to 1 TB: refused from the
    buffer's own length prefix, before anything is decompressed."""
    t = table(columns={"utilisation": ("", np.full(1000, 0.5))})
    data = bytearray(arrow_bytes(t, compression="zstd"))
    assert len(read_arrow(bytes(data), max_rows=10**6, max_bytes=10**7).columns[0].values) \
        == 1000
    prefix = (1000 * 8).to_bytes(8, "little")  # the data buffer's uncompressed length
    at = bytes(data).index(prefix)
    data[at:at + 8] = (10**12).to_bytes(8, "little")
    with pytest.raises(InputError) as info:
        read_arrow(bytes(data), max_rows=10**6, max_bytes=10**7)
    assert info.value.errors == [("body", "an Arrow buffer larger than its rows of numbers")]
    with pytest.raises(InputError) as info:  # the whole within its rows, but beyond the bound
        read_arrow(arrow_bytes(t, compression="zstd"), max_rows=10**6, max_bytes=4000)
    assert "decodes to more than" in info.value.errors[0][1]


@pytest.mark.parametrize("kind", [ARROW, PARQUET])
def test_a_million_rows_price_and_one_more_is_refused(client, tokens, kind):
    headers = auth(tokens["viewer"])
    n = MAX_COLUMN_ROWS
    prices = np.random.default_rng(5).uniform(0.01, 0.3, n)  # (none alike: no dictionary)
    cols = {"electricity.price": ("USD/kWh", prices)}
    t = table(columns=cols, outputs=["cost_per_mtok.energy"])
    r = post(client, headers, arrow_bytes(t) if kind == ARROW else parquet_bytes(t), kind,
             "?format=arrow")
    assert r.status_code == 200, r.get_data()[:300]
    energy = pa.ipc.open_stream(r.get_data()).read_all().column(0).to_numpy()
    for i in (0, 1, n // 3, n - 1):  # by hand: GB300 at peak, chip boundary
        assert math.isclose(energy[i], prices[i] / (11781 * 3600) * 1e6, rel_tol=1e-12)
    cols = {"electricity.price": ("USD/kWh", np.full(n + 1, 0.1))}
    r = post(client, headers, arrow_bytes(table(columns=cols)), ARROW)
    assert r.status_code == 422
    assert r.json["errors"][0] == {"path": "columns", "message": f"at most {n:,} rows, got "
                                                                  f"more (the stream's metadata)"}


def test_cells_are_bounded(client, tokens):
    """Rows x (columns + outputs): a million rows of one column (a few bytes of Parquet)
    asking for 16 outputs is 17 million cells."""
    from costmodel.model.steps import MODEL
    outputs = sorted(MODEL.scalar_steps)[:16]
    cols = {"utilisation": ("", np.full(MAX_COLUMN_ROWS, 0.5))}
    data = parquet_bytes(table(columns=cols, outputs=outputs))
    assert len(data) < 100_000
    r = post(client, auth(tokens["viewer"]), data, PARQUET)
    assert r.status_code == 422 and f"at most {MAX_CELLS:,} cells" in r.json["detail"]


def test_the_body_is_bounded(client, tokens):
    from costmodel.api.schemas import MAX_COLUMNAR_BODY
    big = b'{"scenario": {}, "columns": {"utilisation": {"values": [' + \
        b" " * MAX_COLUMNAR_BODY + b"]}}}"
    r = client.post(f"{API}/price/batch", data=big, headers={
        **auth(tokens["viewer"]), "Content-Type": "application/json"})
    assert r.status_code == 413 and "64 MiB" in r.json["detail"]


def test_a_row_whose_figures_overflow_is_null_and_listed(client, tokens):
    body = json_body(columns={"electricity.price": ("USD/kWh", [0.1, 1e305, 0.2])},
                     outputs=["cost_per_mtok_total"])
    answer = client.post(f"{API}/price/batch", json=body,
                         headers=auth(tokens["viewer"])).json
    assert answer["priced"] == 2
    assert answer["columns"]["cost_per_mtok_total"]["values"][1] is None
    (error,) = answer["errors"]
    assert (error["row"], error["path"]) == (1, "columns")
    assert "beyond the 1e+12 USD/Mtok" in error["message"]
    assert answer["errors_unlisted"] == 0
    r = client.post(f"{API}/price/batch", json=json_body(
        columns={"electricity.price": ("USD/kWh", [1e305])}), headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.json["detail"].startswith("no row priced")


def test_rows_without_figures_are_listed_up_to_a_bound(client, tokens):
    from costmodel.app.columns import MAX_LISTED
    n = 3 * MAX_LISTED
    prices = np.where(np.arange(n) % 3 == 0, 0.1, 1e305)  # two rows in three overflow
    body = json_body(columns={"electricity.price": ("USD/kWh", prices)},
                     outputs=["cost_per_mtok_total"])
    answer = client.post(f"{API}/price/batch", json=body, headers=auth(tokens["viewer"])).json
    assert answer["priced"] == MAX_LISTED
    assert [e["row"] for e in answer["errors"]] == \
        [i for i in range(n) if i % 3][:MAX_LISTED]
    assert answer["errors_unlisted"] == 2 * MAX_LISTED - MAX_LISTED
    values = answer["columns"]["cost_per_mtok_total"]["values"]
    assert all((v is None) == bool(i % 3) for i, v in enumerate(values))


def test_a_column_that_contradicts_the_scenario_is_refused(client, tokens):
    """A utilisation column against a load shape: the rows priced alone say why."""
    scenario = {**GB300, "load": {"hourly": [0.5] * 24}}
    r = client.post(f"{API}/price/batch", json=json_body(
        scenario, columns={"utilisation": ("", [0.6, 0.7])}), headers=auth(tokens["viewer"]))
    assert r.status_code == 422, r.json
    assert r.json["errors"][0]["path"] == "columns.utilisation"
    assert "differs from the mean of load.hourly" in r.json["errors"][0]["message"]


def test_a_large_columnar_batch_holds_a_heavy_slot(make_app):
    from costmodel.store.repo import key_create
    application = make_app(HEAVY_PER_WORKER=1)
    with application.extensions["costmodel"].sessions() as session:
        token = key_create(session, "columns", "viewer")[1]
    client, headers = application.test_client(), auth(token)
    large = arrow_bytes(table(columns={"utilisation": ("", np.full(HEAVY_ROWS + 1, 0.5))}))
    small = arrow_bytes(table(columns={"utilisation": ("", np.full(HEAVY_ROWS, 0.5))}))
    with application.extensions["costmodel.limits"].heavy():  # another holds the only slot
        busy = post(client, headers, large, ARROW)
        light = post(client, headers, small, ARROW)
    assert busy.status_code == 429 and busy.headers["Retry-After"] == "2"
    assert light.status_code == 200
    assert post(client, headers, large, ARROW).status_code == 200


def test_the_document_says_each_form(client):
    op = client.get(f"{API}/openapi.json").json["paths"][f"{API}/price/batch"]["post"]
    content = op["requestBody"]["content"]
    # (a generator knows octet-stream, not Arrow's or Parquet's own types: named in words)
    assert set(content) == {"application/json", "application/octet-stream"}
    assert ARROW in op["requestBody"]["description"]
    assert PARQUET in op["requestBody"]["description"]
    refs = [s["$ref"] for s in content["application/json"]["schema"]["anyOf"]]
    assert refs == ["#/components/schemas/BatchRequest", "#/components/schemas/ColumnsRequest"]
    assert {"text/csv", ARROW, PARQUET} <= set(op["responses"]["200"]["content"])
    assert "67,108,864 bytes for a columnar body" in op["responses"]["413"]["description"]
    params = {p["name"] for p in op["parameters"]}
    assert "format" in params
    assert op["description"].startswith(f"A columnar batch of more than {HEAVY_ROWS:,} rows")
    assert "429" in op["responses"]


def test_the_docs_pyarrow_example_runs_against_a_live_server(live_server, tmp_path):
    """docs/pricing-tools.md, "Columnar batch": its Python block, run as written against
    gunicorn; its figures are POST /price's for each row (the engine in process)."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    from conftest import price_data
    text = (Path(__file__).resolve().parents[2] / "docs" / "pricing-tools.md").read_text()
    section = text[text.index("## Columnar batch"):]
    script = tmp_path / "columns.py"
    script.write_text(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    url, key = live_server
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "COSTMODEL_URL": url,
                                           "COSTMODEL_KEY": key})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "3 of 3 rows priced"
    for line, price, util in zip(lines, (0.05, 0.08, 0.12), (60.0, 75.0, 90.0), strict=False):
        total = float(re.search(r": ([-\d.e]+) USD/Mtok", line).group(1))
        want = price_data(GB300, [("electricity.price", {"value": price, "unit": "USD/kWh"}),
                                  ("utilisation", {"value": util, "unit": "%"})]).value(
            "cost_per_mtok_total")
        assert total == pytest.approx(want, rel=1e-12, abs=0), line


def test_columns_of_a_saved_scenario_at_a_revision(client, tokens):
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    sid = client.post(f"{API}/scenarios", json={"name": "columns base", "scenario": GB300},
                      headers=editor).json["scenario_id"]
    client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": {**GB300,
                                                                       "utilisation": 0.5}},
                headers=editor)
    cols = {"electricity.price": ("USD/kWh", [0.05, 0.1])}
    body = {"scenario_id": sid, "revision": 1, "outputs": ["cost_per_mtok_total"],
            "columns": {"electricity.price": {"unit": "USD/kWh", "values": [0.05, 0.1]}}}
    answer = client.post(f"{API}/price/batch", json=body, headers=viewer).json
    assert answer["disclosure"]["utilisation"] == 1.0  # revision 1, not the latest
    for i in (0, 1):
        r = client.post(f"{API}/price", json={"scenario_id": sid, "revision": 1, "overrides": {
            "electricity.price": {"value": cols["electricity.price"][1][i], "unit": "USD/kWh"}}},
            headers=viewer).json
        assert answer["columns"]["cost_per_mtok_total"]["values"][i] == pytest.approx(
            r["steps"]["cost_per_mtok_total"]["value"], rel=1e-12, abs=0)
    missing = client.post(f"{API}/price/batch", json={**body, "scenario_id": 10**9},
                          headers=viewer)
    assert missing.status_code == 404


def test_many_tiny_batches_are_refused():
    """Each record batch or row group costs a few Python steps: a file of thousands of
    one-row ones is refused before they are read."""
    from costmodel.sources.columnar import MAX_CHUNKS
    t = table(columns={"utilisation": ("", np.full(MAX_CHUNKS + 1, 0.5))})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, t.schema) as w:
        for batch in t.to_batches(max_chunksize=1):
            w.write_batch(batch)
    with pytest.raises(InputError) as info:
        read_arrow(sink.getvalue().to_pybytes(), max_rows=10**6, max_bytes=10**7)
    assert "more than 4,096 record batches" in info.value.errors[0][1]
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, row_group_size=1)
    with pytest.raises(InputError) as info:
        read_parquet(sink.getvalue().to_pybytes(), max_rows=10**6, max_bytes=10**7)
    assert "more than 4,096 row groups" in info.value.errors[0][1]


def test_a_base_that_does_not_price_is_refused_at_its_path(client, tokens):
    """Columns vary what the base gives: a base without a price is the request's error, at
    the scenario's path, as POST /price says it."""
    base = {"accelerator": {"rated_power": "1000 W"},
            "operating_point": {"throughput": "5000 token/s"}}
    headers = auth(tokens["viewer"])
    r = client.post(f"{API}/price/batch", json=json_body(
        base, columns={"utilisation": ("", [0.5])}), headers=headers)
    alone = client.post(f"{API}/price", json={"scenario": base}, headers=headers)
    assert r.status_code == alone.status_code == 422
    assert r.json["errors"] == alone.json["errors"]
    assert r.json["errors"][0]["path"] == "scenario.accelerator.price"


@pytest.mark.parametrize("kind", [ARROW, PARQUET])
def test_more_fields_than_inputs_are_refused_before_they_are_read(client, tokens, kind):
    from costmodel.app.columns import MAX_COLUMNS
    cols = {f"x{i}": ("", np.zeros(1)) for i in range(MAX_COLUMNS + 1)}
    t = table(columns=cols)
    r = post(client, auth(tokens["viewer"]), arrow_bytes(t) if kind == ARROW
             else parquet_bytes(t), kind)
    assert r.status_code == 422
    assert r.json["errors"] == [{"path": "columns", "message": f"at most {MAX_COLUMNS} columns "
                                                              f"(one a numeric input), got "
                                                              f"{MAX_COLUMNS + 1}"}]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.mark.parametrize("compression", ["none", "zstd", "snappy"])
def test_a_parquet_page_claiming_more_than_its_rows_is_refused_before_it_is_read(
        compression, monkeypatch):
    """A page header's uncompressed size is what the reader allocates and decompresses into:
    each is read from the file (Thrift's compact protocol) before a row group is; one that
    says 1.5 GB for 1,000 rows of numbers is refused, whatever the footer says."""
    from costmodel.sources import columnar
    t = table(columns={"utilisation": ("", np.random.default_rng(3).uniform(0.1, 1, 1000))})
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, compression=compression, use_dictionary=False)
    raw = sink.getvalue().to_pybytes()
    chunk = pq.ParquetFile(io.BytesIO(raw)).metadata.row_group(0).column(0)
    start = chunk.data_page_offset
    sizes = columnar._page_sizes(raw, start, start + chunk.total_compressed_size)
    assert sizes and all(0 < s <= 8000 + 64 for s in sizes)  # honest: its rows of numbers
    assert len(read_parquet(raw, max_rows=10**6, max_bytes=10**7).columns[0].values) == 1000
    # the first page's uncompressed_page_size (field 2, after field 1's type): 1.5 GB
    assert raw[start] == 0x15  # field 1, an i32
    at = start + 2  # (type 0, DATA_PAGE: one byte)
    assert raw[at] == 0x15
    old_end = at + 1
    while raw[old_end] & 0x80:
        old_end += 1
    hostile = raw[:at + 1] + _varint(2 * 1_500_000_000) + raw[old_end + 1:]
    read = []
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: read.append(1))
    with pytest.raises(InputError) as info:
        read_parquet(hostile, max_rows=10**6, max_bytes=10**7)
    assert info.value.errors == [("body", "a Parquet column chunk larger than its rows of "
                                          "numbers")]
    assert read == []


def test_a_parquet_file_of_too_many_pages_is_refused(monkeypatch):
    from costmodel.sources import columnar
    monkeypatch.setattr(columnar, "MAX_PAGES", 10)
    t = table(columns={"utilisation": ("", np.random.default_rng(4).uniform(0.1, 1, 50_000))})
    sink = pa.BufferOutputStream()
    pq.write_table(t, sink, data_page_size=1024, use_dictionary=False)  # ~50 pages
    with pytest.raises(InputError) as info:
        read_parquet(sink.getvalue().to_pybytes(), max_rows=10**6, max_bytes=10**7)
    assert "more than 10 pages" in info.value.errors[0][1]
