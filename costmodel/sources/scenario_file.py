"""Scenario files (TOML or JSON) read into plain data, and ``--set`` overrides read from
their text. A reader only reads: expanding catalog references, applying overrides and
validating happen above it, once (:mod:`costmodel.app.build`). A file that cannot be read
is a :class:`~costmodel.model.errors.ReadError` naming the file, and the line and column of
the fault when it has one.
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from ..model.errors import InputError, ReadError, parse_nested
from .catalog import split_sources

__all__ = ["read_scenario_file", "parse_override", "split_sources", "toml_position"]


def read_scenario_file(path: str | Path) -> dict[str, Any]:
    """Parse a scenario file into a plain mapping; a file that cannot be read is one
    :class:`ReadError` (its words name the file)."""
    p = Path(path)
    name = str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReadError(name, f"cannot read {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ReadError(name, f"{p} is not UTF-8 text", **_undecodable(p)) from None
    try:
        if p.suffix.lower() == ".json":
            try:
                data = parse_nested(json.loads, text, name)
            except json.JSONDecodeError as exc:
                raise ReadError(name, f"{p}: malformed JSON at line {exc.lineno} column "
                                      f"{exc.colno}: {exc.msg}", line=exc.lineno,
                                column=exc.colno) from None
        else:
            try:
                data = parse_nested(tomllib.loads, text, name)
            except tomllib.TOMLDecodeError as exc:
                raise ReadError(name, f"{p}: malformed TOML: {exc}",
                                **toml_position(exc)) from None
    except ReadError:
        raise
    except InputError as exc:  # nested deeper than any input may be
        if exc.errors[0][0]:  # (a place in the file too deep: a path, read as data)
            raise
        raise ReadError(name, exc.errors[0][1]) from None
    if not isinstance(data, dict):
        raise ReadError(name, f"{p}: a scenario must be a table/object", line=1, column=1)
    return data


def _undecodable(p: Path) -> dict[str, int]:
    """The line and column [bytes, from 1] of the first byte of ``p`` that is not UTF-8."""
    try:
        raw = p.read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        return {"line": raw.count(b"\n", 0, exc.start) + 1,
                "column": exc.start - line_start + 1}
    except OSError:
        pass
    return {}


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)$")


def toml_position(exc: tomllib.TOMLDecodeError) -> dict[str, int]:
    """Where tomllib found a fault: ``line`` and ``column`` (from 1), or nothing (the end of
    the document). Python 3.14 gives them as attributes; before, tomllib writes them only
    at the end of its words, where they are read as numbers."""
    line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
    if line is not None and column is not None:
        return {"line": line, "column": column}
    at = _TOML_AT.search(exc.args[0]) if exc.args and isinstance(exc.args[0], str) else None
    return {"line": int(at.group(1)), "column": int(at.group(2))} if at else {}


def parse_override(text: str) -> tuple[str, Any]:
    """``"a.b=VALUE"`` -> ``("a.b", value)``; VALUE is read as TOML, else kept as a string."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise InputError([("--set", f"expected dotted.key=VALUE, got {text!r}")])
    raw = raw.strip()
    try:
        value = parse_nested(lambda t: tomllib.loads(t)["v"], f"v = {raw}", key, f"{key}.")
    except tomllib.TOMLDecodeError:
        value = raw  # e.g. 0.10 USD/kWh or facility: a plain string
    return key, value
