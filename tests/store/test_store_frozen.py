"""A database that accepts and never answers (issue 38, item 3): PostgreSQL reached through a
proxy the test controls (bench/freezer.py) that stops forwarding. Every database wait is
bounded (connect, each statement, a pool checkout) and each one that runs out is the same 503
``store-unreachable`` with ``Retry-After`` as a refused connection: never a 500, never a hang;
once the proxy forwards again the service answers, with no restart.

The waits are set short here through their environment variables (docs/operations.md); each
request runs in a thread joined with a generous bound (a hang fails the test, nothing is timed).
"""
from __future__ import annotations

import threading
import uuid

import pytest
from conftest import auth, bench_module
from sqlalchemy import text
from sqlalchemy.engine import make_url

from costmodel.server import create_app
from costmodel.store.db import database_url
from costmodel.store.health import StoreUnreachable
from costmodel.store.repo import key_create

freezer = bench_module("freezer.py")

API = "/api/v1"
PROBLEM = "https://costmodel.dev/problems/store-unreachable"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
BOUND = 60  # [s] far above every wait the app is given below: reaching it is a hang


@pytest.fixture
def frozen_app(database, monkeypatch):
    if not database.startswith("postgresql"):
        pytest.skip("a server that accepts and never answers: PostgreSQL only")
    url = make_url(database_url(database))
    proxy = freezer.Freezer(url.host or "127.0.0.1", url.port or 5432).start()
    monkeypatch.setenv("COSTMODEL_DB_STATEMENT_TIMEOUT", "1")
    monkeypatch.setenv("COSTMODEL_DB_CONNECT_TIMEOUT", "2")  # libpq's least
    monkeypatch.setenv("COSTMODEL_DB_POOL_TIMEOUT", "2")
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(
        hide_password=False)
    app = create_app({"DATABASE_URL": proxied, "TESTING": True, "KEY_CACHE_SECONDS": 0})
    with app.extensions["costmodel"].sessions() as session:
        _, app.editor = key_create(session, f"frozen-{uuid.uuid4().hex[:6]}", "editor")
    yield app, proxy
    proxy.thaw()
    app.extensions["costmodel"].dispose()
    proxy.stop()


def _bounded(call):
    """``call()``'s answer from a thread, or a failure when it has not answered in BOUND s."""
    out: list = []
    t = threading.Thread(target=lambda: out.append(call()), daemon=True)
    t.start()
    t.join(BOUND)
    assert out, f"no answer within {BOUND} s: a hang"
    return out[0]


def _is_unreachable(r) -> None:
    assert r.status_code == 503, r.get_data(as_text=True)
    assert r.headers["Retry-After"] == "5"
    body = r.get_json()
    assert body["type"] == PROBLEM, body
    assert "try again" in body["detail"]


def test_a_frozen_database_is_a_503_and_the_service_recovers_when_it_answers(frozen_app):
    app, proxy = frozen_app
    client = app.test_client()
    editor = auth(app.editor)
    # every connection of the pool in use and returned while the database answers
    saved = client.post(f"{API}/scenarios", json={"name": "before", "scenario": GB300},
                        headers=editor)
    assert saved.status_code == 201, saved.get_data(as_text=True)
    sid = saved.get_json()["scenario_id"]
    assert client.get(f"{API}/scenarios", headers=editor).status_code == 200
    assert client.post(f"{API}/price", json={"scenario_id": sid},
                       headers=editor).status_code == 200

    proxy.freeze()
    save = _bounded(lambda: client.post(f"{API}/scenarios", headers=editor, json={
        "name": "while frozen", "scenario": GB300}))
    _is_unreachable(save)
    _is_unreachable(_bounded(lambda: client.get(f"{API}/scenarios", headers=editor)))
    _is_unreachable(_bounded(lambda: client.post(f"{API}/price", json={"scenario_id": sid},
                                                 headers=editor)))
    assert _bounded(lambda: client.get("/healthz")).status_code == 503
    # the pooled connections that hung were dropped, new ones were never answered: the
    # proxy accepted some while frozen
    assert proxy.accepted >= 2

    proxy.thaw()
    listed = _bounded(lambda: client.get(f"{API}/scenarios", headers=editor))
    assert listed.status_code == 200, listed.get_data(as_text=True)
    names = [item["name"] for item in listed.get_json()["items"]]
    assert "before" in names and "while frozen" not in names  # the refused save was not kept
    again = _bounded(lambda: client.post(f"{API}/scenarios", headers=editor, json={
        "name": "after", "scenario": GB300}))
    assert again.status_code == 201


def test_a_statement_the_frozen_server_never_answers_ends_after_the_deadline(frozen_app):
    app, proxy = frozen_app
    services = app.extensions["costmodel"]

    def frozen_mid_transaction() -> str:
        try:
            with services.sessions(write=False) as session:
                session.execute(text("SELECT 1"))
                proxy.freeze()  # the connection is open and in use: no new connection
                session.execute(text("SELECT 2"))
        except StoreUnreachable as exc:
            return exc.reason
        return "answered"
    # 1 s of statement_timeout, which a frozen server never applies, and 2 s of grace
    assert _bounded(frozen_mid_transaction) == "the database did not answer within 3 s"
    proxy.thaw()
    with services.sessions(write=False) as session:  # that connection was dropped
        assert session.execute(text("SELECT 3")).scalar() == 3


def test_a_statement_past_the_statement_timeout_is_cancelled_by_the_server(frozen_app):
    app, _ = frozen_app
    services = app.extensions["costmodel"]

    def slow() -> str:
        try:
            with services.sessions(write=False) as session:
                session.execute(text("SELECT pg_sleep(30)"))
        except StoreUnreachable as exc:
            return exc.reason
        return "answered"
    assert _bounded(slow) == "the database did not answer within its statement timeout"
    with services.sessions(write=False) as session:
        assert session.execute(text("SHOW statement_timeout")).scalar() == "1s"
