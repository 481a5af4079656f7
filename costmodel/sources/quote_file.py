"""Quote files: TOML (or JSON) with one ``[[quote]]`` table per quote (docs/negotiators.md)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from ..decisions.quotes import Quote, validate_quote
from ..model.errors import ReadError, UnknownKey, check_nesting, parse_nested
from ..model.inputs import InputError
from .catalog import split_sources
from .scenario_file import read_scenario_file, toml_position

__all__ = ["read_quotes", "read_quotes_text", "quotes_of", "demand_table"]


def read_quotes(path: str | Path) -> list[Quote]:
    """Every quote in a file; an InputError names the quote and field of any problem."""
    return quotes_of(read_scenario_file(path), str(path))  # the same TOML/JSON reading


def read_quotes_text(text: str, name: str) -> list[Quote]:
    """Every quote in the text of a quote file called ``name`` (JSON if it ends in .json,
    else TOML), e.g. an upload; errors as :func:`read_quotes`'s."""
    if name.lower().endswith(".json"):
        try:
            data = parse_nested(json.loads, text, name)
        except json.JSONDecodeError as exc:
            raise ReadError(name, f"{name}: malformed JSON at line {exc.lineno} column "
                                  f"{exc.colno}: {exc.msg}", line=exc.lineno,
                            column=exc.colno) from None
    else:
        try:
            data = parse_nested(tomllib.loads, text, name)
        except tomllib.TOMLDecodeError as exc:
            raise ReadError(name, f"{name}: malformed TOML: {exc}",
                            **toml_position(exc)) from None
    if not isinstance(data, dict):
        raise ReadError(name, f"{name}: a quote file must be a table/object", line=1,
                        column=1)
    return quotes_of(data, name)


def quotes_of(data: dict[str, Any], name: str) -> list[Quote]:
    """The quotes of a parsed quote file (``name`` says which, in errors)."""
    check_nesting(data)  # before anything walks it recursively
    plain, _ = split_sources(data)
    entries = plain.get("quote")
    if not isinstance(entries, list) or not entries:
        raise InputError([("quote", f"{name}: no [[quote]] tables")])
    extra = set(plain) - {"quote", "demand"}
    if extra:
        raise InputError([(sorted(extra)[0], UnknownKey(
            "unknown key (quotes go in [[quote]] tables, the buyer's demand in [demand])"))])
    quotes = [validate_quote(e, f"quote[{i}]") for i, e in enumerate(entries)]
    names = [q.name for q in quotes]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError([("quote", f"quote names must be unique: {', '.join(dupes)}")])
    return quotes


def demand_table(path: str | Path) -> dict[str, Any] | None:
    """The ``[demand]`` table of a quote file (the buyer's demand), or None."""
    plain, _ = split_sources(read_scenario_file(path))
    table = plain.get("demand")
    if table is not None and not isinstance(table, dict):
        raise InputError([("demand", "must be a table")])
    return table
