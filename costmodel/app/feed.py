"""The spreadsheet feed: one table of cost and price per million tokens, a row for each
published operating point (the shipped published scenarios, one per catalog operating point
``<model>/<system>/<point>``) and for each saved scenario (its latest revision), priced now
with the catalog as the worker holds it, through the same pricer and the same serialiser as
``POST /api/v1/price`` (the row's figures are read off that answer's JSON).

The columns are a contract (:data:`COLUMNS`: name, unit, meaning; docs/feed.md lists them):
new columns are only ever appended, none is renamed or removed. A saved scenario that no
longer prices keeps its row, with the reason in ``error`` and no figures.

Bounded: at most :data:`MAX_SAVED` saved scenarios a page (``offset`` for the next), and the
whole table is kept per worker while the catalog, the saved revisions and the day stand, so a
refresh that changes nothing costs two small queries and a hash.
"""
from __future__ import annotations

import csv
import io
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select

from ..model.errors import InputError
from ..sources.catalog import fixtures_dir
from ..sources.cells import neutralise_cell
from ..sources.scenario_file import read_scenario_file
from ..store import repo
from ..store.models import ScenarioRevision
from ..store.repo import NotFound
from .saved import iso_time
from .services import Services, etag_of
from .specs import InlineScenario, ScenarioSpec

__all__ = ["COLUMNS", "Column", "Feed", "MAX_SAVED", "feed", "published_scenarios",
           "PUBLISHED"]

MAX_SAVED = 1000  # saved scenarios a page: about 8 s priced cold (bench/feed.py: 112 rows 0.9 s)
PUBLISHED = "fixture:published/"  # how a published row is named (as the pages name it)


@dataclass(frozen=True)
class Column:
    name: str
    unit: str  # "" for text; "currency/..." where the money is the row's currency
    description: str


def _c(name: str, unit: str, description: str) -> Column:
    return Column(name, unit, description)


# The contract: append only (tests/app/test_feed.py holds the list as published).
COLUMNS: tuple[Column, ...] = (
    _c("kind", "", "published (a catalog operating point, as published) or saved (a saved "
                   "scenario's latest revision)"),
    _c("id", "", "fixture:published/NAME or the saved scenario's id"),
    _c("name", "", "the scenario's name"),
    _c("revision", "", "the saved revision priced (empty for published rows)"),
    _c("saved_at", "", "when that revision was saved (RFC 3339, UTC)"),
    _c("as_of", "", "the day (UTC) the row was priced, with the catalog as it stood then"),
    _c("currency", "", "the currency of every money column of the row"),
    _c("cost_per_mtok", "currency/Mtok", "cost per million tokens (total)"),
    _c("cost_energy_per_mtok", "currency/Mtok", "of which electricity"),
    _c("cost_capex_per_mtok", "currency/Mtok", "of which amortised capex (or the hourly "
                                               "price)"),
    _c("cost_opex_per_mtok", "currency/Mtok", "of which hosting and maintenance"),
    _c("price_per_mtok", "currency/Mtok", "price per million tokens at the gross margin "
                                          "(tokens of the operating point's kind)"),
    _c("price_input_per_mtok", "currency/Mtok", "price per million input tokens"),
    _c("price_output_per_mtok", "currency/Mtok", "price per million output tokens"),
    _c("cost_per_hour", "currency/h", "cost per accelerator-hour"),
    _c("throughput_token_per_s", "token/s", "throughput per accelerator at the operating "
                                            "point"),
    _c("power_per_accelerator_w", "W", "power per accelerator at the boundary and basis"),
    _c("boundary", "", "where power is counted: chip, node, rack or facility"),
    _c("power_basis", "", "rated or measured power"),
    _c("token_kind", "", "which tokens the per-Mtok figures count: mixed, input or output"),
    _c("operating_point", "", "how the operating point was chosen"),
    _c("operating_point_label", "", "the operating point as published"),
    _c("operating_point_source", "", "its source"),
    _c("interactivity_token_per_s_per_user", "token/s/user", "its interactivity, when "
                                                             "published"),
    _c("utilisation", "fraction", "share of hours serving at the operating point"),
    _c("accelerator", "", "the accelerator"),
    _c("model", "", "the model served (the workload's)"),
    _c("electricity_price_usd_per_kwh", "USD/kWh", "electricity price: the flat price, or a "
                                                   "tariff's effective average"),
    _c("electricity_source", "", "the electricity price's source"),
    _c("electricity_date", "", "the electricity price's date"),
    _c("cost_basis", "", "own (capex amortised) or rented (an hourly price)"),
    _c("life_years", "year", "amortisation life"),
    _c("cost_of_capital_per_year", "1/year", "cost of capital"),
    _c("reference_rate", "", "the reference rental rate priced from, key and version"),
    _c("gross_margin", "fraction", "the gross margin of the price"),
    _c("sources", "", "every distinct source of the row's inputs, separated by ' | '"),
    _c("error", "", "why a saved scenario no longer prices (its figures are then empty)"),
    _c("exchange_rate", "currency/USD", "the rate money was converted at, when the currency "
                                        "is not USD"),
    _c("exchange_rate_date", "", "its date"),
    _c("exchange_rate_source", "", "its source"),
)
NAMES = tuple(c.name for c in COLUMNS)


@dataclass(frozen=True)
class Feed:
    """The table: rows of plain values by column name, how many saved scenarios there are
    (``saved_total``) and the page of them it holds (``offset``, ``limit``)."""
    as_of: str
    rows: list[dict[str, Any]]
    saved_total: int
    offset: int
    limit: int

    @property
    def truncated(self) -> bool:
        return self.offset + self.limit < self.saved_total

    def to_json(self) -> dict[str, Any]:
        return {"as_of": self.as_of,
                "columns": [{"name": c.name, "unit": c.unit, "description": c.description}
                            for c in COLUMNS],
                "rows": self.rows, "saved_total": self.saved_total, "offset": self.offset,
                "limit": self.limit, "truncated": self.truncated}

    def to_csv(self) -> str:
        """RFC 4180 CSV (CRLF lines), a header of :data:`NAMES`; every text cell that a
        spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``...) starts with an
        apostrophe (:func:`~costmodel.sources.cells.neutralise_cell`); numbers as Python
        writes them (shortest round-trip)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(NAMES)
        for row in self.rows:
            writer.writerow([_cell(row[name]) for name in NAMES])
        return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return neutralise_cell(str(value))


# ---- reading a priced answer -------------------------------------------------------------

def _value(q: Any, unit: str | None = None) -> float | None:
    """A ``{"value", "unit"}`` of the answer (checked to be in ``unit``: the feed's
    columns promise it) as a number, or None."""
    if not isinstance(q, Mapping):
        return None
    if unit is not None and q.get("unit") != unit:
        raise ValueError(f"the answer gave {q.get('unit')!r} where the feed promises {unit!r}")
    return q.get("value")


def _sources(sources: Mapping[str, str] | None) -> str:
    """Each distinct source once, without the bare names (``catalog accelerator 'gb300'``)
    another of them cites in full (``catalog accelerator 'gb300': NVIDIA ...``)."""
    given = {v for v in (sources or {}).values() if v and v != "request"}
    return " | ".join(sorted(v for v in given
                             if not any(o.startswith(v + ": ") for o in given)))


def row_of(answer: Mapping[str, Any], **head: Any) -> dict[str, Any]:
    """A feed row from a price answer's JSON (the full view, as ``POST /api/v1/price``
    answers it) and the row's own columns (kind, id, name, ...)."""
    d = answer["disclosure"]
    cur = d["money"]["currency"]
    per_mtok = f"{cur}/Mtok"
    cost, price = answer["cost_per_mtok"], answer["price_per_mtok"]
    op, fin, el = d["operating_point"] or {}, d["financing"] or {}, d["electricity"] or {}
    reference = d.get("reference_rate")
    row = dict.fromkeys(NAMES)
    row.update(head)
    row.update({
        "currency": cur,
        "cost_per_mtok": _value(cost["total"], per_mtok),
        "cost_energy_per_mtok": _value(cost["energy"], per_mtok),
        "cost_capex_per_mtok": _value(cost["capex"], per_mtok),
        "cost_opex_per_mtok": _value(cost["opex"], per_mtok),
        "price_per_mtok": _value(price["total"], per_mtok),
        "price_input_per_mtok": _value(price["input"], per_mtok),
        "price_output_per_mtok": _value(price["output"], per_mtok),
        # (in a currency other than USD the answer names money figures as shown in it)
        "cost_per_hour": _value(answer.get("cost_per_hour", answer.get("cost_per_hour_shown")),
                                f"{cur}/h"),
        "throughput_token_per_s": _value(answer["throughput"], "token/s"),
        "power_per_accelerator_w": _value(answer["power_per_accelerator"], "W"),
        "boundary": d["boundary"], "power_basis": d["power_basis"],
        "token_kind": d["token_kind"],
        "operating_point": op.get("chosen"), "operating_point_label": op.get("label"),
        "operating_point_source": op.get("source"),
        "interactivity_token_per_s_per_user": _value(op.get("interactivity"),
                                                     "token/s/user"),
        "utilisation": d["utilisation"], "accelerator": d["accelerator"],
        "model": (d.get("workload") or {}).get("model"),
        "electricity_price_usd_per_kwh": _value(
            el.get("price") if el.get("pricing") == "flat" else el.get("effective_price"),
            "USD/kWh"),
        "electricity_source": el.get("source"), "electricity_date": el.get("date"),
        "cost_basis": fin.get("cost_basis"), "life_years": _value(fin.get("life"), "year"),
        "cost_of_capital_per_year": _value(fin.get("cost_of_capital"), "1/year"),
        "reference_rate": reference["key"] if reference else None,
        "gross_margin": (d.get("pricing") or {}).get("gross_margin"),
        "sources": _sources(d.get("sources")),
    })
    rate = d["money"].get("rate")
    if rate:
        row.update(exchange_rate=_value(rate, f"{cur}/USD"), exchange_rate_date=rate.get("date"),
                   exchange_rate_source=rate.get("source"))
    return row


# ---- the use case ------------------------------------------------------------------------

def published_scenarios() -> list[tuple[str, dict[str, Any]]]:
    """The shipped published scenarios, ``(fixture:published/<stem>, data)``, by name."""
    folder = fixtures_dir() / "scenarios" / "published"
    return [(f"{PUBLISHED}{p.stem}", read_scenario_file(p))
            for p in sorted(folder.glob("*.toml"))]


_PUBLISHED_CACHE: list[tuple[str, dict[str, Any]]] | None = None


def _published() -> list[tuple[str, dict[str, Any]]]:
    global _PUBLISHED_CACHE
    if _PUBLISHED_CACHE is None:  # shipped files: read once a process
        _PUBLISHED_CACHE = published_scenarios()
    return _PUBLISHED_CACHE


_FEEDS: weakref.WeakKeyDictionary[Services, OrderedDict] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()
_KEPT = 16  # tables a worker keeps (pages and filters asked)


@dataclass(frozen=True)
class FeedAnswer:
    feed: Feed
    json: bytes
    csv: bytes

    @property
    def json_etag(self) -> str:
        return etag_of(self.json)

    @property
    def csv_etag(self) -> str:
        return etag_of(self.csv)


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _marker(services: Services, session: Any) -> tuple:
    """What the table depends on besides the query: the catalog's marker, the saved
    revisions' (count, max id: revisions are only added) and the day."""
    revisions = tuple(session.execute(select(func.count(), func.max(ScenarioRevision.id)))
                      .one())
    return (*services.catalog(session)[0], *revisions, _today())


def cached(services: Services, *, include: str, q: str | None, limit: int,
           offset: int) -> bool:
    """Whether this worker holds the table asked for, as it stands (no pricing needed)."""
    with services.sessions(write=False) as session:
        key = (_marker(services, session), include, q, limit, offset)
    with _LOCK:
        return key in _FEEDS.get(services, {})


def feed(services: Services, *, include: str = "all", q: str | None = None,
         limit: int = MAX_SAVED, offset: int = 0) -> FeedAnswer:
    """The table: ``include`` published | saved | all; ``q``: saved scenarios whose name
    contains it; ``limit``/``offset``: the page of saved scenarios (at most MAX_SAVED)."""
    if not 1 <= limit <= MAX_SAVED:
        raise InputError([("limit", f"from 1 to {MAX_SAVED}")])
    with services.sessions(write=False) as session:
        marker = _marker(services, session)
        key = (marker, include, q, limit, offset)
        with _LOCK:
            kept = _FEEDS.setdefault(services, OrderedDict())
            hit = kept.get(key)
        if hit is not None:
            return hit
        as_of = marker[-1]
        ctx = services.context(session)
        catalog = list(marker[:2])
        rows: list[dict[str, Any]] = []
        if include in ("all", "published"):
            for name, data in _published():
                spec = ScenarioSpec(InlineScenario(data, name), subject=f"{name}: ")
                ask = repo.content_hash({"feed": name, "catalog": catalog, "view": "full"})
                answer = services.pricer.answer(ask, ctx, spec)
                rows.append(row_of(answer.data, kind="published", id=name,
                                   name=data.get("name") or name, as_of=as_of))
        total = 0
        if include in ("all", "saved"):
            found, total = repo.scenario_list(session, q=q, limit=limit, offset=offset)
            for row in found:
                rows.append(_saved_row(services, ctx, session, row, catalog, as_of))
    out = Feed(as_of, rows, total, offset, limit)
    import orjson
    answer = FeedAnswer(out, orjson.dumps(out.to_json()), out.to_csv().encode("utf-8"))
    with _LOCK:
        kept[key] = answer
        while len(kept) > _KEPT:
            kept.popitem(last=False)
    return answer


def _saved_row(services: Services, ctx: Any, session: Any, scenario: Any, catalog: list,
               as_of: str) -> dict[str, Any]:
    head = {"kind": "saved", "id": scenario.id, "name": scenario.name, "as_of": as_of}
    try:
        rev = repo.revision_get(session, scenario.id, None)
    except NotFound:  # a scenario being created: no revision yet
        return {**dict.fromkeys(NAMES), **head, "error": "no revision saved yet"}
    head.update(revision=rev.number, saved_at=iso_time(rev.created_at))
    label = f"saved scenario {rev.scenario_id} revision {rev.number}"
    # the key POST /api/v1/price uses for a saved scenario without overrides: one answer
    ask = repo.content_hash({"saved": label, "overrides": {}, "catalog": catalog,
                             "view": "full"})
    spec = ScenarioSpec(InlineScenario(rev.data, label), subject="")
    try:
        answer = services.pricer.answer(ask, ctx, spec)
    except InputError as exc:  # it priced when saved; the catalog or engine moved since
        first = exc.errors[0] if exc.errors else ("", "does not price")
        return {**dict.fromkeys(NAMES), **head,
                "error": f"{first[0]}: {first[1]}" if first[0] else str(first[1])}
    return row_of(answer.data, **head)
