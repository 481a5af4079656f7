"""Quote files: TOML (or JSON) with one ``[[quote]]`` table per quote (README, Quotes)."""
from __future__ import annotations

from pathlib import Path

from ..inputs import InputError
from ..quotes import Quote, validate_quote
from .catalog import split_sources
from .scenario_file import read_scenario_file

__all__ = ["read_quotes"]


def read_quotes(path: str | Path) -> list[Quote]:
    """Every quote in a file; an InputError names the quote and field of any problem."""
    data = read_scenario_file(path)  # the same TOML/JSON reading and errors
    plain, _ = split_sources(data)
    entries = plain.get("quote")
    if not isinstance(entries, list) or not entries:
        raise InputError([("quote", f"{path}: no [[quote]] tables")])
    extra = set(plain) - {"quote"}
    if extra:
        raise InputError([(sorted(extra)[0], "unknown key (quotes go in [[quote]] tables)")])
    quotes = [validate_quote(e, f"quote[{i}]") for i, e in enumerate(entries)]
    names = [q.name for q in quotes]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError([("quote", f"quote names must be unique: {', '.join(dupes)}")])
    return quotes
