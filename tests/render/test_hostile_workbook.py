"""Uploaded workbooks cannot exhaust, hang or crash a worker (hardening rows 2, 3, 8 and 15).

Every hostile archive is built here, small on disk: members are written by hand (zlib and
struct) so that a header can lie about a size, a CRC, a flag or a compression method. Each is
a 422 problem through ``POST /api/v1/workbook/reprice`` and one line, exit status 2, through
``costmodel reprice``; memory is checked with tracemalloc where a removed budget would show
(never a stopwatch). A genuine export still reprices to the engine's numbers.
"""
from __future__ import annotations

import ast
import bz2
import io
import json
import random
import re
import struct
import tracemalloc
import zipfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SCENARIOS, auth, price_file, workbook_systems

from costmodel import app
from costmodel.cli import main
from costmodel.model.inputs import InputError
from costmodel.model.steps import MODEL
from costmodel.render.workbook import reader
from costmodel.render.workbook.export import build_workbook

API = "/api/v1"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SAMPLE = SCENARIOS / "sample-tco.toml"
MAIN_NS = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'


# ---- building archives by hand -----------------------------------------------------------------

@dataclass(frozen=True)
class Member:
    """A package member as it goes into the archive: ``stored`` is its compressed stream;
    ``size`` and ``crc`` are what its headers declare."""
    name: str
    stored: bytes
    size: int
    crc: int
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0


def deflated(name: str, *chunks: bytes) -> Member:
    """A member deflated chunk by chunk (a large part never sits in memory whole)."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    out, crc, size = [], 0, 0
    for c in chunks:
        out.append(z.compress(c))
        crc, size = zlib.crc32(c, crc), size + len(c)
    out.append(z.flush())
    return Member(name, b"".join(out), size, crc)


def pack(members: list[Member]) -> bytes:
    """A zip archive of ``members``, headers exactly as the members declare them."""
    body, central = io.BytesIO(), io.BytesIO()
    for m in members:
        name, offset = m.name.encode(), body.tell()
        body.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, m.flags, m.method, 0, 0x21,
                               m.crc, len(m.stored), m.size, len(name), 0) + name + m.stored)
        central.write(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, m.flags, m.method, 0,
                                  0x21, m.crc, len(m.stored), m.size, len(name), 0, 0, 0, 0, 0,
                                  offset) + name)
    cd = central.getvalue()
    return body.getvalue() + cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members),
                                              len(members), len(cd), body.tell(), 0)


def members_of(xlsx: bytes) -> list[Member]:
    with zipfile.ZipFile(io.BytesIO(xlsx)) as z:
        return [deflated(i.filename, z.read(i)) for i in z.infolist()]


def content(members: list[Member], name: str) -> bytes:
    return zlib.decompress(next(m for m in members if m.name == name).stored, -15)


def swap(members: list[Member], *new: Member) -> list[Member]:
    """``members`` with each of ``new`` in place of the one of its name (or added)."""
    names = {m.name for m in new}
    return [m for m in members if m.name not in names] + list(new)


def changed(members: list[Member], name: str, **fields) -> list[Member]:
    return swap(members, replace(next(m for m in members if m.name == name), **fields))


def sheet_part(members: list[Member], title: str) -> str:
    """The part holding the sheet ``title``."""
    wb = content(members, "xl/workbook.xml").decode()
    rid = re.search(rf'<sheet name="{title}"[^>]*r:id="(\w+)"', wb).group(1)
    rels = content(members, "xl/_rels/workbook.xml.rels").decode()
    rel = next(r for r in re.findall(r"<Relationship [^>]*>", rels) if f'Id="{rid}"' in r)
    target = re.search(r'Target="([^"]+)"', rel).group(1)  # absolute, or relative to xl/
    return target[1:] if target.startswith("/") else f"xl/{target}"


def with_rows(members: list[Member], title: str, rows) -> list[Member]:
    """The sheet ``title`` with ``rows`` (an iterable of <row> XML) appended, streamed."""
    path = sheet_part(members, title)
    head, tail = content(members, path).split(b"</sheetData>")
    return swap(members, deflated(path, head, *rows, b"</sheetData>" + tail))


def with_sheets(members: list[Member], count: int) -> list[Member]:
    """``count`` more (tiny) sheets, registered in the workbook, its rels and content types."""
    wb = content(members, "xl/workbook.xml")
    rels = content(members, "xl/_rels/workbook.xml.rels")
    types = content(members, "[Content_Types].xml")
    ws = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"
    new = []
    for i in range(count):
        wb = wb.replace(b"</sheets>", b'<sheet name="X%d" sheetId="%d" r:id="rX%d"/></sheets>'
                        % (i, 100 + i, i))
        rels = rels.replace(b"</Relationships>", b'<Relationship Type="%s" Target="/xl/'
                            b'worksheets/x%d.xml" Id="rX%d"/></Relationships>'
                            % (rel.encode(), i, i))
        types = types.replace(b"</Types>", b'<Override PartName="/xl/worksheets/x%d.xml" '
                              b'ContentType="%s"/></Types>' % (i, ws.encode()))
        new.append(deflated(f"xl/worksheets/x{i}.xml",
                            b"<worksheet %s><sheetData/></worksheet>" % MAIN_NS))
    return swap(members, deflated("xl/workbook.xml", wb),
                deflated("xl/_rels/workbook.xml.rels", rels),
                deflated("[Content_Types].xml", types), *new)


def with_name(members: list[Member], name: str, target: str) -> list[Member]:
    """The defined name ``name`` pointed at ``target``."""
    wb = content(members, "xl/workbook.xml")
    wb = re.sub(rb'(<definedName name="%s">)[^<]*(</definedName>)' % name.encode(),
                rb"\g<1>" + target.encode().replace(b"\\", b"\\\\") + rb"\g<2>", wb)
    return swap(members, deflated("xl/workbook.xml", wb))


def with_meta(members: list[Member], payload: str) -> list[Member]:
    """The Meta sheet's record of the first system replaced by ``payload`` (inline text)."""
    path = sheet_part(members, "Meta")
    xml = content(members, path)
    text = payload.replace("&", "&amp;").replace("<", "&lt;").encode()
    cell = b'<c r="B2" t="inlineStr"><is><t>%s</t></is></c>' % text
    xml = re.sub(rb'<c r="B2"[^>]*>.*?</c>', cell, xml, count=1, flags=re.S)
    return swap(members, deflated(path, xml))


def xml_in(encoding: str) -> bytes:
    return ('<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE r [<!ENTITY e SYSTEM '
            '"file:///etc/passwd">]><r>&e;</r>').encode(encoding)


def noise(n: int, seed: int = 1) -> bytes:
    """``n`` bytes of text that barely compress."""
    return random.Random(seed).randbytes(n // 2).hex().encode()


# ---- the hostile files -------------------------------------------------------------------------

def _lying_size(ms):
    # the workbook part declares 5,000 bytes and really inflates to 8 MiB (8 kB on disk)
    pad = b" " * 2**20
    real = deflated("xl/workbook.xml", content(ms, "xl/workbook.xml"), *[pad] * 8)
    return swap(ms, replace(real, size=5000))


def _bzip2(ms):
    data = content(ms, "xl/workbook.xml")
    return swap(ms, Member("xl/workbook.xml", bz2.compress(data), len(data), zlib.crc32(data),
                           method=zipfile.ZIP_BZIP2))


def _rows(ms):
    return with_rows(ms, "Inputs", (b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (i, i)
                                    for i in range(1000, 101_000)))


def _cells(ms):
    # 21,000 cells in 2,100 rows: under the row limit, over the cell limit
    return with_rows(ms, "Inputs", (b'<row r="%d">%s</row>' % (
        i, b"".join(b'<c r="%c%d"><v>1</v></c>' % (c, i) for c in b"KLMNOPQRST"))
        for i in range(1000, 3100)))


def _shared_formulas(ms):
    # one 6,000-character formula shared by 4,000 cells: 24 million characters to translate
    master = "+".join(["A1"] * 2000).encode()
    first = b'<row r="999"><c r="A999"><f t="shared" ref="A999:D1998" si="0">%s</f></c></row>' \
        % master
    return with_rows(ms, "Calculations", [first, *(
        b'<row r="%d">%s</row>' % (i, b"".join(b'<c r="%c%d"><f t="shared" si="0"/></c>'
                                               % (c, i) for c in b"ABCD"))
        for i in range(1000, 2000))])


def _long_formula(ms):
    return with_rows(ms, "Calculations", [b'<row r="999"><c r="A999"><f>%s</f></c></row>'
                                          % b"+".join([b"1"] * 5000)])


def _names(ms):
    wb = content(ms, "xl/workbook.xml")
    extra = b"".join(b"<definedName name=\"n%d\">'Inputs'!$A$1</definedName>" % i
                     for i in range(20_001))
    return swap(ms, deflated("xl/workbook.xml", wb.replace(b"</definedNames>",
                                                           extra + b"</definedNames>")))


def _members(ms):
    return ms + [Member(f"x/{i}", b"", 0, 0, zipfile.ZIP_STORED) for i in range(1001)]


HOSTILE = {
    # row 2: archives inspected by what they really hold
    "lying-size": (_lying_size, "holds more than the 5,000 bytes it declares"),
    "small-part-huge-ratio": (lambda ms: [*ms, deflated("docProps/thumbnail.jpeg",
                                                        b"\0" * 900 * 2**10)], "zip bomb"),
    "too-many-members": (_members, "more than 1000 package members"),
    # row 8: damaged archives
    "bad-deflate-data": (lambda ms: changed(ms, "xl/workbook.xml", stored=b"\xff" * 64),
                         "damaged archive: bad compressed data"),
    "encrypted-flag": (lambda ms: changed(ms, "xl/workbook.xml", flags=0x1),
                       "an encrypted package is not accepted"),
    "unknown-method": (lambda ms: changed(ms, "xl/workbook.xml", method=99),
                       "compression method 99"),
    "bzip2-method": (_bzip2, "compression method 12"),
    "lying-crc": (lambda ms: changed(ms, "xl/styles.xml", crc=0x12345678), "Bad CRC-32"),
    "truncated-stream": (lambda ms: changed(
        ms, "xl/workbook.xml", stored=next(m for m in ms if m.name == "xl/workbook.xml")
        .stored[:200]), "damaged archive"),
    # row 15: XML a byte search could not read
    "utf16-doctype": (lambda ms: swap(ms, deflated("customXml/item1.xml", xml_in("utf-16"))),
                      "must be encoded in UTF-8"),
    "utf16le-doctype-no-bom": (lambda ms: swap(ms, deflated("xl/workbook.xml",
                                                            xml_in("utf-16-le"))),
                               "must be encoded in UTF-8"),
    "utf16be-doctype": (lambda ms: swap(ms, deflated("docProps/core.xml", xml_in("utf-16-be"))),
                        "must be encoded in UTF-8"),
    "utf32-doctype": (lambda ms: swap(ms, deflated("xl/styles.xml", xml_in("utf-32"))),
                      "must be encoded in UTF-8"),
    "declared-latin1": (lambda ms: swap(ms, deflated("customXml/item1.xml", (
        b'<?xml version="1.0" encoding="ISO-8859-1"?><r/>'))), "must be encoded in UTF-8"),
    # row 3: sheets, rows, cells and the work they cost
    "100-extra-sheets": (lambda ms: with_sheets(ms, 100), "sheets; the limit is 50"),
    "100000-rows": (_rows, "more than 5,000 rows"),
    "21000-cells": (_cells, "more than 20,000 cells"),
    "shared-formulas": (_shared_formulas, "shared formulas amount to more than"),
    "long-formula": (_long_formula, "a formula of 9,999 characters"),
    "20001-defined-names": (_names, "more than 20,000 XML elements"),
    "name-covering-the-sheet": (lambda ms: with_name(ms, "electricity_price",
                                                     "'Inputs'!$A$1:$XFD$1048576"),
                                "covers 17179869184 cells for 1 systems"),
    "name-outside-the-area": (lambda ms: with_name(ms, "electricity_price",
                                                   "'Inputs'!$D$900000"),
                              "points outside A1:IV5000"),
    # a Meta record the reader must not trust
    "meta-provenance-not-text": (lambda ms: with_meta(ms, json.dumps(
        {"scenario": {"name": "x"}, "provenance": {"a": 1}})), "is damaged"),
    "meta-defaults-not-text": (lambda ms: with_meta(ms, json.dumps(
        {"scenario": {"name": "x"}, "defaults_used": [1]})), "is damaged"),
    "meta-deeply-nested": (lambda ms: with_meta(ms, "[" * 30_000 + "]" * 30_000),
                           "nested more than 32 levels deep"),
}


@pytest.fixture(scope="module")
def exported() -> bytes:
    """A genuine export of the sample scenario."""
    systems, _ = workbook_systems([SAMPLE])
    buf = io.BytesIO()
    build_workbook(systems).save(buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def parts(exported) -> list[Member]:
    return members_of(exported)


@pytest.fixture(params=sorted(HOSTILE))
def hostile(request, parts) -> tuple[bytes, str]:
    build, fragment = HOSTILE[request.param]
    data = pack(build(parts))
    assert len(data) < 2 * 2**20  # small on disk, every one
    return data, fragment


def test_hostile_workbook_is_a_422(client, tokens, hostile):
    data, fragment = hostile
    resp = client.post(f"{API}/workbook/reprice", data=data, content_type=XLSX,
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 422, resp.get_data(as_text=True)[:500]
    assert resp.mimetype == "application/problem+json"
    body = resp.get_json()
    assert body["type"].endswith("/invalid-input")
    assert fragment in body["detail"], body["detail"]


def test_hostile_workbook_is_one_line_exit_2_in_the_cli(tmp_path, hostile):
    data, fragment = hostile
    path = tmp_path / "hostile.xlsx"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["reprice", str(path)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # no traceback
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    # the package's refusals are the workbook's; the Meta record's name its cell
    assert len(lines) == 1 and lines[0].startswith(("costmodel: error: workbook",
                                                    "costmodel: error: Meta!B2")), lines
    assert fragment in lines[0]


# ---- budgets that hold with the constants lowered ---------------------------------------------

def test_the_lying_part_is_never_inflated(parts):
    # without the check, the reader would hold all 8 MiB the part really inflates to
    data = pack(_lying_size(parts))
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="declares"):
            reader.check_package(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, peak


def test_a_part_read_over_its_budget(parts, monkeypatch):
    # a part handed to openpyxl (held whole, parsed) is refused before a byte of it is
    # inflated; one that is not read streams through, bounded by the total and the ratio (a
    # task's sheet of 10,000 steps on 12 systems inflates to 28 MiB: it reads back)
    monkeypatch.setattr(reader, "MAX_PART", 2**20)
    inputs = sheet_part(parts, "Inputs")
    padded = content(parts, inputs).replace(b"</worksheet>", b"<!--" + noise(2**20) +
                                            b"--></worksheet>")
    with pytest.raises(InputError, match=rf"{inputs} inflates to 1\.0 MiB; the limit for a "
                                         rf"part read is 1 MiB"):
        reader.check_package(pack(swap(parts, deflated(inputs, padded))))
    read = reader.check_package(pack([*parts, deflated("xl/media/noise.txt",
                                                       noise(2**20 + 2))]))
    assert "xl/media/noise.txt" not in read and inputs in read


def test_all_members_over_the_total_budget(parts, monkeypatch):
    monkeypatch.setattr(reader, "MAX_UNCOMPRESSED", 2**20)
    data = pack(parts + [deflated(f"xl/media/noise{i}.txt", noise(300_000, i))
                         for i in range(4)])
    with pytest.raises(InputError, match="uncompressed content exceeds 1 MiB"):
        reader.check_package(data)


def test_merged_cells_and_far_cells_build_nothing(parts):
    # a merge over a million cells and a cell at the sheet's far corner: read-only, the
    # reader builds only the cells of the area read (openpyxl would build a cell per merged
    # one, and pad every row out to column XFD)
    path = sheet_part(parts, "Inputs")
    xml = content(parts, path).replace(
        b"</sheetData>", b'<row r="4999"><c r="XFD4999"><v>1</v></c></row></sheetData>'
        b'<mergeCells count="1"><mergeCell ref="A100:Z40000"/></mergeCells>', 1)
    data = pack(swap(parts, deflated(path, xml)))
    tracemalloc.start()
    try:
        read = reader.read_workbook(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(read.systems) == 1 and read.changes == []
    assert peak < 32 * 2**20, peak


def test_only_the_parts_the_reader_needs_reach_openpyxl(parts):
    # the other sheets, drawings, charts, theme and properties are inflated and checked once,
    # then dropped: a large Results sheet costs no parsing
    needed = {"[Content_Types].xml", "xl/workbook.xml", "xl/_rels/workbook.xml.rels",
              "xl/styles.xml", *(sheet_part(parts, t) for t in ("Inputs", "Calculations",
                                                                 "Meta")),
              *({"xl/sharedStrings.xml"} & {m.name for m in parts})}  # the text cells' strings
    assert set(reader.check_package(pack(parts))) == needed
    big = with_rows(parts, "Results", (b'<row r="%d">%s</row>' % (
        i, b"".join(b'<c r="%c%d"><v>1</v></c>' % (c, i) for c in b"ABCDEFGHIJ"))
        for i in range(100, 4_900)))  # 48,000 cells: over the limit for a sheet read
    assert len(reader.read_workbook(pack(big)).systems) == 1


# ---- row 15: the upload limit in words ---------------------------------------------------------

@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "chunked"])
def test_the_reprice_413_states_the_workbook_limit(client, tokens, chunked):
    body = b"\0" * (reader.MAX_BYTES + 1)
    if chunked:  # no Content-Length: the limit is counted as the body is read
        resp = client.post(f"{API}/workbook/reprice", input_stream=io.BytesIO(body),
                           content_type=XLSX, headers={**auth(tokens["viewer"]),
                                                       "Transfer-Encoding": "chunked"})
    else:
        resp = client.post(f"{API}/workbook/reprice", data=body, content_type=XLSX,
                           headers=auth(tokens["viewer"]))
    assert resp.status_code == 413, resp.get_data(as_text=True)[:300]
    assert resp.mimetype == "application/problem+json"
    assert "20 MiB" in resp.get_json()["detail"]
    assert "KiB" not in resp.get_json()["detail"]


# ---- a genuine export is untouched -------------------------------------------------------------

def _same_json(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_a_genuine_export_reprices_to_the_same_numbers(client, tokens, exported, tmp_path):
    want = price_file(SAMPLE)
    imported = app.reprice(exported)
    assert imported.changes == [] and imported.warnings == []
    got = imported.results[0]
    for name in MODEL.scalar_steps:
        a, b = got.values[name], want.values[name]
        assert a == b or (a != a and b != b), name  # identical, NaN for NaN
    assert got.provenance == want.provenance and got.defaults_used == want.defaults_used
    assert _same_json(got.to_json(), want.to_json())

    resp = client.post(f"{API}/workbook/reprice", data=exported, content_type=XLSX,
                       headers=auth(tokens["viewer"]))
    assert resp.status_code == 200, resp.get_data(as_text=True)[:500]
    body = resp.get_json()
    assert body["changes"] == [] and body["warnings"] == []
    assert _same_json(body["results"], [json.loads(json.dumps(want.to_json()))])

    path = tmp_path / "genuine.xlsx"
    path.write_bytes(exported)
    result = CliRunner().invoke(main, ["reprice", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert _same_json(json.loads(result.output)["results"],
                      [json.loads(json.dumps(want.to_json()))])


def test_the_reader_reads_and_the_app_prices(exported):
    # the reader answers validated scenarios with their sources; pricing is the app's
    read = reader.read_workbook(exported)
    want = price_file(SAMPLE)
    (system,) = read.systems
    assert system.label == want.name
    got_inputs, want_inputs = system.scenario.to_inputs(), want.scenario.to_inputs()
    assert all(got_inputs[k] == v or (v != v and got_inputs[k] != got_inputs[k])
               for k, v in want_inputs.items())
    assert system.defaults_used == want.defaults_used
    tree = ast.parse(Path(reader.__file__).read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "chain" not in modules and "results" not in modules
