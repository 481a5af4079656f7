"""``costmodel energy``: a power log integrated into energy and J/token."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from ..model.errors import InputError
from ..model.power import DEFAULT_MAX_GAP, integrate, joules_per_token
from ..model.units import UnitInputError, parse_quantity
from ..render.report import energy_table
from ..sources.paths import shown_path
from ..sources.power_log import read_power_log
from .common import emit_json, fail

__all__ = ["energy"]


def _seconds_option(raw: str | None, name: str) -> float | None:
    if raw is None:
        return None
    try:
        return parse_quantity(raw, "s", allow_zero=False, bare_number_ok=True)
    except UnitInputError as exc:
        fail(f"{name}: {exc}")


@click.command()
@click.argument("trace")
@click.option("--tokens", type=float, help="Total tokens (input + output) of the run.")
@click.option("--input-tokens", type=float, help="Input tokens of the run.")
@click.option("--output-tokens", type=float, help="Output tokens of the run.")
@click.option("--gpus", type=int, help="GPUs the log cycles through (logs without an index).")
@click.option("--sample-period", metavar="TIME", help='Time between samples of logs without '
              'timestamps, e.g. "1 s".')
@click.option("--start", type=float, help="Run window start on the trace's clock [s].")
@click.option("--end", type=float, help="Run window end on the trace's clock [s].")
@click.option("--max-gap", metavar="TIME", help=f"Longest acceptable gap between samples "
              f"(default {DEFAULT_MAX_GAP:g} s).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def energy(trace: str, tokens: float | None, input_tokens: float | None,
           output_tokens: float | None, gpus: int | None, sample_period: str | None,
           start: float | None, end: float | None, max_gap: str | None, as_json: bool) -> None:
    """Integrate a power log (nvidia-smi CSV, InferenceX gpu_metrics.csv) into energy and
    J/token. Exits 3 when the trace is not a valid measurement (gaps, too few samples)."""
    period = _seconds_option(sample_period, "--sample-period")
    gap = _seconds_option(max_gap, "--max-gap") or DEFAULT_MAX_GAP
    try:
        report = integrate(read_power_log(trace, gpus=gpus, sample_period=period),
                           start=start, end=end, max_gap=gap)
        per_token = (joules_per_token(report, total_tokens=tokens, input_tokens=input_tokens,
                                      output_tokens=output_tokens)
                     if (tokens, input_tokens, output_tokens) != (None, None, None) else None)
    except InputError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        data = report.as_dict()
        data["source"] = shown_path(trace, Path.cwd())  # never an absolute path in a result
        if per_token is not None:
            data["joules_per_token"] = {k: {"value": getattr(per_token, k), "unit": "J/token"}
                                        for k in ("total", "input", "output")
                                        if getattr(per_token, k) is not None}
        emit_json(data)
    else:
        click.echo(energy_table(report, per_token))
    if not report.valid:
        sys.exit(3)
