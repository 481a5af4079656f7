"""Concurrent writers lose nothing: parallel saves of revisions, on each backend."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import func, select

from costmodel.store import repo
from costmodel.store.db import make_engine, make_sessions
from costmodel.store.models import ScenarioRevision

WRITERS, EACH = 8, 12


def test_parallel_revisions_are_all_kept(database):
    engine = make_engine(database)
    sessions = make_sessions(engine)
    with sessions.begin() as s:
        first = repo.scenario_create(s, "concurrency", {"n": -1}, {}, engine_version="t",
                                     created_by="test")
    sid = first.scenario_id

    def writer(w: int) -> list[int]:
        numbers = []
        for k in range(EACH):
            with sessions.begin() as s:  # one transaction a save, as the API does
                rev, created = repo.scenario_revise(s, sid, {"writer": w, "k": k}, {},
                                                    engine_version="t", created_by=f"w{w}")
                assert created
                numbers.append(rev.number)
        return numbers

    with ThreadPoolExecutor(WRITERS) as pool:
        results = list(pool.map(writer, range(WRITERS)))
    numbers = sorted(n for r in results for n in r)
    # every save got its own revision number: 2 .. 1 + 8 x 12, none lost, none repeated
    assert numbers == list(range(2, 2 + WRITERS * EACH))
    with sessions.begin() as s:
        assert repo.scenario_get(s, sid).latest_revision == 1 + WRITERS * EACH
        count = s.scalar(select(func.count()).select_from(ScenarioRevision)
                         .where(ScenarioRevision.scenario_id == sid))
        assert count == 1 + WRITERS * EACH
        contents = {tuple(sorted(r.data.items())) for r in
                    s.scalars(select(ScenarioRevision).where(ScenarioRevision.scenario_id == sid))}
        assert len(contents) == 1 + WRITERS * EACH
    engine.dispose()


def test_parallel_new_scenarios_get_distinct_ids(database):
    engine = make_engine(database)
    sessions = make_sessions(engine)

    def create(k: int) -> int:
        with sessions.begin() as s:
            return repo.scenario_create(s, f"parallel {k}", {"k": k}, {}, engine_version="t",
                                        created_by="test").scenario_id

    with ThreadPoolExecutor(WRITERS) as pool:
        ids = list(pool.map(create, range(40)))
    assert len(set(ids)) == 40
    engine.dispose()


def test_content_hash_is_pinned():
    # stored revisions keep their hash: the canonical text must never change
    import hashlib
    text = b'{"a":[1.5,"x",1e-7,null],"b":{"c":true,"d":"\xc3\xa9"}}'  # sorted, compact, UTF-8
    data = {"b": {"d": "é", "c": True}, "a": [1.5, "x", 1e-7, None]}
    assert repo.content_hash(data) == hashlib.sha256(text).hexdigest()
