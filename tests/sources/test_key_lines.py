"""Where a key is written in a TOML or JSON document (costmodel.sources.key_lines): the line
of every table, key and array item, by the path an error gives it; never a wrong line (a
document the scan reads otherwise than the parser answers none)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from costmodel.sources.key_lines import (
    MAX_SCAN,
    document_paths,
    file_key_lines,
    json_key_lines,
    key_lines,
    toml_key_lines,
)

ROOT = Path(__file__).resolve().parents[2]

# every construct of TOML a scan could lose its way in; the line of each path is written on
# it (``@@ path @ path``: read back by the test, inside a string where a comment cannot be)
TRICKY = '''\
# a comment with [brackets] and key = "value"
name = "x = 1 [t]"  # @@ name
a.b = 1  # @@ a @ a.b
"quoted key".c = 'lit # not a comment'  # @@ quoted key @ quoted key.c
s = """multi  @@ s
[not_a_table]
x = 1 \\""" still the string
"""
s2 = \'\'\'literal @@ s2
b = 2\'\'\'
s3 = """ends with two quotes"""""  # @@ s3
esc = "a \\" quote = [x]"  # @@ esc
[t]  # @@ t
u = { v = 1, w = { x = [1, {y = 3}] } }  # @@ t.u @ t.u.v @ t.u.w @ t.u.w.x @ t.u.w.x[0]
arr = [  # @@ t.arr
  1,  # one @@ t.arr[0]
  [2, 3],  # @@ t.arr[1] @ t.arr[1][0] @ t.arr[1][1]
  { k = "}" },  # @@ t.arr[2] @ t.arr[2].k
]
  indented = true  # @@ t.indented
dt = 1979-05-27 07:32:00  # @@ t.dt
[[p]]  # @@ p @ p[0]
k = 1  # @@ p[0].k
[p.sub]  # @@ p[0].sub
z = 1  # @@ p[0].sub.z
[[p]]  # @@ p[1]
k = 2  # @@ p[1].k
[[p.q]]  # @@ p[1].q @ p[1].q[0]
m = 1  # @@ p[1].q[0].m
[ spaced . "dotted.part" ]  # @@ spaced @ spaced.dotted.part
e = ""  # @@ spaced.dotted.part.e
[x.y.z]  # @@ x.y @ x.y.z
[x]  # @@ x
w = -0.5e3  # @@ x.w
'''


def expected_lines(text: str) -> dict[str, int]:
    out = {path: n for n, line in enumerate(text.splitlines(), start=1) if "@@ " in line
           for path in line.partition("@@ ")[2].split(" @ ")}
    out["t.u.w.x[1]"] = out["t.u.w.x[1].y"] = out["t.u"]  # (no room on its line)
    return out


def test_every_path_of_a_tricky_document_at_its_line():
    data = tomllib.loads(TRICKY)
    assert data["s"].startswith("multi") and "[not_a_table]" in data["s"]
    assert data["s3"] == 'ends with two quotes""'
    found = toml_key_lines(TRICKY)
    assert found.keys() == document_paths(data)
    assert found == expected_lines(TRICKY)


def test_crlf_line_breaks():
    assert toml_key_lines('a = 1\r\n\r\n[b]\r\nc = "x"\r\n') == {"a": 1, "b": 3, "b.c": 4}


def test_json_members_and_items_at_their_lines():
    text = json.dumps({"name": "x", "utilization": 0.7,
                       "node": {"price": {"value": 1, "unit": "USD"}},
                       "periods": [{"months": [1, 2]}], "quote\"d": "\\u00e9 } ]"}, indent=2)
    found = json_key_lines(text)
    assert found.keys() == document_paths(json.loads(text))
    lines = text.splitlines()
    for path, n in found.items():
        last = path.rpartition(".")[2]
        if not last.endswith("]"):
            assert json.dumps(last) in lines[n - 1], (path, n)
    assert (found["utilization"], found["node.price.unit"], found["periods[0].months[1]"]) \
        == (3, 7, 14)
    assert set(json_key_lines(json.dumps(json.loads(text))).values()) == {1}  # one line


@pytest.mark.parametrize("text,scan", [
    ('a = 1\n[b\n', toml_key_lines),  # not TOML
    ("a = 1\na = 2\n", toml_key_lines),  # not TOML either (a key defined twice)
    ('{"a": 1,}', json_key_lines),  # not JSON
    # JSON keeps a repeated name's last value: the first one's members are no paths of it
    ('{"a": {"b": 2},\n "a": 1}', json_key_lines),
], ids=["bad-toml", "twice-toml", "bad-json", "repeated-json"])
def test_no_line_rather_than_a_wrong_one(text, scan):
    assert scan(text) == {}


def test_a_repeated_json_name_is_at_its_last_line():
    assert json_key_lines('{"a": 1,\n "a": {"b": 2}}') == {"a": 2, "a.b": 2}


def test_every_fixture_file_is_read_as_its_parser_reads_it():
    files = [*ROOT.joinpath("fixtures").rglob("*.toml"),
             *ROOT.joinpath("tests", "data").rglob("*.json")]
    assert len(files) > 20
    for f in files:
        text = f.read_text(encoding="utf-8")
        parse = json.loads if f.suffix == ".json" else tomllib.loads
        found = key_lines(text, f.name)
        assert found and found.keys() == document_paths(parse(text)), f
        assert file_key_lines(f) == found


def test_a_file_that_cannot_be_read_has_no_lines(tmp_path):
    assert file_key_lines(tmp_path / "nosuch.toml") == {}
    (tmp_path / "latin1.toml").write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    assert file_key_lines(tmp_path / "latin1.toml") == {}


def test_a_document_longer_than_a_scenario_is_not_scanned():
    keys = "".join(f"k{i} = {i}\n" for i in range(MAX_SCAN // 10))
    assert len(keys) > MAX_SCAN and toml_key_lines(keys) == {}
    assert toml_key_lines(keys[:keys.index("\n", MAX_SCAN // 2) + 1])["k1"] == 2
