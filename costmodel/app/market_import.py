"""Market prices imported from a model catalog's published price list (OpenRouter's
``/api/v1/models``) into the service's catalog, as dated, cited ``market_price`` entries
(``openrouter/<author>.<model>@<date>``); and the context the command line prices with when
asked to use the service's catalog (``costmodel profit --url``), where they are.

Entries are only ever added: a key already in the catalog (the same model on the same date)
is left as it is, so importing the same list twice adds nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select

from ..sources.catalog import Catalog, split_sources
from ..sources.curve_point import CurveLibrary
from ..sources.openrouter import Skipped, read_openrouter
from ..store import repo
from ..store.models import CatalogEntry
from .services import Services

__all__ = ["MarketImport", "import_openrouter", "StoredCatalogContext", "ORIGIN"]

ORIGIN = "import:openrouter"  # who added the entries (the catalog's origin column)


@dataclass
class MarketImport:
    """What an import did: the keys added, those already there, the models left out."""
    date: str
    added: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def import_openrouter(services: Services, path: str | Path, *, date: str,
                      source: str | None = None, dry_run: bool = False) -> MarketImport:
    """Read OpenRouter's model list at ``path`` (fetched on ``date``) and add each model's
    prices to the catalog, all in one transaction (an error in the file: nothing added)."""
    prices, skipped = read_openrouter(path, date=date, source=source)
    out = MarketImport(date, skipped=skipped)
    with services.sessions(write=not dry_run) as session:
        have = set(session.scalars(select(CatalogEntry.key).where(
            CatalogEntry.kind == "market_price",
            CatalogEntry.key.in_([p.key for p in prices]))))
        for price in prices:
            if price.key in have:
                out.existing.append(price.key)
                continue
            out.added.append(price.key)
            if not dry_run:
                plain, provenance = split_sources(price.data)
                repo.catalog_create(session, "market_price", price.key, plain, provenance,
                                    origin=ORIGIN)
    if out.added and not dry_run:
        services.forget_catalog()
    return out


class StoredCatalogContext:
    """The command line's context on the service's catalog: the catalog entries and curves
    of the database (market prices imported there among them), saved scenarios, and the
    files the command is given, as on the fixtures' catalog."""
    files_allowed = True
    override_label = "--set"
    limited = False

    def __init__(self, services: Services):
        self._services = services

    def catalog(self, fresh: bool = False) -> Catalog:
        return self._services.catalog(None, fresh=fresh)[1]

    def curves(self, fresh: bool = False) -> CurveLibrary:
        return self._services.curves(None, fresh=fresh)[1]

    def revision(self, scenario_id: int, number: int | None) -> tuple[dict[str, Any], str]:
        return self._services.context(None).revision(scenario_id, number)
