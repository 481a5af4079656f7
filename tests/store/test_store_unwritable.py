"""A store that cannot write (disk full, read-only database): a save is refused with 503 and
the problem type store-unwritable, nothing of it is kept, /healthz says so with the time of
the refused write, and all is well again once the store writes (on each backend).

Simulated deterministically: on SQLite a connection made with ``PRAGMA query_only`` (writes
refused as by a read-only file) or ``PRAGMA max_page_count`` at the file's page count (a full
disk: a write needing one more page is SQLITE_FULL); on PostgreSQL the database altered to
``default_transaction_read_only = on``.
"""
from __future__ import annotations

import os
import re
import uuid
from contextlib import contextmanager
from datetime import UTC, datetime
from html import unescape
from urllib.parse import urlencode

import pytest
from conftest import auth
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from costmodel.store.health import unwritable_reason
from costmodel.store.repo import key_create, scenario_list
from costmodel.web.scenario_form import DEFAULTS

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
PROBLEM = "https://costmodel.dev/problems/store-unwritable"


@pytest.fixture(scope="module")
def editor(app) -> str:
    with app.extensions["costmodel"].sessions() as session:
        return key_create(session, f"unwritable-{uuid.uuid4().hex[:6]}", "editor")[1]


def _count(app, name: str) -> int:
    with app.extensions["costmodel"].sessions(write=False) as session:
        return scenario_list(session, q=name)[1]


def _sqlite_pragma(services, *pragmas):
    """Each new connection of the write engine runs ``pragmas`` (callables of a cursor)."""
    def connect(dbapi_connection, _record):
        cur = dbapi_connection.cursor()
        for pragma in pragmas:
            pragma(cur)
        cur.close()
    return connect


@contextmanager
def unwritable(app, database: str, how: str = "read-only"):
    """The app's store refuses writes inside the block; writes again after it."""
    services = app.extensions["costmodel"]
    if database.startswith("sqlite"):
        if how == "read-only":
            hook = _sqlite_pragma(services, lambda c: c.execute("PRAGMA query_only = ON"))
        else:  # full: not one page more than the file holds, and no free page in it
            def full(cur):
                pages = cur.execute("PRAGMA page_count").fetchone()[0]
                assert cur.execute("PRAGMA freelist_count").fetchone()[0] == 0
                cur.execute(f"PRAGMA max_page_count = {pages}")
            hook = _sqlite_pragma(services, full)
        event.listen(services.engine, "connect", hook)
        services.engine.dispose()  # every connection from now on is a new one
        try:
            yield
        finally:
            event.remove(services.engine, "connect", hook)
            services.engine.dispose()
        return
    name = make_url(database).database
    from costmodel.store.db import database_url
    admin = create_engine(database_url(os.environ["TEST_DATABASE_URL"]),
                          isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on'))
        services.engine.dispose()
        services.read_engine.dispose()
        yield
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'ALTER DATABASE "{name}" RESET default_transaction_read_only'))
        admin.dispose()
        services.engine.dispose()
        services.read_engine.dispose()


def _assert_unwritable(r) -> dict:
    assert r.status_code == 503, r.get_data(as_text=True)
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.headers["Retry-After"] == "60"
    body = r.get_json()
    assert body["type"] == PROBLEM and body["title"] == "The store cannot write"
    return body


def test_a_save_on_a_read_only_store_is_503_and_healthz_says_so(app, client, editor, database):
    name = f"ro-{uuid.uuid4().hex[:8]}"
    before = datetime.now(UTC)
    assert client.get("/healthz").get_json()["database"] == "ok"
    with unwritable(app, database):
        r = client.post(f"{API}/scenarios", json={"name": name, "scenario": GB300},
                        headers=auth(editor))
        body = _assert_unwritable(r)
        assert body["detail"].startswith("the database is read-only: nothing was saved")
        # reads still answer; nothing of the save was kept
        assert _count(app, name) == 0
        assert client.get(f"{API}/scenarios?q={name}", headers=auth(editor)).status_code == 200
        h = client.get("/healthz")
        assert h.status_code == 200  # reads and prices still answer: degraded, not down
        state = h.get_json()
        assert state["status"] == "degraded" and state["database"] == "unwritable"
        assert state["reason"] == "the database is read-only"
        assert before <= datetime.fromisoformat(state["last_failed_write"]) <= datetime.now(UTC)
    # writable again: the probe finds it, and the save goes through
    h = client.get("/healthz")
    assert h.status_code == 200 and h.get_json()["database"] == "ok"
    r = client.post(f"{API}/scenarios", json={"name": name, "scenario": GB300},
                    headers=auth(editor))
    assert r.status_code == 201, r.get_json()
    assert _count(app, name) == 1


def test_a_successful_write_clears_the_failure(app, client, editor, database):
    name = f"clear-{uuid.uuid4().hex[:8]}"
    with unwritable(app, database):
        _assert_unwritable(client.post(f"{API}/scenarios", json={"name": name,
                                                                 "scenario": GB300},
                                       headers=auth(editor)))
    services = app.extensions["costmodel"]
    assert services.writes.failure is not None  # nobody has asked /healthz yet
    r = client.post(f"{API}/scenarios", json={"name": name, "scenario": GB300},
                    headers=auth(editor))
    assert r.status_code == 201
    assert services.writes.failure is None


def test_a_full_disk_on_sqlite_is_503(app, client, editor, database):
    if not database.startswith("sqlite"):
        pytest.skip("max_page_count is SQLite's")
    name = f"full-{uuid.uuid4().hex[:8]}"
    with unwritable(app, database, "full"):
        # a priced revision holds its whole result: more than one page more
        body = _assert_unwritable(client.post(f"{API}/scenarios",
                                              json={"name": name, "scenario": GB300},
                                              headers=auth(editor)))
        assert body["detail"].startswith("the disk is full")
        assert _count(app, name) == 0
        state = client.get("/healthz").get_json()
        assert (state["database"], state["reason"]) == ("unwritable", "the disk is full")
    assert client.get("/healthz").get_json()["database"] == "ok"


def test_a_web_save_on_a_read_only_store_says_so_in_words(app, client, editor, database):
    r = client.post("/signin", data={"api_key": editor, "csrf_token": _csrf(client, "/signin"),
                                     "next": "/saved"})
    assert r.status_code == 303
    name = f"web-ro-{uuid.uuid4().hex[:8]}"
    token = _csrf(client, "/saved/new?" + urlencode(DEFAULTS))
    with unwritable(app, database):
        r = client.post("/saved/new", data={**DEFAULTS, "target": "new", "saved_name": name,
                                             "csrf_token": token})
        assert r.status_code == 503
        assert r.headers["Retry-After"] == "60"
        text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", r.text)))
        assert "The store cannot write" in text
        assert "Nothing was saved" in text and "The database is read-only." in text
        assert _count(app, name) == 0


def _csrf(client, path: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert found, path
    return found.group(1)


@pytest.mark.parametrize("message,reason", [
    ("database or disk is full", "the disk is full"),
    ("attempt to write a readonly database", "the database is read-only"),
    ("disk I/O error", "a disk I/O error"),
    ('could not extend file "base/16384/16385": No space left on device', "the disk is full"),
    ("no such table: scenarios", None),
    ("database is locked", None),
])
def test_which_errors_say_the_store_cannot_write(message, reason):
    exc = OperationalError("INSERT", {}, Exception(message))
    assert unwritable_reason(exc) == reason
    assert unwritable_reason(ValueError(message)) is None


@pytest.mark.parametrize("state,reason", [("53100", "the disk is full"),
                                          ("25006", "the database is read-only"),
                                          ("40001", None)])
def test_postgresql_sqlstates(state, reason):
    class Orig(Exception):
        sqlstate = state
    assert unwritable_reason(OperationalError("INSERT", {}, Orig("x"))) == reason


def test_the_openapi_document_lists_503_on_writes(client):
    spec = client.get(f"{API}/openapi.json").get_json()
    answer = spec["paths"]["/api/v1/scenarios"]["post"]["responses"]["503"]
    assert "store-unwritable" in answer["description"] and "Retry-After" in answer["headers"]
    # a read cannot meet an unwritable store, only one that does not answer
    # (tests/store/test_store_unreachable.py)
    read = spec["paths"]["/api/v1/scenarios"]["get"]["responses"]["503"]
    assert "store-unreachable" in read["description"]
    assert "store-unwritable" not in read["description"] and "Retry-After" in read["headers"]

