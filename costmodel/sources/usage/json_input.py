"""JSON usage files: one document (an object or an array) or JSON lines (one document a
line), read with their nesting bounded, and the place of a bad value.

A bad value is placed by its JSON path (``data[0].results[2].input_tokens``) and, where it is
certain, its line: a JSON line's own line, or the line of a document's member as
:func:`~costmodel.sources.key_lines.json_key_lines` finds it (documents up to its scan
limit; past it, the path alone).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ...model.errors import MAX_NESTING, InputError, check_nesting, nested_message
from ..key_lines import json_key_lines
from .errors import UsageError

__all__ = ["JsonUnit", "JsonSource", "load_json", "join", "MAX_TIME"]

MAX_TIME = 253402300800  # [s] 10000-01-01T00:00:00Z: a larger "time" is no time in seconds


def join(path: str, member: str | int) -> str:
    """``path`` then ``member`` (a name: ``.name``; an index: ``[i]``)."""
    if isinstance(member, int):
        return f"{path}[{member}]"
    return f"{path}.{member}" if path else member


@dataclass(frozen=True)
class JsonUnit:
    """A top-level value: a JSON line's document (``line``), an item of a document that is an
    array (``path`` ``[i]``) or the document itself (``path`` ``""``)."""

    value: Any
    path: str
    line: int | None


class JsonSource:
    """A JSON usage file read whole: its units, and errors placed in it."""

    def __init__(self, name: str, text: str, units: list[JsonUnit], lines: bool):
        self.name, self.text, self.units, self.lines = name, text, units, lines
        self._key_lines: dict[str, int] | None = None

    def error(self, unit: JsonUnit, path: str, message: str) -> UsageError:
        """A :class:`UsageError` about the value at ``path`` inside ``unit``."""
        full = (unit.path + path if path.startswith("[") else join(unit.path, path)) \
            if path else unit.path
        line = unit.line
        if line is None:
            if self._key_lines is None:
                self._key_lines = json_key_lines(self.text)
            line = self._key_lines.get(full)
        return UsageError(self.name, line, full or None, message)

    # -- typed values ----------------------------------------------------------------------

    def count(self, unit: JsonUnit, obj: dict, key: str, path: str, *,
              required: bool = True) -> float:
        """A token or request count [token] [request]: a finite number >= 0 (absent or null:
        0 unless ``required``)."""
        value = obj.get(key)
        where = join(path, key)
        if value is None:
            if required:
                raise self.error(unit, where, "missing" if key not in obj else
                                 "is null; a count is needed")
            return 0.0
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(unit, where, f"expected a number, got {_shown(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.error(unit, where, f"{_shown(value)} is not a finite number")
        if number < 0:
            raise self.error(unit, where, f"{_shown(value)} is negative; a count is >= 0")
        return number

    def time(self, unit: JsonUnit, value: Any, path: str) -> int:
        """Seconds since 1970-01-01 UTC [s] (rounded down) from a number of seconds or an ISO
        8601 text (``2026-11-01T08:00:00Z``; without a zone: UTC)."""
        if isinstance(value, bool) or value is None:
            raise self.error(unit, path, f"expected a time, got {_shown(value)}")
        if isinstance(value, (int, float)):
            if not (isinstance(value, int) or math.isfinite(value)) or \
                    not 0 <= value < MAX_TIME:
                raise self.error(unit, path, f"{_shown(value)} is not a time in seconds since "
                                             "1970 (milliseconds?)")
            return math.floor(value)
        if isinstance(value, str):
            seconds = parse_iso(value)
            if seconds is None:
                raise self.error(unit, path, f"cannot read {_shown(value)} as a time "
                                             "(ISO 8601, or seconds since 1970)")
            return seconds
        raise self.error(unit, path, f"expected a time, got {_shown(value)}")

    @staticmethod
    def label(value: Any) -> str | None:
        """A grouping value as a label: text (stripped), a bool as ``true``/``false``, null as
        ``""``; None for anything else (a number, a table: not a grouping value)."""
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return value.strip()
        return None


def parse_iso(text: str) -> int | None:
    """Seconds since 1970 UTC (rounded down) of an ISO 8601 text, or None."""
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return math.floor(dt.timestamp())


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, float) or math.isfinite(value) \
        else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _decode(data: bytes, name: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(name, data.count(b"\n", 0, exc.start) + 1, None,
                         "is not UTF-8 text") from None
    return text[1:] if text.startswith("\ufeff") else text


def _bounded(value: Any, name: str, line: int | None) -> Any:
    """``value`` if nested at most :data:`MAX_NESTING` levels deep."""
    try:
        check_nesting(value)
    except InputError:
        raise UsageError(name, line, None, nested_message(MAX_NESTING)) from None
    return value


_GAP = re.compile(r"[ \t\r\n]*")


def load_json(data: bytes, name: str) -> JsonSource:
    """A JSON file: one document, or several one after another (JSON lines: one a line)."""
    text = _decode(data, name)
    if not text.strip():
        raise UsageError(name, None, None, "is empty")
    decoder = json.JSONDecoder()
    documents: list[tuple[Any, int]] = []  # (document, the line it starts on)
    pos = _GAP.match(text, 0).end()
    line, counted = 1, 0  # the line at ``counted`` (counted on as the documents are read)
    while pos < len(text):
        line, counted = line + text.count("\n", counted, pos), pos
        try:
            value, pos = decoder.raw_decode(text, pos)
        except RecursionError:
            raise UsageError(name, line, None, nested_message()) from None
        except json.JSONDecodeError as exc:
            raise UsageError(name, exc.lineno, None,
                             f"is not JSON: {exc.msg} (character {exc.colno})") from None
        documents.append((_bounded(value, name, line), line))
        pos = _GAP.match(text, pos).end()
    if len(documents) > 1:
        return JsonSource(name, text, [JsonUnit(v, "", line) for v, line in documents],
                          lines=True)
    value = documents[0][0]
    if isinstance(value, list):
        units = [JsonUnit(v, f"[{i}]", None) for i, v in enumerate(value)]
    else:
        units = [JsonUnit(value, "", None)]
    return JsonSource(name, text, units, lines=False)
