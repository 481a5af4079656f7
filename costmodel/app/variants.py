"""Scenarios met again with other numbers: a pricing tool sends one scenario many times,
changing only numeric inputs (an electricity price, a utilisation...). Such a request is
built from the validated scenario of the first one it resembles, not expanded and validated
again from its text.

A request *resembles* a known one when it is the same inline scenario (same catalog, no
overrides, no ``money`` table) except for the values of some numeric leaves, each written as
a plain number, text (``"0.05 USD/kWh"``) or a ``{value, unit}`` table at a key of
:data:`MOVABLE`. Each changed value
is read by the scenario's own field parser (the one validation would use, so the same
number), set on a copy of its section, and the copy is checked as a scenario is (the cross
checks: a utilisation against a load shape...). Anything else — a value that does not
parse, a failed check, a key the known scenario did not give — is priced the ordinary way,
which gives the exact error.

The catalog expansion reads none of these values (it reads catalog keys and which keys are
given, never a number's value), and no section's own checks read them either (only which
keys are given: ``electricity``'s citations); that is why a copy with the value set is the
scenario validation would build. It is also checked, not only argued: for each known scenario
and set of changed keys, the first request is priced both ways and its answer compared; if
they differ, those keys are always priced the ordinary way.
"""
from __future__ import annotations

import marshal
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from ..decisions.sensitivity.inputs import VARS, Var
from ..model.errors import InputError
from ..model.inputs import cross_checks, quantity_field
from .build import LoadedScenario
from .engine import Priced, price_loaded

__all__ = ["Variants", "MOVABLE", "read_value", "MAX_COUNT"]

# the numeric inputs a request may change and still be built from a known scenario: keys
# of sections that only a scenario's own table fills (no curve is read for them, no catalog
# entry's other tables depend on them), and the top-level fractions
MOVABLE = frozenset({
    "accelerator.price", "accelerator.hourly_price", "accelerator.rated_power",
    "accelerator.measured_power", "accelerator.memory_bandwidth", "accelerator.all_in_power",
    "node.accelerators", "node.host_power", "node.psu_efficiency", "node.price",
    "rack.nodes", "rack.switch_power", "rack.other_power", "rack.power_delivery_efficiency",
    "rack.price", "facility.pue", "facility.hosting", "financing.life",
    "financing.cost_of_capital", "financing.salvage", "financing.maintenance",
    "electricity.price", "electricity.carbon_intensity", "pricing.gross_margin",
    "pricing.output_weight", "utilisation", "idle_power"})
assert VARS.keys() >= MOVABLE  # each read as a batch reads it (the field's own parser)
_NUMBER = (int, float, str)  # a leaf's value as JSON gives it (a bool is not one of them)
_QUANTITY = frozenset({"value", "unit"})  # ... or a {value, unit} table, nothing else in it
_HOLE = ("movable",)  # stands for a movable value in a shape (JSON never gives a tuple)
MAX_KNOWN = 512  # scenarios kept a worker
MAX_COUNT = 2**64 - 1  # a JSON integer count the scenario's own model accepts


def read_value(var: Var, raw: Any) -> float | int | None:
    """``raw`` as the scenario's own field reads it [var.unit] (a count: the whole number),
    or None (priced the ordinary way, which says why)."""
    if var.count:  # a strict integer field
        return raw if type(raw) is int and 1 <= raw <= MAX_COUNT else None
    meta = _field(var.key)
    try:
        return meta.parse(raw)
    except Exception:  # any refusal: the row priced alone gives the exact error
        return None


@cache
def _field(key: str) -> Any:
    return quantity_field(key)


@dataclass
class _Known:
    """A scenario priced the ordinary way, with the values it was given."""
    loaded: LoadedScenario
    given: dict[str, Any]  # movable key -> its value as the request gave it
    defaults: list[str]  # its defaults used (the same for every scenario built from it)
    trusted: dict[tuple[str, ...], bool] = field(default_factory=dict)  # by changed keys


def shape_of(scenario: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]] | None:
    """The scenario with every movable value replaced by a hole, as bytes, and those values
    by key; None when it cannot be built from another (a ``money`` table: amounts read at its
    rates; data that is not plain JSON)."""
    if "money" in scenario:
        return None
    values: dict[str, Any] = {}
    shape: dict[str, Any] = {}
    for name, table in scenario.items():
        if name in MOVABLE and _movable(table):
            values[name], shape[name] = table, _HOLE
        elif type(table) is dict and "catalog" not in table:
            inner = {}
            for key, value in table.items():
                dotted = f"{name}.{key}"
                if dotted in MOVABLE and _movable(value):
                    values[dotted], inner[key] = value, _HOLE
                else:
                    inner[key] = value
            shape[name] = inner
        else:
            shape[name] = table
    if not values:
        return None
    try:
        return marshal.dumps(shape, 2), values
    except ValueError:  # not plain data
        return None


def _movable(value: Any) -> bool:
    """A value as a movable key may give it: a number, text, or a ``{value, unit}`` table of
    a number and text (a table with a source or a note is not: its source is cited)."""
    if type(value) in _NUMBER:
        return True
    return type(value) is dict and value.keys() == _QUANTITY \
        and type(value["value"]) in (int, float) and type(value["unit"]) is str


def _same(a: Any, b: Any) -> bool:
    """The same value as given, type for type (1, 1.0 and True are three values)."""
    if type(a) is not type(b):
        return False
    return a == b if type(a) is not dict else _same(a["value"], b["value"]) \
        and a["unit"] == b["unit"]


class Variants:
    """Known scenarios of one worker by shape (and the catalog they were priced with)."""

    def __init__(self, size: int = MAX_KNOWN):
        self._known: OrderedDict[tuple[Any, bool, bytes], _Known] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self.built = 0  # answers built from a known scenario (for tests and benchmarks)

    def price(self, scenario: Mapping[str, Any], catalog: Any,
              ordinary: Callable[[], Priced], *, sources: bool,
              answer: Callable[[Priced], Any]) -> Priced:
        """``scenario`` priced: built from a known scenario of the same shape priced with
        ``catalog`` (a marker of its entries) when one is known and every changed value
        moves, else ``ordinary()`` (which raises InputError for a bad scenario).
        ``answer`` renders a priced scenario as the caller sends it: the first build for
        each set of changed keys is compared with the ordinary answer."""
        found = shape_of(scenario)
        if found is None:
            return ordinary()
        shape, values = found
        key = (catalog, sources, shape)  # (a known scenario's sources are complete or not)
        with self._lock:
            known = self._known.get(key)
            if known is not None:
                self._known.move_to_end(key)
        if known is None:
            priced = ordinary()
            if priced.curve is None:  # (a point read off a curve moves with it: not here)
                with self._lock:
                    self._known[key] = _Known(priced.loaded, values,
                                              priced.loaded.scenario.defaults_used())
                    if len(self._known) > self._size:
                        self._known.popitem(last=False)
            return priced
        changed = tuple(k for k, v in values.items() if not _same(v, known.given[k]))
        if known.trusted.get(changed) is False:
            return ordinary()
        built = self._build(known, {k: values[k] for k in changed}, sources)
        if built is None:
            return ordinary()
        if changed not in known.trusted:  # checked once: the ordinary way, compared
            priced = ordinary()
            known.trusted[changed] = answer(priced) == answer(built)
            return priced
        self.built += 1
        return built

    def _build(self, known: _Known, changed: dict[str, Any], sources: bool) -> Priced | None:
        base = known.loaded.scenario
        sections: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for key, raw in changed.items():
            value = read_value(VARS[key], raw)
            if value is None:
                return None
            section, _, name = key.rpartition(".")
            (sections.setdefault(section, {}) if section else top)[name] = value
        update = {name: getattr(base, name).model_copy(update=values)
                  for name, values in sections.items()}
        scenario = base.model_copy(update={**update, **top})
        # the checks a validated scenario passes, on its own set of given keys
        scenario.__pydantic_fields_set__ = set(base.model_fields_set)
        if cross_checks(scenario):
            return None
        loaded = LoadedScenario(scenario, known.loaded.provenance, known.loaded.origin)
        try:
            return price_loaded(loaded, sources=sources, defaults=known.defaults)
        except InputError:
            return None
