"""The typed requests of the use cases: which scenario, with which overrides, read where.

A face (CLI, API, web page) parses its own input into these and nothing else: a scenario
source (a file, a mapping, a saved revision), overrides as checked ``(key, value)`` pairs,
and where to read curves (each scenario's own point, the matched interactivity, or a named
one). ``subject`` is the face's own name for a scenario (``scenarios[1].scenario.``, a file
path) and comes back on the errors raised while loading it, for the face to render.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model.errors import InputError
from ..sources.scenario_file import parse_override
from .build import known_key
from .hints import UNKNOWN

__all__ = ["Override", "FileScenario", "InlineScenario", "SavedRevision", "ScenarioSpec",
           "OwnPoint", "Matched", "AtInteractivity", "Reading", "OWN_POINT", "MATCHED",
           "overrides_from_mapping", "overrides_from_text"]


@dataclass(frozen=True)
class Override:
    """One scenario input set by the user: a dotted scenario key (``electricity.price``) and
    its value as given (a quantity text, a number, a table); checked to name an input."""
    key: str
    value: Any


SET = "--set"  # the option that gives overrides on the command line


def overrides_from_mapping(mapping: Mapping[str, Any]) -> tuple[Override, ...]:
    """``{"electricity.price": "0.1 USD/kWh"}`` (an API body) -> overrides; every unknown key
    is an :class:`InputError` at its own path."""
    unknown = [k for k in mapping if not known_key(k)]
    if unknown:
        raise InputError([(k, UNKNOWN) for k in unknown])
    return tuple(Override(k, v) for k, v in mapping.items())


def overrides_from_text(items: Any) -> tuple[Override, ...]:
    """``["electricity.price=0.1 USD/kWh", ...]`` (``--set``) -> overrides; VALUE is read
    as TOML, else kept as text. Every unknown key is an :class:`InputError` at its own path,
    placed at ``--set`` (a face says "did you mean" among every key)."""
    out = [Override(*parse_override(text)) for text in items]
    unknown = list(dict.fromkeys(o.key for o in out if not known_key(o.key)))
    if unknown:
        raise InputError([(k, UNKNOWN) for k in unknown]).placed(dict.fromkeys(unknown, SET))
    return tuple(out)


@dataclass(frozen=True)
class FileScenario:
    """A scenario file (TOML or JSON); relative curve and trace paths resolve beside it."""
    path: Path


@dataclass(frozen=True)
class InlineScenario:
    """A scenario mapping given in a request; ``label`` names it in the disclosure."""
    data: Mapping[str, Any]
    label: str = "request"


@dataclass(frozen=True)
class SavedRevision:
    """A saved scenario's revision (its latest when ``revision`` is None)."""
    scenario_id: int
    revision: int | None = None


Source = FileScenario | InlineScenario | SavedRevision


@dataclass(frozen=True)
class ScenarioSpec:
    """A scenario to load: its source, overrides on top, and the face's name for it."""
    source: Source
    overrides: tuple[Override, ...] = ()
    subject: str | None = None


@dataclass(frozen=True)
class OwnPoint:
    """Each scenario at its own operating point."""


@dataclass(frozen=True)
class Matched:
    """Every curve read at the interactivity all systems reach: the slowest one's best."""


@dataclass(frozen=True)
class AtInteractivity:
    """Every curve read at ``value`` [token/s/user]."""
    value: float
    label: str = field(default="", compare=False)


Reading = OwnPoint | Matched | AtInteractivity
OWN_POINT = OwnPoint()
MATCHED = Matched()
