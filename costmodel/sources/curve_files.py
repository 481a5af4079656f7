"""Curve files in, curve files out.

Formats read (detected from the content):

- InferenceX public API responses (``GET /api/v1/benchmarks?model=...`` saved as JSON): a list
  of rows that nest their numbers in ``metrics``; rows of one configuration (hardware, model,
  framework, precision, ISL/OSL, speculative method, disaggregation and the GPU counts
  ``num_prefill_gpu``/``num_decode_gpu``) form one curve.
- InferenceX processed rows (``agg_*.json`` written by ``utils/process_result.py``): one
  object, or a list of them; and flat exports of the public API (CSV or JSON, e.g.
  ``powerx.csv``): throughput columns where present; rows that carry only measured power give
  the implied throughput per GPU ``avg_power_w / joules_per_total_token`` (likewise input and
  output). Rows of one key (the configuration above without the GPU counts: curve ids stay as
  they were) form one curve.
- The raw ``benchmark_serving.py`` result, given the GPU count of the run.
- costmodel's own curve CSV, documented in docs/curves.md#curve-files: one row a point, unit
  in each numeric column header (``interactivity [token/s/user]``, ``tbt [ms]``...).

Of every InferenceX row: disaggregated rows' ``output_tput_per_gpu`` (per decode GPU) and
``input_tput_per_gpu`` (per prefill GPU) are put per GPU of the whole deployment, as
``tput_per_gpu`` is; latency statistics (mean, median, p90, p99 of interactivity, TTFT, E2E
latency, TPOT, ITL) are kept; a row repeating another's configuration, parallelism and
concurrency is dropped (the newer date kept); rows whose ``benchmark_type`` is not
``single_turn`` are skipped. Each of these, and every disagreement found, is a note.
"""
from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..model.curves import LATENCY_COLUMNS, LATENCY_METRICS, PERCENTILES, Curve, CurveKey
from ..model.inputs import InputError
from ..model.units import UnitInputError, parse_quantity, parse_unit
from .cells import neutralise_cell, unneutralise_cell

__all__ = ["read_curves", "read_curve_text", "write_curves_csv", "curves_csv_text",
           "CSV_COLUMNS", "KEY_COLUMNS", "GPU_COLUMNS", "LATENCY_CSV_COLUMNS",
           "MAX_FILE_BYTES", "INFERENCEX_HARDWARE"]

KEY_COLUMNS = ["hardware", "model", "framework", "precision", "isl", "osl", "spec_decoding",
               "disaggregated"]
# key columns written only when a curve has them (a disaggregated deployment's prefill and
# decode GPUs; for one that is not, both count the deployment's GPUs)
GPU_COLUMNS = ["prefill_gpus", "decode_gpus"]
# numeric column -> canonical unit; the CSV header names a unit for each
CSV_COLUMNS = {"concurrency": "dimensionless", "interactivity": "token/s/user",
               "throughput": "token/s", "output_throughput": "token/s",
               "input_throughput": "token/s", "ttft": "s", "e2e_latency": "s", "power": "W"}
# latency statistics other than the medians above (interactivity_p90, ttft_p90, tpot_median,
# ...), written only when a curve has them
LATENCY_CSV_COLUMNS = {c: LATENCY_METRICS[c.rsplit("_", 1)[0]] for c in LATENCY_COLUMNS}
# alternatives accepted on input and converted to interactivity [token/s/user]
_PER_TOKEN_TIMES = ("tbt", "tpot")
# agreement required between reported and power-implied throughput (InferenceX rounds its
# J/token columns to 6 decimals, so a few parts per thousand is noise, 2% is a disagreement),
# and between the output and input throughputs and the total
AGREEMENT = 0.02
# agreement required between avg_power_w / tput_per_gpu and the row's joules_per_total_token
JOULES_AGREEMENT = 0.005
# a curve file larger than this is refused before it is read (an InferenceX API response of
# one model is a few MB; 10,000 rows of it about 15 MB)
MAX_FILE_BYTES = 20_000_000
# hardware names the InferenceX dashboard knows (its HW_REGISTRY); others are taken as they
# are, with a note: a curve's hardware is a free name, the scenario's accelerator is priced
INFERENCEX_HARDWARE = ("h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x",
                       "mi355x")


def read_curves(path: str | Path, *, gpus: int | None = None,
                hardware: str | None = None) -> list[Curve]:
    """Read every curve in a file; ``gpus``/``hardware`` are needed for raw benchmark results.
    A file over :data:`MAX_FILE_BYTES` is refused before it is read."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError([(str(p), _too_large(size))])
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError([(str(p), f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError:
        raise InputError([(str(p), "not UTF-8 text")]) from None
    return read_curve_text(text, name=str(p), gpus=gpus, hardware=hardware)


def _too_large(size: int) -> str:
    return (f"{size / 1e6:,.1f} MB; the limit is {MAX_FILE_BYTES / 1e6:g} MB a curve file "
            f"(split it, e.g. by model or hardware)")


def read_curve_text(text: str, *, name: str = "<text>", gpus: int | None = None,
                    hardware: str | None = None, max_points: int | None = None,
                    max_points_per_curve: int | None = None,
                    max_chars: int | None = MAX_FILE_BYTES) -> list[Curve]:
    """Curves from a file's text (InferenceX rows or API export as JSON or CSV, raw
    benchmark_serving results, costmodel's curve CSV). ``max_chars`` bounds the text's length,
    checked first; ``max_points`` bounds the rows read, counted before any is parsed;
    ``max_points_per_curve`` bounds each curve."""
    if max_chars is not None and len(text) > max_chars:
        raise InputError([(name, _too_long(len(text), max_chars))])
    curves = _read_curve_text(text, name, gpus, hardware, max_points)
    if max_points_per_curve is not None:
        for c in curves:
            if len(c) > max_points_per_curve:
                raise InputError([(name, f"curve {c.key.id} has {len(c):,} points; the limit "
                                         f"is {max_points_per_curve:,} a curve")])
    return curves


def _too_long(n: int, limit: int) -> str:
    return (f"{n:,} characters; the limit is {limit:,} a curve file (split it, e.g. by model "
            f"or hardware)")


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
        except RecursionError:
            raise InputError([(name, "JSON nested too deeply")]) from None
        rows = data if isinstance(data, list) else [data]
        _too_many(name, len(rows), max_points)
        if not rows or not all(isinstance(r, dict) for r in rows):
            raise InputError([(name, "expected an object or a list of objects")])
        if "total_token_throughput" in rows[0] and "tput_per_gpu" not in rows[0]:
            return _group([_from_raw_benchmark(r, name, gpus, hardware) for r in rows])
        nested = any("metrics" in r for r in rows)
        return _inferencex_curves(rows, name, 1, nested=nested)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    _too_many(name, len(lines) - 1, max_points)
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    header = reader.fieldnames or []
    if not header:
        raise InputError([(name, "empty file")])
    if "hw" in header or ("hardware" in header and ("conc" in header or "avg_power_w" in header)):
        return _inferencex_curves(list(reader), name, 2, nested=False)
    return _read_own_csv(reader, header, name)


# ---- InferenceX ------------------------------------------------------------------------------

def _field(row: dict, *names: str) -> Any:
    return _named(row, *names)[1]


def _named(row: dict, *names: str) -> tuple[str, Any]:
    """(the first of ``names`` the row gives, its value); (``names[0]``, None) if none."""
    for n in names:
        v = row.get(n)
        if v not in (None, ""):
            return n, v
    return names[0], None


def _float(row: dict, where: str, *names: str) -> float | None:
    name, v = _named(row, *names)
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError([(where, f"{name} must be a number, got {v!r}")])
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError([(where, f"{name} must be a number, got {_short(v)}")]) from None
    if not math.isfinite(x):
        raise InputError([(where, f"{name} must be finite, got {_short(v)}")])
    if x < 0:
        raise InputError([(where, f"{name} must not be negative, got {_short(v)}")])
    return x


def _positive(row: dict, where: str, *names: str) -> float | None:
    """A number that must be above zero when given (a concurrency, a total throughput)."""
    x = _float(row, where, *names)
    if x == 0:
        name, v = _named(row, *names)
        raise InputError([(where, f"{name} must be above zero, got {_short(v)}")])
    return x


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _text(row: dict, where: str, *names: str) -> str | None:
    """A name-like field (hardware, model, framework...): text or a number, else an error."""
    name, v = _named(row, *names)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise InputError([(where, f"{name} must be text, got {_short(v)}")])
    return _name(str(v), where, name)


def _name(text: str, where: str, what: str) -> str:
    """A key's text: printable (a line break or control character would change the curve's id
    on its way through the curve CSV)."""
    if not text.isprintable():
        raise InputError([(where, f"{what} must be printable text, got {_short(text)}")])
    return text


def _clean(text: str) -> str:
    """Free text (a source, a note) on one line: control characters become spaces."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else " "
                                                     for ch in text)


def _bool(v: Any) -> bool | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return v
    return str(v).strip().lower() in ("true", "1", "yes")


def _int(v: float | None) -> int | None:
    return None if v is None else int(v)


def _count(row: dict, where: str, name: str) -> int | None:
    """A GPU count: a whole number, None when absent or zero."""
    v = _float(row, where, name)
    if v is None or v == 0:
        return None
    if v != int(v):
        raise InputError([(where, f"{name} must be a whole number, got {row.get(name)!r}")])
    return int(v)


# InferenceX metric name of each latency metric: ``{stat}_{name}`` (median_intvty, p90_ttft)
_INFX_LATENCY = {"interactivity": "intvty", "ttft": "ttft", "e2e_latency": "e2el",
                 "tpot": "tpot", "itl": "itl"}
# what makes two rows of one curve the same measurement, with the concurrency (run metadata,
# date, run_url, image, ids, is not part of it)
_SETUP = ("tp", "ep", "dp_attention", "prefill_tp", "prefill_ep", "prefill_dp_attention",
          "prefill_num_workers", "decode_tp", "decode_ep", "decode_dp_attention",
          "decode_num_workers", "num_prefill_gpu", "num_decode_gpu", "is_multinode",
          "offload_mode", "kv_transfer_lib")


@dataclass
class _Row:
    """One InferenceX row read: its curve key, its point, what it says, where it was."""
    key: CurveKey
    point: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    setup: tuple = ()
    date: str = ""
    line: int = 0


def _inferencex_curves(rows: list[dict], name: str, first: int, *, nested: bool) -> list[Curve]:
    """Curves of InferenceX rows (numbered from ``first`` in notes and errors)."""
    parsed: list[_Row] = []
    other_types: dict[str, list[int]] = {}
    for line, row in enumerate(rows, first):
        btype = row.get("benchmark_type")
        if btype not in (None, "", "single_turn"):
            other_types.setdefault(str(btype)[:40], []).append(line)
            continue
        parsed.append(_from_inferencex_row(row, name, line, nested=nested))
    file_notes = [f"{name}: {len(lines):,} rows of benchmark_type {btype!r} skipped (rows "
                  f"{_rows(lines)}): a curve is a single_turn sweep at one ISL/OSL"
                  for btype, lines in other_types.items()]
    if not parsed:
        raise InputError([(name, "no single_turn rows" if other_types else "no rows")])
    kept: dict[tuple, _Row] = {}
    dropped: list[tuple[_Row, tuple]] = []  # (a row dropped, what it measured)
    for r in parsed:
        conc = r.point.get("concurrency")
        ident = (r.key, r.setup, conc) if conc is not None else (r.key, r.setup, id(r))
        other = kept.get(ident)
        if other is None:
            kept[ident] = r
        elif r.date > other.date:  # ISO dates: the newer run is kept
            kept[ident] = r
            dropped.append((other, ident))
        else:
            dropped.append((r, ident))
    for gone, ident in dropped:
        stays = kept[ident]
        first, second = sorted((gone.line, stays.line))
        stays.notes.append(
            f"{name}: rows {first} and {second} measure the same configuration, parallelism "
            f"and concurrency {gone.point['concurrency']:g}: row {stays.line} kept"
            f"{f' (date {stays.date})' if stays.date else ''}, row {gone.line} dropped"
            f"{f' (date {gone.date})' if gone.date else ''}")
    kept_rows = {id(r) for r in kept.values()}
    by_key: dict[CurveKey, list[_Row]] = {}
    for r in parsed:  # in the file's order
        if id(r) in kept_rows:
            by_key.setdefault(r.key, []).append(r)
    curves = []
    for key, members in by_key.items():
        curve = Curve.from_points(key, [m.point for m in members])
        curve.notes.extend(n for m in members for n in m.notes)
        if key.hardware not in INFERENCEX_HARDWARE:
            curve.notes.append(f"hardware {key.hardware!r} is not one InferenceX publishes "
                               f"({', '.join(INFERENCEX_HARDWARE)}): taken as a free name")
        curves.append(curve)
    curves[0].notes[:0] = file_notes
    return curves


def _rows(lines: list[int], most: int = 5) -> str:
    shown = ", ".join(str(n) for n in lines[:most])
    return shown if len(lines) <= most else f"{shown}, ..."


def _from_inferencex_row(row: dict, name: str, line: int, *, nested: bool) -> _Row:
    where = f"{name} row {line}"
    if nested:
        metrics = row.get("metrics")
        if metrics is None:
            raise InputError([(where, 'no "metrics": a row of /api/v1/benchmarks carries its '
                                      'numbers in a "metrics" object')])
        if not isinstance(metrics, dict):
            raise InputError([(where, f"metrics must be an object, got {_short(metrics)}")])
        row = {**metrics, **{k: v for k, v in row.items() if k != "metrics"}}
    hardware = _text(row, where, "hw", "hardware")
    model = _text(row, where, "infmax_model_prefix", "model", "raw_model")
    if not hardware or not model:
        raise InputError([(where, "needs hw/hardware and model")])
    disagg = _bool(_field(row, "disagg", "disaggregated"))
    prefill_gpus = _count(row, where, "num_prefill_gpu")
    decode_gpus = _count(row, where, "num_decode_gpu")
    counted = nested and prefill_gpus is not None and decode_gpus is not None
    key = CurveKey(
        hardware=hardware.lower(), model=model,
        framework=_text(row, where, "framework"), precision=_text(row, where, "precision"),
        isl=_int(_float(row, where, "isl")), osl=_int(_float(row, where, "osl")),
        spec_decoding=_text(row, where, "spec_decoding", "spec_method"),
        disaggregated=disagg, prefill_gpus=prefill_gpus if counted else None,
        decode_gpus=decode_gpus if counted else None)
    point: dict[str, Any] = {
        "concurrency": _positive(row, where, "conc", "max_concurrency"),
        "throughput": _positive(row, where, "tput_per_gpu"),
        "output_throughput": _float(row, where, "output_tput_per_gpu"),
        "input_throughput": _float(row, where, "input_tput_per_gpu"),
        "power": _float(row, where, "avg_power_w"),
    }
    point.update(_latencies(row, where))
    notes: list[str] = []
    point_notes: list[str] = []
    if disagg and (point["output_throughput"] is not None
                   or point["input_throughput"] is not None):
        _per_deployment_gpu(point, prefill_gpus, decode_gpus, where, notes, point_notes)
    notes += _implied_from_power(row, where, point)
    if point["throughput"] is None:
        raise InputError([(where, "no throughput: needs tput_per_gpu, or avg_power_w with "
                                  "joules_per_total_token")])
    notes += _parts_and_total(point, where, bool(point_notes))
    point["source"] = _row_source(row, name)
    point["note"] = "; ".join(point_notes)
    setup = tuple(str(row.get(f)).lower() for f in _SETUP)
    date = str(_field(row, "date") or "")
    return _Row(key, point, notes, setup, date, line)


def _latencies(row: dict, where: str) -> dict[str, float | None]:
    """Median interactivity, TTFT and E2E latency as the curve's own columns; the other
    statistics under their LATENCY_COLUMNS names. Interactivity at a percentile falls back on
    1 / TPOT at it (not the mean: the mean of 1 / x is not 1 / the mean of x)."""
    out: dict[str, float | None] = {}
    for metric, abbr in _INFX_LATENCY.items():
        for stat in PERCENTILES:
            value = _float(row, where, f"{stat}_{abbr}")
            if metric == "interactivity" and value is None and stat != "mean":
                tpot = _float(row, where, f"{stat}_tpot")
                value = 1 / tpot if tpot else None
            name = metric if stat == "median" and metric in CSV_COLUMNS else f"{metric}_{stat}"
            out[name] = value
    return out


def _per_deployment_gpu(point: dict, prefill: int | None, decode: int | None, where: str,
                        notes: list[str], point_notes: list[str]) -> None:
    """A disaggregated row's output throughput is per decode GPU and its input throughput per
    prefill GPU: put both per GPU of the whole deployment (prefill + decode), as the total."""
    if prefill is None or decode is None:
        point["output_throughput"] = point["input_throughput"] = None
        notes.append(f"{where}: disaggregated without num_prefill_gpu and num_decode_gpu: its "
                     f"output_tput_per_gpu (per decode GPU) and input_tput_per_gpu (per prefill "
                     f"GPU) cannot be put per GPU of the deployment and are left out")
        return
    total = prefill + decode
    if point["output_throughput"] is not None:
        point["output_throughput"] *= decode / total
        point_notes.append(f"output throughput = output_tput_per_gpu (per decode GPU) x "
                           f"{decode} decode GPUs / {total} GPUs")
    if point["input_throughput"] is not None:
        point["input_throughput"] *= prefill / total
        point_notes.append(f"input throughput = input_tput_per_gpu (per prefill GPU) x "
                           f"{prefill} prefill GPUs / {total} GPUs")


def _parts_and_total(point: dict, where: str, converted: bool) -> list[str]:
    out, inp, total = (point[k] for k in ("output_throughput", "input_throughput",
                                          "throughput"))
    if out is None or inp is None or not total:
        return []
    parts = out + inp
    if abs(parts / total - 1) <= AGREEMENT:
        return []
    how = " (per deployment GPU, converted)" if converted else ""
    return [f"{where}: output + input throughput{how} {parts:.6g} token/s disagrees with "
            f"tput_per_gpu {total:.6g} token/s ({(parts / total - 1) * 100:+.3g}%)"]


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
        reported = point[kind]
        if reported is None:
            point[kind] = implied
        elif not reported:
            notes.append(f"{where}: {kind} is 0 token/s while avg_power_w / {column} = "
                         f"{implied:.6g} token/s")
        elif kind == "throughput":  # J/token is what a buyer sees: the tighter check
            derived = power / reported
            if abs(derived / jpt - 1) > JOULES_AGREEMENT:
                notes.append(f"{where}: avg_power_w / tput_per_gpu = {power:.6g} W / "
                             f"{reported:.6g} token/s = {derived:.6g} J/token disagrees with "
                             f"joules_per_total_token {jpt:.6g} J/token "
                             f"({(derived / jpt - 1) * 100:+.3g}%)")
        elif abs(implied / reported - 1) > AGREEMENT:
            notes.append(f"{where}: {kind} {reported:.6g} token/s disagrees with "
                         f"avg_power_w / {column} = {implied:.6g} token/s")
    return notes


def _row_source(row: dict, name: str) -> str:
    bits = [f"InferenceX via {Path(name).name}"]
    for k in ("date", "run_url", "image"):
        v = _field(row, k)
        if v:
            bits.append(f"{k} {_clean(str(v))[:500]}")
    return ", ".join(bits)


def _from_raw_benchmark(row: dict, name: str, gpus: int | None,
                        hardware: str | None) -> Curve:
    if not gpus or not hardware:
        raise InputError([(name, "a raw benchmark_serving result needs the run's GPU count "
                                 "and hardware (--gpus, --hardware)")])
    where = name
    _name(hardware, where, "hardware")
    tpot_ms = _float(row, where, "median_tpot_ms")
    total = _positive(row, where, "total_token_throughput")
    if total is None:
        raise InputError([(where, "no total_token_throughput")])
    output = _float(row, where, "output_throughput")
    if output is not None and output > total:
        raise InputError([(where, f"output_throughput {output:g} is above "
                                  f"total_token_throughput {total:g}")])
    point = {
        "concurrency": _positive(row, where, "max_concurrency"),
        "throughput": total / gpus,
        "output_throughput": (output if output is not None else math.nan) / gpus,
        "input_throughput": (total - (output if output is not None else math.nan)) / gpus,
        "interactivity": 1000.0 / tpot_ms if tpot_ms else None,
        "ttft": (_float(row, where, "median_ttft_ms") or math.nan) / 1000.0,
        "e2e_latency": (_float(row, where, "median_e2el_ms") or math.nan) / 1000.0,
    }
    key = CurveKey(hardware=hardware.lower(),
                   model=_text(row, where, "model_id") or "unknown",
                   framework=_text(row, where, "backend"))
    return Curve.from_points(key, [point], source=f"benchmark_serving result {Path(name).name}"
                             f", {row.get('date', 'undated')}, {gpus} GPUs")


def _group(curves: Iterable[Curve]) -> list[Curve]:
    by_key: dict[CurveKey, Curve] = {}
    for c in curves:
        by_key[c.key] = by_key[c.key].merged(c) if c.key in by_key else c
    return list(by_key.values())


# ---- costmodel's own CSV ----------------------------------------------------------------------

def _unit_of(field: str) -> str | None:
    return CSV_COLUMNS.get(field) or LATENCY_CSV_COLUMNS.get(field)


def _parse_header(header: list[str], name: str) -> dict[str, tuple[str, str | None]]:
    """column text -> (field, unit); numeric columns must name a unit in brackets."""
    out: dict[str, tuple[str, str | None]] = {}
    for col in header:
        text = col.strip()
        field, _, rest = text.partition("[")
        field = field.strip()
        unit = rest.rstrip("]").strip() if rest else None
        if field in KEY_COLUMNS or field in GPU_COLUMNS or field in ("source", "note"):
            out[col] = (field, None)
            continue
        if _unit_of(field) is None and field not in _PER_TOKEN_TIMES:
            raise InputError([(name, f"unknown column {text[:80]!r} (known: "
                                     f"{', '.join([*KEY_COLUMNS, *GPU_COLUMNS, *CSV_COLUMNS])}"
                                     f", tbt, tpot, {', '.join(LATENCY_CSV_COLUMNS)}, source, "
                                     f"note)")])
        if unit is None and field != "concurrency":
            raise InputError([(name, f"column {field!r} needs its unit, e.g. "
                                     f"'{field} [{_unit_of(field) or 'ms'}]'")])
        if unit is not None:
            try:
                parse_unit(unit)
            except UnitInputError as exc:
                raise InputError([(name, f"column {text!r}: {exc}")]) from None
        out[col] = (field, unit)
    fields = [f for f, _ in out.values()]
    twice = next((f for f in fields if fields.count(f) > 1), None)
    if twice is not None:
        raise InputError([(name, f"column {twice!r} given twice")])
    for required in ("hardware", "model"):
        if required not in fields:
            raise InputError([(name, f"missing column {required!r}")])
    if not set(fields) & {"throughput", "output_throughput"}:
        raise InputError([(name, "missing column 'throughput [token/s]'")])
    return out


def _read_own_csv(reader: csv.DictReader, header: list[str], name: str) -> list[Curve]:
    columns = _parse_header(header, name)
    points: dict[CurveKey, list[dict[str, Any]]] = {}
    for line, row in enumerate(reader, 2):
        where = f"{name} line {line}"
        key_values: dict[str, Any] = {}
        point: dict[str, Any] = {"source": Path(name).name}
        for col, raw in row.items():
            if col is None:
                raise InputError([(where, "more fields than columns")])
            field, unit = columns[col]
            raw = (raw or "").strip()
            if field in ("source", "note") or field in KEY_COLUMNS or field in GPU_COLUMNS:
                raw = unneutralise_cell(raw)  # as curves_csv_text neutralised it
            if field in ("source", "note"):
                if raw:
                    point[field] = _clean(raw)
            elif field in KEY_COLUMNS or field in GPU_COLUMNS:
                key_values[field] = _name(raw, where, field) if raw else None
            elif raw:
                point.update(_numeric(field, raw, unit, where))
        try:
            key = CurveKey(
                hardware=key_values["hardware"], model=key_values["model"],
                framework=key_values.get("framework"), precision=key_values.get("precision"),
                isl=_int_text(key_values.get("isl"), where, "ISL"),
                osl=_int_text(key_values.get("osl"), where, "OSL"),
                spec_decoding=key_values.get("spec_decoding"),
                disaggregated=_bool(key_values.get("disaggregated")),
                prefill_gpus=_int_text(key_values.get("prefill_gpus"), where, "prefill_gpus"),
                decode_gpus=_int_text(key_values.get("decode_gpus"), where, "decode_gpus"))
        except KeyError as exc:
            raise InputError([(where, f"{exc.args[0]} is empty")]) from None
        if not key.hardware or not key.model:
            raise InputError([(where, "hardware and model are required")])
        points.setdefault(key, []).append(point)
    if not points:
        raise InputError([(name, "no points")])
    return [Curve.from_points(key, pts) for key, pts in points.items()]


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
        value = parse_quantity({"value": float(raw), "unit": unit}, _unit_of(field),
                               allow_zero=field != "throughput")
    except ValueError as exc:  # UnitInputError, and float() of a non-number
        msg = str(exc) if isinstance(exc, UnitInputError) else f"cannot read {raw[:40]!r}"
        raise InputError([(f"{where} {field}", msg)]) from None
    return {field: value}


def _int_text(v: str | None, where: str, what: str) -> int | None:
    if v is None:
        return None
    try:
        x = float(v)
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or x != int(x) or x < 0:
        raise InputError([(where, f"{what} must be a whole number, got {v[:40]!r}")])
    return int(x)


def curves_csv_text(curves: Iterable[Curve], comments: Iterable[str] = ()) -> str:
    """costmodel's curve CSV for these curves (the format :func:`read_curves` reads back),
    after ``# `` comment lines (provenance). The GPU-count, latency-statistic and note columns
    are written only when a curve has them; each point keeps its own source. Text cells that
    start like a formula are neutralised (:func:`costmodel.sources.cells.neutralise_cell`; read back
    as they were)."""
    curves = list(curves)
    buf = io.StringIO()
    for line in comments:
        buf.write(f"# {line}\n")
    gpus = GPU_COLUMNS if any(c.key.prefill_gpus is not None or c.key.decode_gpus is not None
                              for c in curves) else []
    stats = [n for n in LATENCY_CSV_COLUMNS
             if any(not np.all(np.isnan(c.column_named(n))) for c in curves)]
    notes = ["note"] if any(any(c.point_notes) for c in curves) else []
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*KEY_COLUMNS, *gpus, *(f"{c} [{u}]" if u != "dimensionless" else c
                                       for c, u in CSV_COLUMNS.items()),
                *(f"{n} [{LATENCY_CSV_COLUMNS[n]}]" for n in stats), "source", *notes])
    for curve in curves:
        k = curve.key
        key = [neutralise_cell(k.hardware), neutralise_cell(k.model),
               neutralise_cell(k.framework or ""), neutralise_cell(k.precision or ""),
               k.isl or "", k.osl or "", neutralise_cell(k.spec_decoding or ""),
               "" if k.disaggregated is None else str(k.disaggregated).lower(),
               *(("" if k.prefill_gpus is None else k.prefill_gpus,
                  "" if k.decode_gpus is None else k.decode_gpus) if gpus else ())]
        arrays = [getattr(curve, c) for c in CSV_COLUMNS] + \
            [curve.column_named(n) for n in stats]
        for i in range(len(curve)):
            w.writerow([*key, *("" if np.isnan(a[i]) else repr(float(a[i])) for a in arrays),
                        neutralise_cell(_clean(curve.point_sources[i])),
                        *([neutralise_cell(_clean(curve.point_notes[i]))] if notes else [])])
    return buf.getvalue()


def write_curves_csv(curves: Iterable[Curve], path: str | Path,
                     comments: Iterable[str] = ()) -> None:
    """Write atomically: a half-written file never replaces a good one."""
    p = Path(path)
    text = curves_csv_text(curves, comments)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(p)
