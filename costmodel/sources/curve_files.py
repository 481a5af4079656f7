"""Curve files in, curve files out.

Formats read (detected from the content):

- InferenceX processed rows (``agg_*.json`` written by ``utils/process_result.py``): one
  object, or a list of them; rows of one key (hardware, model, framework, precision, ISL/OSL,
  speculative decoding, disaggregation) form one curve.
- InferenceX public API exports (``/api/v1/benchmarks`` as CSV or JSON, e.g. ``powerx.csv``):
  throughput columns where present; rows that carry only measured power give the implied
  throughput per GPU ``avg_power_w / joules_per_total_token`` (likewise input and output).
- The raw ``benchmark_serving.py`` result, given the GPU count of the run.
- costmodel's own curve CSV, documented in the README ("Curve files"): one row a point, unit
  in each numeric column header (``interactivity [token/s/user]``, ``tbt [ms]``...).
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..curves import Curve, CurveKey
from ..inputs import InputError
from ..units import UnitInputError, parse_quantity, parse_unit

__all__ = ["read_curves", "read_curve_text", "write_curves_csv", "curves_csv_text",
           "CSV_COLUMNS", "KEY_COLUMNS"]

KEY_COLUMNS = ["hardware", "model", "framework", "precision", "isl", "osl", "spec_decoding",
               "disaggregated"]
# numeric column -> canonical unit; the CSV header names a unit for each
CSV_COLUMNS = {"concurrency": "dimensionless", "interactivity": "token/s/user",
               "throughput": "token/s", "output_throughput": "token/s",
               "input_throughput": "token/s", "ttft": "s", "e2e_latency": "s", "power": "W"}
# alternatives accepted on input and converted to interactivity [token/s/user]
_PER_TOKEN_TIMES = ("tbt", "tpot")
# agreement required between reported and power-implied throughput (InferenceX rounds its
# J/token columns to 6 decimals, so a few parts per thousand is noise, 2% is a disagreement)
AGREEMENT = 0.02


def read_curves(path: str | Path, *, gpus: int | None = None,
                hardware: str | None = None) -> list[Curve]:
    """Read every curve in a file; ``gpus``/``hardware`` are needed for raw benchmark results."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError([(str(p), f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError:
        raise InputError([(str(p), "not UTF-8 text")]) from None
    return read_curve_text(text, name=str(p), gpus=gpus, hardware=hardware)


def read_curve_text(text: str, *, name: str = "<text>", gpus: int | None = None,
                    hardware: str | None = None, max_points: int | None = None,
                    max_points_per_curve: int | None = None) -> list[Curve]:
    """Curves from a file's text (InferenceX rows or API export as JSON or CSV, raw
    benchmark_serving results, costmodel's curve CSV). ``max_points`` bounds the rows read,
    counted before any is parsed; ``max_points_per_curve`` bounds each curve."""
    curves = _read_curve_text(text, name, gpus, hardware, max_points)
    if max_points_per_curve is not None:
        for c in curves:
            if len(c) > max_points_per_curve:
                raise InputError([(name, f"curve {c.key.id} has {len(c):,} points; the limit "
                                         f"is {max_points_per_curve:,} a curve")])
    return curves


def _too_many(name: str, n: int, limit: int | None) -> None:
    if limit is not None and n > limit:
        raise InputError([(name, f"{n:,} rows; the limit is {limit:,} points an upload")])


def _read_curve_text(text: str, name: str, gpus: int | None, hardware: str | None,
                     max_points: int | None) -> list[Curve]:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError([(name, f"malformed JSON at line {exc.lineno}: {exc.msg}")]) \
                from None
        rows = data if isinstance(data, list) else [data]
        _too_many(name, len(rows), max_points)
        if not rows or not all(isinstance(r, dict) for r in rows):
            raise InputError([(name, "expected an object or a list of objects")])
        if "total_token_throughput" in rows[0] and "tput_per_gpu" not in rows[0]:
            return _group([_from_raw_benchmark(r, name, gpus, hardware) for r in rows])
        return _group([_from_inferencex_row(r, name, i) for i, r in enumerate(rows, 1)])
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    _too_many(name, len(lines) - 1, max_points)
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    header = reader.fieldnames or []
    if not header:
        raise InputError([(name, "empty file")])
    if "hw" in header or ("hardware" in header and ("conc" in header or "avg_power_w" in header)):
        rows = list(reader)
        return _group([_from_inferencex_row(r, name, i + 2) for i, r in enumerate(rows)])
    return _read_own_csv(reader, header, name)


# ---- InferenceX ------------------------------------------------------------------------------

def _field(row: dict, *names: str) -> Any:
    for n in names:
        v = row.get(n)
        if v not in (None, ""):
            return v
    return None


def _float(row: dict, where: str, *names: str) -> float | None:
    v = _field(row, *names)
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError([(where, f"{names[0]} must be a number, got {v!r}")])
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError([(where, f"{names[0]} must be a number, got {v!r}")]) from None
    if not math.isfinite(x):
        raise InputError([(where, f"{names[0]} must be finite, got {v!r}")])
    return x


def _bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1", "yes")


def _int(v: float | None) -> int | None:
    return None if v is None else int(v)


def _from_inferencex_row(row: dict, name: str, line: int) -> Curve:
    where = f"{name} row {line}"
    hardware = _field(row, "hw", "hardware")
    model = _field(row, "infmax_model_prefix", "model", "raw_model")
    if not hardware or not model:
        raise InputError([(where, "needs hw/hardware and model")])
    key = CurveKey(
        hardware=str(hardware).lower(), model=str(model),
        framework=_field(row, "framework"), precision=_field(row, "precision"),
        isl=_int(_float(row, where, "isl")), osl=_int(_float(row, where, "osl")),
        spec_decoding=_field(row, "spec_decoding", "spec_method"),
        disaggregated=_bool(_field(row, "disagg", "disaggregated")))
    point: dict[str, float | None] = {
        "concurrency": _float(row, where, "conc", "max_concurrency"),
        "throughput": _float(row, where, "tput_per_gpu"),
        "output_throughput": _float(row, where, "output_tput_per_gpu"),
        "input_throughput": _float(row, where, "input_tput_per_gpu"),
        "ttft": _float(row, where, "median_ttft"),
        "e2e_latency": _float(row, where, "median_e2el"),
        "power": _float(row, where, "avg_power_w"),
    }
    intvty = _float(row, where, "median_intvty")
    tpot = _float(row, where, "median_tpot")
    point["interactivity"] = intvty if intvty is not None else (1 / tpot if tpot else None)
    notes = _implied_from_power(row, where, point)
    if point["throughput"] is None:
        raise InputError([(where, "no throughput: needs tput_per_gpu, or avg_power_w with "
                                  "joules_per_total_token")])
    curve = Curve.from_points(key, [point], source=_row_source(row, name))
    curve.notes.extend(notes)
    return curve


def _implied_from_power(row: dict, where: str, point: dict) -> list[str]:
    """Fill or check throughputs from measured power and J/token: tokens/s = W / (J/token)."""
    notes: list[str] = []
    power = point["power"]
    if power is None:
        return notes
    valid = _field(row, "power_valid")
    if valid is not None and not _bool(valid):
        notes.append(f"{where}: power_valid is {valid!r}; measured power not trusted")
    for kind, column in (("throughput", "joules_per_total_token"),
                         ("output_throughput", "joules_per_output_token"),
                         ("input_throughput", "joules_per_input_token")):
        jpt = _float(row, where, column)
        if not jpt:
            continue
        implied = power / jpt
        if point[kind] is None:
            point[kind] = implied
        elif abs(implied / point[kind] - 1) > AGREEMENT:
            notes.append(f"{where}: {kind} {point[kind]:.6g} token/s disagrees with "
                         f"avg_power_w / {column} = {implied:.6g} token/s")
    return notes


def _row_source(row: dict, name: str) -> str:
    bits = [f"InferenceX via {Path(name).name}"]
    for k in ("date", "run_url", "image"):
        v = _field(row, k)
        if v:
            bits.append(f"{k} {v}")
    return ", ".join(bits)


def _from_raw_benchmark(row: dict, name: str, gpus: int | None,
                        hardware: str | None) -> Curve:
    if not gpus or not hardware:
        raise InputError([(name, "a raw benchmark_serving result needs the run's GPU count "
                                 "and hardware (--gpus, --hardware)")])
    where = name
    tpot_ms = _float(row, where, "median_tpot_ms")
    point = {
        "concurrency": _float(row, where, "max_concurrency"),
        "throughput": _float(row, where, "total_token_throughput") / gpus,
        "output_throughput": (_float(row, where, "output_throughput") or math.nan) / gpus,
        "input_throughput": ((_float(row, where, "total_token_throughput") or math.nan)
                             - (_float(row, where, "output_throughput") or math.nan)) / gpus,
        "interactivity": 1000.0 / tpot_ms if tpot_ms else None,
        "ttft": (_float(row, where, "median_ttft_ms") or math.nan) / 1000.0,
        "e2e_latency": (_float(row, where, "median_e2el_ms") or math.nan) / 1000.0,
    }
    key = CurveKey(hardware=hardware.lower(), model=str(_field(row, "model_id") or "unknown"),
                   framework=_field(row, "backend"))
    return Curve.from_points(key, [point], source=f"benchmark_serving result {Path(name).name}"
                             f", {row.get('date', 'undated')}, {gpus} GPUs")


def _group(curves: Iterable[Curve]) -> list[Curve]:
    by_key: dict[CurveKey, Curve] = {}
    for c in curves:
        by_key[c.key] = by_key[c.key].merged(c) if c.key in by_key else c
    return list(by_key.values())


# ---- costmodel's own CSV ----------------------------------------------------------------------

def _parse_header(header: list[str], name: str) -> dict[str, tuple[str, str | None]]:
    """column text -> (field, unit); numeric columns must name a unit in brackets."""
    out: dict[str, tuple[str, str | None]] = {}
    for col in header:
        text = col.strip()
        field, _, rest = text.partition("[")
        field = field.strip()
        unit = rest.rstrip("]").strip() if rest else None
        if field in KEY_COLUMNS or field in ("source", "note"):
            out[col] = (field, None)
            continue
        if field not in CSV_COLUMNS and field not in _PER_TOKEN_TIMES:
            raise InputError([(name, f"unknown column {text!r} (known: "
                                     f"{', '.join([*KEY_COLUMNS, *CSV_COLUMNS, 'tbt', 'tpot'])})")])
        if unit is None and field != "concurrency":
            raise InputError([(name, f"column {field!r} needs its unit, e.g. "
                                     f"'{field} [{CSV_COLUMNS.get(field, 'ms')}]'")])
        if unit is not None:
            try:
                parse_unit(unit)
            except UnitInputError as exc:
                raise InputError([(name, f"column {text!r}: {exc}")]) from None
        out[col] = (field, unit)
    fields = {f for f, _ in out.values()}
    for required in ("hardware", "model"):
        if required not in fields:
            raise InputError([(name, f"missing column {required!r}")])
    if not fields & {"throughput", "output_throughput"}:
        raise InputError([(name, "missing column 'throughput [token/s]'")])
    return out


def _read_own_csv(reader: csv.DictReader, header: list[str], name: str) -> list[Curve]:
    columns = _parse_header(header, name)
    curves: list[Curve] = []
    for line, row in enumerate(reader, 2):
        where = f"{name} line {line}"
        key_values: dict[str, Any] = {}
        point: dict[str, float | None] = {}
        source = ""
        for col, raw in row.items():
            if col is None:
                raise InputError([(where, "more fields than columns")])
            field, unit = columns[col]
            raw = (raw or "").strip()
            if field == "source":
                source = raw
            elif field == "note":
                continue
            elif field in KEY_COLUMNS:
                key_values[field] = raw or None
            elif raw:
                point.update(_numeric(field, raw, unit, where))
        try:
            key = CurveKey(
                hardware=key_values["hardware"], model=key_values["model"],
                framework=key_values.get("framework"), precision=key_values.get("precision"),
                isl=_int_text(key_values.get("isl"), where),
                osl=_int_text(key_values.get("osl"), where),
                spec_decoding=key_values.get("spec_decoding"),
                disaggregated=_bool(key_values.get("disaggregated")))
        except KeyError as exc:
            raise InputError([(where, f"{exc.args[0]} is empty")]) from None
        if not key.hardware or not key.model:
            raise InputError([(where, "hardware and model are required")])
        curves.append(Curve.from_points(key, [point], source=source or Path(name).name))
    if not curves:
        raise InputError([(name, "no points")])
    return _group(curves)


def _numeric(field: str, raw: str, unit: str | None, where: str) -> dict[str, float]:
    try:
        if field == "concurrency":
            value = float(raw)
            if value <= 0 or not math.isfinite(value):
                raise UnitInputError("must be a positive number")
            return {"concurrency": value}
        if field in _PER_TOKEN_TIMES:
            ms = parse_quantity({"value": float(raw), "unit": unit}, "ms", allow_zero=False)
            return {"interactivity": 1000.0 / ms}
        value = parse_quantity({"value": float(raw), "unit": unit}, CSV_COLUMNS[field],
                               allow_zero=field != "throughput")
    except ValueError as exc:  # UnitInputError, and float() of a non-number
        msg = str(exc) if isinstance(exc, UnitInputError) else f"cannot read {raw!r}"
        raise InputError([(f"{where} {field}", msg)]) from None
    return {field: value}


def _int_text(v: str | None, where: str) -> int | None:
    if v is None:
        return None
    try:
        return int(float(v))
    except ValueError:
        raise InputError([(where, f"ISL/OSL must be a whole number, got {v!r}")]) from None


def curves_csv_text(curves: Iterable[Curve], comments: Iterable[str] = ()) -> str:
    """costmodel's curve CSV for these curves (the format :func:`read_curves` reads back),
    after ``# `` comment lines (provenance)."""
    buf = io.StringIO()
    for line in comments:
        buf.write(f"# {line}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*KEY_COLUMNS, *(f"{c} [{u}]" if u != "dimensionless" else c
                                for c, u in CSV_COLUMNS.items()), "source"])
    for curve in curves:
        k = curve.key
        for i in range(len(curve)):
            values = [getattr(curve, c)[i] for c in CSV_COLUMNS]
            w.writerow([k.hardware, k.model, k.framework or "", k.precision or "",
                        k.isl or "", k.osl or "", k.spec_decoding or "",
                        "" if k.disaggregated is None else str(k.disaggregated).lower(),
                        *("" if np.isnan(v) else repr(float(v)) for v in values),
                        curve.source])
    return buf.getvalue()


def write_curves_csv(curves: Iterable[Curve], path: str | Path,
                     comments: Iterable[str] = ()) -> None:
    """Write atomically: a half-written file never replaces a good one."""
    p = Path(path)
    text = curves_csv_text(curves, comments)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
