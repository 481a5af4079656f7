"""How much one request of the service may ask for: stated here once, for every face.

The API's schemas declare these bounds (``max_length``, ``le``), so its OpenAPI document
states them; the use cases check them again on a context that is the service's
(``ctx.limited``), so a face that reads its input otherwise (a quote file uploaded to the
Quotes page) meets the same bound, with the same words. The command line is not limited:
its context is local, and its own machine's time is its user's to spend.

Each bound keeps the slowest request it allows short: 50 quotes ranked for a demand take
0.08-0.4 s, 2,000,000 Monte Carlo draws 0.3 s, on one core (docs/pricing-tools.md#limits).
"""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationError

from ..model.errors import InputError
from ..model.inputs import check_text

__all__ = ["MAX_QUOTES", "MAX_SCENARIOS", "MAX_DRAWS", "MAX_SCENARIO_NAME", "MAX_TASK_CELLS",
           "MAX_CHARGEBACK_LINES", "check_count", "check_quotes_first", "limited",
           "scenario_name_error", "task_cells", "large_task", "task_workbook_too_large",
           "chargeback_workbook_too_large"]

MAX_QUOTES = 50  # quotes compared or ranked for a demand in one request
MAX_SCENARIOS = 12  # scenarios of one request (a comparison, a workbook, our own builds)
MAX_DRAWS = 2_000_000  # Monte Carlo draws of one analysis (about 0.3 s)
MAX_SCENARIO_NAME = 200  # characters of a saved scenario's name
# A task's steps x systems: its workbook holds at most this many (a Task sheet's rows by its
# systems' columns: about 0.3-0.5 s and 5 MiB of sheet XML, which its reprice reads back;
# 10,000 steps x 12 systems took 13.5-24 s and 28 MiB); beyond it the JSON answer holds a
# heavy slot and carries the totals, each step's latency only on request (?series=steps)
MAX_TASK_CELLS = 20_000
# A chargeback's lines (a tenant on a pool, and each pool's idle line) its workbook holds:
# each is a row of 18 cells, its cents ranked against every other line's by the sheet
# (about 0.5 s of one core to write 2,000; 12,000 took 4-9 s, and the JSON answer holds
# 10,000 tenants on 12 pools); beyond it the workbook is refused (413), the JSON and CSV
# answers are not
MAX_CHARGEBACK_LINES = 2_000

# a saved scenario's name: the API's ScenarioCreate.name states it in its schema; the web's
# Save page checks it here (the faces do not import each other)
_SCENARIO_NAME = TypeAdapter(
    Annotated[str, Field(min_length=1, max_length=MAX_SCENARIO_NAME), AfterValidator(check_text)],
    config=ConfigDict(strict=True))


def scenario_name_error(name: str) -> str | None:
    """Why ``name`` cannot name a saved scenario (1 to MAX_SCENARIO_NAME characters, no
    control characters), in pydantic's words, or None."""
    try:
        _SCENARIO_NAME.validate_python(name)
    except ValidationError as exc:
        return exc.errors()[0]["msg"]
    return None


def limited(ctx: Any) -> bool:
    """Whether ``ctx`` is the service's (its requests are bounded)."""
    return bool(getattr(ctx, "limited", False))


def check_count(ctx: Any, count: int, cap: int, path: str, what: str) -> None:
    """An InputError at ``path`` when the service is asked for more than ``cap`` ``what``
    (a plural noun) at once; nothing on a local context."""
    if count > cap and limited(ctx):
        raise InputError([(path, f"at most {cap:,} {what} in one request, got {count:,}")])


def task_cells(steps: int | None, systems: int) -> int | None:
    """A task's size [steps x systems], or None when the steps are not known yet (a malformed
    task: its validation says what is wrong)."""
    return None if steps is None else steps * systems


def large_task(cells: int | None) -> bool:
    """Whether a task of ``cells`` [steps x systems] is heavy work (a heavy slot, and no
    per-step series unless asked)."""
    return cells is not None and cells > MAX_TASK_CELLS


def task_workbook_too_large(steps: int | None, systems: int) -> str | None:
    """Why the service will not build the workbook of a task of ``steps`` on ``systems``
    (more than :data:`MAX_TASK_CELLS` steps x systems), said with the bound; None when it
    will. Asked before anything is priced: the faces answer it 413."""
    cells = task_cells(steps, systems)
    if cells is None or cells <= MAX_TASK_CELLS:
        return None
    return (f"a task workbook holds at most {MAX_TASK_CELLS:,} steps x systems; "
            f"{steps:,} steps x {systems:,} systems is {cells:,}: ask for fewer steps or "
            f"systems, or the JSON answer")


def chargeback_workbook_too_large(lines: int) -> str | None:
    """Why the service will not build the workbook of a chargeback of ``lines`` lines (more
    than :data:`MAX_CHARGEBACK_LINES`), said with the bound; None when it will. The faces
    answer it 413 (the ledger's JSON and FOCUS CSV are not bounded by it)."""
    if lines <= MAX_CHARGEBACK_LINES:
        return None
    return (f"a chargeback workbook holds at most {MAX_CHARGEBACK_LINES:,} lines (a tenant "
            f"on a pool, and each pool's idle line); this period has {lines:,}: charge "
            f"fewer tenants or pools (a coarser `by`), or ask for the JSON or the FOCUS CSV")


def check_quotes_first(data: Any) -> None:
    """A quote file's data (parsed, not yet read as quotes) with more than
    :data:`MAX_QUOTES` ``[[quote]]`` tables is an InputError at ``quotes``, in
    :func:`check_count`'s words: counted before any quote is validated or compared (14,000
    small quotes took 7.4 s to validate and compare before the cap refused them)."""
    quotes = data.get("quote") if isinstance(data, dict) else None
    if isinstance(quotes, list) and len(quotes) > MAX_QUOTES:
        raise InputError([("quotes", f"at most {MAX_QUOTES:,} quotes in one request, "
                                     f"got {len(quotes):,}")])
