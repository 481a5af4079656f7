"""Reading an edited workbook back: inputs by their defined names, validated like any input.

An uploaded file is untrusted. Before openpyxl parses it, the package itself is checked: its
size, the uncompressed size and compression ratio of every member (zip bombs), macros
(``vbaProject.bin``, macro sheets), external links, and XML document type declarations
(external entities, entity expansion). Then the structure the export wrote must still be
there: the sheets, the Meta record, a defined name for every input, each input's unit. Only
then are the values read, validated exactly like a scenario file or API body, and priced.
"""
from __future__ import annotations

import io
import json
import math
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from openpyxl.workbook.workbook import Workbook

from ..chain import price
from ..inputs import InputError, validate_scenario
from ..model import MODEL
from ..results import Result
from .excel_formula import to_formula
from .export import COUNT_INPUTS, META_FORMAT
from .names import name_target, named_cells

__all__ = ["read_workbook", "WorkbookImport", "InputChange", "MAX_BYTES", "check_package"]

MAX_BYTES = 20 * 2**20  # an exported comparison is ~100 kB
MAX_UNCOMPRESSED = 100 * 2**20
MAX_RATIO = 100  # uncompressed / compressed, per member above 1 MiB
MAX_MEMBERS = 2000
_REQUIRED_SHEETS = ("Inputs", "Calculations", "Meta")
_FORBIDDEN_MEMBERS = re.compile(r"vbaProject\.bin$|^xl/macrosheets/|^xl/externalLinks/|"
                                r"^xl/activeX/|\.bin$", re.IGNORECASE)
_DTD = re.compile(rb"<!DOCTYPE|<!ENTITY", re.IGNORECASE)


@dataclass(frozen=True)
class InputChange:
    """An input whose value differs from what was exported [the input's unit]."""
    system: str
    name: str
    before: Any
    after: Any
    unit: str


@dataclass
class WorkbookImport:
    results: list[Result]
    changes: list[InputChange] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _fail(message: str, where: str = "workbook") -> InputError:
    return InputError([(where, message)])


def check_package(data: bytes) -> None:
    """Refuse what should never be parsed: oversize, zip bombs, macros, external content."""
    if len(data) > MAX_BYTES:
        raise _fail(f"file is {len(data) / 2**20:.1f} MiB; the limit is "
                    f"{MAX_BYTES / 2**20:.0f} MiB")
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise _fail("not an .xlsx file (not a zip package)")
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = z.infolist()
        if len(members) > MAX_MEMBERS:
            raise _fail(f"{len(members)} package members; the limit is {MAX_MEMBERS}")
        total = 0
        for m in members:
            total += m.file_size
            if total > MAX_UNCOMPRESSED:
                raise _fail("uncompressed content exceeds "
                            f"{MAX_UNCOMPRESSED / 2**20:.0f} MiB (zip bomb?)")
            if m.file_size > 2**20 and m.file_size > MAX_RATIO * max(m.compress_size, 1):
                raise _fail(f"{m.filename} expands {m.file_size / max(m.compress_size, 1):.0f}"
                            f"-fold (zip bomb?)")
            if _FORBIDDEN_MEMBERS.search(m.filename):
                raise _fail(f"{m.filename}: macros, ActiveX and external links are not accepted")
        for m in members:
            if m.filename.lower().endswith((".xml", ".rels", ".vml")):
                with z.open(m) as fh:
                    if _DTD.search(fh.read()):
                        raise _fail(f"{m.filename}: XML document type declarations (entities) "
                                    f"are not accepted")
        content_types = z.read("[Content_Types].xml") if "[Content_Types].xml" in \
            z.namelist() else b""
        if b"macroEnabled" in content_types:
            raise _fail("macro-enabled workbook: not accepted")


def read_workbook(source: bytes | str | Path, name: str = "workbook") -> WorkbookImport:
    """Read, validate and price every system of an edited workbook. Raises InputError."""
    data = Path(source).read_bytes() if isinstance(source, (str, Path)) else source
    check_package(data)
    try:
        wb = load_workbook(io.BytesIO(data), data_only=False)
    except Exception as exc:  # openpyxl raises many kinds on a damaged package
        raise _fail(f"cannot open as a workbook: {type(exc).__name__}: {exc}") from None
    missing = [s for s in _REQUIRED_SHEETS if s not in wb.sheetnames]
    if missing:
        raise _fail(f"sheet {missing[0]!r} is missing (renamed or deleted?); a workbook "
                    f"exported by costmodel has {', '.join(_REQUIRED_SHEETS)}")
    payloads = _meta(wb)
    results, changes, warnings = [], [], []
    values = {n: _read_name(wb, n, len(payloads)) for n in [*MODEL.inputs, *MODEL.enums]}
    for i, payload in enumerate(payloads):
        original = payload["scenario"]
        label = original.get("name", f"system {i + 1}")
        data_i = _apply(original, {n: v[i] for n, v in values.items()}, label)
        try:
            scenario = validate_scenario(data_i)
        except InputError as exc:
            raise InputError([(f"{label}: {p}", m) for p, m in exc.errors]) from None
        before = validate_scenario(original).to_inputs()
        after = scenario.to_inputs()
        for n in [*MODEL.inputs, *MODEL.enums]:
            if not _same(before[n], after[n]):
                unit = MODEL.inputs[n].unit if n in MODEL.inputs else ""
                changes.append(InputChange(label, n, _shown(n, before[n]), _shown(n, after[n]),
                                           unit))
        provenance = dict(payload.get("provenance", {}))
        for c in changes:
            if c.system == label:
                key = (MODEL.inputs[c.name].key if c.name in MODEL.inputs
                       else MODEL.enums[c.name].key)
                provenance[key] = f"edited in workbook {name}"
        results.append(price(scenario, provenance))
        results[-1].defaults_used = [d for d in payload.get("defaults_used", [])
                                     if not any(c.system == label and
                                                d.startswith(_key(c.name)) for c in changes)]
    warnings.extend(_formula_warnings(wb, len(payloads)))
    return WorkbookImport(results, changes, warnings)


def _key(name: str) -> str:
    return MODEL.inputs[name].key if name in MODEL.inputs else MODEL.enums[name].key


def _meta(wb: Workbook) -> list[dict]:
    ws = wb["Meta"]
    if ws.cell(1, 1).value != META_FORMAT:
        raise _fail(f"Meta!A1 is not {META_FORMAT!r}: not a costmodel workbook, or edited")
    payloads = []
    for row in ws.iter_rows(min_row=2, values_only=True):
        if not row or row[0] is None:
            break
        text = "".join(str(c) for c in row[1:] if c is not None)
        try:
            payload = json.loads(text)
        except json.JSONDecodeError:
            raise _fail(f"Meta row for {row[0]!r} is damaged") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("scenario"), dict):
            raise _fail(f"Meta row for {row[0]!r} is damaged")
        payloads.append(payload)
    if not payloads:
        raise _fail("Meta lists no system")
    return payloads


def _read_name(wb: Workbook, name: str, n: int) -> list[Any]:
    target = name_target(wb, name)
    if target is None:
        missing = wb.defined_names.get(name) is None
        raise _fail(f"defined name {name!r} is missing" if missing else
                    f"defined name {name!r} does not point at the Inputs sheet",
                    "workbook names")
    sheet = target[0]
    flat = named_cells(wb, name)
    if len(flat) != n:
        raise _fail(f"defined name {name!r} covers {len(flat)} cells for {n} systems",
                    "workbook names")
    if name in MODEL.inputs:
        unit_cell = wb[sheet].cell(flat[0].row, 3)
        declared = MODEL.inputs[name].unit
        if (unit_cell.value or "") != declared:
            raise _fail(f"the unit of {name} was changed from {declared!r} to "
                        f"{unit_cell.value!r}; the formulas assume {declared!r}",
                        f"{sheet}!{unit_cell.coordinate}")
    return [(c.coordinate, sheet, c.value) for c in flat]


def _apply(original: dict, cells: dict[str, tuple[str, str, Any]], label: str) -> dict:
    """The exported scenario with the workbook's input values put in."""
    data = json.loads(json.dumps(original))  # a deep copy of plain data
    for name, (coord, sheet, raw) in cells.items():
        where = f"{sheet}!{coord} ({name})"
        if name in MODEL.enums:
            enum = MODEL.enums[name]
            if not isinstance(raw, str) or raw not in enum.levels:
                raise _fail(f"expected one of {', '.join(enum.levels)}, got {raw!r}", where)
            continue
        value = _number(raw, name, where)
        if value is not None and name not in COUNT_INPUTS:  # counts are plain integers
            value = {"value": value, "unit": MODEL.inputs[name].unit}
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
    if enums["accelerator_cost_basis"] == "own":
        data.get("accelerator", {}).pop("hourly_price", None)
    elif "hourly_price" not in data.get("accelerator", {}):
        raise _fail("accelerator_cost_basis is rent but accelerator_hourly_price is empty",
                    f"{label}: accelerator_hourly_price")
    return data


def _number(raw: Any, name: str, where: str) -> float | int | None:
    if raw is None or raw == "#N/A":
        if MODEL.inputs[name].optional:
            return None
        raise _fail("required, but the cell is empty", where)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        if isinstance(raw, str) and raw.startswith("="):
            raise _fail("an input must be a value, not a formula", where)
        raise _fail(f"expected a number, got {raw!r}", where)
    if name in COUNT_INPUTS:
        if float(raw) != int(raw):
            raise _fail(f"expected a whole number, got {raw!r}", where)
        return int(raw)
    return float(raw)


def _put(data: dict, key: str, value: Any) -> None:
    parts = key.split(".")
    node = data
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


def _same(a: float, b: float) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _shown(name: str, v: float | int) -> Any:
    if name in MODEL.enums:
        return MODEL.enums[name].levels[int(v)]
    return None if isinstance(v, float) and math.isnan(v) else v


def _formula_warnings(wb: Workbook, n: int) -> list[str]:
    """Calculations edited by hand are not priced: say so."""
    out: list[str] = []
    for step in MODEL.steps.values():
        try:
            cells = named_cells(wb, step.name)
        except KeyError:
            out.append(f"step {step.name}: its defined name is missing; priced from the "
                       f"engine's declaration")
            continue
        expected = "=" + to_formula(step.tree)
        for c in cells:
            if c.value != expected:
                out.append(f"Calculations!{c.coordinate} ({step.name}) was edited; the engine "
                           f"prices from its declaration: {step.expression}")
    return out
