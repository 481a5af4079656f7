"""'Did you mean' for unknown keys: the known keys at the same place, by closeness of
spelling (difflib), so ``utilization`` answers ``did you mean utilisation?``. An unknown key
is known by its kind (:class:`~costmodel.model.errors.UnknownKey`), never by its words.

Every face says it the same way, through :func:`with_hints` (an error's (path, message)
pairs: the API's problem details, the command line's one line) or :func:`hinted` (a face's
own error records), each asking at most :data:`~costmodel.model.errors.MAX_HINTS` lookups."""
from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Callable, Container, Iterable, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel

from ..model.errors import MAX_HINTS, UNKNOWN_KEY, UnknownKey
from ..model.inputs import Scenario
from ..sources.catalog import SCENARIO_KINDS
from ..sources.power_trace_point import TRACE_KEYS
from .build import known_key

__all__ = ["UNKNOWN", "scenario_keys", "hint", "closest", "with_hint", "with_hints", "hinted",
           "model_fields_at"]

UNKNOWN = UNKNOWN_KEY  # an unknown key's words, of their kind


def _section(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _section(arg)
        if found is not None:
            return found
    return None


@cache
def scenario_keys() -> frozenset[str]:
    """Every dotted key a scenario (file or request) may hold, and every override key."""
    keys: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            keys.add(prefix + name)
            sub = _section(info.annotation)
            if sub is not None:
                walk(sub, f"{prefix}{name}.")
    walk(Scenario, "")
    keys.update(f"{s}.catalog" for s in SCENARIO_KINDS)
    keys.update({"accelerator.rate", "operating_point.curve_id", "operating_point.at",
                 "operating_point.ttft_max", *(f"power.{k}" for k in TRACE_KEYS)})
    keys.discard("reference_rate")
    return frozenset(k for k in keys if not k.startswith("reference_rate.")
                     and (known_key(k) or k.endswith((".catalog", ".rate", ".ttft_max"))))


def hint(name: str, known: Iterable[str], prefix: str = "") -> str:
    """``; did you mean X?`` for the closest known name (after ``prefix``), or nothing."""
    close = closest(name, known)
    return f"; did you mean {prefix}{close}?" if close is not None else ""


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest in spelling to ``name`` (one difflib lookup), letter case
    aside (``PUE`` means ``pue``); None when none is close."""
    spelt: dict[str, str] = {}
    for k in sorted(known):
        spelt.setdefault(k.lower(), k)
    close = difflib.get_close_matches(name.lower(), list(spelt), n=1, cutoff=0.6)
    return spelt[close[0]] if close else None


def with_hint(path: str, message: str, *, dotted: bool = False) -> str:
    """``message`` about a scenario key ``path`` (relative to the scenario), with the closest
    known key when the key is unknown. ``dotted``: the path is one override key, the
    closest among its section's keys when its section is one (``accelerator.tdp`` is no
    misspelt ``accelerator``), else among every key; else a key among its own table's
    keys. The answer is plain words (no longer an unknown key to hint)."""
    if not isinstance(message, UnknownKey):
        return message
    keys = scenario_keys()
    parent, _, last = path.rpartition(".")
    siblings = {k.rpartition(".")[2] for k in keys if k.rpartition(".")[0] == parent}
    if dotted:
        if parent and parent in keys and siblings:
            return message + hint(last, siblings, f"{parent}.")
        return message + hint(path, keys)
    return message + hint(last, siblings)


def with_hints(errors: Sequence[tuple[str, str]], *,
               dotted: bool | Container[str] = False) -> list[tuple[str, str]]:
    """``errors`` ((path, message), paths relative to a scenario) with their first
    :data:`MAX_HINTS` unknown keys given the closest known key (:func:`with_hint`).
    ``dotted``: every path is one override's key (True), or the paths that are (the rest
    are keys among their own table's)."""
    out = [{"path": p, "message": m} for p, m in errors]
    hinted(out, lambda e, i: with_hint(
        errors[i][0], e["message"],
        dotted=dotted if isinstance(dotted, bool) else errors[i][0] in dotted))
    return [(e["path"], e["message"]) for e in out]


def hinted(errors: list[dict[str, str]], hint: Callable[[dict[str, str], int], str]) -> None:
    """The first :data:`MAX_HINTS` unknown keys of ``errors`` given their closest known key
    (``hint(error, index)``: the message with it), in place; no lookup for the rest."""
    lookups = 0
    for i, e in enumerate(errors):
        if lookups >= MAX_HINTS:
            break
        if isinstance(e["message"], UnknownKey):
            e["message"] = hint(e, i)
            lookups += 1


def model_fields_at(model: type[BaseModel], loc: tuple) -> set[str]:
    """The field names of the model found at ``loc``'s parent in a request body model (for
    an unknown field's hint); empty when the place is not a model."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            args = [a for a in typing.get_args(current) if a is not type(None)]
            current = args[0] if args else None
            continue
        sub = _section(current)
        if sub is None or part not in sub.model_fields:
            return set()
        current = _strip(sub.model_fields[part].annotation)
    sub = _section(current)
    return set(sub.model_fields) if sub is not None else set()


def _strip(annotation: Any) -> Any:
    """``list[X] | None`` -> ``list[X]``; Annotated unwrapped."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _strip(args[0])
    if typing.get_origin(annotation) is list:
        return list[_strip(typing.get_args(annotation)[0])]  # type: ignore[misc]
    return annotation
