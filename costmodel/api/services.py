"""What the routes share: the database, the catalog and curves it holds, and pricing with a
cache. Catalog entries and curves are never updated in place, so a (count, max id) marker
tells each worker when its copy is stale; a price is a pure function of the scenario, the
overrides and that catalog, so equal requests share one answer."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import orjson
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from ..chain import compare as compare_results
from ..chain import price as price_result
from ..curves import matched_interactivity
from ..inputs import InputError
from ..quotes import (
    compare_quote,
    months_until,
    quote_point,
    rank,
    term_json,
    term_table,
    validate_quote,
)
from ..sources.catalog import Catalog
from ..sources.curve_point import CurveLibrary
from ..sources.scenario_file import LoadedScenario, build_scenario, known_key
from ..store import repo
from ..store.db import make_engine, make_sessions
from ..store.models import CatalogEntry, CurveRecord
from ..units import UnitInputError, parse_quantity
from .errors import Problem
from .schemas import PriceRequest

__all__ = ["Services"]


class Services:
    def __init__(self, url: str | None = None, *, cache_size: int = 4096):
        self.engine = make_engine(url)
        self._sessions = make_sessions(self.engine)
        # SQLite: reads begin deferred and run beside the writer; PostgreSQL: the same engine
        self.read_engine = make_engine(url, write=False) if self.engine.url.get_backend_name() \
            == "sqlite" else self.engine
        self._read_sessions = make_sessions(self.read_engine)
        self._lock = threading.Lock()
        self._catalog: tuple[Any, Catalog, float] | None = None  # marker, copy, trusted until
        self._curves: tuple[Any, CurveLibrary, float] | None = None
        self._results: OrderedDict[str, dict] = OrderedDict()
        self._cache_size = cache_size

    @contextmanager
    def sessions(self, *, write: bool = True) -> Iterator[Session]:
        """A session in a transaction: committed on success, rolled back on any error."""
        with (self._sessions if write else self._read_sessions).begin() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
        self.read_engine.dispose()

    def healthy(self) -> bool:
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return True
        except Exception:  # any failure means unhealthy; the detail is in the server log
            return False

    # -- catalog and curves, reloaded only when they changed ----------------------------
    # Checking the (count, max id) marker costs a query; within MARKER_SECONDS a worker
    # trusts its copy, and a key it does not know makes it look again at once (build()).
    MARKER_SECONDS = 1.0

    def catalog(self, session: Session | None, *, fresh: bool = False) -> tuple[Any, Catalog]:
        """(marker, catalog); ``session=None`` opens one only if the copy must be checked."""
        return self._snapshot("_catalog", CatalogEntry, repo.catalog_snapshot, session, fresh)

    def curves(self, session: Session | None, *,
               fresh: bool = False) -> tuple[Any, CurveLibrary]:
        """(marker, curves); ``session=None`` opens one only if the copy must be checked."""
        return self._snapshot("_curves", CurveRecord, repo.curve_library, session, fresh)

    def _snapshot(self, slot: str, table: Any, load: Any, session: Session | None,
                  fresh: bool) -> tuple[Any, Any]:
        cached = getattr(self, slot)
        if cached is not None and not fresh and time.monotonic() < cached[2]:
            return cached[0], cached[1]
        with self._session_or(session) as s:
            marker = tuple(s.execute(select(func.count(), func.max(table.id))).one())
            copy = cached[1] if cached is not None and cached[0] == marker else load(s)
        setattr(self, slot, (marker, copy, time.monotonic() + self.MARKER_SECONDS))
        return marker, copy

    @contextmanager
    def _session_or(self, session: Session | None) -> Iterator[Session]:
        if session is not None:
            yield session
        else:
            with self.sessions(write=False) as own:
                yield own

    # -- pricing ------------------------------------------------------------------------
    def scenario_data(self, session: Session | None, req: PriceRequest,
                      where: str) -> tuple[dict, str]:
        """The scenario mapping a request names, and a label for its provenance."""
        self._check(req, where)
        if req.scenario is not None:
            return req.scenario, "request"
        rev = self._revision(session, req)
        return rev.data, f"saved scenario {rev.scenario_id} revision {rev.number}"

    @staticmethod
    def _check(req: PriceRequest, where: str = "") -> None:
        if (req.scenario is None) == (req.scenario_id is None):
            raise Problem(422, "Invalid input", "give exactly one of scenario or scenario_id",
                          errors=[{"path": f"{where}scenario",
                                   "message": "give exactly one of scenario or scenario_id"}])
        if req.scenario is not None and req.revision is not None:
            raise Problem(422, "Invalid input", "revision applies to a saved scenario",
                          errors=[{"path": f"{where}revision",
                                   "message": "applies to scenario_id only"}])

    @staticmethod
    def _revision(session: Session, req: PriceRequest):
        return repo.revision_get(session, req.scenario_id, req.revision)  # NotFound: 404

    def build(self, session: Session | None, req: PriceRequest, where: str = "",
              extra: Sequence[tuple[str, Any]] = (),
              source: tuple[dict, str] | None = None) -> LoadedScenario:
        data, origin = source or self.scenario_data(session, req, where)
        unknown = [k for k in req.overrides if not known_key(k)]
        if unknown:
            raise Problem(422, "Invalid input", f"unknown key in overrides: {unknown[0]}",
                          errors=[{"path": f"{where}overrides.{k}", "message": "unknown key"}
                                  for k in unknown])
        overrides = [*req.overrides.items(), *extra]
        prefix = f"{where}scenario." if req.scenario is not None else f"{where}"
        for fresh in (False, True):
            _, catalog = self.catalog(session, fresh=fresh)
            _, curves = self.curves(session, fresh=fresh)
            try:
                return build_scenario(data, overrides, catalog, origin=origin,
                                      override_label="overrides", curves=curves,
                                      files_allowed=False)
            except InputError as exc:
                stale = any("unknown catalog entry" in m or "known curve id" in m
                            for _, m in exc.errors)
                if fresh or not stale:  # another worker may have added it a moment ago
                    raise Problem.from_input(exc, prefix=prefix) from None
        raise AssertionError("unreachable")

    def price_json(self, req: PriceRequest) -> str:
        """The result of a price request as JSON text.

        Catalog entries and curves are only ever added, never changed, so a scenario that
        priced once prices the same for good: inline requests are answered from a cache
        keyed by their content, without touching the database; a saved scenario costs one
        query for its revision.
        """
        self._check(req)
        if req.scenario is not None:  # inline: the database only if the catalog is stale
            key = repo.content_hash({"scenario": req.scenario, "overrides": req.overrides})
            return self._cached(key, lambda: self.price(None, req))
        with self.sessions(write=False) as session:
            rev = self._revision(session, req)
            key = repo.content_hash({"saved": [rev.scenario_id, rev.number],
                                     "overrides": req.overrides})
            source = (rev.data, f"saved scenario {rev.scenario_id} revision {rev.number}")
            return self._cached(key, lambda: self.price(session, req, source))

    def _cached(self, key: str, compute: Callable[[], dict]) -> str:
        with self._lock:
            hit = self._results.get(key)
            if hit is not None:
                self._results.move_to_end(key)
                return hit
        out = orjson.dumps(compute()).decode()
        with self._lock:
            self._results[key] = out
            if len(self._results) > self._cache_size:
                self._results.popitem(last=False)
        return out

    def price(self, session: Session | None, req: PriceRequest,
              source: tuple[dict, str] | None = None) -> dict:
        """The result of a price request (no cache); ``source`` is the scenario's data and
        provenance label when the caller has it already."""
        loaded = self.build(session, req, source=source)
        return price_result(loaded.scenario, loaded.provenance).to_json()

    def load_many(self, session: Session, reqs: Sequence[PriceRequest],
                  at_interactivity: Any = None, matched: bool = False) -> list[LoadedScenario]:
        """Scenarios for a comparison or workbook, all read at one interactivity if asked."""
        if matched and at_interactivity is not None:
            raise Problem(422, "Invalid input", "give matched or at_interactivity, not both",
                          errors=[{"path": "matched", "message": "not with at_interactivity"}])
        loaded = [self.build(session, r, f"scenarios[{i}].") for i, r in enumerate(reqs)]
        if not matched and at_interactivity is None:
            return loaded
        missing = [i for i, x in enumerate(loaded) if x.curve is None]
        if missing:
            option = "matched" if matched else "at_interactivity"
            paths = [f"scenarios[{i}].scenario.operating_point" if reqs[i].scenario is not None
                     else f"scenarios[{i}].scenario_id" for i in missing]
            raise Problem(422, "Invalid input", f"{option} needs every operating point read "
                                                f"from a curve",
                          errors=[{"path": p, "message": "not read from a curve"}
                                  for p in paths])
        if matched:
            target = matched_interactivity([x.curve.curve.frontier(x.curve.kind)
                                            for x in loaded])
            at = {"interactivity": {"value": target, "unit": "token/s/user"}}
        else:
            try:
                parse_quantity(at_interactivity, "token/s/user", allow_zero=False)
            except UnitInputError as exc:
                raise Problem(422, "Invalid input", f"at_interactivity: {exc}",
                              errors=[{"path": "at_interactivity", "message": str(exc)}]) \
                    from None
            at = {"interactivity": at_interactivity}
        return [self.build(session, r, f"scenarios[{i}].", extra=[("operating_point.at", at)])
                for i, r in enumerate(reqs)]

    def compare(self, session: Session, reqs: Sequence[PriceRequest], at_interactivity: Any,
                matched: bool) -> dict:
        loaded = self.load_many(session, reqs, at_interactivity, matched)
        return compare_results([(x.scenario, x.provenance) for x in loaded]).to_json()

    def _compare_one(self, session: Session, quote, req: PriceRequest, where: str):
        """A quote against one scenario, read at the quote's interactivity where the
        scenario's operating point comes from a curve."""
        loaded = self.build(session, req, where)
        at = quote_point(quote)
        if loaded.curve is not None and at is not None:
            loaded = self.build(session, req, where, extra=[at])
        return loaded, compare_quote(quote, price_result(loaded.scenario, loaded.provenance))

    def quotes_term(self, session: Session, body: Any) -> dict:
        from datetime import date
        try:
            quote = validate_quote(body.quote, "quote")
            start = date.fromisoformat(quote.date) if quote.date else date.today()
        except InputError as exc:
            raise Problem.from_input(exc) from None
        except ValueError:
            raise Problem(422, "Invalid input", "quote.date is not an ISO date",
                          errors=[{"path": "quote.date", "message": "not YYYY-MM-DD"}]) \
                from None
        if body.improvement is None and body.successor is None:
            raise Problem(422, "Invalid input", "give improvement, or successor and available",
                          errors=[{"path": "improvement", "message": "or a successor"}])
        loaded, comparison = self._compare_one(session, quote, body.scenario, "scenario.")
        successor_price = successor_month = None
        if body.successor is not None:
            if body.available is None:
                raise Problem(422, "Invalid input", "a successor needs available",
                              errors=[{"path": "available", "message": "required"}])
            try:
                successor_month = months_until(body.available, start)
            except UnitInputError as exc:
                raise Problem(422, "Invalid input", f"available: {exc}",
                              errors=[{"path": "available", "message": str(exc)}]) from None
            _, succ = self._compare_one(session, quote, body.successor, "successor.")
            successor_price = succ.own_cost_per_mtok
        rows, longest = term_table(comparison.price_per_mtok, comparison.volume,
                                   loaded.scenario.financing.cost_of_capital, body.terms,
                                   yearly_improvement=body.improvement,
                                   successor_price=successor_price,
                                   successor_month=successor_month, tolerance=body.tolerance)
        return term_json(quote, comparison, rows, longest, body.tolerance)

    def quotes_compare(self, session: Session, quotes: Sequence[dict],
                       reqs: Sequence[PriceRequest]) -> dict:
        """Each quote against each scenario, read at the quote's interactivity where the
        scenario's operating point comes from a curve; quotes ranked per scenario."""
        parsed = []
        for i, data in enumerate(quotes):
            try:
                parsed.append(validate_quote(data, f"quotes[{i}]"))
            except InputError as exc:
                raise Problem.from_input(exc) from None
        out = []
        for j, req in enumerate(reqs):
            ranked = rank([self._compare_one(session, q, req, f"scenarios[{j}].")[1]
                           for q in parsed])
            out.append({"scenario": ranked[0].scenario,
                        "ranked": [c.to_json() for c in ranked]})
        return {"scenarios": out}
