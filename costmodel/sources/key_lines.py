"""Where each key of a TOML or JSON document is written: its line, for error messages.

tomllib and json give values without positions, so the text is scanned once more here, for
its structure only: table headers (``[a.b]``, ``[[a.b]]``), keys (bare, quoted, dotted:
``a.b = 1``), inline tables and arrays (``x = { y = 1 }``, ``[{...}, {...}]``), strings of
every kind (escapes, multi-line) and comments. Each key is named by the path an error gives
it (:func:`~costmodel.model.inputs.error_path`: ``node.price``, ``tariff.periods[1].price``).

A line is answered only when it is certain: the scan's paths are checked against the parsed
document's (every table, key and array item of it, no more, no fewer); a document the scan
reads otherwise answers no line at all, never a wrong one. So does a document longer than
:data:`MAX_SCAN` characters (no scenario is: the scan is a second reading, for a message).
"""
from __future__ import annotations

import bisect
import json
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["MAX_SCAN", "key_lines", "toml_key_lines", "json_key_lines", "file_key_lines",
           "document_paths"]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_WS = " \t"
_MAX_DEPTH = 64  # deeper than any document read here (MAX_NESTING is 32)
MAX_SCAN = 1 << 20  # [characters] a longer document is not scanned (a scenario is a few KB)


class _Unsure(Exception):
    """The scan met text it does not read as the parser did: no line is answered."""


def document_paths(data: Any) -> set[str]:
    """Every table, key and array item of a parsed document, by its error path."""
    out: set[str] = set()
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            items = ((f"{path}.{k}" if path else str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            items = ((f"{path}[{i}]", v) for i, v in enumerate(node))
        else:
            continue
        for child, value in items:
            out.add(child)
            stack.append((child, value))
    return out


class _Lines:
    """Character offsets -> 1-based line numbers."""

    def __init__(self, text: str):
        self.breaks = [i for i, c in enumerate(text) if c == "\n"]

    def __call__(self, pos: int) -> int:
        return bisect.bisect_right(self.breaks, pos - 1) + 1


class _Toml:
    """One pass over a TOML document recording the line of every path it defines."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, _Lines(text)
        self.found: dict[str, int] = {}
        self.arrays: dict[str, int] = {}  # an array of tables' path -> items so far

    # -- recording -------------------------------------------------------------------------

    def record(self, path: str, pos: int, *, explicit: bool = True) -> None:
        """``path`` is at ``pos``: where it is defined (``explicit``), else where it is first
        met (a table a header or dotted key makes on its way)."""
        if explicit:
            self.found[path] = self.line(pos)
        else:
            self.found.setdefault(path, self.line(pos))

    # -- characters ------------------------------------------------------------------------

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos:self.pos + n]

    def expect(self, s: str) -> None:
        if not self.text.startswith(s, self.pos):
            raise _Unsure(f"expected {s!r} at {self.pos}")
        self.pos += len(s)

    def blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def comment(self) -> None:
        if self.peek() == "#":
            end = self.text.find("\n", self.pos)
            self.pos = len(self.text) if end < 0 else end

    def end_of_line(self) -> None:
        """Blanks, a comment, then a line break or the end of the document."""
        self.blanks()
        self.comment()
        if self.peek(2) == "\r\n":
            self.pos += 2
        elif self.peek() == "\n":
            self.pos += 1
        elif self.pos < len(self.text):
            raise _Unsure(f"expected the end of a line at {self.pos}")

    def gaps(self) -> None:
        """Blanks, line breaks and comments (inside an array)."""
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in _WS or c in "\r\n":
                self.pos += 1
            elif c == "#":
                self.comment()
            else:
                return

    # -- keys ------------------------------------------------------------------------------

    def key(self) -> list[tuple[str, int]]:
        """A (dotted) key: its parts, each with its offset."""
        parts = []
        while True:
            self.blanks()
            start = self.pos
            c = self.peek()
            if c == '"':
                parts.append((self.basic_string(), start))
            elif c == "'":
                parts.append((self.literal_string(), start))
            else:
                m = _BARE.match(self.text, self.pos)
                if m is None:
                    raise _Unsure(f"expected a key at {self.pos}")
                self.pos = m.end()
                parts.append((m.group(), start))
            self.blanks()
            if self.peek() != ".":
                return parts
            self.pos += 1

    # -- strings ---------------------------------------------------------------------------

    def basic_string(self) -> str:
        """``"..."`` (the position at its opening quote), decoded as JSON decodes it (TOML's
        escapes are JSON's and ``\\e``, ``\\xHH``, ``\\UXXXXXXXX``: a key holding those is
        kept as written, which no scenario key does)."""
        self.expect('"')
        start = self.pos
        while True:
            c = self.peek()
            if c == "" or c == "\n":
                raise _Unsure("an unterminated string")
            if c == "\\":
                self.pos += 2
                continue
            self.pos += 1
            if c == '"':
                raw = self.text[start:self.pos - 1]
                try:
                    return json.loads(f'"{raw}"')
                except ValueError:
                    return raw

    def literal_string(self) -> str:
        self.expect("'")
        end = self.text.find("'", self.pos)
        if end < 0 or "\n" in self.text[self.pos:end]:
            raise _Unsure("an unterminated literal string")
        out, self.pos = self.text[self.pos:end], end + 1
        return out

    def multiline(self, quote: str) -> None:
        """A ``\"\"\"`` or ``'''`` string (up to two quotes may end its content)."""
        delim = quote * 3
        self.expect(delim)
        while True:
            end = self.text.find(delim, self.pos)
            if end < 0:
                raise _Unsure("an unterminated multi-line string")
            if quote == '"':
                # a delimiter preceded by an odd number of backslashes is an escaped quote
                slashes, i = 0, end - 1
                while i >= self.pos and self.text[i] == "\\":
                    slashes, i = slashes + 1, i - 1
                if slashes % 2:
                    self.pos = end + 1
                    continue
            self.pos = end + 3
            extra = 0
            while extra < 2 and self.peek() == quote:
                self.pos, extra = self.pos + 1, extra + 1
            return

    # -- values ----------------------------------------------------------------------------

    def value(self, path: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Unsure("nested too deep")
        self.blanks()
        c = self.peek()
        if self.peek(3) in ('"""', "'''"):
            self.multiline(c)
        elif c == '"':
            self.basic_string()
        elif c == "'":
            self.literal_string()
        elif c == "{":
            self.inline_table(path, depth)
        elif c == "[":
            self.array(path, depth)
        else:
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}#\r\n":
                self.pos += 1
            if not self.text[start:self.pos].strip():
                raise _Unsure(f"expected a value at {start}")

    def inline_table(self, path: str, depth: int) -> None:
        self.expect("{")
        while True:
            self.gaps()
            if self.peek() == "}":
                self.pos += 1
                return
            self.key_value(path, depth + 1, self.gaps)
            self.gaps()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "}":
                raise _Unsure(f"expected , or }} at {self.pos}")

    def array(self, path: str, depth: int) -> None:
        self.expect("[")
        index = 0
        while True:
            self.gaps()
            if self.peek() == "]":
                self.pos += 1
                return
            item = f"{path}[{index}]"
            self.record(item, self.pos)
            self.value(item, depth + 1)
            index += 1
            self.gaps()
            if self.peek() == ",":
                self.pos += 1
            elif self.peek() != "]":
                raise _Unsure(f"expected , or ] at {self.pos}")

    def key_value(self, table: str, depth: int, skip: Callable[[], None]) -> None:
        """``key = value`` in ``table``: each part of a dotted key is a table on the way."""
        parts = self.key()
        path = table
        for i, (part, at) in enumerate(parts):
            path = f"{path}.{part}" if path else part
            self.record(path, at, explicit=i == len(parts) - 1)
        skip()
        self.expect("=")
        self.value(path, depth)

    # -- the document ----------------------------------------------------------------------

    def header(self) -> str:
        """``[a.b]`` or ``[[a.b]]``: the table's path (an array of tables' newest item)."""
        many = self.peek(2) == "[["
        self.expect("[[" if many else "[")
        parts = self.key()
        self.expect("]]" if many else "]")
        path = ""
        for i, (part, at) in enumerate(parts):
            path = f"{path}.{part}" if path else part
            last = i == len(parts) - 1
            if last and many:
                count = self.arrays.get(path, 0)
                self.arrays[path] = count + 1
                self.record(path, at, explicit=False)
                path = f"{path}[{count}]"
                self.record(path, at)
            else:
                self.record(path, at, explicit=last)
                if path in self.arrays:  # a table inside the newest item of an array
                    path = f"{path}[{self.arrays[path] - 1}]"
        self.end_of_line()
        return path

    def scan(self) -> dict[str, int]:
        table = ""
        while self.pos < len(self.text):
            self.blanks()
            c = self.peek()
            if c in ("#", "\n", "\r"):
                self.end_of_line()
            elif c == "[":
                table = self.header()
            else:
                self.key_value(table, 0, self.blanks)
                self.end_of_line()
        return self.found


class _Json:
    """One pass over a JSON document recording the line of every member and item."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, _Lines(text)
        self.found: dict[str, int] = {}
        self.decoder = json.JSONDecoder()

    def gaps(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def value(self, path: str, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _Unsure("nested too deep")
        self.gaps()
        c = self.text[self.pos:self.pos + 1]
        if c == "{":
            self.pos += 1
            self.gaps()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return
            while True:
                self.gaps()
                at = self.pos
                if not self.text.startswith('"', at):
                    raise _Unsure(f"expected a member's name at {at}")
                name, self.pos = json.decoder.scanstring(self.text, at + 1)
                member = f"{path}.{name}" if path else name
                self.found[member] = self.line(at)  # a repeated name: json.loads keeps the last
                self.gaps()
                if not self.text.startswith(":", self.pos):
                    raise _Unsure(f"expected : at {self.pos}")
                self.pos += 1
                self.value(member, depth + 1)
                if not self.close("}"):
                    continue
                return
        elif c == "[":
            self.pos += 1
            self.gaps()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return
            index = 0
            while True:
                self.gaps()
                item = f"{path}[{index}]"
                self.found[item] = self.line(self.pos)
                self.value(item, depth + 1)
                index += 1
                if self.close("]"):
                    return
        else:
            try:
                _, self.pos = self.decoder.raw_decode(self.text, self.pos)
            except ValueError:
                raise _Unsure(f"expected a value at {self.pos}") from None

    def close(self, bracket: str) -> bool:
        """After a member or item: ``,`` (more follow: False) or ``bracket`` (True)."""
        self.gaps()
        c = self.text[self.pos:self.pos + 1]
        if c not in (",", bracket):
            raise _Unsure(f"expected , or {bracket} at {self.pos}")
        self.pos += 1
        return c == bracket

    def scan(self) -> dict[str, int]:
        self.value("", 0)
        self.gaps()
        if self.pos != len(self.text):
            raise _Unsure("text after the document")
        return self.found


def toml_key_lines(text: str) -> dict[str, int]:
    """Every path of a TOML document -> the line it is written on (a table made on the way,
    ``a`` of ``[a.b]``, where it is first met); empty when the text is not TOML or the scan
    does not read it as tomllib does."""
    return _checked(text, tomllib.loads, lambda: _Toml(text).scan())


def json_key_lines(text: str) -> dict[str, int]:
    """Every path of a JSON document -> the line its member's name (or its item) is on;
    empty when the text is not JSON or the scan does not read it as json does."""
    return _checked(text, json.loads, lambda: _Json(text).scan())


def _checked(text: str, parse: Callable[[str], Any],
             scan: Callable[[], dict[str, int]]) -> dict[str, int]:
    if len(text) > MAX_SCAN:
        return {}
    try:
        data = parse(text)
        found = scan()
    except (ValueError, RecursionError, _Unsure):  # (TOMLDecodeError is a ValueError)
        return {}
    return found if found.keys() == document_paths(data) else {}


def key_lines(text: str, name: str) -> dict[str, int]:
    """The lines of a scenario file's keys (``name``: its file name; JSON by its suffix, as
    :func:`~costmodel.sources.scenario_file.read_scenario_file` tells them apart)."""
    return json_key_lines(text) if name.lower().endswith(".json") else toml_key_lines(text)


def file_key_lines(path: str | Path) -> dict[str, int]:
    """:func:`key_lines` of the file at ``path``; empty when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return key_lines(text, str(path))
