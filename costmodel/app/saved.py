"""Saved scenarios and their revisions, for every face: price, then save (a new scenario, or
the next revision of one, checked against the revision the writer based its edit on: the
API's If-Match, the page's ``based_on``); restore an old revision as the latest; read a
scenario, its history and a revision exactly as it was priced.

Each use case takes the face's :class:`~costmodel.app.services.Services` and opens its own
transaction; what it answers is plain data (:class:`Scenario`, :class:`Revision`), read before
the transaction ends. A revision keeps the result computed when it was saved: reading one never
prices it again. Errors: :class:`NotFound` (no such scenario or revision), :class:`Stale` (the
scenario moved on since the revision expected: nothing was written; ``latest`` says to what),
:class:`~costmodel.model.errors.InputError` (the scenario does not price: nothing was written),
and the store's ``StoreUnwritable`` / ``StoreUnreachable``.
"""
from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..sources.scenario_file import read_scenario_file
from ..store import repo
from ..store.models import MAX_ID
from ..store.repo import Conflict, NotFound, Stale
from .pricing import price
from .services import Services, etag_of
from .specs import InlineScenario, ScenarioSpec

__all__ = ["MAX_ID", "NotFound", "Conflict", "Stale", "Author", "Scenario", "Revision", "Saved",
           "Expect", "revision_etag", "if_match", "based_on", "scenarios", "scenario",
           "history", "revision", "priced", "save", "restore", "read_file", "iso_time"]

SUBJECT = "scenario."  # where a saved scenario's errors are: the API's body field


class Author(Protocol):
    """Who saves: a key's name (shown) and its id (None: no key, e.g. the command line)."""
    name: str
    key_id: int | None


class _Versioned(Protocol):  # a revision, or the store's note of the latest (Stale.latest)
    scenario_id: int
    number: int
    content_hash: str


Expect = Callable[[Any], bool]  # asked about the latest revision before a write


def iso_time(moment: datetime) -> str:
    """A stored time as RFC 3339 text (stored in UTC; SQLite hands times back without
    their zone), as every face writes it."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


def revision_etag(rev: _Versioned) -> str:
    """A revision's ETag, which is its scenario's while it is the latest: the scenario, the
    revision's number and its content hash (a revision never changes; a new one has another
    number). Every answer of a revision carries it; If-Match is compared with it."""
    return etag_of(f"scenario {rev.scenario_id} revision {rev.number} "
                   f"{rev.content_hash}".encode())


def if_match(tags: Container[str], star: bool = False) -> Expect:
    """The check of an If-Match: the latest revision's ETag (without its quotes) is one of
    ``tags`` (strong comparison, RFC 9110 13.1.1), or ``star`` (``*``: any revision)."""
    return lambda latest: star or revision_etag(latest).strip('"') in tags


def based_on(number: int) -> Expect:
    """The check of a page's save: the latest revision is still the one it showed."""
    return lambda latest: latest.number == number


@dataclass(frozen=True)
class Scenario:
    """A saved scenario: its name and how many revisions it has."""
    id: int
    name: str
    latest_revision: int
    created_at: datetime


@dataclass(frozen=True)
class Revision:
    """What was saved and priced at one time: the scenario as given, its result then."""
    scenario_id: int
    number: int
    content_hash: str
    created_at: datetime
    created_by: str
    created_by_key_id: int | None
    engine_version: str
    scenario: dict[str, Any]
    result: dict[str, Any]

    @property
    def etag(self) -> str:
        return revision_etag(self)

    def to_json(self) -> dict[str, Any]:
        """The revision as every face answers it (the API's ``RevisionOut``)."""
        return {"scenario_id": self.scenario_id, "number": self.number,
                "content_hash": self.content_hash, "created_at": iso_time(self.created_at),
                "created_by": self.created_by, "created_by_key_id": self.created_by_key_id,
                "engine_version": self.engine_version, "scenario": self.scenario,
                "result": self.result}


@dataclass(frozen=True)
class Saved:
    """A save's outcome: the revision now latest; ``created``: False when the content equalled
    the latest revision's (nothing was written)."""
    revision: Revision
    created: bool


def _scenario(row: Any) -> Scenario:
    return Scenario(row.id, row.name, row.latest_revision, row.created_at)


def _revision(row: Any) -> Revision:
    return Revision(row.scenario_id, row.number, row.content_hash, row.created_at,
                    row.created_by, row.created_by_key_id, row.engine_version, row.data,
                    row.result)


# ---- reading ---------------------------------------------------------------------------------

def scenarios(services: Services, *, q: str | None = None, limit: int = 50,
              offset: int = 0) -> tuple[list[Scenario], int]:
    """A page of saved scenarios (by id; ``q``: names containing it) and how many match."""
    with services.sessions(write=False) as session:
        rows, total = repo.scenario_list(session, q=q, limit=limit, offset=offset)
        return [_scenario(r) for r in rows], total


def scenario(services: Services, scenario_id: int) -> Scenario:
    with services.sessions(write=False) as session:
        return _scenario(repo.scenario_get(session, scenario_id))


def history(services: Services, scenario_id: int) -> tuple[Scenario, list[Revision]]:
    """A saved scenario and every revision of it, the latest first."""
    with services.sessions(write=False) as session:
        row = repo.scenario_get(session, scenario_id)
        return _scenario(row), [_revision(repo.revision_get(session, scenario_id, n))
                                for n in range(row.latest_revision, 0, -1)]


def revision(services: Services, scenario_id: int,
             number: int | None = None) -> tuple[Scenario, Revision]:
    """A saved scenario and its revision ``number`` (None: its latest)."""
    with services.sessions(write=False) as session:
        row = repo.scenario_get(session, scenario_id)
        return _scenario(row), _revision(repo.revision_get(session, scenario_id, number))


def read_file(path: str | Path) -> dict[str, Any]:
    """A scenario file (TOML or JSON) as the mapping a save keeps."""
    return read_scenario_file(path)


# ---- pricing, then saving ----------------------------------------------------------------------

def priced(services: Services, data: Mapping[str, Any], session: Any = None, *,
           subject: str = SUBJECT) -> dict[str, Any]:
    """The result of a scenario about to be saved, as JSON data: what a save keeps with it,
    and what a page shows before saving. Its errors are about ``subject`` (the API's body
    field ``scenario.``; the command line's file)."""
    spec = ScenarioSpec(InlineScenario(data), subject=subject)
    if session is not None:
        return price(services.context(session), spec).result.to_json()
    with services.sessions(write=False) as own:
        return price(services.context(own), spec).result.to_json()


def save(services: Services, data: Mapping[str, Any], author: Author, *,
         name: str | None = None, scenario_id: int | None = None,
         expect: Expect | None = None, subject: str = SUBJECT) -> Saved:
    """Price ``data``, then save it: as a new scenario called ``name``, or as the next
    revision of ``scenario_id``. ``expect(latest)`` (:func:`if_match`, :func:`based_on`) is
    asked about the latest revision: False raises :class:`Stale` and nothing is written.

    A revision is checked before anything is priced (no such scenario: :class:`NotFound`;
    moved on: :class:`Stale`) and again under the scenario's lock, where the comparison with
    the latest revision and the new number are one step (:func:`repo.scenario_revise`):
    content equal to the latest is no edit (``created`` False, nothing written)."""
    if (name is None) == (scenario_id is None):
        raise ValueError("save a new scenario (name) or a revision (scenario_id), not both")
    data = dict(data)
    with services.sessions() as session:
        if scenario_id is None:
            result = priced(services, data, session, subject=subject)
            row = repo.scenario_create(session, name, data, result, engine_version=__version__,
                                       created_by=author.name,
                                       created_by_key_id=author.key_id)
            return Saved(_revision(row), True)
        repo.revision_expected(session, scenario_id, expect)
        result = priced(services, data, session, subject=subject)
        row, created = repo.scenario_revise(session, scenario_id, data, result,
                                            engine_version=__version__,
                                            created_by=author.name,
                                            created_by_key_id=author.key_id, expect=expect)
        return Saved(_revision(row), created)


def restore(services: Services, scenario_id: int, number: int, author: Author) -> Saved:
    """Save revision ``number``'s inputs again as the latest revision, priced today (an
    :class:`~costmodel.model.errors.InputError` when they no longer price: nothing saved)."""
    _, old = revision(services, scenario_id, number)
    return save(services, old.scenario, author, scenario_id=scenario_id)
