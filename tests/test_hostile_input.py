"""Hostile input, issue 22 sections 2, 3 (first bullet) and 6: errors are bounded (at most
MAX_ERRORS listed, then a count of the rest; "did you mean" for the first MAX_HINTS only),
inputs nested deeper than MAX_NESTING are refused before anything walks them recursively,
and absurd but finite inputs or results (utilisation 1e-300 -> 4e298 USD/Mtok) are refused
with the field path, never answered nor saved. Bounded work is asserted by counting."""
from __future__ import annotations

import difflib
import io
import json
import logging

import pytest
from click.testing import CliRunner
from conftest import PUBLISHED, auth

from costmodel.cli import main
from costmodel.model.errors import MAX_ERRORS, MAX_HINTS, MAX_NESTING, InputError, nesting_error
from costmodel.model.inputs import MIN_THROUGHPUT, MIN_UTILISATION
from costmodel.model.results import MAX_COST_PER_MTOK
from costmodel.render.display import format_quantity
from costmodel.web.saved import shown

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
KEYS = 150_000
NESTED = f"nested more than {MAX_NESTING} levels deep"


@pytest.fixture
def viewer(tokens):
    return auth(tokens["viewer"])


@pytest.fixture
def lookups(monkeypatch):
    """How many "did you mean" lookups (difflib.get_close_matches) ran."""
    calls = []
    real = difflib.get_close_matches

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)
    monkeypatch.setattr(difflib, "get_close_matches", counted)
    return calls


def _unknown(n: int = KEYS) -> dict:
    return {f"k{i}": 1 for i in range(n)}


# ---- section 2: unknown keys ------------------------------------------------------------------

def test_bounded_counts_the_rest_once_even_when_wrapped_again():
    exc = InputError([(f"k{i}", "unknown key") for i in range(KEYS)])
    assert len(exc.errors) == MAX_ERRORS + 1
    assert exc.errors[-1] == ("", f"and {KEYS - MAX_ERRORS:,} more errors")
    # an error made again from another's errors (a prefix, a cell) keeps the count
    again = InputError([(f"scenario.{p}", m) for p, m in exc.errors] + [("x", "also")])
    assert again.errors[-1] == ("", f"and {KEYS - MAX_ERRORS + 1:,} more errors")
    assert len(again.errors) == MAX_ERRORS + 1
    assert InputError([("a", "b")]).errors == [("a", "b")]  # a few errors: as they were


def test_150000_unknown_keys_in_a_section_answer_a_few_kb(client, viewer, lookups):
    body = {"scenario": {**GB300, "accelerator": {"catalog": "gb300", **_unknown()}}}
    raw = json.dumps(body).encode()
    assert len(raw) > 1.5 * 2**20  # within the 2 MiB limit
    resp = client.post(f"{API}/price", headers=viewer, data=raw,
                       content_type="application/json")
    assert resp.status_code == 422, resp.get_data(as_text=True)[:300]
    errors = resp.json["errors"]
    assert len(errors) == MAX_ERRORS + 1
    assert errors[0] == {"path": "scenario.accelerator.k0", "message": "unknown key"}
    assert errors[-1]["message"] == f"and {KEYS - MAX_ERRORS:,} more errors"
    assert resp.json["detail"].endswith(f"and {KEYS - MAX_ERRORS:,} more errors")
    assert len(resp.get_data()) < 4096  # was 16 MB
    assert len(lookups) <= MAX_HINTS  # was one a key


def test_unknown_keys_of_the_body_itself_are_bounded_too(client, viewer, lookups):
    resp = client.post(f"{API}/price", headers=viewer, json={"scenario": GB300, **_unknown()})
    assert resp.status_code == 422
    errors = resp.json["errors"]
    assert len(errors) == MAX_ERRORS + 1
    assert errors[-1] == {"path": "body", "message": f"and {KEYS - MAX_ERRORS:,} more errors"}
    assert len(resp.get_data()) < 4096
    assert len(lookups) <= MAX_HINTS
    # the first few still say what was meant
    resp = client.post(f"{API}/price", headers=viewer, json={"scenari": GB300})
    assert "did you mean scenario?" in resp.json["errors"][0]["message"]


def test_a_scenario_whose_hints_are_asked_keeps_the_first_ones(client, viewer, lookups):
    resp = client.post(f"{API}/price", headers=viewer, json={"scenario": {
        **GB300, "utilization": 0.5, **{f"financing_{i}": 1 for i in range(40)}}})
    assert resp.status_code == 422
    messages = [e["message"] for e in resp.json["errors"]]
    assert len(messages) == MAX_ERRORS + 1 and messages[-1] == "and 21 more errors"
    assert any("did you mean utilisation?" in m for m in messages)
    assert len(lookups) <= MAX_HINTS


def test_batch_rows_with_many_unknown_keys_are_bounded(client, viewer, lookups):
    resp = client.post(f"{API}/price/batch", headers=viewer, json={
        "scenario": GB300, "overrides": [_unknown(90), {"utilisation": 0.5}]})
    assert resp.status_code == 200, resp.get_data(as_text=True)[:300]
    row0 = [e for e in resp.json["errors"] if e["row"] == 0]  # (a row holds at most 100)
    assert len(row0) == MAX_ERRORS + 1
    assert row0[-1]["message"] == f"and {90 - MAX_ERRORS:,} more errors"
    assert len(lookups) <= MAX_HINTS
    # no row priced: one 422, bounded
    resp = client.post(f"{API}/price/batch", headers=viewer, json={
        "scenario": GB300, "overrides": [_unknown(30), _unknown(30)]})
    assert resp.status_code == 422
    assert len(resp.json["errors"]) == MAX_ERRORS + 1
    assert resp.json["errors"][-1]["message"] == f"and {60 - MAX_ERRORS:,} more errors"


def test_catalog_entries_with_many_unknown_keys_are_bounded(client, tokens):
    resp = client.post(f"{API}/systems", headers=auth(tokens["editor"]), json={
        "key": "hostile-wide", "data": {"node": {"accelerators": 8, **_unknown(10_000)}}})
    assert resp.status_code == 422
    assert len(resp.json["errors"]) == MAX_ERRORS + 1
    assert len(resp.get_data()) < 4096


def test_cli_is_one_line_with_the_count(tmp_path):
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({**GB300, "financing": _unknown(KEYS)}))
    r = CliRunner().invoke(main, ["price", str(path)])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1
    assert r.stderr.rstrip().endswith(f"and {KEYS - MAX_ERRORS:,} more errors")
    assert len(r.stderr) < 2000


# ---- section 3: deep nesting --------------------------------------------------------------

def _deep(n: int) -> dict:
    node: dict = {"a": 1}
    for _ in range(n - 1):
        node = {"a": node}
    return node


def _post_raw(client, headers, path: str, text: str):
    return client.post(path, headers=headers, data=text.encode(),
                       content_type="application/json")


def _nested_json(n: int) -> str:
    """A JSON object ``n`` levels deep, written out (json.dumps itself would recurse)."""
    return '{"a":' * (n - 1) + '{"a":1' + "}" * n


@pytest.mark.parametrize("depth", [500, 1000])
@pytest.mark.parametrize("route,body", [
    ("/price", '{"scenario": {"accelerator": "gb300", "workload": DEEP}}'),
    ("/price/batch", '{"scenario": {"accelerator": "gb300"}, "overrides": [{"workload": DEEP}]}'),
    ("/compare", '{"scenarios": [{"scenario": {"accelerator": "gb300"}}, '
                 '{"scenario": {"accelerator": "gb300", "workload": DEEP}}]}'),
    ("/sensitivity/tornado", '{"scenario": {"scenario": {"accelerator": "gb300", '
                             '"workload": DEEP}}}'),
])
def test_deep_nesting_is_refused_naming_the_limit(client, viewer, caplog, route, body, depth):
    with caplog.at_level(logging.ERROR):
        resp = _post_raw(client, viewer, f"{API}{route}", body.replace("DEEP",
                                                                        _nested_json(depth)))
    assert resp.status_code == 422, resp.get_data(as_text=True)[:300]
    assert NESTED in resp.json["detail"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no trace logged


@pytest.mark.parametrize("depth", [500, 1000, 2000])
def test_deep_nesting_is_not_saved(client, tokens, depth):
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    before = client.get(f"{API}/scenarios?limit=1", headers=viewer).json["total"]
    resp = _post_raw(client, editor, f"{API}/scenarios", '{"name": "deep", "scenario": '
                     '{"accelerator": "gb300", "workload": DEEP}}'.replace(
                         "DEEP", _nested_json(depth)))
    assert resp.status_code == 422 and NESTED in resp.json["detail"]
    assert client.get(f"{API}/scenarios?limit=1", headers=viewer).json["total"] == before


def test_real_scenarios_stay_well_within_the_limit():
    import tomllib

    from conftest import ROOT
    deepest = max(len(_depths(tomllib.loads(p.read_text()))) for p in
                  (ROOT / "fixtures").rglob("*.toml"))
    assert deepest <= 8 < MAX_NESTING
    assert nesting_error(_deep(MAX_NESTING)) is None
    assert nesting_error(_deep(MAX_NESTING + 1)) == ".".join(["a"] * MAX_NESTING)
    assert nesting_error(_deep(100_000)) is not None  # iterative: no RecursionError


def _depths(data) -> list:
    out, stack = [], [(data, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict | list):
            out = max(out, [0] * d, key=len)
            stack += [(v, d + 1) for v in (node.values() if isinstance(node, dict) else node)]
    return out


@pytest.mark.parametrize("name,text", [
    ("deep.json", '{"quote": [' + _nested_json(1000) + "]}"),
    ("deep.toml", "[[quote]]\nname = " + "{a = " * 1000 + "1" + "}" * 1000 + "\n"),
    ("deep40.toml", "[[quote]]\nname = " + "{a = " * 40 + "1" + "}" * 40 + "\n"),
])
def test_a_deep_quote_file_is_refused_in_words(client, tokens, name, text, caplog):
    import re
    r = client.get("/signin")
    token = re.search(r'name="csrf_token" value="([^"]+)"', r.text).group(1)
    client.post("/signin", data={"api_key": tokens["viewer"], "csrf_token": token,
                                 "next": "/quotes"})
    token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/quotes").text).group(1)
    with caplog.at_level(logging.ERROR):
        resp = client.post("/quotes", data={
            "csrf_token": token, "scenario": "fixture:published/deepseek-r1_gb300_matched",
            "quote_file": (io.BytesIO(text.encode()), name)}, content_type="multipart/form-data")
    assert resp.status_code == 422, resp.status_code
    assert NESTED in resp.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("suffix,text", [
    (".json", '{"accelerator": "gb300", "workload": ' + _nested_json(1000) + "}"),
    (".toml", 'accelerator = "gb300"\nworkload = ' + "{a = " * 1000 + "1" + "}" * 1000),
    (".toml", 'accelerator = "gb300"\nworkload = ' + "{a = " * 100 + "1" + "}" * 100),
])
def test_cli_scenario_and_quote_files_too(tmp_path, suffix, text):
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    r = CliRunner().invoke(main, ["price", str(path)])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and NESTED in r.stderr, r.output
    quotes = tmp_path / f"quotes{suffix}"
    quotes.write_text(text.replace("workload", "quote") if suffix == ".json" else
                      text.replace("workload = ", "[[quote]]\nname = "))
    r = CliRunner().invoke(main, ["quotes", "compare", str(quotes), "--scenario",
                                  str(PUBLISHED / "deepseek-r1_gb300_matched.toml")])
    assert r.exit_code == 2 and NESTED in r.stderr, r.output
    r = CliRunner().invoke(main, ["price", str(PUBLISHED / "deepseek-r1_gb300_peak.toml"),
                                  "--set", "workload.x=" + "{a = " * 60 + "1" + "}" * 60])
    assert r.exit_code == 2 and NESTED in r.stderr, r.output


# ---- section 6: absurd but finite ---------------------------------------------------------

@pytest.mark.parametrize("scenario,path,words", [
    ({**GB300, "utilisation": 1e-300}, "scenario.utilisation", f"{MIN_UTILISATION:g}"),
    ({"accelerator": "gb300", "operating_point": {"throughput": "1e-300 token/s"}},
     "scenario.operating_point.throughput", f"{MIN_THROUGHPUT:g}"),
    ({**GB300, "financing": {"life": "60 year"}}, "scenario.financing.life", "at most 50"),
    # each input within its bounds, together beyond any plausible cost
    ({"accelerator": "gb300", "operating_point": {"throughput": "1e-6 token/s"},
      "utilisation": 1e-6}, "scenario.operating_point.throughput", "above the 1e+12 USD/Mtok"),
])
def test_absurd_inputs_are_refused_and_never_saved(client, tokens, scenario, path, words):
    viewer, editor = auth(tokens["viewer"]), auth(tokens["editor"])
    resp = client.post(f"{API}/price", headers=viewer, json={"scenario": scenario})
    assert resp.status_code == 422, resp.get_data(as_text=True)[:300]
    assert resp.json["errors"][0]["path"] == path
    assert words in resp.json["detail"]
    before = client.get(f"{API}/scenarios?limit=1", headers=viewer).json["total"]
    resp = client.post(f"{API}/scenarios", headers=editor, json={"name": "x",
                                                                 "scenario": scenario})
    assert resp.status_code == 422
    assert client.get(f"{API}/scenarios?limit=1", headers=viewer).json["total"] == before


def test_a_batch_refuses_the_row_not_the_batch(client, viewer):
    resp = client.post(f"{API}/price/batch", headers=viewer, json={
        "scenario": {"accelerator": "gb300", "operating_point": {"throughput": "1000 token/s"}},
        "overrides": [{"utilisation": 0.5}, {"utilisation": 1e-300},
                      {"utilisation": 1e-6, "operating_point.throughput": "1e-6 token/s"}]})
    assert resp.status_code == 200, resp.get_data(as_text=True)[:300]
    assert resp.json["priced"] == 1
    by_row = {e["row"]: e for e in resp.json["errors"]}
    assert by_row[1]["path"] == "overrides[1].utilisation"
    assert by_row[2]["path"].startswith("overrides[2].")
    assert "1e+12 USD/Mtok" in by_row[2]["detail"]
    values = resp.json["columns"]["cost_per_mtok.total"]["values"] if \
        "cost_per_mtok.total" in resp.json["columns"] else \
        next(iter(resp.json["columns"].values()))["values"]
    assert values[1] is None and values[2] is None and 0 < values[0] < MAX_COST_PER_MTOK


def test_cli_refuses_them_in_one_line(tmp_path):
    r = CliRunner().invoke(main, ["price", str(PUBLISHED / "deepseek-r1_gb300_peak.toml"),
                                  "--set", "utilisation=1e-300"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "utilisation: must be at least 1e-06, got 1e-300" in r.stderr


def test_huge_figures_and_long_numbers_are_shown_short():
    assert format_quantity(3.96e298, "USD/Mtok", "cost_per_mtok_total") == "3.96e+298 USD/Mtok"
    assert format_quantity(1234.5, "USD/Mtok", "cost_per_mtok_total") == "1,234.50 USD/Mtok"
    assert shown("0." + "0" * 300 + "1 token/s") == "1e-301 token/s"
    assert shown({"value": 1e-300, "unit": "token/s"}) == "1e-300 token/s"
    assert shown(10**405) == "1e+405"
    assert shown("0.5") == "0.5" and shown(123456789) == "123456789" and shown(0.1) == "0.1"


def test_a_revision_page_prints_no_long_number(app, client, tokens):
    """A revision saved before the bounds (its figures 4e298 USD/Mtok, its input written
    with 400 digits) is shown short."""
    import re

    from conftest import price_data

    from costmodel.store import repo
    result = price_data({**GB300, "utilisation": 0.5}).to_json()
    result["cost_per_mtok"]["total"]["value"] = 3.96e298
    data = {**GB300, "utilisation": "0." + "0" * 400 + "1"}
    with app.extensions["costmodel"].sessions() as session:
        scenario, revision = _store(repo, session, data, result)
    r = client.get("/signin")
    token = re.search(r'name="csrf_token" value="([^"]+)"', r.text).group(1)
    client.post("/signin", data={"api_key": tokens["viewer"], "csrf_token": token, "next": "/"})
    page = client.get(f"/saved/{scenario}/revisions/{revision}")
    assert page.status_code == 200, page.status_code
    text = re.sub(r"<[^>]+>", " ", page.text)
    longest = max(len(w) for w in text.split())
    assert longest < 80, longest
    assert "3.96e+298" in text


def _store(repo, session, data, result):
    """A scenario and its first revision stored as they were before the bounds."""
    made = repo.scenario_create(session, "old absurd", data, result, engine_version="0",
                                created_by="test")
    session.commit()
    return made.scenario_id, made.number


def test_the_price_page_marks_the_field(web):
    import html
    import re
    from urllib.parse import urlencode
    resp = web.get("/?" + urlencode({"utilisation": "1e-298"}))  # a percentage: 1e-300
    text = html.unescape(re.sub(r"<[^>]+>", " ", resp.get_data(as_text=True)))
    assert resp.status_code in (200, 422)
    # said in percent, the unit typed (the engine's bound is 1e-06 of the hours)
    assert "must be at least 0.0001 %, got 1e-298 %" in text and "e+29" not in text


def test_a_workbook_repriced_names_the_cell(tmp_path):
    from conftest import SCENARIOS, workbook_systems
    from openpyxl import load_workbook

    from costmodel import app
    from costmodel.render.workbook.export import build_workbook
    from costmodel.render.workbook.names import named_cells
    systems, _ = workbook_systems([SCENARIOS / "sample-tco.toml"])
    path = tmp_path / "absurd.xlsx"
    build_workbook(systems).save(path)
    wb = load_workbook(path)
    cell = named_cells(wb, "utilisation")[0]
    cell.value = 1e-300
    wb.save(path)
    with pytest.raises(InputError) as info:
        app.reprice(path)
    # said as the cell shows it: a percentage
    assert str(info.value) == (f"Inputs!{cell.coordinate} (utilisation): must be at least "
                               f"0.0001 %, got 1e-298 %")
