"""POST /api/v1/price/batch: a batch is its rows priced one by one through /price, value for
value, with each row's sources; CSV says what JSON says; limits answered as problems."""
from __future__ import annotations

import csv
import io
import json
import math

import pytest
from conftest import auth

from costmodel.api.schemas import MAX_BATCH_BODY, MAX_BATCH_ROWS

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
# a per-kW point whose normalising power is left to default (the rated power): moving the
# rated power moves the throughput with it
PER_KW = {"name": "per kW, defaulted", "accelerator": {"rated_power": "1000 W",
                                                       "price": "30000 USD"},
          "operating_point": {"throughput_per_kw": "4000 token/s/kW"}}
CURVE = {"accelerator": "b200",
         "operating_point": {"curve": "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"}}
OUTPUTS = ["cost_per_mtok_total", "cost_per_mtok.energy", "price_per_mtok_output",
           "tokens_per_kwh", "emissions_per_mtok"]

# numeric rows (evaluated together), choices (boundary, basis, token kind, catalog
# references), and rows that fail, in one batch
ROWS = [
    {"electricity.price": "0.05 USD/kWh"},
    {"electricity.price": "8.71 cent/kWh", "utilisation": 0.6},
    {"electricity.price": {"value": 0.12, "unit": "USD/kWh"}, "financing.life": "4 year"},
    {"utilisation": "70 %", "idle_power": 0.2, "facility.pue": 1.2},
    {"node.accelerators": 4, "rack.nodes": 18},
    {"accelerator.rated_power": "1200 W"},
    {"power.boundary": "facility"},
    {"power.boundary": "rack", "electricity.price": "0.07 USD/kWh"},
    {"power.boundary": "node", "utilisation": 0.5},
    {"power.basis": "measured", "accelerator.measured_power": "1100 W"},
    {"power.basis": "measured"},  # fails: no measured power
    {"operating_point.token_kind": "output"},
    {"accelerator": "b200"},
    {"electricity": "eia-2026-05-us-industrial", "electricity.price": "0.2 USD/kWh"},
    {"accelerator.hourly_price": "3 USD/h"},  # renting: a choice
    {"electricity.carbon_intensity": "380 gCO2e/kWh"},
    {"utilisation": 1.5},  # fails: above 1
    {"utilization": 0.5},  # fails: unknown key
    {"node.accelerators": 4.0},  # fails: not a whole number
    {"electricity.price": "0.05 W"},  # fails: wrong dimension
    {"electricity.price": "1e-308 USD/kWh", "facility.hosting": "1e308 USD/kW/month"},
    {},
    {"electricity.price": "0.06 USD/kWh"},
]


def batch(client, headers, scenario=None, rows=ROWS, outputs=OUTPUTS, query="", **extra):
    body = {"overrides": rows, "outputs": outputs, **extra}
    if scenario is not None:
        body["scenario"] = scenario
    return client.post(f"{API}/price/batch{query}", json=body, headers=headers)


def one_by_one(client, headers, base: dict, rows) -> list[dict | None]:
    """Each row priced alone through /price: (figures by output, sources) or the problem."""
    out = []
    for row in rows:
        r = client.post(f"{API}/price", json={**base, "overrides": row}, headers=headers)
        out.append(r.get_json() if r.status_code == 200 else None)
        assert r.status_code in (200, 422), r.get_data(as_text=True)
    return out


def figure(result: dict, name: str) -> float | None:
    return result["steps"][name.replace(".", "_")]["value"]


def assert_equal_to_one_by_one(client, headers, base: dict, rows, answer: dict) -> None:
    alone = one_by_one(client, headers, base, rows)
    plain = client.post(f"{API}/price", json=base, headers=headers).get_json()
    shared = answer["disclosure"]["sources"]
    assert shared == plain["disclosure"]["sources"]  # the base's disclosure is the shared one
    failed = {e["row"] for e in answer["errors"]}
    for i, result in enumerate(alone):
        for name in answer["outputs"]:
            got = answer["columns"][name]["values"][i]
            if result is None:
                assert got is None, (i, name)
                continue
            want = figure(result, name)
            if want is None:
                assert got is None, (i, name)
            else:
                assert got == pytest.approx(want, rel=1e-12, abs=0), (i, name, rows[i])
        if result is None:
            assert i in failed and answer["provenance"][i] is None, i
            continue
        assert i not in failed
        # the row's sources that differ from the shared disclosure's, exactly
        sources = result["disclosure"]["sources"]
        changed = {k: v for k, v in sources.items() if shared.get(k) != v}
        changed.update({k: None for k in shared if k not in sources})
        assert answer["provenance"][i] == changed, (i, rows[i])


@pytest.mark.parametrize("base", [GB300, PER_KW, CURVE], ids=["catalog", "per-kw", "curve"])
def test_batch_equals_its_rows_priced_one_by_one(client, tokens, base):
    headers = auth(tokens["viewer"])
    r = batch(client, headers, base)
    assert r.status_code == 200, r.get_data(as_text=True)
    answer = r.get_json()
    assert answer["outputs"] == OUTPUTS and answer["rows"] == len(ROWS)
    assert answer["priced"] == len(ROWS) - len({e["row"] for e in answer["errors"]})
    assert_equal_to_one_by_one(client, headers, {"scenario": base}, ROWS, answer)
    units = {n: c["unit"] for n, c in answer["columns"].items()}
    assert units == {"cost_per_mtok_total": "USD/Mtok", "cost_per_mtok.energy": "USD/Mtok",
                     "price_per_mtok_output": "USD/Mtok", "tokens_per_kwh": "token/kWh",
                     "emissions_per_mtok": "gCO2e/Mtok"}


def test_batch_failed_rows_are_named_by_their_override(client, tokens):
    answer = batch(client, auth(tokens["viewer"]), GB300).get_json()
    errors = {(e["row"], e["path"]): e["message"] for e in answer["errors"]}
    # the shape of every problem's errors[]; "detail" is its deprecated alias for a release
    assert all(set(e) == {"row", "path", "message", "detail"} and e["detail"] == e["message"]
               for e in answer["errors"])
    at = {row: path for row, path in errors}
    assert at[ROWS.index({"utilisation": 1.5})] == "overrides[16].utilisation"
    assert errors[(16, "overrides[16].utilisation")] == "must be at most 1, got 1.5"
    assert errors[(17, "overrides[17].utilization")] == \
        "unknown key; did you mean utilisation?"
    assert at[18] == "overrides[18].node.accelerators"
    assert at[19] == "overrides[19].electricity.price"
    assert at[10] == "overrides[10]"  # measured basis without a measured power: the row
    assert "accelerator.measured_power" in errors[(10, "overrides[10]")]
    assert set(at) == {10, 16, 17, 18, 19, 20}  # 20: costs overflow
    # a failed row is null in every column
    for column in answer["columns"].values():
        assert all(column["values"][i] is None for i in at)


def test_batch_hand_arithmetic(client, tokens):
    """GB300 at peak, chip boundary, rated: energy = price x 1.4 kW / (11,781 token/s/kW x
    1.4 kW x 3,600 s/h) x 1e6; a 0.05 USD/kWh row and a 0.10 one differ by a factor 2."""
    rows = [{"electricity.price": "0.05 USD/kWh"}, {"electricity.price": "0.10 USD/kWh"}]
    answer = batch(client, auth(tokens["viewer"]), GB300, rows,
                   ["cost_per_mtok.energy"]).get_json()
    energy = answer["columns"]["cost_per_mtok.energy"]["values"]
    assert energy[0] == pytest.approx(0.05 / (11781 * 3600) * 1e6, rel=1e-12)
    assert energy[1] == pytest.approx(2 * energy[0], rel=1e-12)


def test_batch_of_a_saved_scenario_at_a_revision(client, tokens):
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    saved = client.post(f"{API}/scenarios", json={"name": "batch base", "scenario": GB300},
                        headers=editor).get_json()
    sid = saved["scenario_id"]
    client.post(f"{API}/scenarios/{sid}/revisions", json={"scenario": {**GB300, "utilisation":
                                                                       0.5}}, headers=editor)
    rows = ROWS[:9]
    r = client.post(f"{API}/price/batch", json={"scenario_id": sid, "revision": 1,
                                                "overrides": rows, "outputs": OUTPUTS},
                    headers=viewer)
    assert r.status_code == 200
    assert_equal_to_one_by_one(client, viewer, {"scenario_id": sid, "revision": 1}, rows,
                               r.get_json())
    assert r.get_json()["disclosure"]["utilisation"] == 1.0  # revision 1, not the latest
    missing = client.post(f"{API}/price/batch", json={"scenario_id": 10**9, "overrides": [{}]},
                          headers=viewer)
    assert missing.status_code == 404


def test_batch_csv_equals_json(client, tokens):
    headers = auth(tokens["viewer"])
    answer = batch(client, headers, GB300).get_json()
    r = batch(client, {**headers, "Accept": "text/csv"}, GB300)
    assert r.status_code == 200 and r.mimetype == "text/csv"
    table = list(csv.reader(io.StringIO(r.get_data(as_text=True))))
    units = [answer["columns"][n]["unit"] for n in OUTPUTS]
    assert table[0] == ["row", *(f"{n} [{u}]" for n, u in zip(OUTPUTS, units, strict=True)),
                        "error"]
    assert len(table) == len(ROWS) + 1
    why: dict[int, list[str]] = {}
    for e in answer["errors"]:
        why.setdefault(e["row"], []).append(f"{e['path']}: {e['message']}")
    for i, line in enumerate(table[1:]):
        assert line[0] == str(i)
        for name, cell in zip(OUTPUTS, line[1:-1], strict=True):
            value = answer["columns"][name]["values"][i]
            assert (float(cell) if cell else None) == value  # exact: written to round-trip
        assert line[-1] == "; ".join(why.get(i, ()))


def test_batch_none_priced_is_a_422_with_every_row(client, tokens):
    r = batch(client, auth(tokens["viewer"]), GB300, [{"utilisation": 2}, {"utilization": 1}])
    assert r.status_code == 422 and r.mimetype == "application/problem+json"
    paths = [e["path"] for e in r.get_json()["errors"]]
    assert paths == ["overrides[0].utilisation", "overrides[1].utilization"]
    # the same rows, one of them priced: the rows' errors in the problem's shape, plus the row
    some = batch(client, auth(tokens["viewer"]), GB300, [{"utilisation": 2}, {}]).get_json()
    (row,) = some["errors"]
    assert r.get_json()["errors"][0] == {"path": "overrides[0].utilisation",
                                         "message": "must be at most 1, got 2"}
    assert {k: row[k] for k in ("path", "message")} == r.get_json()["errors"][0]


def test_batch_base_that_rows_complete(client, tokens):
    """A base that does not price alone (no price), rows that give one: the rows price, the
    shared disclosure is the first priced row's, and the row without a price fails."""
    base = {"accelerator": {"rated_power": "1000 W"},
            "operating_point": {"throughput": "5000 token/s"}}
    rows = [{"accelerator.price": "30000 USD"}, {}, {"accelerator.price": "20000 USD"}]
    headers = auth(tokens["viewer"])
    answer = batch(client, headers, base, rows, ["cost_per_mtok_total"]).get_json()
    assert [e["row"] for e in answer["errors"]] == [1]
    assert answer["errors"][0]["path"] == "overrides[1]"
    alone = one_by_one(client, headers, {"scenario": base}, rows)
    assert alone[1] is None
    for i in (0, 2):
        assert answer["columns"]["cost_per_mtok_total"]["values"][i] == pytest.approx(
            figure(alone[i], "cost_per_mtok_total"), rel=1e-12)
    assert answer["disclosure"]["sources"] == alone[0]["disclosure"]["sources"]
    assert answer["provenance"][0] == {}


def test_batch_large_numeric_batch_is_evaluated_together(client, tokens, monkeypatch):
    """10,000 numeric rows: one evaluator call for them all, a handful of rows priced alone
    (the check of the key set), every figure right by hand arithmetic."""
    from costmodel.app import batch as use_case
    alone = []
    real = use_case._Run._alone

    def counted(self, i):
        alone.append(i)
        return real(self, i)
    monkeypatch.setattr(use_case._Run, "_alone", counted)
    prices = [0.01 + i * 1e-5 for i in range(MAX_BATCH_ROWS)]
    rows = [{"electricity.price": f"{p!r} USD/kWh"} for p in prices]
    r = batch(client, auth(tokens["viewer"]), GB300, rows, ["cost_per_mtok.energy"])
    assert r.status_code == 200
    energy = r.get_json()["columns"]["cost_per_mtok.energy"]["values"]
    assert len(alone) == 1
    assert all(math.isclose(e, p / (11781 * 3600) * 1e6, rel_tol=1e-12)
               for e, p in zip(energy, prices, strict=True))


def test_batch_limits(app, client, tokens):
    headers = auth(tokens["viewer"])
    over = batch(client, headers, GB300, [{}] * (MAX_BATCH_ROWS + 1))
    assert over.status_code == 422
    assert over.get_json()["errors"][0]["path"] == "overrides"
    # a body above the service's 2 MiB but within the batch's own limit is read
    name = "x" * 300
    rows = [{"name": name, "utilisation": 0.5 + i * 1e-5} for i in range(MAX_BATCH_ROWS)]
    body = {"scenario": GB300, "overrides": rows, "outputs": ["cost_per_mtok_total"]}
    assert len(json.dumps(body)) > app.config["MAX_CONTENT_LENGTH"]
    r = client.post(f"{API}/price/batch", json=body, headers=headers)
    assert r.status_code == 200
    big = b'{"scenario": {}, "overrides": [' + b" " * MAX_BATCH_BODY + b"]}"
    r = client.post(f"{API}/price/batch", data=big, headers={
        **headers, "Content-Type": "application/json"})
    assert r.status_code == 413 and r.mimetype == "application/problem+json"
    assert "8 MiB" in r.get_json()["detail"]
    unknown = batch(client, headers, GB300, [{}], ["cost_per_mtok_totl"])
    assert unknown.status_code == 422
    assert unknown.get_json()["errors"][0]["path"].startswith("outputs")


def test_batch_limit_is_in_the_document(client):
    op = client.get(f"{API}/openapi.json").get_json()["paths"][f"{API}/price/batch"]["post"]
    assert f"{MAX_BATCH_BODY:,} bytes" in op["responses"]["413"]["description"]
    assert "text/csv" in op["responses"]["200"]["content"]


def test_batch_summary_and_fields(client, tokens):
    headers = auth(tokens["viewer"])
    rows = ROWS[:3]
    full = batch(client, headers, GB300, rows).get_json()
    summary = batch(client, headers, GB300, rows, query="?view=summary").get_json()
    assert "sources" not in summary["disclosure"]
    assert {k: v for k, v in summary.items() if k != "disclosure"} == \
        {k: v for k, v in full.items() if k != "disclosure"}
    picked = batch(client, headers, GB300, rows,
                   query="?fields=columns.cost_per_mtok_total.values,errors").get_json()
    assert picked == {"columns": {"cost_per_mtok_total": {
        "values": full["columns"]["cost_per_mtok_total"]["values"]}}, "errors": []}


def test_batch_csv_error_cell_never_starts_like_a_formula():
    # every path the service writes starts with "overrides"; the file is opened in
    # spreadsheets, so the cell is neutralised whatever writes it (as the curve CSV's cells)
    import numpy as np

    from costmodel.app.batch import Batch, RowError
    b = Batch(["cost_per_mtok.total"], ["cost_per_mtok_total"], ["USD/Mtok"],
              {"cost_per_mtok.total": np.array([np.nan])}, np.array([False]),
              [RowError(0, "=HYPERLINK(\"http://x\")", "unknown")], None, [None])
    row = list(csv.reader(io.StringIO(b.to_csv())))[1]
    assert row == ["0", "", "'=HYPERLINK(\"http://x\"): unknown"]
