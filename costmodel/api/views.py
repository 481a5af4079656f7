"""Lean answers: ``?view=summary`` (the headline figures and the disclosure without its
per-input sources, no steps) and ``?fields=`` (dotted names of the answer, comma-separated:
``cost_per_mtok.total,disclosure.boundary``). A name that crosses a list applies to each item
(``scenarios.cost_per_mtok.total`` in a comparison); a name the answer does not hold is a 422
naming it."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from ..http.errors import Problem

__all__ = ["AnswerQuery", "BatchQuery", "TaskQuery", "select", "FIELDS_PATTERN"]

# dotted names of an answer, comma-separated (answers' keys are words)
FIELDS_PATTERN = r"^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*(,[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*)*$"


class AnswerQuery(BaseModel):
    """How much of the answer to send (the full answer unless told)."""
    view: Literal["full", "summary"] = Field(
        "full", description="summary: the headline figures and the disclosure without its "
                            "per-input sources, no steps")
    fields: Annotated[str, Field(max_length=1000, pattern=FIELDS_PATTERN, description=(
        "only these dotted names of the answer, comma-separated, e.g. cost_per_mtok.total,"
        "disclosure.boundary (a name crossing a list applies to each item); an unknown "
        "name is a 422"))] | None = None


class BatchQuery(AnswerQuery):
    """A batch's answer: how much of it, and in which format."""
    format: Literal["json", "csv", "arrow", "parquet"] | None = Field(None, description=(
        "the answer's format, before Accept: json, csv, arrow or parquet (each output a "
        "column, its unit in the field's metadata); none: Accept's choice, else the format "
        "the request came in"))


class TaskQuery(BaseModel):
    """Whether a task's answer carries each step's latency (docs/tasks.md)."""
    series: Literal["steps", "totals"] | None = Field(None, description=(
        "steps: each system's latency by step (latency.per_step) whatever the task's size; "
        "totals: the totals only; none: each step's latency unless the task is more than "
        "20,000 steps x systems (then per_step is null: the answer stays bounded)"))


class _Unknown(Exception):
    pass


def _pick(node: Any, parts: list[str]) -> Any:
    if not parts:
        return node
    if isinstance(node, list):
        return [_pick(item, parts) for item in node]
    if node is None:  # an absent table (no reference rate): null all the way down
        return None
    if not isinstance(node, dict) or parts[0] not in node:
        raise _Unknown
    return {parts[0]: _pick(node[parts[0]], parts[1:])}


def _merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _merge(out[k], v) if k in out else v
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_merge(x, y) for x, y in zip(a, b, strict=True)]
    return b


def select(answer: dict[str, Any], fields: str) -> dict[str, Any]:
    """The parts of ``answer`` that ``fields`` names, nested as in the answer."""
    out: dict[str, Any] = {}
    unknown = []
    for name in dict.fromkeys(fields.split(",")):
        try:
            out = _merge(out, _pick(answer, name.split(".")))
        except _Unknown:
            unknown.append(name)
    if unknown:
        errors = [{"path": "fields", "message": f"{n!r} is not a field of this answer"}
                  for n in unknown]
        raise Problem(422, "Invalid query", "; ".join(f"fields: {e['message']}"
                                                      for e in errors), errors=errors)
    return out
