"""A decision workbook's Meta record is input (issue 38, item 4): crafted, it is refused at its
cell and field path (``Meta!B5 (decision record, quotes[1])``) as a 422 problem+json through
``POST /api/v1/workbook/reprice`` and as one line, exit status 2, through ``costmodel
reprice``; never a 500 or a traceback.

Each variant starts from the negotiation example's decision workbook (two own builds, an API
offer of two tiers as quote 1, a capacity offer as quote 0; its record in Meta!B5) and
rewrites the record's JSON, and sometimes a figure of it, so that the Decision sheet reads as
edited. Before the record was validated each of these raised inside the reader (IndexError,
KeyError, TypeError, RecursionError, ValueError: a 500).
"""
from __future__ import annotations

import copy
import io
import json
import re
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, auth

from costmodel import app
from costmodel.cli import CONTEXT, main, specs_for
from costmodel.decisions.demand import validate_demand
from costmodel.model.errors import InputError
from costmodel.sources.quote_file import read_quotes

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
RECORD_CELL = "B5"  # two own builds: their rows 2 and 3, a blank one, the record


@pytest.fixture(scope="module")
def exported() -> bytes:
    quotes = ROOT / "fixtures" / "quotes" / "negotiation.toml"
    demand = validate_demand(tomllib.loads(quotes.read_text())["demand"])
    req = app.DecisionRequest(read_quotes(str(quotes)), specs_for(
        tuple(str(ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml")
              for hw in ("b200", "h100")), ()), demand, None)
    return app.decision_workbook(CONTEXT, req).content


def _parts(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def _pack(parts: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, body in parts.items():
            z.writestr(name, body)
    return buf.getvalue()


def _sheet_part(parts: dict[str, bytes], title: str) -> str:
    rid = re.search(rb'<sheet name="' + title.encode() + rb'"[^>]*r:id="(rId\d+)"',
                    parts["xl/workbook.xml"])[1]
    target = re.search(rb'Id="' + rid + rb'"[^>]*Target="([^"]+)"|Target="([^"]+)"[^>]*Id="'
                       + rid + b'"', parts["xl/_rels/workbook.xml.rels"])
    return "xl/" + (target[1] or target[2]).decode().removeprefix("/xl/")


def _strings(parts: dict[str, bytes]) -> list[str]:
    from defusedxml.ElementTree import fromstring
    ns = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    return ["".join(t.text or "" for t in si.iter(f"{ns}t"))
            for si in fromstring(parts["xl/sharedStrings.xml"]).iter(f"{ns}si")]


def _cell(xml: bytes, ref: str) -> re.Match:
    return re.search(rb'<c r="' + ref.encode() + rb'"[^>]*?(?:/>|>.*?</c>)', xml, re.S)


def record_of(data: bytes) -> dict:
    parts = _parts(data)
    xml = parts[_sheet_part(parts, "Meta")]
    cell = _cell(xml, RECORD_CELL)[0]
    if b't="s"' in cell:
        return json.loads(_strings(parts)[int(re.search(rb"<v>(\d+)</v>", cell)[1])])
    return json.loads(re.search(rb"<t[^>]*>(.*?)</t>", cell, re.S)[1].decode())


def with_record(data: bytes, text: str) -> bytes:
    """The workbook with its record (Meta!B5) replaced by ``text``, as inline text."""
    parts = _parts(data)
    path = _sheet_part(parts, "Meta")
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").encode()
    cell = b'<c r="B5" t="inlineStr"><is><t>' + escaped + b"</t></is></c>"
    xml = parts[path]
    found = _cell(xml, RECORD_CELL)
    parts[path] = xml[:found.start()] + cell + xml[found.end():]
    return _pack(parts)


def edited(change: Callable[[dict], object]) -> Callable[[bytes], bytes]:
    """A variant: the record as exported, changed in place by ``change``."""
    def build(data: bytes) -> bytes:
        record = copy.deepcopy(record_of(data))
        change(record)
        return with_record(data, json.dumps(record))
    return build


def text(payload: str) -> Callable[[bytes], bytes]:
    return lambda data: with_record(data, payload)


def nested(depth: int) -> Callable[[bytes], bytes]:
    """A variant: the record with a note nested ``depth`` lists deep in quote 0."""
    def build(data: bytes) -> bytes:
        note = "[" * depth + "]" * depth
        return with_record(data, json.dumps(record_of(data)).replace(
            '"source": "illustrative assumption"',
            f'"source": "illustrative assumption", "note": {note}', 1))
    return build


def _pop(d: dict, key: str) -> dict:
    d.pop(key)
    return d


def _one_tier(r: dict) -> None:
    """Quote 1 with its first tier only, and the figure exported for its second tier's
    output price changed: the Decision sheet's 1.8 now reads as an edit of a tier the quote
    no longer has."""
    r["quotes"][1]["tiers"] = r["quotes"][1]["tiers"][:1]
    del r["quotes"][1]["tiers"][0]["up_to"]  # the last tier is open
    r["inputs"]["option_tier2_output"][2] = 1.7


# (variant, where the error is, what it says); the eleven of the red team's report first
CRAFTED = {
    # 1: a term list shorter than the offers
    "term-list-short": (edited(lambda r: r["inputs"]["option_term"].pop()),
                        "Meta!B5 (decision record, inputs.option_term)",
                        "a list of one finite number or null for each of the 4 options"),
    # 2: an offer that is not an object
    "offer-not-an-object": (edited(lambda r: r["quotes"].__setitem__(1, 5)),
                            "Meta!B5 (decision record, quotes[1])",
                            "a quote must be a table/object"),
    "offer-a-list": (edited(lambda r: r["quotes"].__setitem__(0, [1, 2])),
                     "Meta!B5 (decision record, quotes[0])", "a quote must be a table/object"),
    # 3: a quote index out of range, after a price edit
    "quote-index-out-of-range": (
        edited(lambda r: (r["options"][2].__setitem__("quote", 7),
                          r["inputs"]["option_tier1_output"].__setitem__(2, 9.9))),
        "Meta!B5 (decision record, options[2].quote)",
        "must be the index of one of the 2 quotes (0 to 1), got 7"),
    "quote-index-negative": (edited(lambda r: r["options"][3].__setitem__("quote", -1)),
                             "Meta!B5 (decision record, options[3].quote)",
                             "must be at least 0"),
    # 4, 5: a missing or textual volume (the figure, and the demand's own)
    "volume-missing": (edited(lambda r: r["inputs"].pop("decision_volume")),
                       "Meta!B5 (decision record, inputs.decision_volume)", "required"),
    "volume-textual": (edited(lambda r: r["inputs"].__setitem__("decision_volume", "lots")),
                       "Meta!B5 (decision record, inputs.decision_volume)",
                       "must be a finite number, got 'lots'"),
    "demand-volume-missing": (edited(lambda r: _pop(r["demand"], "volume")),
                              "Meta!B5 (decision record, demand)",
                              "give volume, requests_per_day or tasks_per_day"),
    "demand-volume-textual": (edited(lambda r: r["demand"].__setitem__("volume", "lots")),
                              "Meta!B5 (decision record, demand.volume)",
                              "cannot read 'lots' as a quantity"),
    # 6: a field nested 900 deep
    "nested-900": (nested(900), "Meta!B5",
                   "nested more than 32 levels deep"),
    "nested-30000": (text("[" * 30_000 + "]" * 30_000), "Meta!B5",
                     "nested more than 32 levels deep"),
    # and more: what the record holds, each of its kinds
    "record-a-list": (text("[]"), "Meta!B5 (decision record)", "must be a table/object"),
    "record-not-json": (text("{\"quotes\": ["), "Meta!B5", "is damaged"),
    "nan": (text(json.dumps({"x": 1}).replace("1", "NaN")), "Meta!B5",
            "NaN is not a JSON number"),
    "number-out-of-range": (text('{"quotes": [1e999]}'), "Meta!B5", "is damaged"),
    "integer-of-5000-digits": (text('{"quotes": [' + "9" * 5000 + "]}"), "Meta!B5",
                               "is damaged"),
    "improvement-textual": (edited(lambda r: r.__setitem__("improvement", "0.3")),
                            "Meta!B5 (decision record, improvement)",
                            "from 0 to below 1 (or null), got '0.3'"),
    "improvement-out-of-range": (edited(lambda r: r.__setitem__("improvement", 1.5)),
                                 "Meta!B5 (decision record, improvement)",
                                 "from 0 to below 1 (or null), got 1.5"),
    "improvement-boolean": (edited(lambda r: r.__setitem__("improvement", True)),
                            "Meta!B5 (decision record, improvement)",
                            "from 0 to below 1 (or null), got True"),
    "option-not-an-object": (edited(lambda r: r["options"].__setitem__(0, "own")),
                             "Meta!B5 (decision record, options[0])",
                             "must be a table, got 'own'"),
    "option-kind-unknown": (edited(lambda r: r["options"][0].__setitem__("kind", "free")),
                            "Meta!B5 (decision record, options[0].kind)",
                            "input should be 'own', 'per_mtok' or 'capacity', got 'free'"),
    "own-build-naming-a-quote": (edited(lambda r: r["options"][0].__setitem__("quote", 0)),
                                 "Meta!B5 (decision record, options[0].quote)",
                                 "an own build prices no quote"),
    "offer-naming-no-quote": (edited(lambda r: r["options"][2].__setitem__("quote", None)),
                              "Meta!B5 (decision record, options[2].quote)",
                              "must be the index of one of the 2 quotes"),
    "offer-of-another-kind": (edited(lambda r: r["options"][2].__setitem__("quote", 0)),
                              "Meta!B5 (decision record, options[2].quote)",
                              "a per_mtok option prices a quote of form per_mtok, got "
                              "per_accelerator_hour"),
    "quote-index-boolean": (edited(lambda r: r["options"][3].__setitem__("quote", True)),
                            "Meta!B5 (decision record, options[3].quote)",
                            "must be a whole number, got True"),
    "thirteen-options": (edited(lambda r: r["options"].extend([r["options"][0]] * 9)),
                         "Meta!B5 (decision record, options)", "at most 12 items"),
    "figure-of-text": (edited(lambda r: r["inputs"]["option_unit"].__setitem__(3, "1533")),
                       "Meta!B5 (decision record, inputs.option_unit)",
                       "a list of one finite number or null"),
    "figure-unknown": (edited(lambda r: r["inputs"].__setitem__("option_bribe", [0] * 4)),
                       "Meta!B5 (decision record, inputs.option_bribe)", "unknown figure"),
    "figure-boolean": (edited(lambda r: r["inputs"].__setitem__("isl", True)),
                       "Meta!B5 (decision record, inputs.isl)", "must be a finite number"),
    "inputs-not-an-object": (edited(lambda r: r.__setitem__("inputs", [])),
                             "Meta!B5 (decision record, inputs)", "must be a table, got []"),
    "quote-invalid": (edited(lambda r: r["quotes"][0].__setitem__("term", "-5 month")),
                      "Meta!B5 (decision record, quotes[0].term)",
                      "must not be negative, got -5 month"),
    "extra-key": (edited(lambda r: r.__setitem__("exec", "rm -rf /")),
                  "Meta!B5 (decision record, exec)", "unknown key"),
    # an edit of a tier the quote does not have (the sheet's cell, not the record)
    "edit-of-a-missing-tier": (edited(_one_tier), "Decision!", "this offer has 1 price tier"),
}


@pytest.fixture(params=sorted(CRAFTED))
def crafted(request, exported) -> tuple[bytes, str, str]:
    build, where, says = CRAFTED[request.param]
    return build(exported), where, says


def test_the_record_is_read_as_exported(exported):
    # the variants' starting point: unedited, it reprices to the exported decision
    record = record_of(exported)
    assert [o["kind"] for o in record["options"]] == ["own", "own", "per_mtok", "capacity"]
    assert [o["quote"] for o in record["options"]] == [None, None, 1, 0]
    again = app.reprice(with_record(exported, json.dumps(record)), ctx=CONTEXT)
    assert again.changes == []
    assert [p.option.name for p in again.decision.decision.ranked] == \
        [o["name"] for o in record["options"]]


def test_a_crafted_record_is_an_input_error_at_its_cell(crafted):
    data, where, says = crafted
    with pytest.raises(InputError) as caught:
        app.reprice(data, ctx=CONTEXT)
    path, message = caught.value.errors[0]
    assert path.startswith(where), caught.value.errors
    assert says in message, caught.value.errors


def test_a_crafted_record_is_a_422_through_the_api(client, tokens, crafted):
    data, where, says = crafted
    resp = client.post(f"{API}/workbook/reprice", data=data, content_type=XLSX,
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 422, resp.get_data(as_text=True)[:500]
    assert resp.mimetype == "application/problem+json"
    body = resp.get_json()
    assert body["type"].endswith("/invalid-input")
    assert body["errors"][0]["path"].startswith(where), body["errors"]
    assert says in body["errors"][0]["message"], body["errors"]


def test_a_crafted_record_is_one_line_through_the_cli(tmp_path, crafted):
    data, where, says = crafted
    path = tmp_path / "crafted.xlsx"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["reprice", str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"costmodel: error: {where}"), lines
    assert says in lines[0]


def test_a_quote_without_an_operating_point_takes_an_edited_throughput(exported):
    # the capacity quote's operating point null in the record (a valid quote) and its
    # throughput figure changed: the sheet's figure is an edit, put into a new operating point
    record = record_of(exported)
    record["quotes"][0]["operating_point"] = None
    record["inputs"]["option_throughput"][3] = 1000.0
    again = app.reprice(with_record(exported, json.dumps(record)), ctx=CONTEXT)
    (change,) = again.changes
    assert (change.system, change.name, change.before) == \
        ("h100-capacity", "option_throughput", 1000.0)
    assert change.after == pytest.approx(1797.6904965665353, rel=1e-12)


def test_a_system_record_names_its_cell(exported):
    parts = _parts(exported)
    path = _sheet_part(parts, "Meta")
    xml = parts[path]
    found = _cell(xml, "B2")
    cell = b'<c r="B2" t="inlineStr"><is><t>' + json.dumps(
        {"scenario": {"name": "x", "utilisation": "lots"}}).encode() + b"</t></is></c>"
    parts[path] = xml[:found.start()] + cell + xml[found.end():]
    with pytest.raises(InputError) as caught:
        app.reprice(_pack(parts), ctx=CONTEXT)
    assert any(p == "Meta!B2 (scenario.utilisation)" for p, _ in caught.value.errors), \
        caught.value.errors


def test_the_record_of_a_path_is_read_from_the_file(tmp_path, exported):
    # the CLI reads the file; the same refusal
    path = Path(tmp_path / "n.xlsx")
    path.write_bytes(CRAFTED["offer-not-an-object"][0](exported))
    with pytest.raises(InputError, match=r"Meta!B5 \(decision record, quotes\[1\]\)"):
        app.reprice(path, ctx=CONTEXT)
