"""Typed errors of input that cannot be priced, and the bounds every input is held to.

Every face renders these (a problem+json, one CLI line); where behaviour depends on the kind
of error (the problem type, whether another worker may have just added a catalog entry), the
face tells them apart by class, never by the wording of a message. The same holds for one
problem of an error: an unknown key's words are an :class:`UnknownKey`, the line counting
the problems left out a :class:`MoreErrors`, a file that cannot be read a :class:`ReadError`,
a value outside a bound a :class:`Bound` (with the limit and the value as numbers), a quantity
of the wrong sign a :class:`Sign`, of the wrong dimension a :class:`WrongDimension`
(``tests/test_error_kinds.py`` holds the package to it). An exception whose words are such a
kind keeps it through ``str()`` (:class:`KindedError`).

The bounds are stated here once, for every face and every kind of input (scenarios, request
bodies, batch rows, quote, curve and scenario files):

- ``MAX_ERRORS``: an error lists at most this many problems, then one more line counting the
  rest (``and 149,980 more errors``), so a body of 150,000 unknown keys answers a few KB;
- ``MAX_HINTS``: at most this many "did you mean" lookups an answer (the first unknown keys);
- ``MAX_NESTING``: tables and lists inside one another, at most this deep in any input
  document (a request body, a scenario or quote file); checked iteratively
  (:func:`check_nesting`) before anything walks the input recursively.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["InputError", "UnknownReference", "UnreachablePoint", "NonFiniteResult",
           "ReadError", "UnknownKey", "UNKNOWN_KEY", "MoreErrors", "Bound", "Sign",
           "WrongDimension", "KindedError",
           "MAX_ERRORS", "MAX_HINTS", "MAX_NESTING", "bounded", "more_errors",
           "check_nesting", "nesting_error", "nested_message", "parse_nested"]

MAX_ERRORS = 20  # problems listed in one error; the rest are counted
MAX_HINTS = 5  # "did you mean" lookups in one answer
MAX_NESTING = 32  # levels of tables/lists in an input document (real ones need at most 10)


class UnknownKey(str):
    """The words of one problem that is a key naming no field (``unknown key``): its kind
    is its class, so a face gives it the closest known key (``did you mean``) without
    reading its words."""
    __slots__ = ()


UNKNOWN_KEY = UnknownKey("unknown key")


class MoreErrors(str):
    """The line that counts the problems left out (``and 149,980 more errors``), with the
    count."""
    __slots__ = ("count",)

    def __new__(cls, count: int) -> MoreErrors:
        out = super().__new__(cls, f"and {count:,} more error{'s' if count != 1 else ''}")
        out.count = count
        return out


class Bound(str):
    """The words of a value outside a bound (``must be at most 1, got 1.7``) with its numbers:
    ``relation`` (``at least``, ``at most`` or ``below``), ``limit`` and ``value`` [the field's
    unit] and ``rest``, the words after the value; a face restates them in the unit a field
    is typed in (``at most 100 %, got 170 %``) without reading the words."""
    __slots__ = ("limit", "relation", "rest", "value")

    def __new__(cls, relation: str, limit: float, value: float, rest: str = "",
                text: str | None = None) -> Bound:
        out = super().__new__(cls, text if text is not None else
                              f"must be {relation} {limit:g}, got {value:g}{rest}")
        out.relation, out.limit, out.value, out.rest = relation, float(limit), float(value), rest
        return out


class Sign(str):
    """The words of a quantity below zero or at zero where it must be more: ``rule`` (``must
    not be negative`` or ``must be greater than zero``) and ``given``, the value as given."""
    __slots__ = ("given", "rule")

    def __new__(cls, rule: str, given: str) -> Sign:
        out = super().__new__(cls, f"{rule}, got {given}")
        out.rule, out.given = rule, given
        return out


class WrongDimension(str):
    """The words of a quantity of another dimension than its field's: ``expected`` (the
    dimension's name, e.g. ``plain number``, or None when it has none), ``canonical`` (the
    field's unit) and ``got`` (what was given, described)."""
    __slots__ = ("canonical", "expected", "got")

    def __new__(cls, expected: str | None, canonical: str, got: str) -> WrongDimension:
        what = f"{expected} expected (e.g. {canonical!r})" if expected else \
            f"expected units like {canonical!r}"
        out = super().__new__(cls, f"{what}, got {got}")
        out.expected, out.canonical, out.got = expected, canonical, got
        return out


class KindedError(ValueError):
    """A ValueError whose ``str()`` is its words as given, so a kind of words (:class:`Bound`,
    :class:`Sign`, ...) survives ``str(exc)`` (pydantic's value errors and every face read
    them so)."""

    def __str__(self) -> str:
        if len(self.args) == 1 and isinstance(self.args[0], str):
            return self.args[0]
        return super().__str__()


def more_errors(count: int) -> MoreErrors:
    """The line that counts the errors left out: ``and 149,980 more errors``."""
    return MoreErrors(count)


def bounded(errors: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """``errors`` (path, message) cut to :data:`MAX_ERRORS`, then one ``("", "and N more
    errors")`` counting the rest (an earlier such count, anywhere in ``errors``, is taken
    over); stops reading ``errors`` once the cap is reached and only counts."""
    kept: list[tuple[str, str]] = []
    more = 0
    for path, message in errors:
        if isinstance(message, MoreErrors):
            more += message.count
        elif len(kept) < MAX_ERRORS:
            kept.append((path, message))
        else:
            more += 1
    if more:
        kept.append(("", more_errors(more)))
    return kept


def nesting_error(data: Any, limit: int = MAX_NESTING) -> str | None:
    """The path of the first table or list nested deeper than ``limit`` levels in ``data``
    (parsed JSON or TOML: dicts, lists, scalars), ``""`` for the document itself, or None;
    iterative (no recursion), and it stops at the first such place."""
    if not isinstance(data, (dict, list)):
        return None
    stack: list[tuple[Any, int, tuple]] = [(data, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, (dict, list)):
                if depth >= limit:
                    return _path((*path, key))
                stack.append((value, depth + 1, (*path, key)))
    return None


def _path(parts: tuple) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def check_nesting(data: Any, where: str = "", limit: int = MAX_NESTING) -> None:
    """:class:`InputError` at the place in ``data`` nested deeper than ``limit`` levels
    (under ``where``, a path prefix such as ``scenario.``)."""
    found = nesting_error(data, limit)
    if found is not None:
        raise InputError([(f"{where}{found}" if found else where.rstrip("."),
                           nested_message(limit))])


def nested_message(limit: int = MAX_NESTING) -> str:
    return f"nested more than {limit} levels deep (tables and lists); the limit is {limit}"


def parse_nested(parse: Callable[[str], Any], text: str, name: str = "",
                 where: str = "") -> Any:
    """``parse(text)`` (json.loads, tomllib.loads) with its nesting bounded: a parser giving
    up on depth (RecursionError) or a document nested deeper than MAX_NESTING is an
    :class:`InputError` naming the limit (``name``: the document, in the message); the
    parser's own errors pass through; ``where`` prefixes the path of a place too deep."""
    try:
        data = parse(text)
    except RecursionError:
        raise InputError([("", f"{name}: {nested_message()}" if name else nested_message())]) \
            from None
    check_nesting(data, where)
    return data


class InputError(ValueError):
    """Input that cannot be priced. ``errors`` is a list of ``(field path, message)``, at
    most :data:`MAX_ERRORS` of them and a last one counting the rest (:func:`bounded`)."""

    subject: str | None = None  # the face's name of the input it is about, when known
    file: str | None = None  # the file whose keys the paths are, when it is about one

    def __init__(self, errors: Iterable[tuple[str, str]]):
        self.errors = bounded(errors)
        # path -> where it was given: a line of ``file`` (int) or the option that set it
        self.places: dict[str, int | str] = {}
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in self.errors))

    def about(self, subject: str | None) -> InputError:
        """This error, marked as being about ``subject`` (kept if already marked)."""
        if self.subject is None:
            self.subject = subject
        return self

    def placed(self, places: Mapping[str, int | str], file: str | None = None) -> InputError:
        """This error, its paths marked with where they were given (``places``: path -> a
        line of ``file``, or the option that set it, ``--set``), and as being about the
        keys of ``file`` when given (kept if already marked)."""
        if self.file is None and not self.places:
            self.file = file
            self.places = {p: places[p] for p, _ in self.errors if p in places}
        return self


class ReadError(InputError):
    """A file that cannot be read into plain data (missing, not UTF-8, malformed, not a
    table): ``filename`` as named, and the ``line`` and ``column`` (from 1) of the fault when the
    file has one."""

    def __init__(self, file: str, message: str, *, line: int | None = None,
                 column: int | None = None):
        super().__init__([("", message)])
        self.filename, self.line, self.column = file, line, column


class UnknownReference(InputError):
    """A catalog key or curve id that the catalog or curve library does not hold (yet: a
    service's copy may be a moment behind another worker's write)."""

    def __init__(self, path: str, message: str, *, kind: str, key: str):
        super().__init__([(path, message)])
        self.kind = kind  # a catalog kind (accelerator, ...) or "curve"
        self.key = key


class UnreachablePoint(InputError):
    """A target interactivity above a curve's frontier; ``best`` is the best reachable
    interactivity [token/s/user]."""

    def __init__(self, path: str, message: str, *, best: float):
        super().__init__([(path, message)])
        self.best = best


class NonFiniteResult(InputError):
    """Inputs so extreme that a cost overflows float64 (``1e-308 token/s``, ``1e308 USD``):
    no figure is answered or saved; ``errors`` name the inputs that overflowed."""
