"""Scenarios met again: a pricing tool sends one scenario many times, changing a section of
its own (an electricity price, a utilisation, a financing table...). The steps before
validation (catalog expansion, a curve read, a power trace) work on a part of the scenario
only, its *frame*: the catalog references and the sections they fill. The frame is loaded
once per distinct content; every other top-level key is *free*: validated on its own (the
scenario's own field validation, nothing else) into a copy of the frame's scenario.

This is the one pipeline made cheap, not a second one beside it. A frame met for the first
time is loaded by the ordinary steps, and kept only after two checks on that request:

- the frame alone, loaded by the same steps, gives the frame's tables and provenance: the
  steps did not read the free keys (nor their presence) for it;
- the scenario assembled from the frame and the free keys is the ordinary one: the same
  validated scenario and the same provenance, key for key and in the same order.

A free value that does not validate, a failed cross check, anything unusual (a ``money``
table, data that is not plain, a very wide table) is loaded the ordinary way, which gives
the exact errors. :func:`frame_names` says which keys each step may touch; the checks above
guard its writes on every new frame, and ``tests/sources/test_frames.py`` its reads.
"""
from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..model.errors import InputError, check_nesting
from ..model.inputs import DEFAULTED_KEYS, Scenario, assign, cross_checks
from . import power_trace_point
from .catalog import SCENARIO_KINDS, split_sources
from .curve_point import CurveReading
from .scenario_file import LoadedScenario, PreparedScenario, cite_leaves

__all__ = ["Frames", "frame_names", "MAX_FRAMES"]

MAX_FRAMES = 512  # frames kept a worker
_CURVE_KEYS = frozenset(("curve", "curve_id"))
_TRACE_KEYS = frozenset(power_trace_point.TRACE_KEYS)
_TREES = (dict, list)
# the kinds a scenario names by reference, each handled in frame_names (a new kind must be)
assert set(SCENARIO_KINDS) == {"accelerator", "operating_point", "electricity", "system"}
_UNMET: Any = object()
_WIDE = 256  # free keys past this many (in all) are loaded the ordinary way (its error caps)


def _reference(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, dict) and "catalog" in value)


def frame_names(data: Mapping[str, Any]) -> set[str] | None:
    """The top-level keys of ``data`` that the steps before validation may read or write;
    None when every key may be read (a ``money`` table: every amount is read at its rates).

    - catalog expansion: every section named by reference; a system's node and rack; a
      published point's workload; an electricity tariff named by key; a reference rate's
      accelerator, electricity, facility and power (and ``reference_rate``);
    - a curve (an operating point by reference or with a curve): the point, the workload
      it fills and the accelerator whose measured power it may give;
    - a power trace: power and the accelerator it gives a measured power to.
    """
    if "money" in data:
        return None
    get = data.get
    names = {"system", "reference_rate"}
    accelerator, op, electricity = get("accelerator"), get("operating_point"), get("electricity")
    if type(accelerator) is not dict or "catalog" in accelerator:  # a reference (or none)
        names.add("accelerator")
    if type(accelerator) is dict and "rate" in accelerator:
        names.update(("accelerator", "electricity", "facility", "power"))
    if type(op) is not dict or "catalog" in op or not _CURVE_KEYS.isdisjoint(op):
        names.update(("operating_point", "workload", "accelerator"))
    if type(electricity) is not dict or "catalog" in electricity or "tariff" in electricity:
        names.add("electricity")
    if "system" in data:
        names.update(("node", "rack"))
    power = get("power")
    if type(power) is dict and not _TRACE_KEYS.isdisjoint(power):
        names.update(("power", "accelerator"))
    return names


def _top(key: str) -> str:
    """The top-level key a provenance key is under (``electricity.tariff.seasons[0]...``)."""
    return key.partition(".")[0].partition("[")[0]


@dataclass(frozen=True)
class _Frame:
    """A frame as loaded: its scenario (with the first request's free keys, each replaced on
    assembly), its provenance as the file gave it (by top-level key) and as the steps added
    it, its expanded tables in order, and what was read off a curve."""
    scenario: Scenario
    given: dict[str, dict[str, str]]  # file sources, by top-level key
    added: dict[str, str]  # what the steps said after the file's own sources
    expanded: dict[str, Any]
    appended: tuple[str, ...]  # top-level keys the steps added, after the scenario's own
    curve: CurveReading | None
    free: frozenset[str]  # the request's own keys, validated on assembly
    # defaults_used() in runs: the frame's own keys' defaults as one tuple, a free key by name
    defaults: tuple[tuple[str, ...] | str, ...]


class Frames:
    """The frames one worker has met (most recent kept), by their content and the catalog
    and curves they were loaded with."""

    def __init__(self, size: int = MAX_FRAMES):
        self._frames: OrderedDict[tuple[Any, ...], _Frame | None] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.assembled = 0  # scenarios assembled from a frame (for tests and benchmarks)

    def load(self, data: Mapping[str, Any], origin: str, *, sources: bool, marker: Any,
             prepare: Callable[[Mapping[str, Any]], PreparedScenario]) -> LoadedScenario:
        """``data`` loaded as ``prepare(data).finish(sources=sources)`` would load it, from
        its frame when one is known. ``marker`` names what ``prepare`` reads besides the
        data (its catalog and curves); ``prepare`` raises InputError for a bad scenario."""
        key, frame, free = None, None, ()
        names = frame_names(data)
        if names is not None:
            own, free_keys, width = {}, [], 0
            for k, v in data.items():
                if k in names:
                    own[k] = v
                else:
                    free_keys.append(k)
                    width += len(v) if type(v) is dict else 1
            free = tuple(free_keys)
            if free and width <= _WIDE:
                try:
                    key = (marker, origin, sources, free, marshal.dumps(own, 2))
                except ValueError:  # not plain data, or nested too deep to be a key
                    key = None
        if key is not None:
            with self._lock:
                frame = self._frames.get(key, _UNMET)
                if frame is not _UNMET:
                    self._frames.move_to_end(key)
            if frame is _UNMET:
                frame = None
            elif frame is None:  # its checks failed: always the ordinary way
                key = None
        if frame is not None:
            loaded = _assemble(frame, data, free, origin, sources)
            if loaded is not None:
                self.assembled += 1
                return loaded
            return prepare(data).finish(sources=sources)
        prepared = prepare(data)
        read, provenance, reading = prepared.read()
        loaded = prepared.validated(read, provenance, reading, sources=sources)
        if key is not None:
            frame = _frame_of(data, names, free, loaded, read, provenance, origin, sources,
                              prepare)
            with self._lock:
                self._frames[key] = frame
                if len(self._frames) > self._size:
                    self._frames.popitem(last=False)
        return loaded


def _assemble(frame: _Frame, data: Mapping[str, Any], free: tuple[str, ...], origin: str,
              sources: bool) -> LoadedScenario | None:
    """The scenario of ``frame`` with ``data``'s free keys; None if they do not validate
    (the ordinary way gives the errors)."""
    scenario = frame.scenario.model_copy()
    provenance: dict[str, str] = {}
    tables: dict[str, Any] = {}
    given, expanded = frame.given, frame.expanded
    try:
        for name, value in data.items():
            if name not in free:
                if name in given:
                    provenance.update(given[name])
                tables[name] = expanded[name]
                continue
            if type(value) is list or (type(value) is dict and ("value" in value or any(
                    type(v) in _TREES for v in value.values()))):  # (a flat table: as given)
                check_nesting(value, f"{name}.")
                value, cited = split_sources(value, name)
                for k, v in cited.items():
                    provenance[k] = f"{origin}: {v}"
            assign(scenario, name, value)
            tables[name] = value
    except (ValidationError, InputError):  # (InputError: nested too deep)
        return None
    if cross_checks(scenario):
        return None
    defaults: list[str] = []
    for run in frame.defaults:
        defaults.extend(scenario.defaults_of(run) if type(run) is str else run)
    provenance.update(frame.added)
    if sources:
        for name in frame.appended:
            tables[name] = frame.expanded[name]
        cite_leaves(tables, provenance, origin)
    return LoadedScenario(scenario, provenance, origin, frame.curve, defaults)


def _frame_of(data: Mapping[str, Any], names: set[str], free: tuple[str, ...],
              loaded: LoadedScenario, read: dict[str, Any], provenance: dict[str, str],
              origin: str, sources: bool,
              prepare: Callable[[Mapping[str, Any]], PreparedScenario]) -> _Frame | None:
    """The frame of a scenario just loaded the ordinary way, or None when it cannot be
    kept: the frame alone loads otherwise (the steps read a free key), or the assembled
    scenario is not the one loaded."""
    try:
        alone, alone_provenance, _ = prepare(
            {k: v for k, v in data.items() if k not in free}).read()
    except Exception:  # the frame alone does not load: the steps need a free key
        return None
    if any(name in free for name in map(_top, alone_provenance)) \
            or any(k in free for k in alone) \
            or any(read.get(k) != v for k, v in alone.items()) \
            or any(k not in alone for k in read if k not in free):
        return None
    own = _file_keys(data, free)
    given: dict[str, dict[str, str]] = {}
    items = list(alone_provenance.items())
    lead = 0
    while lead < len(items) and items[lead][0] in own:
        given.setdefault(_top(items[lead][0]), {}).__setitem__(*items[lead])
        lead += 1
    added = dict(items[lead:])
    if not own.isdisjoint(added):  # a file's source moved after the steps' own
        return None
    frame = _Frame(loaded.scenario, given, added, alone,
                   tuple(k for k in alone if k not in data), loaded.curve, frozenset(free),
                   _default_runs(loaded.scenario, free))
    again = _assemble(frame, data, free, origin, sources)
    if again is None or again.scenario != loaded.scenario \
            or list(again.provenance.items()) != list(loaded.provenance.items()) \
            or again.defaults != loaded.scenario.defaults_used():
        return None
    return frame


def _default_runs(scenario: Scenario, free: tuple[str, ...]) -> tuple[tuple[str, ...] | str, ...]:
    """``scenario.defaults_used()`` as runs: the defaults of consecutive keys outside
    ``free`` joined in one tuple (they are the frame's: the same in every assembly), each
    free key by its name (its defaults are those of the request's own value)."""
    runs: list[tuple[str, ...] | str] = []
    fixed: list[str] = []
    for name in DEFAULTED_KEYS:
        if name in free:
            runs += [tuple(fixed), name] if fixed else [name]
            fixed = []
        else:
            fixed.extend(scenario.defaults_of(name))
    return tuple([*runs, tuple(fixed)] if fixed else runs)


def _file_keys(data: Mapping[str, Any], free: tuple[str, ...]) -> set[str]:
    """The provenance keys the file itself gives (``{value, unit, source}`` tables) in the
    frame's keys."""
    return set(split_sources({k: v for k, v in data.items() if k not in free})[1])
