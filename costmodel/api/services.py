"""What the routes share: the database, the catalog and curves it holds, and pricing with a
cache. Catalog entries and curves are never updated in place, so a (count, max id) marker
tells each worker when its copy is stale; a price is a pure function of the scenario, the
overrides and that catalog, so equal requests share one answer."""
from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from ..chain import compare as compare_results
from ..chain import price as price_result
from ..curves import matched_interactivity
from ..inputs import InputError
from ..sources.catalog import Catalog
from ..sources.curve_point import CurveLibrary
from ..sources.scenario_file import LoadedScenario, build_scenario
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
        self._lock = threading.Lock()
        self._catalog: tuple[Any, Catalog] | None = None
        self._curves: tuple[Any, CurveLibrary] | None = None
        self._results: OrderedDict[str, dict] = OrderedDict()
        self._cache_size = cache_size

    @contextmanager
    def sessions(self) -> Iterator[Session]:
        """A session in a transaction: committed on success, rolled back on any error."""
        with self._sessions.begin() as session:
            yield session

    def healthy(self) -> bool:
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            return True
        except Exception:  # any failure means unhealthy; the detail is in the server log
            return False

    # -- catalog and curves, reloaded only when they changed ----------------------------
    def catalog(self, session: Session) -> tuple[Any, Catalog]:
        marker = tuple(session.execute(select(func.count(), func.max(CatalogEntry.id))).one())
        cached = self._catalog
        if cached is None or cached[0] != marker:
            cached = (marker, repo.catalog_snapshot(session))
            self._catalog = cached
        return cached

    def curves(self, session: Session) -> tuple[Any, CurveLibrary]:
        marker = tuple(session.execute(select(func.count(), func.max(CurveRecord.id))).one())
        cached = self._curves
        if cached is None or cached[0] != marker:
            cached = (marker, repo.curve_library(session))
            self._curves = cached
        return cached

    # -- pricing ------------------------------------------------------------------------
    def scenario_data(self, session: Session, req: PriceRequest,
                      where: str) -> tuple[dict, str]:
        """The scenario mapping a request names, and a label for its provenance."""
        if (req.scenario is None) == (req.scenario_id is None):
            raise Problem(422, "Invalid input", "give exactly one of scenario or scenario_id",
                          errors=[{"path": f"{where}scenario",
                                   "message": "give exactly one of scenario or scenario_id"}])
        if req.scenario is not None:
            if req.revision is not None:
                raise Problem(422, "Invalid input", "revision applies to a saved scenario",
                              errors=[{"path": f"{where}revision",
                                       "message": "applies to scenario_id only"}])
            return req.scenario, "request"
        try:
            rev = repo.revision_get(session, req.scenario_id, req.revision)
        except repo.NotFound as exc:
            raise Problem(404, "Not found", str(exc)) from None
        return rev.data, f"saved scenario {rev.scenario_id} revision {rev.number}"

    def build(self, session: Session, req: PriceRequest, where: str = "",
              extra: Sequence[tuple[str, Any]] = ()) -> LoadedScenario:
        data, origin = self.scenario_data(session, req, where)
        _, catalog = self.catalog(session)
        _, curves = self.curves(session)
        overrides = [*req.overrides.items(), *extra]
        prefix = f"{where}scenario." if req.scenario is not None else f"{where}"
        try:
            return build_scenario(data, overrides, catalog, origin=origin,
                                  override_label="overrides", curves=curves,
                                  files_allowed=False)
        except InputError as exc:
            raise Problem.from_input(exc, prefix=prefix) from None

    def price(self, session: Session, req: PriceRequest) -> dict:
        data, origin = self.scenario_data(session, req, "")
        key = repo.content_hash({"data": data, "origin": origin,
                                 "overrides": req.overrides,
                                 "catalog": self.catalog(session)[0],
                                 "curves": self.curves(session)[0]})
        with self._lock:
            hit = self._results.get(key)
            if hit is not None:
                self._results.move_to_end(key)
                return hit
        loaded = self.build(session, req)
        out = price_result(loaded.scenario, loaded.provenance).to_json()
        with self._lock:
            self._results[key] = out
            if len(self._results) > self._cache_size:
                self._results.popitem(last=False)
        return out

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
            raise Problem(422, "Invalid input", f"{option} needs every operating point read "
                                                f"from a curve",
                          errors=[{"path": f"scenarios[{i}].operating_point",
                                   "message": "not read from a curve"} for i in missing])
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
