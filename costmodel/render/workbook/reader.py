"""Reading an edited workbook back: inputs by their defined names, validated like any input.

An uploaded file is untrusted, and nothing it says about itself is believed before it is
counted. Every member of the package is inflated once, in chunks, and refused the moment it
yields more bytes than it declares, so the limits checked on the declared sizes (per member,
in total, and the compression ratio) bind what is really inflated; and a member yielding
fewer is refused at its end. A damaged archive (bad deflate data, a wrong CRC, truncation, an
encrypted member, a compression method other than stored or deflated) is refused as input.
Macros (``vbaProject.bin``, macro sheets), ActiveX, external links, XML document type
declarations (external entities, entity expansion) and XML in any encoding but UTF-8 (by its
byte-order mark, a NUL byte, its first character or its declaration: a byte search could not
see a DTD in UTF-16 or UTF-32) are refused. Only the parts the reader needs are handed to
openpyxl ([Content_Types].xml, the workbook part and its relationships, the styles, the
shared strings and the Inputs, Calculations, Meta and (when there is one) Tariff sheets),
as the bytes already inflated
and checked, in a fresh package (every other worksheet an empty stand-in, so the names of a
sheet's own find their sheet): nothing is inflated twice and no other sheet is parsed.
openpyxl reads them in read-only mode (no merged-cell ranges expanded, no cells built but
those streamed through the area read). Then the structure the export wrote must still be
there: the sheets, the Meta record, a defined name for every input, each input's unit. Only
then are the values read and validated exactly like a scenario file or API body. Pricing is
the application layer's (:func:`costmodel.app.reprice`): this module answers the validated
scenarios with where each input came from, what changed from the export and what it noticed.

Cells are read as the editors that save them mean them (LibreOffice, openpyxl, Excel): an
absent optional input is empty, ``#N/A``, ``=#N/A`` (LibreOffice) or ``=NA()``; a number
within 1e-14 of the exported one is the exported one (LibreOffice saves 15 significant
digits); a calculation differing only in case or spaces is not an edit. A number stored as
text is refused: whether a formula computes with it depends on the spreadsheet and its locale.
Every refusal about an input names its sheet, cell, name and, with several systems, system
(``Inputs!E38 (utilisation, system 2): must be at most 1, got 1.5``), also for the errors of
the scenario's validation, mapped back from the field to the cell it was read from.

Limits (an export is ~25 kB on disk and ~100 kB inflated, with a few hundred cells per sheet
and formulas of at most a few hundred characters): the file at most :data:`MAX_BYTES`
(20 MiB) with at most :data:`MAX_MEMBERS` (1,000) members; each part handed to openpyxl
inflated at most :data:`MAX_PART` (16 MiB), all members together at most
:data:`MAX_UNCOMPRESSED` (64 MiB), and a member above :data:`RATIO_FLOOR` (64 KiB) at most
:data:`MAX_RATIO` (100) times its compressed size (a member not read is inflated in a stream
and dropped: the total and the ratio bound it, so the largest workbook costmodel writes, a
task of 10,000 steps on 12 systems whose Task sheet inflates to ~28 MiB, reads back);
at most :data:`MAX_SHEETS` (50) sheets; each sheet read (Inputs,
Calculations, Meta) at most :data:`MAX_ROWS` (5,000) rows, :data:`MAX_CELLS` (20,000) cells
and :data:`MAX_SHEET_ELEMENTS` (100,000) XML elements, any other part handed to openpyxl at
most :data:`MAX_ELEMENTS` (20,000); a formula at most :data:`MAX_FORMULA` (8,192) characters
and the shared formulas of a sheet (each cell re-translated from its group's first formula)
at most :data:`MAX_FORMULA_WORK` (1,000,000) characters in all; only the area A1:IV5000
(:data:`MAX_COLUMNS`, 256 columns, by :data:`MAX_ROWS` rows) is read and the defined names
must lie in it; a Meta record (a system's, a decision's request) at most
:data:`MAX_META_CHARS` (1 MiB) of JSON nested at most
:data:`~costmodel.model.errors.MAX_NESTING` (32) levels, both counted before it is parsed,
and parsed strictly (no NaN, Infinity or number out of range); a refusal of a record names
its cell (``Meta!B2 (scenario.utilisation)``). A bound broken by a cell is said as the cell
shows it (:func:`check_bounds`: "must be at most 100 %, got 7,000 %" for 70 in a percent
cell).
"""
from __future__ import annotations

import codecs
import copy
import io
import json
import math
import posixpath
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import ParseError

import numpy as np
from defusedxml.ElementTree import fromstring, iterparse
from openpyxl import load_workbook
from openpyxl.utils.cell import get_column_letter, range_boundaries
from openpyxl.workbook.defined_name import DefinedName

from ...model.errors import MAX_NESTING, nested_message
from ...model.inputs import (
    InputError,
    QuantityField,
    Scenario,
    quantity_field,
    replace_citations,
    validate_scenario,
)
from ...model.profile import HOURS_A_DAY
from ...model.steps import MODEL
from ..display import display_unit
from .decision_scan import DECISION_SHEET
from .export import COUNT_INPUTS, META_FORMAT
from .layout import DECISION_RECORD, record_row
from .tariff_sheet import TARIFF_SHEET, ProfileLayout

__all__ = ["read_workbook", "check_package", "WorkbookRead", "ReadSystem", "InputChange",
           "MAX_BYTES", "MAX_MEMBERS", "MAX_PART", "MAX_UNCOMPRESSED", "MAX_RATIO",
           "RATIO_FLOOR", "MAX_SHEETS", "MAX_SHEET_ELEMENTS", "MAX_ELEMENTS", "MAX_ROWS",
           "MAX_CELLS", "MAX_COLUMNS", "MAX_FORMULA", "MAX_FORMULA_WORK", "MAX_META_CHARS"]

MAX_BYTES = 20 * 2**20  # the file
MAX_MEMBERS = 1000  # members of the package
MAX_PART = 16 * 2**20  # one member, inflated
MAX_UNCOMPRESSED = 64 * 2**20  # all members, inflated
MAX_RATIO = 100  # inflated / compressed, for every member above RATIO_FLOOR
RATIO_FLOOR = 64 * 2**10
MAX_SHEETS = 50
MAX_SHEET_ELEMENTS = 100_000  # XML elements of each sheet handed to openpyxl
MAX_ELEMENTS = 20_000  # ... of every other part: content types, workbook, rels, styles, strings
MAX_ROWS = 5_000  # rows of each sheet read; also the last row read
MAX_CELLS = 20_000  # cells of each sheet read
MAX_COLUMNS = 256  # the last column read (IV)
MAX_FORMULA = 8_192  # characters of one formula (Excel's own limit)
MAX_FORMULA_WORK = 1_000_000  # characters of shared formulas openpyxl translates, per sheet
MAX_META_CHARS = 2**20  # one system's Meta record (JSON)

_REQUIRED_SHEETS = ("Inputs", "Calculations", "Meta")
# the Tariff sheet when a system has one; the Decision sheet of a decision's workbook
_READ_SHEETS = (*_REQUIRED_SHEETS, TARIFF_SHEET, DECISION_SHEET)
# the inputs read from the Inputs sheet (a profile is read from its block on the Tariff sheet)
_SCALAR_INPUTS = [n for n, i in MODEL.inputs.items() if not i.axes]
_FORBIDDEN_MEMBERS = re.compile(r"vbaProject\.bin$|^xl/macrosheets/|^xl/externalLinks/|"
                                r"^xl/activeX/|\.bin$", re.IGNORECASE)
_CHUNK = 64 * 2**10
_CONTENT_TYPES = "[Content_Types].xml"
_STYLES = "xl/styles.xml"  # openpyxl reads the stylesheet from this path only
_DEFAULT_WORKBOOK = "xl/workbook.xml"
_WORKBOOK_TYPES = ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
                   "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main"
                   "+xml")
_SHARED_STRINGS_TYPE = ("application/vnd.openxmlformats-officedocument.spreadsheetml."
                        "sharedStrings+xml")
_WORKSHEET_REL = "/worksheet"
_ENCRYPTED = 0x1 | 0x40  # traditional and strong encryption flag bits
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_XML_SUFFIXES = (".xml", ".rels", ".vml")
_DTD = re.compile(rb"<!DOCTYPE|<!ENTITY", re.IGNORECASE)
_DTD_OVERLAP = len(b"<!DOCTYPE") - 1
_DECLARED_ENCODING = re.compile(rb"<\?xml[^>]*?encoding\s*=\s*[\"']([^\"']*)[\"']")
_UTF8 = {b"utf-8", b"utf8", b"us-ascii", b"ascii"}  # ASCII is a subset of UTF-8
_OTHER_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE,
               codecs.BOM_UTF16_BE)
# start tags (with any namespace prefix): an upper bound on what a parser would build
_ELEMENT = re.compile(rb"<[A-Za-z_:\x80-\xff]")
_ROW = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?row[\s/>]")
_CELL = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
_ARCHIVE_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError,
                   RuntimeError, EOFError, OSError, ValueError, struct.error)
_MAX_NAME_TEXT = 1000  # characters of a defined name's formula worth tokenizing
# what openpyxl is handed for a sheet the reader does not read: each sheet is still there, so
# the names a sheet holds of its own (print areas, by the sheet's position) find their sheet
_EMPTY_SHEET = (b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
                b"<sheetData/></worksheet>")


@dataclass(frozen=True)
class InputChange:
    """An input whose value differs from what was exported [the input's unit]."""
    system: str
    name: str
    before: Any
    after: Any
    unit: str


@dataclass(frozen=True)
class ReadSystem:
    """One system of an edited workbook: its scenario validated, where each input came from
    (an edited one: the workbook), the defaults it still uses, and the cell each input was
    read from (by scenario key: ``Inputs!E33 (utilisation, system 2)``)."""
    label: str
    scenario: Scenario
    provenance: dict[str, str]
    defaults_used: list[str]
    cells: dict[str, str] = field(default_factory=dict)

    def locate(self, path: str, message: str) -> tuple[str, str]:
        """An error about a scenario field, as (the cell it was read from, the message); a
        field no cell holds keeps its path, behind the system's label."""
        return _locate(self.cells, self.label, path, message)


@dataclass
class WorkbookRead:
    """What an edited workbook holds, validated but not priced; for a decision's workbook, the
    request it answers (``record``, Meta's, parsed but not yet validated, from the cell
    ``record_at``) and the sheets read, from which
    :func:`costmodel.render.workbook.decision_reader.read_decision` validates the record and
    reads the Decision sheet's edits."""
    systems: list[ReadSystem]
    changes: list[InputChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    record: Any = None
    book: Any = None
    record_at: str = ""


def _fail(message: str, where: str = "workbook") -> InputError:
    return InputError([(where, message)])


def _describe(exc: BaseException) -> str:
    """An exception as one short line, from its root cause (openpyxl wraps the parser's
    error in a message that says only "see the exception")."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ---- the package -------------------------------------------------------------------------------

def check_package(data: bytes) -> dict[str, bytes]:
    """Refuse what should never be parsed (oversize, zip bombs, damaged archives, macros,
    external content, DTDs, XML not in UTF-8, more sheets, rows or cells than allowed) and
    answer the parts the reader needs, inflated once and checked, by their names."""
    if len(data) > MAX_BYTES:
        raise _fail(f"file is {len(data) / 2**20:.1f} MiB; the limit is "
                    f"{MAX_BYTES / 2**20:.0f} MiB")
    # zipfile builds an entry for every central directory record before anyone can count
    # them: count their signatures first (an upper bound on the records)
    if data.count(b"PK\x01\x02") > MAX_MEMBERS:
        raise _fail(f"more than {MAX_MEMBERS} package members; the limit is {MAX_MEMBERS}")
    try:
        if not zipfile.is_zipfile(io.BytesIO(data)):
            raise _fail("not an .xlsx file (not a zip package)")
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return _inspect(z, len(data))
    except InputError:
        raise
    except zlib.error as exc:
        raise _fail(f"damaged archive: bad compressed data ({exc})") from None
    except _ARCHIVE_ERRORS as exc:
        raise _fail(f"damaged archive: {_describe(exc)}") from None


def _inspect(z: zipfile.ZipFile, length: int) -> dict[str, bytes]:
    members = z.infolist()  # at most MAX_MEMBERS: each needs a signature counted above
    names = [m.filename for m in members]
    if len(set(names)) != len(names):
        raise _fail("the package names a member twice")
    declared = 0
    for m in members:
        _check_member(m, length)
        declared += m.file_size
        if declared > MAX_UNCOMPRESSED:
            raise _fail("uncompressed content exceeds "
                        f"{MAX_UNCOMPRESSED / 2**20:.0f} MiB (zip bomb?)")
    # from here on no member may inflate to more than it declares (see _inflate): the limits
    # just checked on the declared sizes hold for the bytes really inflated
    by_name = {m.filename: m for m in members}
    inflated: dict[str, bytes] = {}

    def part(name: str) -> bytes | None:
        if name not in inflated and name in by_name:
            _check_part(by_name[name])
            inflated[name] = _inflate(z, by_name[name], keep=True, xml=True)
            _count_elements(name, inflated[name])  # before it is parsed
        return inflated.get(name)

    content_types = part(_CONTENT_TYPES)
    if content_types is None:
        raise _fail(f"not an .xlsx package: {_CONTENT_TYPES} is missing")
    if b"macroEnabled" in content_types:
        raise _fail("macro-enabled workbook: not accepted")
    workbook_part, shared_strings = _manifest(content_types)
    rels_part = _rels_part(workbook_part)
    workbook_xml, rels = part(workbook_part), part(rels_part)
    if workbook_xml is None:
        raise _fail(f"not an .xlsx package: {workbook_part} is missing")
    sheets, _ = _needed_sheets(workbook_xml, rels or b"<Relationships/>",
                               posixpath.dirname(workbook_part))
    needed = {_CONTENT_TYPES, workbook_part, rels_part, _STYLES, shared_strings,
              *sheets.values()} & set(by_name)
    for m in members:  # every member once: what is not needed is inflated, checked, dropped
        if m.filename not in inflated:
            xml = m.filename.lower().endswith(_XML_SUFFIXES) or m.filename in needed
            if m.filename in needed:
                _check_part(m)
            got = _inflate(z, m, keep=m.filename in needed, xml=xml)
            if got is not None:
                inflated[m.filename] = got
    parts = {name: inflated[name] for name in sorted(needed)}
    for title, target in sheets.items():
        if target in parts:
            _check_sheet(title, parts[target])
    for name in parts.keys() - set(sheets.values()):
        _count_elements(name, parts[name])
    return parts


def _check_member(m: zipfile.ZipInfo, length: int) -> None:
    """What a member's header says, checked before a byte of it is inflated."""
    if _FORBIDDEN_MEMBERS.search(m.filename):
        raise _fail(f"{m.filename}: macros, ActiveX and external links are not accepted")
    if m.flag_bits & _ENCRYPTED:
        raise _fail(f"{m.filename} is encrypted; an encrypted package is not accepted")
    if m.compress_type not in _METHODS:
        raise _fail(f"{m.filename} uses compression method {m.compress_type}; only stored "
                    f"and deflated members are accepted")
    if m.compress_size > length:
        raise _fail(f"{m.filename} claims {m.compress_size:,} compressed bytes in a file of "
                    f"{length:,}")
    if m.file_size > RATIO_FLOOR and m.file_size > MAX_RATIO * max(m.compress_size, 1):
        raise _fail(f"{m.filename} expands {m.file_size / max(m.compress_size, 1):.0f}-fold; "
                    f"the limit is {MAX_RATIO}-fold (zip bomb?)")


def _check_part(m: zipfile.ZipInfo) -> None:
    """A member handed to openpyxl (parsed, held whole): at most :data:`MAX_PART`. A member
    not read is inflated in a stream and dropped: the total and the ratio bound it."""
    if m.file_size > MAX_PART:
        raise _fail(f"{m.filename} inflates to {m.file_size / 2**20:.1f} MiB; the limit for "
                    f"a part read is {MAX_PART / 2**20:.0f} MiB")


def _inflate(z: zipfile.ZipFile, m: zipfile.ZipInfo, *, keep: bool, xml: bool) -> bytes | None:
    """Inflate a member in chunks of 64 KiB, counting what it really holds: a byte more than
    it declares is refused at once (the declared size was checked against the budgets), fewer
    at its end; an XML member must be UTF-8 without a DTD. Answers the bytes when ``keep``."""
    probe = copy.copy(m)
    # zipfile would stop at the declared size, unnoticed: past any size a member may declare
    probe.file_size = MAX_UNCOMPRESSED + 1
    kept: list[bytes] = []
    size, tail = 0, b""
    with z.open(probe) as fh:
        while chunk := fh.read(_CHUNK):
            if xml:
                if size == 0:
                    _check_encoding(m.filename, chunk)
                if b"\0" in chunk:
                    raise _not_utf8(m.filename)
                if _DTD.search(tail + chunk):
                    raise _fail(f"{m.filename}: XML document type declarations (entities) "
                                f"are not accepted")
                tail = chunk[-_DTD_OVERLAP:]
            size += len(chunk)
            if size > m.file_size:
                raise _fail(f"{m.filename} holds more than the {m.file_size:,} bytes it "
                            f"declares (zip bomb?)")
            if keep:
                kept.append(chunk)
    if size != m.file_size:
        raise _fail(f"damaged archive: {m.filename} holds {size:,} bytes but declares "
                    f"{m.file_size:,}")
    return b"".join(kept) if keep else None


def _not_utf8(name: str) -> InputError:
    return _fail(f"{name}: XML parts must be encoded in UTF-8 (UTF-16, UTF-32 and other "
                 f"encodings are not accepted)")


def _check_encoding(name: str, head: bytes) -> None:
    """UTF-8 by its byte-order mark, first character and declaration; anything else could
    hide a DTD from a byte search."""
    if head.startswith(_OTHER_BOMS):
        raise _not_utf8(name)
    text = head.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\r\n")
    if text and not text.startswith(b"<"):
        raise _not_utf8(name)
    declared = _DECLARED_ENCODING.match(text)
    if declared and declared.group(1).strip().lower() not in _UTF8:
        raise _not_utf8(name)


def _count(data: bytes, pattern: re.Pattern[bytes], limit: int, message: str) -> None:
    """Refuse ``data`` when ``pattern`` occurs more than ``limit`` times (stops counting
    there)."""
    for i, _ in enumerate(pattern.finditer(data)):
        if i >= limit:
            raise _fail(message)


def _count_elements(name: str, data: bytes) -> None:
    _count(data, _ELEMENT, MAX_ELEMENTS, f"{name} has more than {MAX_ELEMENTS:,} XML elements; "
                                         f"the limit is {MAX_ELEMENTS:,}")


def _check_sheet(title: str, data: bytes) -> None:
    """A sheet the reader reads: rows, cells and elements counted on its bytes, then its
    formulas measured in one streaming pass: openpyxl translates every cell of a shared
    formula from its first cell's text, work that grows with their product."""
    _count(data, _ROW, MAX_ROWS, f"sheet {title!r} has more than {MAX_ROWS:,} rows; the "
                                 f"limit is {MAX_ROWS:,}")
    _count(data, _CELL, MAX_CELLS, f"sheet {title!r} has more than {MAX_CELLS:,} cells; the "
                                   f"limit is {MAX_CELLS:,}")
    _count(data, _ELEMENT, MAX_SHEET_ELEMENTS, f"sheet {title!r} has more than "
                                               f"{MAX_SHEET_ELEMENTS:,} XML elements; the limit "
                                               f"is {MAX_SHEET_ELEMENTS:,}")
    masters: dict[str | None, int] = {}
    work = 0
    try:
        for _, el in iterparse(io.BytesIO(data)):
            kind = _local(el.tag)
            if kind == "row":
                el.clear()
            if kind != "f":
                continue
            length = len(el.text or "")
            if length > MAX_FORMULA:
                raise _fail(f"sheet {title!r} holds a formula of {length:,} characters; the "
                            f"limit is {MAX_FORMULA:,}")
            if el.get("t") == "shared":
                si = el.get("si")
                if si not in masters and length:
                    masters[si] = length
                work += masters.get(si, 0)
                if work > MAX_FORMULA_WORK:
                    raise _fail(f"sheet {title!r}: its shared formulas amount to more than "
                                f"{MAX_FORMULA_WORK:,} characters; the limit is "
                                f"{MAX_FORMULA_WORK:,}")
    except (ParseError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise _fail(f"sheet {title!r} is not well-formed XML: {_describe(exc)}") from None


def _xml(name: str, data: bytes) -> Any:
    try:
        return fromstring(data)
    except (ParseError, ValueError) as exc:
        raise _fail(f"{name} is not well-formed XML: {_describe(exc)}") from None


def _local(tag: Any) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _manifest(content_types: bytes) -> tuple[str, str]:
    """(the workbook part, the shared strings part) as openpyxl finds them."""
    workbook = shared = ""
    defaults = set()
    for el in _xml(_CONTENT_TYPES, content_types):
        kind, ct = _local(el.tag), el.get("ContentType", "")
        if kind == "Override" and ct in _WORKBOOK_TYPES and not workbook:
            workbook = el.get("PartName", "").lstrip("/")
        elif kind == "Override" and ct == _SHARED_STRINGS_TYPE and not shared:
            shared = el.get("PartName", "").lstrip("/")
        elif kind == "Default":
            defaults.add(ct)
    if not workbook and defaults & set(_WORKBOOK_TYPES):
        workbook = _DEFAULT_WORKBOOK
    if not workbook:
        raise _fail("not an .xlsx package: no workbook part")
    return workbook, shared


def _rels_part(workbook_part: str) -> str:
    return posixpath.join(posixpath.dirname(workbook_part), "_rels",
                          posixpath.basename(workbook_part) + ".rels")


def _needed_sheets(workbook_xml: bytes, rels: bytes, folder: str
                   ) -> tuple[dict[str, str], list[str]]:
    """The parts holding the sheets the reader reads, by title, and those of the other
    worksheets; more sheets than MAX_SHEETS are refused."""
    targets = {}
    for el in _xml("workbook relationships", rels):
        if _local(el.tag) == "Relationship" and el.get("TargetMode") != "External" \
                and el.get("Type", "").endswith(_WORKSHEET_REL):
            target = el.get("Target", "")
            targets[el.get("Id")] = (target[1:] if target.startswith("/") else
                                     posixpath.normpath(posixpath.join(folder, target)))
    sheets = [el for el in _xml("workbook", workbook_xml).iter() if _local(el.tag) == "sheet"]
    if len(sheets) > MAX_SHEETS:
        raise _fail(f"the workbook has {len(sheets)} sheets; the limit is {MAX_SHEETS}")
    found: dict[str, str] = {}
    others = []
    for el in sheets:
        rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), None)
        if el.get("name") in _READ_SHEETS and rid in targets:
            found.setdefault(el.get("name"), targets[rid])
        elif rid in targets:
            others.append(targets[rid])
    return found, others


# ---- the cells read ----------------------------------------------------------------------------

@dataclass
class _Sheet:
    """The non-empty cells of a sheet's read area, by row and column, and the number format
    of each number shown otherwise than as General (``0.0%``)."""
    rows: dict[int, dict[int, Any]]
    formats: dict[tuple[int, int], str] = field(default_factory=dict)

    def value(self, row: int, col: int) -> Any:
        return self.rows.get(row, {}).get(col)

    def shown(self, row: int, col: int, value: float, name: str, unit: str) -> str:
        """``value`` [``unit``] as this cell shows it (:func:`shown_number`)."""
        return shown_number(value, self.formats.get((row, col), ""), name, unit)


@dataclass
class _Book:
    sheets: dict[str, _Sheet]
    names: dict[str, DefinedName]  # the global defined names the reader needs


def _load(parts: dict[str, bytes]) -> _Book:
    """The checked parts, in a fresh package, read by openpyxl in read-only mode."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        for name, body in {**_stand_ins(parts), **parts}.items():
            out.writestr(name, body)
    try:
        wb = load_workbook(buf, read_only=True, data_only=False, keep_links=False)
    except Exception as exc:  # openpyxl raises many kinds on a damaged package
        raise _fail(f"cannot open as a workbook: {_describe(exc)}") from None
    try:
        missing = [s for s in _REQUIRED_SHEETS if s not in wb.sheetnames]
        if missing:
            raise _fail(f"sheet {missing[0]!r} is missing (renamed or deleted?); a workbook "
                        f"exported by costmodel has {', '.join(_REQUIRED_SHEETS)}")
        wanted = {*MODEL.inputs, *MODEL.enums, *MODEL.steps}
        names = {n: dn for n, dn in wb.defined_names.items()
                 if n in wanted or n.rpartition("_s")[0] in _PROFILE_BLOCKS
                 or n.startswith(("decision_", "option_"))}
        return _Book({title: _grid(wb[title]) for title in _READ_SHEETS
                      if title in wb.sheetnames}, names)
    except InputError:
        raise
    except Exception as exc:
        raise _fail(f"cannot read the workbook: {_describe(exc)}") from None
    finally:
        wb.close()


def _stand_ins(parts: dict[str, bytes]) -> dict[str, bytes]:
    """An empty worksheet for each sheet not read (:data:`_EMPTY_SHEET`), by its part's name;
    ``parts`` were checked by :func:`check_package`."""
    workbook_part, _ = _manifest(parts[_CONTENT_TYPES])
    rels_part = _rels_part(workbook_part)
    _, others = _needed_sheets(parts[workbook_part], parts.get(rels_part, b"<Relationships/>"),
                               posixpath.dirname(workbook_part))
    return dict.fromkeys(others, _EMPTY_SHEET)


def _grid(ws: Any) -> _Sheet:
    rows: dict[int, dict[int, Any]] = {}
    formats: dict[tuple[int, int], str] = {}
    # explicit bounds: openpyxl would otherwise pad every row out to the widest cell
    for row in ws.iter_rows(min_row=1, max_row=MAX_ROWS, min_col=1, max_col=MAX_COLUMNS):
        for c in row:
            if c.value is not None:
                rows.setdefault(c.row, {})[c.column] = c.value
                if isinstance(c.value, (int, float)) and c.number_format != "General":
                    formats[c.row, c.column] = str(c.number_format)[:_MAX_NAME_TEXT]
    return _Sheet(rows, formats)


# a number format's sections outside its quoted text and escapes: a % there shows the value
# times 100 (Excel's rule; a quoted "%" is text)
_FORMAT_TEXT = re.compile(r'"[^"]*"|\\.|\[[^\]]*\]')


def shown_number(value: float, number_format: str, name: str, unit: str) -> str:
    """``value`` [``unit``, the engine's] as a cell of ``number_format`` shows it, with the
    unit the sheet shows beside it (:func:`costmodel.render.display.display_unit`): a
    percent format's ``0.7`` is ``70 %`` (``%/year`` for a rate a year), digits grouped by
    three, at most six significant; a fraction not formatted as a percent is a plain number.
    For an error that says the bounds and the value as the sheet shows them."""
    shown_unit = display_unit(name, unit)
    if "%" in _FORMAT_TEXT.sub("", number_format):
        number, suffix = value * 100, shown_unit if shown_unit.startswith("%") else "%"
    else:
        number, suffix = value, "" if shown_unit.startswith("%") else shown_unit
    if number != 1:
        suffix = _PLURAL.get(suffix, suffix)
    return f"{number:,.6g} {suffix}".rstrip()


_PLURAL = {"year": "years", "month": "months"}  # the units shown as words


_AREA = f"A1:{get_column_letter(MAX_COLUMNS)}{MAX_ROWS}"


def _cells(book: _Book, name: str, sheet: str, n: int, where: str) -> list[tuple[int, int]]:
    """(row, column) of the cells ``name`` covers on ``sheet``, left to right, checked to be
    ``n`` cells in the area read before any is listed. Raises InputError; KeyError when the
    name is missing."""
    if name not in book.names:
        raise KeyError(name)
    target = _target(book.names[name])
    if target is None or target[0] != sheet:
        raise _fail(f"defined name {name!r} does not point at the {sheet} sheet", where)
    try:
        min_col, min_row, max_col, max_row = range_boundaries(target[1])
    except (ValueError, TypeError):
        raise _fail(f"defined name {name!r} does not point at cells of the {sheet} sheet",
                    where) from None
    if None in (min_col, min_row, max_col, max_row):
        raise _fail(f"defined name {name!r} covers whole rows or columns", where)
    count = (max_col - min_col + 1) * (max_row - min_row + 1)
    if count != n:
        raise _fail(f"defined name {name!r} covers {count} cells for {n} systems", where)
    if max_row > MAX_ROWS or max_col > MAX_COLUMNS:
        raise _fail(f"defined name {name!r} points outside {_AREA}, the area read", where)
    return [(r, c) for r in range(min_row, max_row + 1) for c in range(min_col, max_col + 1)]


def _target(dn: DefinedName) -> tuple[str, str] | None:
    """(sheet, A1 range without ``$``) of a defined name, or None unless it is exactly one
    range on a sheet."""
    if len(dn.value or "") > _MAX_NAME_TEXT:
        return None
    try:
        dests = list(dn.destinations)
    except Exception:  # the tokenizer's many kinds on a damaged formula
        return None
    if len(dests) != 1:
        return None
    sheet, ref = dests[0]
    return sheet, ref.replace("$", "")


def _coordinate(row: int, col: int) -> str:
    return f"{get_column_letter(col)}{row}"


# ---- reading -----------------------------------------------------------------------------------

def _source_bytes(source: bytes | str | Path) -> bytes:
    if not isinstance(source, (str, Path)):
        return source
    with open(source, "rb") as fh:  # never more than the limit (a device, a huge file)
        return fh.read(MAX_BYTES + 1)


def read_workbook(source: bytes | str | Path, name: str = "workbook") -> WorkbookRead:
    """Read and validate every system of an edited workbook (not priced: see
    :func:`costmodel.app.reprice`). Raises InputError; an error about an input names the sheet
    and cell it was read from."""
    book = _load(check_package(_source_bytes(source)))
    payloads = _meta(book.sheets["Meta"])
    n = len(payloads)
    values = {k: _read_name(book, k, n) for k in [*_SCALAR_INPUTS, *MODEL.enums]}
    systems: list[ReadSystem] = []
    changes: list[InputChange] = []
    exported: list[Scenario] = []
    for i, payload in enumerate(payloads):
        original = payload["scenario"]
        label = original.get("name", f"system {i + 1}")
        shown = " ".join(str(label).split())[:200]  # in an error: one line, whatever the name
        cells = {_key(k): _where(v[i], k, i, n) for k, v in values.items()}
        try:  # as exported (Meta's record, input like any other: refused at its cell)
            exported.append(validate_scenario(original))
        except InputError as exc:
            raise InputError([(f"Meta!B{i + 2} (scenario{'.' + p if p else ''})", m)
                              for p, m in exc.errors]) from None
        before = exported[-1].to_inputs()
        data_i = _apply(original, {k: v[i] for k, v in values.items()}, before, cells)
        profiles = _read_profiles(book, data_i, before, i, n)
        for key, at in profiles.items():
            cells.setdefault(key, at)
        scenario = _validated(data_i, shown, cells)
        after = scenario.to_inputs()
        mine = []
        for k in [*_SCALAR_INPUTS, *MODEL.enums]:
            if not _same(before[k], after[k]):
                unit = MODEL.inputs[k].unit if k in MODEL.inputs else ""
                mine.append(InputChange(label, k, _shown(k, before[k]), _shown(k, after[k]),
                                        unit))
        provenance = dict(payload.get("provenance", {}))
        edited = {_key(c.name): f"edited in workbook {name}, cell "
                                f"{values[c.name][i][1]}!{values[c.name][i][0]}" for c in mine}
        # an edited factor by hour is not the one its citation describes either
        edited.update({key: f"edited in workbook {name}, cells {at}"
                       for key, at in profiles.items() if key in CARBON_HOURLY_KEYS})
        provenance.update(edited)
        cited = _edited_citations(data_i, edited, provenance)
        if cited:  # the edited values' citations replaced: validated again
            scenario = _validated(data_i, shown, cells)
        replaced = [*edited, *cited]
        defaults = [d for d in payload.get("defaults_used", [])
                    if not any(d == k or d.startswith(k + ".") for k in replaced)]
        systems.append(ReadSystem(label, scenario, provenance, defaults, cells))
        changes.extend(mine)
    record, record_at = _record(book.sheets["Meta"], n) or (None, "")
    return WorkbookRead(systems, changes, _formula_warnings(book, n, ProfileLayout(exported)),
                        record, book, record_at)


def _record(ws: _Sheet, n: int) -> tuple[Any, str] | None:
    """The request a decision's workbook answers (its Meta row below the systems', after a
    blank one) as parsed JSON, not yet validated
    (:mod:`costmodel.render.workbook.decision_record` does), with the cell it starts in; or
    None."""
    at = record_row(n)
    row = ws.rows.get(at, {})
    if row.get(1) != DECISION_RECORD:
        return None
    return _meta_row(row, f"Meta!B{at}"), f"Meta!B{at}"


# a JSON string (its escapes included; possessive, and its closing quote optional, so that
# every character is scanned once whatever the text), and what is not a bracket
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _json_depth(text: str) -> int:
    """How deep ``text``'s arrays and objects nest (outside its strings), counted without
    parsing: a parser (and every walk after it) recurses once a level."""
    codes = np.frombuffer(_NOT_BRACKET.sub("", _JSON_STRING.sub("", text)).encode(), np.uint8)
    if not codes.size:
        return 0
    return int(np.cumsum(np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)).max())


def _constant(word: str) -> float:
    raise ValueError(f"{word} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:40]} is out of range")
    return number


def _meta_row(row: dict[int, Any], where: str) -> Any:
    """A Meta row's JSON (its chunks after the label, from cell ``where``), bounded before it
    is parsed (at most :data:`MAX_META_CHARS` characters, nested at most
    :data:`~costmodel.model.errors.MAX_NESTING` levels) and parsed strictly (no NaN or
    Infinity, no number out of float range, no integer of more digits than Python reads)."""
    label = row[1]
    text = "".join(str(row[c]) for c in sorted(row) if c > 1)
    if len(text) > MAX_META_CHARS:
        raise _fail(f"Meta row for {str(label)[:100]!r} holds more than {MAX_META_CHARS:,} "
                    f"characters; the limit is {MAX_META_CHARS:,}", where)
    if _json_depth(text) > MAX_NESTING:
        raise _fail(f"Meta row for {str(label)[:100]!r}: {nested_message()}", where)
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise _fail(f"Meta row for {str(label)[:100]!r} is damaged: {_describe(exc)}",
                    where) from None


def _where(cell: tuple[str, str, Any, str], name: str, i: int, n: int) -> str:
    """``Inputs!E33 (utilisation, system 2)``: the cell an input of system ``i`` (0-based)
    was read from; the system is named only when there are several."""
    coord, sheet = cell[:2]
    return f"{sheet}!{coord} ({name})" if n == 1 else f"{sheet}!{coord} ({name}, system {i + 1})"


def _locate(cells: dict[str, str], label: str, path: str, message: str) -> tuple[str, str]:
    """(where, message) of an error about scenario field ``path``: the cell the field was read
    from when one was (the scenario key is added when it is spelled otherwise), else the
    path behind the system's label."""
    for key, where in cells.items():
        if path == key or path.startswith((key + ".", key + "[")):
            named = path == key.replace(".", "_")  # the workbook's name of the input
            return where, message if named else f"{message} (scenario key {path})"
    return (f"{label}: {path}" if path else label), message


def _validated(data: dict, label: str, cells: dict[str, str]) -> Scenario:
    """``data`` validated like any scenario; each error names the cell its field was read
    from (``cells``: scenario key -> where) or, when no cell holds it, the system's label."""
    try:
        return validate_scenario(data)
    except InputError as exc:
        raise InputError([_locate(cells, label, p, m) for p, m in exc.errors]) from None


def _edited_citations(data: dict, edited: dict[str, str],
                      provenance: dict[str, str]) -> list[str]:
    """An edited value is not the one its citation describes: the electricity price's source
    and date, the operating point's label and source (``costmodel.model.inputs.CITED_BY``) name the
    edited
    cell instead, in ``data`` and ``provenance``. Answers the keys replaced."""
    replaced = []
    for key, where in edited.items():
        named, removed = replace_citations(data, key, where, keep=edited)
        for tied in named:
            provenance[tied] = where
        for tied in removed:
            provenance.pop(tied, None)
        replaced += named + removed
    return replaced


def _key(name: str) -> str:
    return MODEL.inputs[name].key if name in MODEL.inputs else MODEL.enums[name].key


def _meta(ws: _Sheet) -> list[dict]:
    if ws.value(1, 1) != META_FORMAT:
        raise _fail(f"Meta!A1 is not {META_FORMAT!r}: not a costmodel workbook, or edited")
    payloads = []
    for r in range(2, MAX_ROWS + 1):
        row = ws.rows.get(r, {})
        if row.get(1) is None:
            break
        at = f"Meta!B{r}"
        payload = _meta_row(row, at)
        if not _payload_ok(payload):
            raise _fail(f"Meta row for {str(row[1])[:100]!r} is damaged: not a system's "
                        f"record (its scenario, sources and defaults)", at)
        payloads.append(payload)
    if not payloads:
        raise _fail("Meta lists no system")
    return payloads


def _payload_ok(payload: Any) -> bool:
    """The shape the export writes: a scenario table, sources as text, defaults as text."""
    if not isinstance(payload, dict) or not isinstance(payload.get("scenario"), dict):
        return False
    provenance = payload.get("provenance", {})
    defaults = payload.get("defaults_used", [])
    return (isinstance(provenance, dict)
            and all(isinstance(v, str) for v in provenance.values())
            and isinstance(defaults, list) and all(isinstance(d, str) for d in defaults))


def _read_name(book: _Book, name: str, n: int) -> list[tuple[str, str, Any]]:
    try:
        cells = _cells(book, name, "Inputs", n, "workbook names")
    except KeyError:
        raise _fail(f"defined name {name!r} is missing", "workbook names") from None
    inputs = book.sheets["Inputs"]
    if name in MODEL.inputs:
        row = cells[0][0]
        unit = inputs.value(row, 3)
        declared = MODEL.inputs[name].unit
        if (unit or "") != declared:
            raise _fail(f"the unit of {name} was changed from {declared!r} to {unit!r}; the "
                        f"formulas assume {declared!r}", f"Inputs!{_coordinate(row, 3)}")
    return [(_coordinate(r, c), "Inputs", inputs.value(r, c), inputs.formats.get((r, c), ""))
            for r, c in cells]


def _apply(original: dict, cells: dict[str, tuple[str, str, Any, str]],
           exported: dict[str, float | int], where: dict[str, str]) -> dict:
    """The exported scenario with the workbook's input values put in. ``cells``: name ->
    (cell, sheet, value, number format); ``exported``: the inputs as exported [each input's
    unit]; ``where``: scenario key -> the cell it was read from, for errors."""
    data = json.loads(json.dumps(original))  # a deep copy of plain data
    for name, (_, _, raw, number_format) in cells.items():
        at = where[_key(name)]
        if name in MODEL.enums:
            enum = MODEL.enums[name]
            if not isinstance(raw, str) or raw not in enum.levels:
                got = ("a formula" if isinstance(raw, str) and raw.startswith("=")
                       else repr(raw))
                raise _fail(f"expected one of {', '.join(enum.levels)}, got {got}", at)
            continue
        value = _number(raw, name, at)
        if value is not None and value != exported[name]:
            key = MODEL.inputs[name].key
            try:
                check_bounds(value, quantity_field(key), number_format, name,
                             MODEL.inputs[name].unit, at)
            except InputError as exc:  # as a validation error about the key would be said
                raise InputError([_locate({key: at}, "", key, m) for _, m in exc.errors]) \
                    from None
        if name == "money_rate":  # the rate of the currency results are shown in
            _put_rate(data, _as_exported(value, exported[name]), at)
            continue
        if value is not None and name not in COUNT_INPUTS:  # counts are plain integers
            value = {"value": _as_exported(value, exported[name]), "unit":
                     MODEL.inputs[name].unit}
        _put(data, MODEL.inputs[name].key, value)
    enums = {n: cells[n][2] for n in MODEL.enums}
    data.setdefault("power", {})
    data["power"]["boundary"] = enums["power_boundary"]
    data["power"]["basis"] = enums["power_basis"]
    data.setdefault("operating_point", {})["token_kind"] = enums["operating_point_token_kind"]
    op = data["operating_point"]
    if enums["operating_point_throughput_basis"] == "per_kw":
        op.pop("throughput", None)
    else:
        op.pop("throughput_per_kw", None)
        op.pop("normalised_by", None)
    if enums["accelerator_rack_power_basis"] == "built":
        data.get("accelerator", {}).pop("all_in_power", None)
    elif "all_in_power" not in data.get("accelerator", {}):
        raise _fail(f"{where['accelerator.rack_power_basis'].partition(' ')[0]} says all_in "
                    f"but the all-in power is empty", where["accelerator.all_in_power"])
    electricity = data.get("electricity", {})
    for enum, absent, key, what in _PRESENCE:
        table = data if key == "load" else electricity
        if enums[enum] == absent:
            table.pop(key, None)
        elif key not in table:
            raise _fail(f"{where[_key(enum)].partition(' ')[0]} says {enums[enum]} but "
                        f"there is no {what}", where[_key(enum)])
    if enums["accelerator_cost_basis"] == "own":
        data.get("accelerator", {}).pop("hourly_price", None)
    elif "hourly_price" not in data.get("accelerator", {}):
        raise _fail(f"{where['accelerator.cost_basis'].partition(' ')[0]} says rent but the "
                    f"hourly price is empty", where["accelerator.hourly_price"])
    return data


# =NA() or #N/A, as an editor may write the export's placeholder for an absent input:
# LibreOffice saves it as the formula =#N/A, a user may type =NA()
_NOT_AVAILABLE = re.compile(r"=?\s*(?:#N/A|NA\(\s*\))\s*", re.IGNORECASE)
_SAVED_DIGITS = 1e-14  # LibreOffice saves 15 significant digits: 0.08710000000000001 -> 0.0871


def _as_exported(value: float, exported: float) -> float:
    """The exported value when the cell holds it as an editor saved it (to 15 significant
    digits; a change that small is no edit), else the cell's value."""
    if math.isfinite(exported) and math.isclose(value, exported, rel_tol=_SAVED_DIGITS):
        return exported
    return value


def _number(raw: Any, name: str, where: str, *, optional: bool | None = None,
            count: bool = False) -> float | int | None:
    """A numeric input's cell value [the input's unit], None for an absent optional input
    (empty, or the #N/A placeholder). Refused: a formula, text (also a number typed as text:
    spreadsheets disagree on whether such a cell counts in a formula, so the figures shown
    may not be the ones priced), a boolean, a fraction where a count is expected."""
    if raw is None or (isinstance(raw, str) and _NOT_AVAILABLE.fullmatch(raw)):
        if MODEL.inputs[name].optional if optional is None else optional:
            return None
        raise _fail("required, but the cell is empty or #N/A", where)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        if isinstance(raw, str) and raw.startswith("="):
            raise _fail("an input must be a value, not a formula", where)
        if isinstance(raw, str) and _numeric_text(raw):
            raise _fail(f"a number stored as text ({raw!r}): enter it as a number (whether "
                        f"a formula computes with text depends on the spreadsheet and its "
                        f"locale)", where)
        raise _fail(f"expected a number, got {raw!r}", where)
    try:
        number = float(raw)
    except OverflowError:  # an integer of hundreds of digits
        number = math.inf
    if not math.isfinite(number):
        raise _fail(f"expected a finite number, got {raw!r:.40}", where)
    if name in COUNT_INPUTS or count:
        if number != int(raw):
            raise _fail(f"expected a whole number, got {raw!r}", where)
        return int(raw)
    return number


def check_bounds(value: float, meta: QuantityField | None, number_format: str, name: str,
                 unit: str, where: str) -> None:
    """Refuse a cell's ``value`` [``unit``] outside the bounds its field declares (``meta``,
    the same the field's validation holds it to), the bounds and the value said as the cell
    shows them (:func:`shown_number`): "must be at most 100 %, got 7,000 %" for a share
    typed as 70 in a percent cell, where the field's own check would say "at most 1, got 70"."""
    if meta is None or not math.isfinite(value):
        return

    def shown(v: float) -> str:
        return shown_number(v, number_format, name, unit)

    if value < 0:
        raise _fail(f"must not be negative, got {shown(value)}", where)
    if meta.positive and value == 0:
        raise _fail(f"must be greater than zero, got {shown(value)}", where)
    if meta.minimum is not None and value < meta.minimum:
        raise _fail(f"must be at least {shown(meta.minimum)}, got {shown(value)}", where)
    if meta.maximum is not None and (value >= meta.maximum if meta.below_maximum
                                     else value > meta.maximum):
        bound = "below" if meta.below_maximum else "at most"
        raise _fail(f"must be {bound} {shown(meta.maximum)}, got {shown(value)}", where)


def _numeric_text(raw: str) -> bool:
    try:
        return math.isfinite(float(raw.strip().replace(",", "")))
    except ValueError:
        return False


def _put(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for p in parts[:-1]:
        if value is None and not isinstance(node.get(p), dict):
            return  # nothing to clear (a table is never made for an absent value)
        node = node.setdefault(p, {})
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def _put_rate(data: dict, rate: float, where: str) -> None:
    """An edited ``money_rate``: the exchange rate of the currency results are shown in."""
    money = data.get("money") or {}
    currency = money.get("currency", "USD")
    if currency == "USD":
        if rate != 1:
            raise _fail("results are shown in USD (1 USD per USD): to show another currency, "
                        "name it and its dated, sourced rate in the scenario's [money] table",
                        where)
        return
    fx = money["fx"][currency]
    if rate != fx["rate"]:  # its citation described the rate replaced
        fx.update(rate=rate, source=f"edited in the workbook, {where}")


# categorical inputs that say whether a table is there: (enum, its level without the table,
# the table's key, what it is)
_PRESENCE = [("electricity_pricing", "flat", "tariff", "tariff (electricity.tariff)"),
             ("load_basis", "utilisation", "load", "load shape ([load])"),
             ("electricity_site_basis", "rack", "site_accelerators",
              "number of site accelerators")]
_PERIOD_CHARGE, _PERIOD_HOURS = ("electricity_tariff_demand_period_charge",
                                  "electricity_tariff_demand_period_hours")
# the emission factors by hour (one day's 24 values; a block of 48 columns repeats them on
# weekend days): block -> the key under [electricity]
_CARBON_BLOCKS = {"electricity_carbon_hourly": "carbon_hourly",
                  "electricity_market_carbon_hourly": "market_carbon_hourly"}
CARBON_HOURLY_KEYS = frozenset(f"electricity.{k}" for k in _CARBON_BLOCKS.values())
_PROFILE_BLOCKS = {"electricity_tariff_rates", "electricity_tariff_demand_charge",
                   "load_hourly", _PERIOD_CHARGE, _PERIOD_HOURS,
                   *_CARBON_BLOCKS}  # the profiles an editor may change on the Tariff sheet


def _read_profiles(book: _Book, data: dict, exported: dict[str, Any], i: int,
                   n: int) -> dict[str, str]:
    """Put the Tariff sheet's edited rates, demand charges, load and emission factors by
    hour of system ``i`` into its scenario table ``data``; answers scenario key -> the block
    it was read from (for errors, and an edited factor's citation). A profile the scenario
    no longer has (its choice changed) is not read."""
    sheet = book.sheets.get(TARIFF_SHEET)
    if sheet is None:
        return {}
    read: dict[str, str] = {}
    blocks = {}
    for name in sorted(_PROFILE_BLOCKS):
        label = name if n == 1 else f"{name}_s{i + 1}"
        if label not in book.names or not isinstance(exported.get(name), np.ndarray):
            continue
        target = _target(book.names[label])
        if target is None or target[0] != TARIFF_SHEET:
            raise _fail(f"defined name {label!r} does not point at the {TARIFF_SHEET} sheet",
                        "workbook names")
        min_col, min_row, max_col, max_row = range_boundaries(target[1])
        shape = exported[name].shape
        if (max_row - min_row + 1, max_col - min_col + 1) != shape:
            raise _fail(f"defined name {label!r} no longer covers its "
                        f"{shape[0]} x {shape[1]} cells", "workbook names")
        values = np.empty(shape)
        for r in range(shape[0]):
            for c in range(shape[1]):
                at = f"{TARIFF_SHEET}!{_coordinate(min_row + r, min_col + c)} ({name})"
                number = _number(sheet.value(min_row + r, min_col + c), name, at)
                if number is None:
                    raise _fail("required, but the cell is empty or #N/A", at)
                values[r, c] = _as_exported(number, float(exported[name][r, c]))
        if not np.array_equal(values, exported[name]):
            blocks[name] = values
            read[name] = f"{TARIFF_SHEET}!{target[1]} ({label})"
    for name, key in _CARBON_BLOCKS.items():
        if name in blocks:
            electricity = data.setdefault("electricity", {})
            electricity[key] = {"value": _one_day(blocks[name][0], exported[name][0],
                                                  read[name]), "unit": "gCO2e/kWh"}
            read[f"electricity.{key}"] = read.pop(name)
    tariff = data.get("electricity", {}).get("tariff")
    if "load_hourly" in blocks and isinstance(data.get("load"), dict):
        data["load"].update(_days(blocks["load_hourly"][0], "dimensionless"))
        data.pop("utilisation", None)  # the shape's mean, as the engine takes it
        read["load.hourly"] = read.pop("load_hourly")
    if isinstance(tariff, dict) and blocks.keys() & {"electricity_tariff_rates",
                                                    "electricity_tariff_demand_charge"}:
        rates = blocks.get("electricity_tariff_rates", exported["electricity_tariff_rates"])
        demand = blocks.get("electricity_tariff_demand_charge",
                            exported["electricity_tariff_demand_charge"])
        tariff.pop("weekend", None)  # unless the rows have weekend hours
        tariff.update(_tariff_rows(rates, demand[:, 0]))
        for name in ("electricity_tariff_rates", "electricity_tariff_demand_charge"):
            if name in read:
                read["electricity.tariff." + ("hourly" if name.endswith("rates")
                                              else "demand_charge")] = read.pop(name)
    if isinstance(tariff, dict) and blocks.keys() & {_PERIOD_CHARGE, _PERIOD_HOURS}:
        mask = blocks.get(_PERIOD_HOURS, exported[_PERIOD_HOURS])
        odd = mask[(mask != 0) & (mask != 1)]
        if odd.size:
            raise _fail(f"an hour of a demand period is 1 (in the period) or 0 (not), got "
                        f"{odd[0]:g}", read[_PERIOD_HOURS])
        given = tariff.get("demand_periods")
        tariff["demand_periods"] = _period_rows(given if isinstance(given, list) else [],
                                                blocks.get(_PERIOD_CHARGE,
                                                           exported[_PERIOD_CHARGE])[:, 0],
                                                mask)
        for name in (_PERIOD_CHARGE, _PERIOD_HOURS):
            if name in read:
                read.setdefault("electricity.tariff.demand_periods", read.pop(name))
    return read


def _one_day(row: np.ndarray, exported: np.ndarray, where: str) -> list[float]:
    """An emission factor's 24 hours from its block's row: the row itself, or, where the
    block has weekend columns (a tariff or a load with weekend days), the half that was
    edited (the two halves alike, or one as exported); both edited, differently: refused,
    as a factor by hour has one day."""
    day, weekend = row[:HOURS_A_DAY], row[HOURS_A_DAY:]
    if weekend.size and not np.array_equal(day, weekend):
        if np.array_equal(day, exported[:HOURS_A_DAY]):
            day = weekend
        elif not np.array_equal(weekend, exported[HOURS_A_DAY:]):
            raise _fail("a factor by hour has one day's 24 values: its weekend hours ('we') "
                        "must be its weekday hours", where)
    return day.tolist()


def _period_rows(given: list, charge: np.ndarray, mask: np.ndarray) -> list[dict[str, Any]]:
    """A tariff's demand periods with the Tariff sheet's charges and hours: each period as
    given with its charge and hours replaced (its name and months kept); the row that bills
    nothing (a tariff without periods) becomes a period, billed every month, once it has a
    charge or an hour."""
    out = []
    for p, rate in enumerate(charge):
        hours = [h for h in range(HOURS_A_DAY) if mask[p, h]]
        weekend = [h for h in range(HOURS_A_DAY) if mask[p, HOURS_A_DAY + h]] \
            if mask.shape[1] > HOURS_A_DAY else None
        period = dict(given[p]) if p < len(given) and isinstance(given[p], dict) else {}
        if not period:
            if rate == 0 and not hours and not weekend:
                continue  # the row that bills nothing, left so
            period["name"] = f"period {p + 1}"
        period.update(demand_charge={"value": float(rate), "unit": "USD/kW/month"},
                      hours=hours)
        if weekend is None or (weekend == hours and period.get("weekend_hours") is None):
            period.pop("weekend_hours", None)  # as the weekdays
        else:
            period["weekend_hours"] = weekend
        out.append(period)
    return out


def _days(row: np.ndarray, unit: str) -> dict[str, Any]:
    """One profile row (24 hours, or a weekday's then a weekend day's) as ``hourly`` and
    ``weekend`` tables."""
    out: dict[str, Any] = {"hourly": {"value": row[:24].tolist(), "unit": unit}}
    out["weekend"] = {"value": row[24:].tolist(), "unit": unit} if len(row) > 24 else None
    if out["weekend"] is None:
        del out["weekend"]
    return out


def _tariff_rows(rates: np.ndarray, demand: np.ndarray) -> dict[str, Any]:
    """A tariff's rates (months x hours) and demand charges (by month) as its tables: the
    whole year, or January's as the tariff's own and a season for every other month that
    differs (so an edited month stands on its own)."""
    rate_unit, demand_unit = "USD/kWh", "USD/kW/month"
    out = {**_days(rates[0], rate_unit), "seasons": [],
           "demand_charge": {"value": float(demand[0]), "unit": demand_unit}}
    for m in range(1, rates.shape[0]):
        if np.array_equal(rates[m], rates[0]) and demand[m] == demand[0]:
            continue
        out["seasons"].append({"name": f"month {m + 1}", "months": [m + 1],
                               **_days(rates[m], rate_unit),
                               "demand_charge": {"value": float(demand[m]),
                                                 "unit": demand_unit}})
    return out


def _same(a: float, b: float) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _shown(name: str, v: float | int) -> Any:
    if name in MODEL.enums:
        return MODEL.enums[name].levels[int(v)]
    return None if isinstance(v, float) and math.isnan(v) else v


def _formula_warnings(book: _Book, n: int, layout: ProfileLayout) -> list[str]:
    """Calculations edited by hand are not priced: say so. (The profile steps' blocks on the
    Tariff sheet are not compared.)"""
    out: list[str] = []
    calculations = book.sheets["Calculations"]
    for name in MODEL.scalar_steps:
        step = MODEL.steps[name]
        try:
            cells = _cells(book, step.name, "Calculations", n, "")
        except KeyError:
            out.append(f"step {step.name}: its defined name is missing; priced from the "
                       f"engine's declaration")
            continue
        except InputError as exc:
            out.append(f"step {step.name}: {exc.errors[0][1]}; priced from the engine's "
                       f"declaration")
            continue
        expected = [_spelling(f) for f in layout.step_formulas(name)]
        for (r, c), want in zip(cells, expected, strict=True):
            if _spelling(calculations.value(r, c)) != want:
                out.append(f"Calculations!{_coordinate(r, c)} ({step.name}) was edited; the "
                           f"engine prices from its declaration: {step.expression}")
    return out


def _spelling(formula: Any) -> Any:
    """A formula as spreadsheets compare it: names, functions and text compare without regard
    to case, and spaces outside text are no edit (an editor may add or drop them)."""
    if not isinstance(formula, str):
        return formula
    return "".join(part.upper() if part.startswith('"') else "".join(part.split()).upper()
                   for part in _TEXT.split(formula))


_TEXT = re.compile(r'("[^"]*")')  # a text literal in a formula (its "" escape: two literals)
