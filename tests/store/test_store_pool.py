"""The PostgreSQL pool is bounded and stated: COSTMODEL_DB_POOL_SIZE, _MAX_OVERFLOW and
_POOL_TIMEOUT set each worker's pool (README "Several hosts": a host holds at most workers x
(size + overflow) connections), a bad value is refused at start, and a request finding every
connection busy past the timeout is a 503 store-unreachable, not a hang."""
from __future__ import annotations

import pytest
from sqlalchemy import text

from costmodel.server import create_app
from costmodel.store.db import make_engine, pool_settings


def test_the_defaults_and_the_environment(monkeypatch):
    for name in ("COSTMODEL_DB_POOL_SIZE", "COSTMODEL_DB_MAX_OVERFLOW",
                 "COSTMODEL_DB_POOL_TIMEOUT", "COSTMODEL_DB_CONNECT_TIMEOUT",
                 "COSTMODEL_DB_STATEMENT_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    got = pool_settings()
    assert (got["pool_size"], got["max_overflow"], got["pool_timeout"]) == (4, 2, 10)
    assert got["pool_pre_ping"] is True and got["connect_args"] == {"connect_timeout": 5}
    assert got["statement_timeout"] == 10
    # libpq counts whole seconds, 2 at least: 1.5 s is 2, never 0 (no bound)
    monkeypatch.setenv("COSTMODEL_DB_CONNECT_TIMEOUT", "1.5")
    monkeypatch.setenv("COSTMODEL_DB_STATEMENT_TIMEOUT", "0.25")
    got = pool_settings()
    assert got["connect_args"] == {"connect_timeout": 2} and got["statement_timeout"] == 0.25
    monkeypatch.setenv("COSTMODEL_DB_POOL_SIZE", "7")
    monkeypatch.setenv("COSTMODEL_DB_MAX_OVERFLOW", "0")
    engine = make_engine("postgresql://postgres@127.0.0.1:1/none")  # no connection made
    assert (engine.pool.size(), engine.pool._max_overflow) == (7, 0)
    engine.dispose()


@pytest.mark.parametrize("name, value", [("COSTMODEL_DB_POOL_SIZE", "0"),
                                         ("COSTMODEL_DB_MAX_OVERFLOW", "-1"),
                                         ("COSTMODEL_DB_POOL_TIMEOUT", "ten"),
                                         ("COSTMODEL_DB_CONNECT_TIMEOUT", "0"),
                                         ("COSTMODEL_DB_STATEMENT_TIMEOUT", "-1"),
                                         ("COSTMODEL_DB_STATEMENT_TIMEOUT", "inf")])
def test_a_bad_value_is_refused_naming_it(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        pool_settings()


def test_every_connection_busy_is_a_503_after_the_timeout(database, monkeypatch):
    if not database.startswith("postgresql"):
        pytest.skip("the bounded pool is the server database's")
    monkeypatch.setenv("COSTMODEL_DB_POOL_SIZE", "1")
    monkeypatch.setenv("COSTMODEL_DB_MAX_OVERFLOW", "0")
    monkeypatch.setenv("COSTMODEL_DB_POOL_TIMEOUT", "1")
    app = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    services = app.extensions["costmodel"]
    try:
        with services.engine.connect() as held:  # the worker's one connection, taken
            held.execute(text("SELECT 1"))
            r = app.test_client().get("/api/v1/scenarios")
            assert r.status_code == 503
            body = r.get_json()
            assert body["type"].endswith("/store-unreachable")
            assert "every database connection of this worker is busy" in body["detail"]
        assert app.test_client().get("/api/v1/scenarios").status_code == 200  # freed
    finally:
        services.dispose()
