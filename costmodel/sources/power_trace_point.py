"""A scenario's measured power taken from a power trace: ``[power] trace = "power.log"``.

    [power]
    basis = "measured"
    trace = "runs/gpu_metrics.csv"       # relative to the scenario file
    trace_gpus = 8                       # GPUs the log cycles through, when it has no index
    trace_sample_period = "1 s"          # when the log has no timestamps
    trace_max_gap = "3 s"                # longest acceptable gap between samples

The trace is integrated over its span; an invalid trace (gaps, too few samples) is an error,
never a number. Its mean power per GPU becomes ``accelerator.measured_power``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model.inputs import InputError
from ..model.units import UnitInputError, parse_quantity
from .paths import shown_path

__all__ = ["resolve_power_trace", "TRACE_KEYS"]

TRACE_KEYS = ("trace", "trace_gpus", "trace_sample_period", "trace_max_gap")


def _seconds(raw: Any, where: str) -> float:
    try:
        return parse_quantity(raw, "s", allow_zero=False)
    except UnitInputError as exc:
        raise InputError([(where, str(exc))]) from None


def resolve_power_trace(data: dict[str, Any], base_dir: Path | None,
                        provenance: dict[str, str], *, files_allowed: bool = True,
                        ) -> dict[str, Any]:
    """Replace ``power.trace*`` by ``accelerator.measured_power`` from the integrated trace.

    With ``files_allowed=False`` (input from the network) a trace path is refused.
    """
    power = data.get("power")
    if not isinstance(power, dict) or not any(k in power for k in TRACE_KEYS):
        return data
    if not files_allowed:
        raise InputError([("power.trace", "a power trace is read from a file, which this "
                                          "interface does not do; give "
                                          "accelerator.measured_power (e.g. from "
                                          "`costmodel energy`)")])
    power = dict(power)
    ref = power.pop("trace", None)
    gpus = power.pop("trace_gpus", None)
    period = power.pop("trace_sample_period", None)
    max_gap = power.pop("trace_max_gap", None)
    if not isinstance(ref, str):
        raise InputError([("power.trace", "must be the path of a power log")])
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1):
        raise InputError([("power.trace_gpus", f"must be a positive whole number, got {gpus!r}")])
    accelerator = data.get("accelerator")
    from_catalog = provenance.get("accelerator.measured_power", "").startswith("catalog")
    if isinstance(accelerator, dict) and "measured_power" in accelerator and not from_catalog:
        raise InputError([("power.trace", "accelerator.measured_power is given too; keep one")])
    path = Path(ref)
    if not path.is_absolute() and base_dir is not None and (base_dir / ref).is_file():
        path = base_dir / ref
    # here: a scenario without a trace imports neither the reader nor the integration
    from ..model.power import DEFAULT_MAX_GAP, integrate
    from .power_log import read_power_log
    trace = read_power_log(
        path, gpus=gpus,
        sample_period=_seconds(period, "power.trace_sample_period") if period else None)
    report = integrate(trace, max_gap=_seconds(max_gap, "power.trace_max_gap")
                       if max_gap else DEFAULT_MAX_GAP)
    if not report.valid:
        raise InputError([("power.trace", f"{path} is not a valid measurement: "
                                          + "; ".join(report.reasons))])
    out = dict(data)
    out["power"] = power
    out["accelerator"] = {**(accelerator if isinstance(accelerator, dict) else {}),
                          "measured_power": {"value": report.mean_average_power, "unit": "W"}}
    provenance["accelerator.measured_power"] = (
        f"power trace {shown_path(path, base_dir)}: mean of {len(report.gpus)} GPUs over "
        f"{report.duration:.4g} s, trapezoid rule, verdict {report.verdict}")
    return out
