"""A scenario built from plain data: catalog references expanded, overrides applied, its
curve located and read, a power trace integrated, validated. This is the one place that
does it, above the readers (:mod:`costmodel.sources`: a scenario file, the catalog, curves
and power traces are read there into plain data), for every source of a scenario (a file,
an API body, a saved revision, an edited workbook); :mod:`costmodel.app.load` calls it.

The order is fixed: expand catalog references (``accelerator = "gb300"`` or ``[accelerator]
catalog = "gb300"`` plus overrides, and a reference rate ``[accelerator] rate =
"rental@2026-09"``), apply overrides, read the curve, validate. Each value's provenance
(catalog source, the file, an override, a default) is kept for disclosure.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..model.errors import InputError, UnknownKey, UnknownReference, check_nesting
from ..model.inputs import CITED_BY, Scenario, replace_citations, validate_scenario
from ..model.rates import ALL_IN, RateError, RateNotFound, resolve_rate
from ..sources.catalog import SCENARIO_KINDS, Catalog, default_catalog, split_sources
from ..sources.curve_point import (
    CurveLibrary,
    CurveReading,
    CurveRef,
    Target,
    locate_curve,
    read_curve_point,
)
from ..sources.paths import shown_path
from ..sources.power_trace_point import TRACE_KEYS, resolve_power_trace
from ..sources.scenario_file import parse_override, read_scenario_file

__all__ = ["LoadedScenario", "PreparedScenario", "prepare_scenario", "prepare_scenario_file",
           "load_scenario_file", "build_scenario", "apply_overrides", "known_key"]


@dataclass
class LoadedScenario:
    scenario: Scenario
    provenance: dict[str, str] = field(default_factory=dict)  # dotted key -> where it came from
    origin: str = ""  # the file, or "inline"
    curve: CurveReading | None = None  # when the operating point was read off a curve


_TREES = (dict, list)


def _copy_tree(tree: Any) -> Any:
    """A copy of plain parsed data (dicts, lists, scalars); much cheaper than deepcopy (and
    no call for a scalar)."""
    if isinstance(tree, dict):
        return {k: _copy_tree(v) if isinstance(v, _TREES) else v for k, v in tree.items()}
    if isinstance(tree, list):
        return [_copy_tree(v) if isinstance(v, _TREES) else v for v in tree]
    return tree


def _expand_refs(data: dict[str, Any], catalog: Catalog,
                 provenance: dict[str, str], *, owned: bool = False) -> dict[str, Any]:
    """``data`` with its catalog references expanded, as a tree of its own (``owned``: data
    is already the caller's own copy, changed in place). A section taken from a catalog
    entry is a table of its own whose quantity tables are the entry's: nothing changes a
    table inside a section in place (:func:`apply_overrides` works on a copy)."""
    if not owned:
        data = _copy_tree(data)
    rate = None  # (the reference, the accelerator's catalog key, the file's own keys)
    accelerator = data.get("accelerator")
    if isinstance(accelerator, dict) and "rate" in accelerator and "catalog" not in accelerator:
        raise InputError([("accelerator.rate", "a reference rate needs accelerator.catalog, "
                                               "the catalog accelerator it prices")])
    _expand_tariff(data, catalog, provenance)
    _expand_grid_factors(data, catalog, provenance)
    for section in SCENARIO_KINDS:
        value = data.get(section)
        if isinstance(value, str):
            ref, own = value, {}
        elif isinstance(value, dict) and "catalog" in value:
            ref, own = value["catalog"], {k: v for k, v in value.items() if k != "catalog"}
            if not isinstance(ref, str):
                raise InputError([(f"{section}.catalog", "must be a catalog key (a string)")])
            if section == "accelerator" and "rate" in own:
                rate = (own.pop("rate"), ref, dict(own))
        else:
            continue
        entry = catalog.get(section, ref, section)
        merged = dict(entry.data)  # its tables shared with the entry, never changed
        extra_workload = merged.pop("workload", None) if section == "operating_point" else None
        rows, cites, outside_tops = _entry_rows(entry, section, ref)
        if not own and not any(isinstance(data.get(t), dict) for t in outside_tops):
            provenance.update(cites)  # every row applies (as the loop below would find)
        else:
            for k, top, outside, key, cited in rows:
                # tables a catalog entry fills outside its own section (a point's workload,
                # a system's node and rack) keep the scenario's own keys
                table = data.get(top) if outside else None
                if top in own or (outside and isinstance(table, dict)
                                  and k.split(".")[1] in table):
                    continue
                provenance[key] = cited
        # a value of the file's own (``[electricity] catalog = ..., price = ...``) is not
        # the entry's: the entry's citation of it (source, date, label) does not apply
        mine = [t for v, tied in CITED_BY.items() if v.partition(".")[0] == section
                and v.partition(".")[2] in own for t in tied] if own else []
        for t in mine:
            if t.partition(".")[2] not in own:
                merged.pop(t.partition(".")[2], None)
                provenance.pop(t, None)
        if section == "operating_point" and not mine:
            merged.setdefault("chosen", f"published point {ref!r}")
        if section == "system":
            # a system is node and rack presets; the scenario's own tables win key by key
            for part in ("node", "rack"):
                table = data.get(part)
                if table is None or isinstance(table, dict):
                    data[part] = {**merged.get(part, {}), **(table or {}),
                                  **own.get(part, {})}
            data["system"] = ref
            continue
        merged.update(own)
        data[section] = merged
        if extra_workload:
            # a published point carries the workload it was measured on; the file's keys win
            workload = data.get("workload")
            if workload is None or isinstance(workload, dict):
                data["workload"] = {**extra_workload, **(workload or {})}
    if rate is not None:
        _apply_rate(data, *rate, catalog, provenance)
    return data


def _expand_tariff(data: dict[str, Any], catalog: Catalog,
                   provenance: dict[str, str]) -> None:
    """``electricity = { tariff = "<key>" }``: the tariff of catalog electricity entry
    ``key``, its own keys beside it (``site_accelerators``) kept."""
    electricity = data.get("electricity")
    if not isinstance(electricity, dict) or not isinstance(electricity.get("tariff"), str):
        return
    ref = electricity["tariff"]
    path = "electricity.tariff"
    entry = catalog.get("electricity", ref, path)
    tariff = entry.data.get("tariff")
    if not isinstance(tariff, dict):
        raise InputError([(path, f"catalog entry {ref!r} is a flat price, not a tariff: name "
                                 f"it as electricity = {ref!r}")])
    electricity["tariff"] = _copy_tree(tariff)
    cited = tariff.get("source")
    provenance[path] = f"catalog tariff {ref!r}" + (f": {cited}" if cited else "")
    for k, source in entry.provenance.items():
        if k.startswith("tariff."):
            provenance[f"electricity.{k}"] = f"catalog tariff {ref!r}: {source}"


# ``electricity.carbon = "<key>"`` (location-based) and ``electricity.market_carbon`` (market-
# based): a catalog grid factor's fields, by the electricity field each fills
_GRID_FIELDS = {"carbon": {"factor": "carbon_intensity", "hourly": "carbon_hourly",
                           "year": "carbon_year"},
                "market_carbon": {"factor": "market_carbon_intensity",
                                  "hourly": "market_carbon_hourly", "year": "market_carbon_year",
                                  "instrument": "market_carbon_instrument"}}
_SOURCE_FIELD = {"carbon": "carbon_source", "market_carbon": "market_carbon_source"}


def _drop_own_factor(data: dict[str, Any], refs: list[str], set_keys: set[str],
                      provenance: dict[str, str]) -> None:
    """A grid factor named by an override (``--set electricity.carbon=KEY``, a page's
    picker) replaces the scenario's own factor for that basis: its factor, hours, year,
    source and instrument go, unless the overrides set them too."""
    electricity = data.get("electricity")
    if not isinstance(electricity, dict):
        return
    for ref in refs:
        for target in (*_GRID_FIELDS[ref].values(), _SOURCE_FIELD[ref]):
            if f"electricity.{target}" not in set_keys and target in electricity:
                del electricity[target]
                provenance.pop(f"electricity.{target}", None)


def _expand_grid_factors(data: dict[str, Any], catalog: Catalog,
                         provenance: dict[str, str]) -> None:
    """``electricity.carbon`` / ``electricity.market_carbon`` naming a catalog grid factor:
    its factor (and hours), year and source as the electricity's own fields; the scenario's
    own fields beside the reference win, and a factor (or hours) of its own beside it takes
    nothing of the entry (its year, source and instrument describe another number). A
    location-based reference names a location-based entry; a market-based one any (a grid
    average where no instrument is held)."""
    electricity = data.get("electricity")
    if not isinstance(electricity, dict):
        return
    for ref_field, fields in _GRID_FIELDS.items():
        ref = electricity.get(ref_field)
        if ref is None:
            continue
        path = f"electricity.{ref_field}"
        if not isinstance(ref, str):
            raise InputError([(path, "must be a catalog grid factor's key (a string)")])
        entry = catalog.get("grid_factor", ref, path)
        if ref_field == "carbon" and entry.data.get("basis") != "location":
            raise InputError([(path, f"catalog grid factor {ref!r} is market-based: name it "
                                     f"as electricity.market_carbon")])
        del electricity[ref_field]
        if fields["factor"] in electricity or fields["hourly"] in electricity:
            continue  # the scenario's own factor: the entry's citation is not its
        cited = f"catalog grid factor {ref!r}"
        for name, target in fields.items():
            if name in entry.data and target not in electricity:
                electricity[target] = _copy_tree(entry.data[name])
                source = entry.provenance.get(name)
                provenance[f"electricity.{target}"] = cited + (f": {source}" if source else "")
        if ref_field == "market_carbon" and "market_carbon_instrument" not in electricity \
                and entry.data.get("basis") == "location":
            provenance["electricity.market_carbon_intensity"] = \
                f"{cited} (location-based: no market instrument held)"
        source_field = _SOURCE_FIELD[ref_field]
        if source_field not in electricity:
            electricity[source_field] = str(entry.data.get("source") or cited)
            provenance[f"electricity.{source_field}"] = cited


_ZERO = {"electricity": ("price", {"value": 0, "unit": "USD/kWh"}, "energy"),
         "facility": ("hosting", {"value": 0, "unit": "USD/kW/month"}, "hosting")}


def _apply_rate(data: dict[str, Any], ref: Any, accelerator: str, own: dict[str, Any],
                catalog: Catalog, provenance: dict[str, str]) -> None:
    """Price the scenario from a reference rate, all in: the rate is the hourly price, its
    all-in power the power per accelerator at the rack boundary; energy and hosting are
    inside the rate, so the electricity price and hosting are zero and the boundary is the
    rack's, unless the scenario gives them (an electricity catalog entry gives a price).
    Each value set says so in ``provenance``; ``reference_rate`` carries the entry for the
    disclosure."""
    path = "accelerator.rate"
    try:
        key = resolve_rate(ref, catalog.keys("rate"), accelerator)
    except RateError as exc:
        raise InputError([(path, str(exc))]) from None
    except RateNotFound as exc:
        raise UnknownReference(path, str(exc), kind="rate", key=str(ref)) from None
    entry = catalog.get("rate", key, path)
    origin = entry.data.get("source") or "no source given"
    label = f"reference rate {key!r} (version {entry.data.get('date')})"
    table = data["accelerator"]
    for name in ("hourly_price", "all_in_power"):
        if name in own:  # the file's own value wins, with its own source
            continue
        table[name] = _copy_tree(entry.data[name])
        provenance[f"accelerator.{name}"] = f"{label}: {entry.provenance.get(name) or origin}"
    for section, (name, zero, what) in _ZERO.items():
        given = data.setdefault(section, {})
        if not isinstance(given, dict) or name in given:
            continue  # told otherwise (or not a table: validation says so)
        given[name] = dict(zero)
        provenance[f"{section}.{name}"] = f"{label}: {ALL_IN} ({what} is in the rate)"
        if section == "electricity":
            # the zero price's citation is the rate's, not the default's
            for tied, cited in (("source", f"{what} inside the all-in reference rate {key}"),
                                ("date", entry.data.get("date"))):
                if tied not in given:
                    given[tied] = cited
                    provenance[f"electricity.{tied}"] = label
    power = data.setdefault("power", {})
    if isinstance(power, dict) and "boundary" not in power:
        power["boundary"] = "rack"
        provenance["power.boundary"] = (f"{label}: its all-in power is per accelerator at the "
                                        f"rack boundary")
    data["reference_rate"] = {"key": key, **_copy_tree(entry.data)}
    for k in _entry_leaf_keys(entry.data):
        cited = entry.provenance.get(k)
        provenance[f"reference_rate.{k}"] = f"catalog rate {key!r}: {cited}" if cited else \
            f"catalog rate {key!r}"
    provenance["reference_rate.key"] = f"{path} = {ref!r}"


# keys a scenario may hold that are consumed before validation (see curve_point)
_PRE_VALIDATION_KEYS = ("operating_point.curve_id", "operating_point.at",
                        "electricity.carbon", "electricity.market_carbon",
                        *(f"power.{k}" for k in TRACE_KEYS))


def known_key(key: str) -> bool:
    """Whether a dotted key names a scenario input (for --set and API overrides). The
    reference rate a scenario was priced from is one table (set whole or not at all)."""
    if any(key == k or key.startswith(k + ".") for k in _PRE_VALIDATION_KEYS):
        return True
    if key.startswith("reference_rate."):
        return False
    model: Any = Scenario
    for part in key.split("."):
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            return False
        info = model.model_fields.get(part)
        if info is None:
            return False
        model = _section_type(info.annotation)
    return True


def _section_type(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return annotation


# the sections a scenario may give as null: those a catalog entry, a curve or a system fills,
# and the optional ones; a key set inside any other null section is refused, as the null is
_NULLABLE = frozenset({"workload", "node", "rack"} | {
    name for name, info in Scenario.model_fields.items()
    if type(None) in (getattr(info.annotation, "__args__", ()) or ())})


def apply_overrides(data: dict[str, Any], overrides: Iterable[tuple[str, Any]],
                    provenance: dict[str, str], label: str = "--set") -> dict[str, Any]:
    """Set dotted keys in a (catalog-expanded) scenario mapping; unknown keys are errors.

    An override replaces what cited the value it replaced (the electricity price's source
    and date, a published point's label and source: :data:`~costmodel.model.inputs.CITED_BY`)
    with the override itself, unless the same overrides set those too."""
    data = _copy_tree(data)
    overrides = list(overrides)
    errors = []
    for key, value in overrides:
        if not known_key(key):
            errors.append((key, UnknownKey(f"unknown key in {label}")))
            continue
        node = data
        parts = key.split(".")
        for depth, part in enumerate(parts[:-1]):
            child = node.get(part)
            if isinstance(child, (list, int, float)) or (
                    child is None and depth == 0 and part in node and part not in _NULLABLE):
                # a key inside a list or a number: refused, as that value alone is (never
                # silently replaced by the override's table; a text such as at = "peak" is
                # a choice the override's table replaces)
                errors.append((".".join(parts[:depth + 1]),
                               f"must be a table, got {child!r}: {key} sets a key inside it"))
                break
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        else:
            node[parts[-1]] = value
            provenance[key] = f"{label} {key}={value}"
    if errors:
        raise InputError(errors)
    given = {k for k, _ in overrides}
    op = data.get("operating_point")
    reads_curve = isinstance(op, dict) and "curve" in op  # locate_curve refuses a clash
    for key in dict.fromkeys(k for k, _ in overrides):
        if reads_curve and key.startswith("operating_point."):
            continue
        named, removed = replace_citations(data, key, provenance[key], keep=given)
        for tied in named:
            provenance[tied] = provenance[key]
        for tied in removed:
            provenance.pop(tied, None)
    return data


@dataclass
class PreparedScenario:
    """A scenario mapping expanded (catalog references, overrides) with its curve located,
    not yet read nor validated: :meth:`finish` reads it at a target and validates. Prepared
    once, it can be finished at several targets (matched interactivity, each quote's)."""
    data: dict[str, Any]
    provenance: dict[str, str]
    origin: str
    base_dir: Path | None
    files_allowed: bool
    curve: CurveRef | None

    def finish(self, target: Target | None = None, *, sources: bool = True) -> LoadedScenario:
        """Read the curve at ``target`` (default: the scenario's own ``at``), resolve a power
        trace and validate; a target applies only to a curve (callers that need one check
        :attr:`curve` first). Raises :class:`InputError`. ``sources=False``: the provenance
        is not completed with the origin of every other value (for an answer without the
        per-input sources)."""
        provenance = dict(self.provenance)
        data, reading = self.data, None
        if self.curve is not None:
            data, reading = read_curve_point(data, self.curve, target, provenance)
        data = resolve_power_trace(data, self.base_dir, provenance,
                                   files_allowed=self.files_allowed)
        scenario = validate_scenario(data)
        if sources:
            _cite_leaves(data, provenance, self.origin)
        return LoadedScenario(scenario, provenance, self.origin, reading)


def prepare_scenario(data: Mapping[str, Any], overrides: Iterable[tuple[str, Any]] = (),
                     catalog: Catalog | None = None, origin: str = "inline",
                     override_label: str = "--set", base_dir: Path | None = None, *,
                     curves: CurveLibrary | None = None,
                     files_allowed: bool = True) -> PreparedScenario:
    """Expand catalog references, apply overrides and locate the curve of a scenario
    mapping. Raises :class:`InputError`.

    ``base_dir`` is where relative paths in the scenario (curve files, power traces) are
    looked up; ``files_allowed=False`` refuses every file reference (input from the network);
    ``curves`` resolves curve ids (default: the fixture curves).
    """
    catalog = catalog or default_catalog()
    check_nesting(data)  # before anything walks it recursively
    plain, file_sources = split_sources(dict(data))
    provenance: dict[str, str] = {k: f"{origin}: {v}" for k, v in file_sources.items()}
    expanded = _expand_with_overrides(plain, list(overrides), catalog, provenance,
                                      override_label)
    ref = locate_curve(expanded, base_dir, library=curves, files_allowed=files_allowed)
    return PreparedScenario(expanded, provenance, origin, base_dir, files_allowed, ref)


def build_scenario(data: Mapping[str, Any], overrides: Iterable[tuple[str, Any]] = (),
                   catalog: Catalog | None = None, origin: str = "inline",
                   override_label: str = "--set",
                   base_dir: Path | None = None, *, curves: CurveLibrary | None = None,
                   files_allowed: bool = True) -> LoadedScenario:
    """Expand, override, read and validate a scenario mapping (:func:`prepare_scenario`,
    then :meth:`PreparedScenario.finish` at the scenario's own target)."""
    return prepare_scenario(data, overrides, catalog, origin, override_label, base_dir,
                            curves=curves, files_allowed=files_allowed).finish()


def _expand_with_overrides(plain: dict[str, Any], overrides: list[tuple[str, Any]],
                           catalog: Catalog, provenance: dict[str, str],
                           label: str = "--set") -> dict[str, Any]:
    # An override of a whole catalog section (--set accelerator=h100) is a reference to
    # expand like the file's own; overrides of keys inside a section apply after expansion.
    whole = [(k, v) for k, v in overrides if k in SCENARIO_KINDS]
    inner = [(k, v) for k, v in overrides if k not in SCENARIO_KINDS]
    if whole:  # (a copy)
        plain = apply_overrides(plain, whole, provenance, label)
    # a tree of its own: split_sources (and apply_overrides) made plain for this call
    expanded = _expand_refs(plain, catalog, provenance, owned=True)
    if not inner:
        return expanded
    out = apply_overrides(expanded, inner, provenance, label)
    if any(k == "electricity.tariff" for k, _ in inner):  # a catalog tariff by its key
        _expand_tariff(out, catalog, provenance)
    refs = [k.partition(".")[2] for k, _ in inner
            if k in ("electricity.carbon", "electricity.market_carbon")]
    if refs:  # a catalog grid factor by its key, in place of the scenario's own for its basis
        _drop_own_factor(out, refs, {k for k, _ in inner}, provenance)
        _expand_grid_factors(out, catalog, provenance)
    return out


# catalog entries are never changed once read: their leaf keys are listed once (the entry's
# data is held with them, so its id is not reused while it is here)
_ENTRY_KEYS: dict[int, tuple[dict[str, Any], list[str]]] = {}


def _entry_leaf_keys(data: dict[str, Any]) -> list[str]:
    hit = _ENTRY_KEYS.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    keys = _leaf_keys(data)
    if len(_ENTRY_KEYS) >= 4096:
        _ENTRY_KEYS.clear()
    _ENTRY_KEYS[id(data)] = (data, keys)
    return keys


_Rows = tuple[list[tuple[str, str, bool, str, str]], dict[str, str], tuple[str, ...]]
_ENTRY_ROWS: dict[tuple[int, str, str], tuple[Any, _Rows]] = {}


def _entry_rows(entry: Any, section: str, ref: str) -> _Rows:
    """What each leaf of a catalog entry named by ``ref`` in ``section`` says in the
    provenance: (leaf key, its table, whether that table is outside the section, the
    provenance key, its text); the same as one mapping (provenance key -> text, in the
    rows' order) and the tables outside the section that the rows name; once per entry
    (the entry is held with them)."""
    hit = _ENTRY_ROWS.get((id(entry), section, ref))
    if hit is not None and hit[0] is entry:
        return hit[1]
    label = f"catalog {section} {ref!r}"
    rows = []
    for k in _entry_leaf_keys(entry.data):
        top = k.split(".")[0]
        outside = top == "workload" or (section == "system" and top in ("node", "rack"))
        src = entry.provenance.get(k)
        rows.append((k, top, outside, k if outside else f"{section}.{k}",
                     f"{label}: {src}" if src else label))
    out = (rows, {key: cited for _, _, _, key, cited in rows},
           tuple(dict.fromkeys(top for _, top, outside, _, _ in rows if outside)))
    if len(_ENTRY_ROWS) >= 4096:
        _ENTRY_ROWS.clear()
    _ENTRY_ROWS[(id(entry), section, ref)] = (entry, out)
    return out


def _cite_leaves(tree: Mapping[str, Any], provenance: dict[str, str], origin: str,
                 prefix: str = "") -> None:
    """``origin`` as the source of every leaf (as :func:`_leaf_keys` lists them) that has
    none yet."""
    for k, v in tree.items():
        if isinstance(v, dict) and "value" not in v:
            _cite_leaves(v, provenance, origin, f"{prefix}{k}.")
        else:
            provenance.setdefault(f"{prefix}{k}", origin)


def _leaf_keys(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for k, v in tree.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and "value" not in v:
            keys.extend(_leaf_keys(v, path + "."))
        else:
            keys.append(path)
    return keys


def prepare_scenario_file(path: str | Path, overrides: Iterable[tuple[str, Any]] = (),
                          catalog: Catalog | None = None) -> PreparedScenario:
    """Read a scenario file, expand and override it (parsed ``(key, value)`` pairs)."""
    base_dir = Path(path).resolve().parent
    return prepare_scenario(read_scenario_file(path), overrides, catalog,
                            origin=shown_path(path, base_dir), base_dir=base_dir)


def load_scenario_file(path: str | Path, overrides: Iterable[str] = (),
                       catalog: Catalog | None = None) -> LoadedScenario:
    """Read, expand, override (``"dotted.key=VALUE"`` strings) and validate a scenario file
    at its own operating point."""
    return prepare_scenario_file(path, [parse_override(o) for o in overrides],
                                 catalog).finish()
