"""Power logs into a :class:`~costmodel.model.power.PowerTrace`: nvidia-smi CSVs, InferenceX
metrics.

Formats read:

- ``nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits] [-l N]``: with or without the
  header line (``timestamp, index, power.draw [W], ...``), with or without units in the
  values (``652.34 W``; ``mW``/``kW`` too), one GPU or many. The GPU of a line comes from an
  index column (``index``, ``gpu``, ``gpu_id``, ``gpu_index``, ``card``, ``device``, ``uuid``,
  ``pci.bus_id``); without one, consecutive lines cycle through ``gpus`` GPUs (one unless
  told). Timestamps are nvidia-smi's ``2026/05/27 07:50:26.123`` or ISO 8601; without a
  timestamp column the caller gives ``sample_period`` [s] (1 for ``-l 1``). Extra query
  columns are ignored. Without a header, ``query`` (the ``--query-gpu`` list) names the
  columns; failing that, a lone column, the one value with a ``W`` unit, or the column
  beside a timestamp is the power.
- InferenceX's per-GPU metric CSV, ``gpu_metrics.csv``, written by ``start_gpu_monitor`` in
  its ``benchmarks/benchmark_lib.sh`` and read by ``utils/aggregate_power.py``: on NVIDIA,
  ``nvidia-smi --query-gpu=timestamp,index,power.draw,temperature.gpu,clocks.current.sm,
  clocks.current.memory,utilization.gpu,utilization.memory --format=csv -l 1`` (header, units
  in values); on AMD, ``amd-smi metric -p -c -t -u -w 1 --csv`` (``timestamp,gpu,...,
  socket_power,...``, bare numbers). It needs a header naming a timestamp, a GPU and a power
  column, so the generic long format ``timestamp,gpu,power_w`` reads too. Timestamps may
  also be epoch seconds (or milliseconds, above 10^12) there.

The power column is ``power.draw`` if present, else the first name containing ``power`` but
not ``limit``, ``cap``, ``max``, ``min`` or ``management`` (``socket_power``, ``power_w``).
``[N/A]``, ``[Not Supported]`` (any bracketed word), ``N/A`` and empty values are missing
readings: gaps, never zeros. Naive timestamps (nvidia-smi writes local wall-clock time without
a zone) are read in ``naive_tz``, UTC unless given; energy only needs differences, but a
window given in POSIX seconds needs the right zone. Readings with the same GPU and timestamp
(coarse clocks) are averaged.

A last line cut off mid-write (no end-of-line, or fewer fields than the others) is dropped
and noted in the trace's warnings; anything else malformed is an :class:`InputError` naming
the file and line, e.g. ``power.log line 17: cannot read '6x2.1' as power``.
"""
from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime, tzinfo
from pathlib import Path

import numpy as np

from ..model.inputs import InputError
from ..model.power import GpuSamples, PowerTrace

__all__ = ["read_power_log", "parse_power_log", "read_inferencex_metrics",
           "parse_inferencex_metrics"]

_POWER_EXCLUDE = re.compile(r"limit|cap|max|min|management", re.IGNORECASE)
_GPU_NAMES = {"index", "gpu", "gpu_id", "gpu_index", "card", "device", "uuid", "pci.bus_id"}
_UNIT_SCALE = {"w": 1.0, "mw": 1e-3, "kw": 1e3}
_NAME_UNIT = re.compile(r"^(.*?)\s*\[([^\]]*)\]$")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_POWER_VALUE = re.compile(rf"({_NUMBER.pattern})\s*(mW|W|kW)?")
_MISSING = re.compile(r"\[.*\]|n/?a|", re.IGNORECASE)
_QUERY_FIELD = re.compile(r"[a-z_]+(?:\.[a-z_]+)+")
_DATE_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S")


def _fail(source: str, line: int | None, message: str) -> InputError:
    where = f"{source} line {line}" if line else source
    return InputError([("", f"{where}: {message}")])


def _split_name(raw: str) -> tuple[str, str | None]:
    """``'power.draw [W]'`` -> (``'power.draw'``, ``'W'``)."""
    m = _NAME_UNIT.match(raw.strip())
    return (m.group(1).strip(), m.group(2).strip()) if m else (raw.strip(), None)


def _is_power_name(name: str) -> bool:
    return "power" in name.lower() and not _POWER_EXCLUDE.search(name)


def _looks_like_header(fields: list[str]) -> bool:
    # Data values are numbers, times, [N/A], GPU names; never a column name such as
    # "timestamp", "index" or a dotted nvidia-smi query field ("temperature.gpu").
    names = [_split_name(f)[0].lower() for f in fields]
    return any(_is_power_name(n) or n == "timestamp" or n in _GPU_NAMES
               or _QUERY_FIELD.fullmatch(n) for n in names)


def _columns(names: list[str]) -> tuple[int | None, int | None, int | None, float]:
    """(timestamp, power, gpu) column positions and the power column's unit scale."""
    plain = [_split_name(n) for n in names]
    lowered = [n.lower() for n, _ in plain]
    ts = next((i for i, n in enumerate(lowered) if n == "timestamp"), None)
    if ts is None:
        ts = next((i for i, n in enumerate(lowered) if "time" in n), None)
    power = next((i for i, n in enumerate(lowered) if n == "power.draw"), None)
    if power is None:
        power = next((i for i, n in enumerate(lowered) if _is_power_name(n)), None)
    gpu = next((i for i, n in enumerate(lowered) if n in _GPU_NAMES), None)
    scale = 1.0
    if power is not None and plain[power][1] is not None:
        unit = plain[power][1].lower()
        if unit not in _UNIT_SCALE:
            raise ValueError(f"column {names[power].strip()!r} is not in watts")
        scale = _UNIT_SCALE[unit]
    return ts, power, gpu, scale


def _parse_power(raw: str, scale: float) -> float | None:
    """Watts, NaN for a missing reading, None if unreadable."""
    text = raw.strip()
    if _MISSING.fullmatch(text):
        return math.nan
    m = _POWER_VALUE.fullmatch(text)
    if not m:
        return None
    value = float(m.group(1)) * (_UNIT_SCALE[m.group(2).lower()] if m.group(2) else scale)
    return value if math.isfinite(value) and value >= 0 else None


def _parse_time(raw: str, tz: tzinfo, numeric: bool) -> float | None:
    """POSIX seconds, or None if unreadable."""
    text = raw.strip()
    if numeric and _NUMBER.fullmatch(text):
        n = float(text)
        return n / 1000.0 if n > 1e12 else n  # epoch milliseconds, as InferenceX reads them
    if not any(c in text for c in "-/:"):
        return None  # fromisoformat would take "20260527", a number, as a date
    dt = None
    for fmt in _DATE_FORMATS:
        try:
            dt = datetime.strptime(text, fmt)
            break
        except ValueError:
            pass
    if dt is None:
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=tz)
    return dt.timestamp()


def _infer_columns(fields: list[str], tz: tzinfo) -> tuple[int | None, int]:
    """(timestamp, power) positions of a header-less, query-less line, or raise ValueError."""
    if len(fields) == 1:
        return None, 0
    ts = next((i for i, f in enumerate(fields)
               if _parse_time(f, tz, numeric=False) is not None), None)
    with_watts = [i for i, f in enumerate(fields)
                  if (m := _POWER_VALUE.fullmatch(f.strip())) and m.group(2)]
    if len(with_watts) == 1:
        return ts, with_watts[0]
    if ts is not None and len(fields) == 2:
        return ts, 1 - ts
    raise ValueError("cannot tell which column holds the power in a log without a header "
                     "line; give the --query-gpu list (query='timestamp,index,power.draw')")


def _rows(text: str) -> list[tuple[int, list[str]]]:
    reader = csv.reader(text.splitlines(), skipinitialspace=True)
    out = []
    for row in reader:
        fields = [f.strip() for f in row]
        if any(fields):
            out.append((reader.line_num, fields))
    return out


def parse_power_log(text: str, *, source: str = "power log", gpus: int | None = None,
                    sample_period: float | None = None,
                    query: str | Sequence[str] | None = None,
                    naive_tz: tzinfo = UTC, require_header: bool = False,
                    require_timestamps: bool = False,
                    require_gpu_column: bool = False) -> PowerTrace:
    """Read the text of a power log (see the module docstring) into a PowerTrace.

    ``gpus``: how many GPUs the log cycles through when it has no index column (with one,
    a check); ``sample_period`` [s]: the time between a GPU's samples when there are no
    timestamps; ``query``: column names of a header-less log; ``source``: the name used in
    messages. Timestamped traces are on POSIX seconds; others start at 0 s.
    """
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1):
        raise _fail(source, None, f"gpus must be a positive whole number, got {gpus!r}")
    if text.startswith("\ufeff"):
        text = text[1:]
    complete_last_line = text.endswith(("\n", "\r"))
    rows = _rows(text)
    if not rows:
        raise _fail(source, None, "no samples (the file is empty)")

    header = rows[0][1] if _looks_like_header(rows[0][1]) else None
    if header is not None:
        names: list[str] | None = header
        rows = rows[1:]
    elif require_header:
        raise _fail(source, rows[0][0], "expected a header line naming the columns "
                                        "(timestamp, gpu, power)")
    elif query is not None:
        names = [q.strip() for q in (query.split(",") if isinstance(query, str) else query)]
    else:
        names = None
    if not rows:
        raise _fail(source, None, "no samples, only a header line")

    try:
        if names is not None:
            ts_col, power_col, gpu_col, scale = _columns(names)
            if power_col is None:
                raise ValueError(f"no power column among {', '.join(names)}")
        else:
            (ts_col, power_col), gpu_col, scale = _infer_columns(rows[0][1], naive_tz), None, 1.0
    except ValueError as exc:
        raise _fail(source, None, str(exc)) from None
    if require_timestamps and ts_col is None:
        raise _fail(source, None, "no timestamp column")
    if require_gpu_column and gpu_col is None:
        raise _fail(source, None, "no GPU column (index, gpu, ...)")
    if ts_col is None and sample_period is None:
        raise _fail(source, None, "has no timestamps: give the sampling period "
                                  "(sample_period=1.0 for nvidia-smi -l 1)")
    if ts_col is None and not (isinstance(sample_period, (int, float))
                               and not isinstance(sample_period, bool)
                               and math.isfinite(sample_period) and sample_period > 0):
        raise _fail(source, None, f"sample_period must be a positive number of seconds, "
                                  f"got {sample_period!r}")
    width = len(names) if names is not None else len(rows[0][1])
    numeric_time = names is not None  # a named column may hold epoch seconds

    warnings: list[str] = []
    samples: dict[str, list[tuple[float, float, int]]] = {}  # gpu -> (time, power, line)
    cycle = gpus or 1
    slot = 0
    time_cache: dict[str, float | None] = {}
    for k, (line, fields) in enumerate(rows):
        last = k == len(rows) - 1
        if header is not None and fields == header:
            continue  # a repeated header, as concatenated logs have
        if last and not complete_last_line:
            warnings.append(f"{source} line {line}: last line has no end-of-line (cut off "
                            "mid-write?); dropped")
            continue
        if len(fields) < width and last:
            warnings.append(f"{source} line {line}: last line has {len(fields)} of {width} "
                            "fields (cut off mid-write?); dropped")
            continue
        if len(fields) != width:
            raise _fail(source, line, f"expected {width} fields, found {len(fields)}")
        power = _parse_power(fields[power_col], scale)
        if power is None:
            raise _fail(source, line, f"cannot read {fields[power_col]!r} as power")
        t = math.nan
        if ts_col is not None:
            raw = fields[ts_col]
            if raw not in time_cache:
                time_cache[raw] = _parse_time(raw, naive_tz, numeric_time)
            t = time_cache[raw]
            if t is None:
                raise _fail(source, line, f"cannot read {raw!r} as a timestamp")
        if gpu_col is not None:
            gpu = fields[gpu_col]
            if not gpu:
                raise _fail(source, line, "no GPU index")
        else:
            gpu = str(slot % cycle)
            slot += 1
        samples.setdefault(gpu, []).append((t, power, line))

    if not samples:
        raise _fail(source, None, "no complete sample line")
    if gpu_col is not None and gpus is not None and len(samples) != gpus:
        raise _fail(source, None, f"{gpus} GPUs expected but the {names[gpu_col]} column "
                                  f"names {len(samples)}: {', '.join(samples)}")
    identified = gpu_col is not None or gpus is not None
    series = []
    for gpu, rows_of_gpu in samples.items():
        if ts_col is None:
            times = np.arange(len(rows_of_gpu)) * float(sample_period)
            power = np.array([p for _, p, _ in rows_of_gpu])
        else:
            times, power = _timed(rows_of_gpu, gpu, identified, source)
        series.append(GpuSamples(gpu, times, power))
    if ts_col is None:
        clock = f"seconds from the first sample, one every {float(sample_period):g} s"
    else:
        clock = f"POSIX seconds (timestamps without a zone read as {naive_tz})"
    return PowerTrace(tuple(series), source=source, clock=clock, warnings=tuple(warnings))


def _timed(rows: list[tuple[float, float, int]], gpu: str, identified: bool,
           source: str) -> tuple[np.ndarray, np.ndarray]:
    """Times and powers of one GPU; readings sharing a timestamp are averaged."""
    times: list[float] = []
    groups: list[list[float]] = []
    for t, p, line in rows:
        if times and t <= times[-1]:
            if not identified:
                raise _fail(source, line, "timestamp does not advance; if the log holds "
                                          "several GPUs without an index column, give their "
                                          "number (gpus=N)")
            if t < times[-1]:
                raise _fail(source, line, f"GPU {gpu}'s timestamp goes back in time")
            groups[-1].append(p)
            continue
        times.append(t)
        groups.append([p])
    power = [float(np.mean([v for v in g if not math.isnan(v)]))
             if any(not math.isnan(v) for v in g) else math.nan for g in groups]
    return np.array(times), np.array(power)


def _read_text(path: str | Path) -> str:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError([("", f"cannot read {p}: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError:
        raise InputError([("", f"{p} is not UTF-8 text")]) from None


def read_power_log(path: str | Path, **options) -> PowerTrace:
    """Read an nvidia-smi CSV log (or any log :func:`parse_power_log` reads) from a file."""
    return parse_power_log(_read_text(path), source=str(path), **options)


def parse_inferencex_metrics(text: str, *, source: str = "gpu_metrics.csv",
                             gpus: int | None = None,
                             naive_tz: tzinfo = UTC) -> PowerTrace:
    """Read InferenceX's ``gpu_metrics.csv`` (nvidia-smi or amd-smi layout) from text.

    A header naming a timestamp, a GPU and a power column is required; ``gpus``, if given,
    is checked against the GPUs the file names.
    """
    return parse_power_log(text, source=source, gpus=gpus, naive_tz=naive_tz,
                           require_header=True, require_timestamps=True,
                           require_gpu_column=True)


def read_inferencex_metrics(path: str | Path, *, gpus: int | None = None,
                            naive_tz: tzinfo = UTC) -> PowerTrace:
    """Read InferenceX's ``gpu_metrics.csv`` from a file; see :func:`parse_inferencex_metrics`."""
    return parse_inferencex_metrics(_read_text(path), source=str(path), gpus=gpus,
                                    naive_tz=naive_tz)
