"""The request a decision's workbook records on its Meta sheet, validated as the input it is.

The uploader controls the Meta sheet like any other: its record (the quotes, the demand, the
yearly improvement, the ranked options and the figures exported to the Decision sheet) is
checked before anything reads it, with the models the API validates a decision's request
with (:func:`costmodel.decisions.quotes.validate_quote`,
:func:`costmodel.decisions.demand.validate_demand`; strict numbers, finite, within their
bounds), and refused at its cell and field path (``Meta!B5 (decision record,
quotes[1].term)``). The JSON itself was bounded in size and depth before it was parsed
(:func:`costmodel.render.workbook.reader.read_workbook`).

What is checked beyond each model: each option names a quote that is there and of its kind
(an own build names none); each figure of the Decision sheet is a number (a demand's) or a
list of one number or null per option (an option's); no figure is unknown.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ...decisions.demand import Demand, validate_demand
from ...decisions.quotes import Quote, validate_quote
from ...model.errors import InputError
from ...model.inputs import MAX_TEXT, check_text, error_message, error_path
from .decision_sheet import DEMAND_INPUTS, MAX_OPTIONS, OPTION_INPUTS, tier_rows

__all__ = ["DecisionRecord", "RecordOption", "validate_record", "SCALAR_FIGURES",
           "OPTION_FIGURES"]

_MAX_TIERS = 100  # a quote's tiers (Quote.tiers' own bound): the Decision sheet's tier rows
# the Decision sheet's figures the record holds: the demand's (one number each) and the
# options' (one number or null per option)
SCALAR_FIGURES = frozenset({*DEMAND_INPUTS, "isl", "osl"})
OPTION_FIGURES = frozenset({*OPTION_INPUTS, "option_term",
                            *(n for k in range(1, _MAX_TIERS + 1) for n in tier_rows(k))})
_QUOTE_FORMS = {"per_mtok": ("per_mtok",),
                "capacity": ("per_accelerator_hour", "reserved_monthly")}

_Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT), AfterValidator(check_text)]


class RecordOption(BaseModel):
    """A ranked option as recorded: its name, its kind and the quote it prices (its index in
    the record's quotes; None for an own build)."""
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    name: _Text
    kind: Literal["own", "per_mtok", "capacity"]
    quote: Annotated[int, Field(ge=0)] | None


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    quotes: Annotated[list[Any], Field(min_length=1)]
    demand: Any
    improvement: Any = None  # checked below, in the API's bounds: 0 to below 1
    options: Annotated[list[RecordOption], Field(min_length=1, max_length=MAX_OPTIONS)]
    inputs: dict[str, Any]  # each figure checked below, by its kind


@dataclass
class DecisionRecord:
    """A validated record: the quotes and the demand as data (a copy, to be edited) and as
    validated, the improvement [fraction a year], the options, and the Decision sheet's
    figures as exported (a demand's: a number; an option's: one number or None per option,
    each in its row's unit)."""
    quotes: list[dict[str, Any]]
    parsed: list[Quote]
    demand: dict[str, Any]
    demand_parsed: Demand
    improvement: float | None
    options: list[RecordOption]
    inputs: dict[str, Any]
    at: str


def validate_record(record: Any, at: str) -> DecisionRecord:
    """``record`` (parsed JSON from the Meta cell ``at``) validated; InputError at
    ``<at> (decision record, <field path>)`` otherwise."""
    def where(path: str) -> str:
        return f"{at} (decision record{', ' + path if path else ''})"

    if not isinstance(record, dict):
        raise InputError([(where(""), "must be a table/object of quotes, demand, improvement, "
                                      "options and inputs")])
    try:
        checked = _Record.model_validate(record)
    except ValidationError as exc:
        raise InputError([(where(error_path(e["loc"])), error_message(e))
                          for e in exc.errors()]) from None
    errors: list[tuple[str, str]] = []
    parsed = []
    for i, data in enumerate(checked.quotes):
        try:
            parsed.append(validate_quote(data, f"quotes[{i}]"))
        except InputError as exc:
            errors += [(where(p), m) for p, m in exc.errors]
    try:
        demand = validate_demand(checked.demand, "demand")
    except InputError as exc:
        errors += [(where(p), m) for p, m in exc.errors]
    if errors:
        raise InputError(errors)
    n = len(checked.options)
    for j, option in enumerate(checked.options):
        path = f"options[{j}].quote"
        if option.kind == "own":
            if option.quote is not None:
                errors.append((where(path), "an own build prices no quote: must be null"))
        elif option.quote is None or option.quote >= len(parsed):
            errors.append((where(path), f"must be the index of one of the "
                                        f"{len(parsed)} quotes (0 to {len(parsed) - 1}), "
                                        f"got {option.quote!r}"))
        elif parsed[option.quote].form not in _QUOTE_FORMS[option.kind]:
            errors.append((where(path), f"a {option.kind} option prices a quote of form "
                                        f"{' or '.join(_QUOTE_FORMS[option.kind])}, got "
                                        f"{parsed[option.quote].form}"))
    improvement = checked.improvement
    if improvement is not None and not (_number(improvement) and 0 <= improvement < 1):
        errors.append((where("improvement"), f"the yearly fall of the market price, a "
                                             f"fraction from 0 to below 1 (or null), got "
                                             f"{_short(improvement)}"))
    inputs: dict[str, Any] = {}
    for name, value in checked.inputs.items():
        path = f"inputs.{name}"
        if name in SCALAR_FIGURES:
            if not _number(value):
                errors.append((where(path), f"must be a finite number, got {_short(value)}"))
            inputs[name] = float(value) if _number(value) else value
        elif name in OPTION_FIGURES:
            if not isinstance(value, list) or len(value) != n or \
                    not all(v is None or _number(v) for v in value):
                errors.append((where(path), f"must be a list of one finite number or null for "
                                            f"each of the {n} options, got {_short(value)}"))
            else:
                inputs[name] = [None if v is None else float(v) for v in value]
        else:
            errors.append((where(path), "unknown figure"))
    errors += [(where(f"inputs.{name}"), "required")
               for name in sorted(SCALAR_FIGURES - checked.inputs.keys())]
    if errors:
        raise InputError(errors)
    return DecisionRecord(copy.deepcopy(checked.quotes), parsed, copy.deepcopy(checked.demand),
                          demand, None if improvement is None else float(improvement),
                          list(checked.options),
                          inputs, at)


def _number(value: Any) -> bool:
    """A JSON number as the API's strict models take one: not a boolean, finite (an integer
    too large for a float is not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
