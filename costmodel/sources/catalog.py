"""The catalog of accelerators, published operating points, electricity prices, grid
emission factors (location- and market-based, dated and cited), system presets, public
reference rates (dated versions, see :mod:`costmodel.model.rates`) and market prices per
million tokens (dated versions, see :mod:`costmodel.decisions.market`).

Catalog files live in the fixtures' ``catalog/`` folder (:func:`fixtures_dir`, from
:mod:`costmodel.resources`), one TOML file per kind. Every quantity there is
``{ value, unit, source }``; :func:`split_sources` separates the sources into a provenance map
so the engine sees plain quantities.

Reading the TOML is most of a command line's pricing time (tomllib is pure Python), so the
parsed catalog is kept in the user's cache folder (:func:`costmodel.resources.cached_build`),
named by a digest of the files' bytes and of this reader: an edited file is read again.
"""
from __future__ import annotations

import pickle
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..model.errors import UnknownReference
from ..resources import cached_build, content_digest, fixtures_dir

__all__ = ["Catalog", "default_catalog", "fixtures_dir", "split_sources", "KINDS",
           "SCENARIO_KINDS"]

# catalog kind -> catalog file
KINDS = {"accelerator": "accelerators", "operating_point": "operating_points",
         "electricity": "electricity", "system": "systems", "rate": "rates",
         "market_price": "market_prices", "grid_factor": "grid_factors"}
# more files of a kind: electricity tariffs are electricity entries with a tariff table
# (named ``electricity = "<key>"`` or ``electricity = { tariff = "<key>" }``)
MORE_FILES = {"electricity": ("tariffs",)}
# the kinds a scenario names by their own key (``accelerator = "gb300"``); a reference rate
# is named inside the accelerator table (``rate = "rental@2026-09"``)
SCENARIO_KINDS = ("accelerator", "operating_point", "electricity", "system")
_PROVENANCE_KEYS = {"source", "note"}


def split_sources(tree: Any, prefix: str = "") -> tuple[Any, dict[str, str]]:
    """Return ``tree`` with ``source``/``note`` removed from quantity tables, and the sources.

    A quantity table is a table with a ``value`` key; its source lands in the map under the
    dotted path of the quantity.
    """
    provenance: dict[str, str] = {}

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, dict):
            if "value" in node and set(node) - {"value", "unit"} <= _PROVENANCE_KEYS:
                if "source" in node:
                    provenance[path] = str(node["source"])
                return {k: v for k, v in node.items() if k not in _PROVENANCE_KEYS}
            # (a leaf is kept as it is: no path to build for it)
            return {k: walk(v, f"{path}.{k}" if path else k) if isinstance(v, (dict, list))
                    else v for k, v in node.items()}
        if isinstance(node, list):  # a tariff's seasons, hourly quantities
            return [walk(v, f"{path}[{i}]") if isinstance(v, (dict, list)) else v
                    for i, v in enumerate(node)]
        return node

    return walk(tree, prefix), provenance


@dataclass(frozen=True)
class Entry:
    kind: str
    key: str
    data: dict[str, Any]  # plain values, ready to merge into a scenario table
    provenance: dict[str, str]  # relative dotted key -> source


class Catalog:
    """Catalog entries by kind and key."""

    def __init__(self, entries: dict[str, dict[str, Entry]]):
        self._entries = entries

    @classmethod
    def load(cls, folder: Path | None = None) -> Catalog:
        """The catalog under ``folder`` (default :func:`fixtures_dir`), from the cache when
        these very files were read before."""
        folder = (folder or fixtures_dir()) / "catalog"
        texts: dict[tuple[str, str], str | None] = {}
        for kind, filename in KINDS.items():
            for name in (filename, *MORE_FILES.get(kind, ())):
                path = folder / f"{name}.toml"
                texts[kind, name] = path.read_text(encoding="utf-8") if path.exists() else None

        def build(cache: Path | None) -> Catalog:
            kept = cache / "catalog.pickle" if cache is not None else None
            if kept is not None and kept.exists():
                return pickle.loads(kept.read_bytes())
            catalog = cls._parse(texts)
            if kept is not None:
                kept.write_bytes(pickle.dumps(catalog, protocol=pickle.HIGHEST_PROTOCOL))
            return catalog

        return cached_build(f"catalog-{content_digest(repr(texts), (__name__,))}", build,
                            kind="catalog")

    @classmethod
    def _parse(cls, texts: dict[tuple[str, str], str | None]) -> Catalog:
        entries: dict[str, dict[str, Entry]] = {}
        for (kind, _name), text in texts.items():
            entries.setdefault(kind, {})
            for key, body in (tomllib.loads(text) if text is not None else {}).items():
                if key in entries[kind]:
                    raise ValueError(f"catalog {kind} entry {key!r} is in two files")
                data, provenance = split_sources(body)
                entries[kind][key] = Entry(kind, key, data, provenance)
        return cls(entries)

    def keys(self, kind: str) -> list[str]:
        return sorted(self._entries.get(kind, {}))

    def get(self, kind: str, key: str, path: str) -> Entry:
        """The entry, or an :class:`InputError` at ``path`` naming the known keys."""
        try:
            return self._entries[kind][key]
        except KeyError:
            known = ", ".join(self.keys(kind)) or "none"
            raise UnknownReference(path, f"unknown catalog entry {key!r} (known: {known})",
                                   kind=kind, key=key) from None


@lru_cache(maxsize=4)
def _cached(folder: str) -> Catalog:
    return Catalog.load(Path(folder))


def default_catalog() -> Catalog:
    """The catalog under :func:`fixtures_dir`, read once per process."""
    return _cached(str(fixtures_dir()))
