"""A database that does not answer (stopped, restarting, its connection dropped): every face
answers 503 with the problem type store-unreachable and ``Retry-After: 5`` (a page: words),
never a 500; the next request after it is back is answered, with no restart of the service.

Deterministic here: a URL naming no server (PostgreSQL: a closed loopback port; SQLite: a file
in a folder that does not exist), and on PostgreSQL a connection terminated by the server
(``pg_terminate_backend``) in the middle of a read and of a write, as a restart does to every
open connection. tests/http/test_hosts.py stops a real PostgreSQL under load.
"""
from __future__ import annotations

import uuid

import pytest
from conftest import auth
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError, OperationalError

from costmodel.server import create_app
from costmodel.store.health import StoreUnreachable, unreachable_reason
from costmodel.store.repo import key_create, scenario_list

API = "/api/v1"
PROBLEM = "https://costmodel.dev/problems/store-unreachable"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def _closed_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


@pytest.fixture(params=["sqlite", "postgresql"])
def gone(request, tmp_path):
    """An app whose database does not answer."""
    url = (f"sqlite:///{tmp_path / 'no-such-folder' / 'costmodel.db'}"
           if request.param == "sqlite"
           else f"postgresql://postgres@127.0.0.1:{_closed_port()}/costmodel")
    app = create_app({"DATABASE_URL": url, "OPEN_READS": True, "TESTING": True})
    yield app
    app.extensions["costmodel"].dispose()


def _is_unreachable(r) -> None:
    assert r.status_code == 503, r.get_data(as_text=True)
    assert r.headers["Retry-After"] == "5"
    if r.mimetype == "application/problem+json":
        body = r.get_json()
        assert body["type"] == PROBLEM
        assert body["status"] == 503 and "try again" in body["detail"]


def test_a_database_that_does_not_answer_is_a_503_on_every_face(gone):
    client = gone.test_client()
    _is_unreachable(client.get(f"{API}/accelerators"))  # a read (open: no key to check)
    _is_unreachable(client.post(f"{API}/price", json={"scenario": GB300}))  # the catalog
    r = client.post(f"{API}/scenarios", json={"name": "x", "scenario": GB300},
                    headers=auth("cm_0000_not-checked-without-a-database"))
    _is_unreachable(r)  # the key cannot be checked: 503, not 401
    page = client.get("/saved")
    assert page.status_code == 503 and page.headers["Retry-After"] == "5"
    assert "cannot reach its database" in page.get_data(as_text=True)
    assert client.get("/healthz").status_code == 503


def test_the_reasons_are_told_apart():
    # a conflict or a bad statement is not an outage: it must stay visible (409 or 500)
    assert unreachable_reason(IntegrityError("INSERT", {}, Exception("duplicate"))) is None
    import sqlite3
    assert unreachable_reason(OperationalError("SELECT", {}, sqlite3.OperationalError(
        "no such table: scenarios"))) is None
    assert unreachable_reason(OperationalError("SELECT", {}, sqlite3.OperationalError(
        "database is locked"))) == "the database is busy (locked by another writer)"
    assert unreachable_reason(ValueError("x")) is None
    # issue 38, item 3: psycopg's connect_timeout (a server that accepts and never answers)
    # was a 500 (its class is a subclass of OperationalError, not OperationalError itself)
    import psycopg
    assert unreachable_reason(OperationalError("connect", {}, psycopg.errors.ConnectionTimeout(
        "connection timeout expired"))) == "the database did not accept a connection in time"
    assert unreachable_reason(OperationalError("SELECT", {}, psycopg.errors.QueryCanceled(
        "canceling statement due to statement timeout"))) == \
        "the database did not answer within its statement timeout"


@pytest.fixture
def pg_app(database):
    if not database.startswith("postgresql"):
        pytest.skip("a connection terminated by the server: PostgreSQL only")
    app = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    yield app
    app.extensions["costmodel"].dispose()


def _terminate(database: str, pid: int) -> None:
    from costmodel.store.db import database_url
    admin = create_engine(database_url(database), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    admin.dispose()


@pytest.mark.parametrize("write", [False, True])
def test_a_connection_the_server_drops_is_unreachable_then_the_next_request_works(
        pg_app, database, write):
    services = pg_app.extensions["costmodel"]
    name = f"dropped-{uuid.uuid4().hex[:6]}"
    with pytest.raises(StoreUnreachable) as raised, services.sessions(write=write) as session:
        _terminate(database, session.execute(text("SELECT pg_backend_pid()")).scalar())
        if write:
            key_create(session, name, "viewer")
        session.execute(text("SELECT 1")).scalar()
    assert raised.value.reason == "the database is unreachable or restarting"
    # nothing of the write was kept, and the pool's next connection works (checked first)
    with services.sessions(write=False) as session:
        assert session.execute(text("SELECT count(*) FROM api_keys WHERE name = :n"),
                               {"n": name}).scalar() == 0
        assert scenario_list(session)[1] >= 0
    assert pg_app.test_client().get(f"{API}/accelerators/gb300").status_code == 200


def test_every_operation_of_the_document_lists_the_503(client):
    spec = client.get(f"{API}/openapi.json").get_json()
    operations = [(path, method, op) for path, item in spec["paths"].items()
                  for method, op in item.items()]
    assert len(operations) > 40
    for path, method, op in operations:
        answer = op["responses"]["503"]
        assert "store-unreachable" in answer["description"], (method, path)
        assert "Retry-After" in answer["headers"]
