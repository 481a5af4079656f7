"""A database made by an earlier release upgrades cleanly, rows and all, on each backend."""
from __future__ import annotations

import os
import uuid

import pytest
from conftest import BACKENDS, _postgres_database
from sqlalchemy import inspect, text

from costmodel.store.db import make_engine, upgrade


@pytest.fixture(params=BACKENDS)
def empty_database(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
    else:
        assert os.environ.get("TEST_DATABASE_URL")
        yield from _postgres_database()


def test_a_0001_database_upgrades_with_its_rows(empty_database):
    upgrade(empty_database, "0001")
    engine = make_engine(empty_database)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO api_keys (id, name, role, prefix, secret_hash, "
                          "created_at) VALUES (1, 'old', 'editor', 'abc', :h, :t)"),
                     {"h": "0" * 64, "t": "2026-01-01 00:00:00+00:00"})
        conn.execute(text("INSERT INTO scenarios (id, name, latest_revision, created_at) "
                          "VALUES (1, 'old', 1, :t)"), {"t": "2026-01-01 00:00:00+00:00"})
        conn.execute(text("INSERT INTO scenario_revisions (id, scenario_id, number, "
                          "content_hash, data, result, engine_version, created_by, "
                          "created_at) VALUES (1, 1, 1, :h, '{}', '{}', '0', 'old', :t)"),
                     {"h": uuid.uuid4().hex, "t": "2026-01-01 00:00:00+00:00"})
    engine.dispose()
    upgrade(empty_database)
    engine = make_engine(empty_database)
    with engine.begin() as conn:
        assert conn.execute(text("SELECT session_generation FROM api_keys")).all() == [(0,)]
        assert conn.execute(text("SELECT created_by, created_by_key_id FROM "
                                 "scenario_revisions")).all() == [("old", None)]
        columns = {c["name"] for c in inspect(conn).get_columns("scenario_revisions")}
        assert "created_by_key_id" in columns
        fks = inspect(conn).get_foreign_keys("scenario_revisions")
        assert any(f["referred_table"] == "api_keys" and f["constrained_columns"] ==
                   ["created_by_key_id"] for f in fks)
    engine.dispose()
