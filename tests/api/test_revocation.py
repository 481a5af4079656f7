"""Revocation holds on every worker: two apps on one database stand for two gunicorn workers
(or two hosts). Writes and key management read the key from the database every time, so a key
revoked through one worker is refused by the other on its next such request; reads may trust a
worker's cache for KEY_CACHE_SECONDS (see costmodel/api/auth.py), and for no longer."""
from __future__ import annotations

import pytest
from conftest import auth

from costmodel.server import create_app
from costmodel.store.repo import key_create, key_list

API = "/api/v1"
GB300_PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def _workers(database, **config):
    return [create_app({"DATABASE_URL": database, "OPEN_READS": False, "TESTING": True,
                        **config}) for _ in range(2)]


@pytest.fixture
def workers(database):
    apps = _workers(database)  # the default read cache (2 s)
    yield apps
    for a in apps:
        a.extensions["costmodel"].dispose()


def _key(app, name: str, role: str = "admin") -> tuple[int, str]:
    with app.extensions["costmodel"].sessions() as session:
        row, token = key_create(session, name, role)
        return row.id, token


def _names(app) -> list[str]:
    with app.extensions["costmodel"].sessions(write=False) as session:
        return [k.name for k in key_list(session)]


def test_a_revoked_admin_key_is_refused_by_the_other_worker_on_its_next_request(
        workers, database):
    one, two = workers
    c1, c2 = one.test_client(), two.test_client()
    victim_id, victim = _key(one, "victim-admin")
    _, revoker = _key(one, "revoker-admin")
    for c in (c1, c2):  # both workers know the key: key management, and a read (cached)
        assert c.get(f"{API}/keys", headers=auth(victim)).status_code == 200
        assert c.get(f"{API}/scenarios", headers=auth(victim)).status_code == 200

    assert c1.delete(f"{API}/keys/{victim_id}", headers=auth(revoker)).status_code == 200

    # the other worker refuses it at once for key management...
    r = c2.post(f"{API}/keys", json={"name": "minted", "role": "admin"}, headers=auth(victim))
    assert r.status_code == 401
    assert r.mimetype == "application/problem+json"
    assert "revoked" in r.json["detail"]
    assert c2.get(f"{API}/keys", headers=auth(victim)).status_code == 401
    assert c2.delete(f"{API}/keys/{victim_id}", headers=auth(victim)).status_code == 401
    # ...and for writes
    r = c2.post(f"{API}/scenarios", json={"name": "after-revocation", "scenario": GB300_PEAK},
                headers=auth(victim))
    assert r.status_code == 401
    assert "minted" not in _names(one)
    # a check that found it revoked dropped it from that worker's read cache too
    assert c2.get(f"{API}/scenarios", headers=auth(victim)).status_code == 401
    # the worker that revoked it forgot it at once for everything
    assert c1.get(f"{API}/scenarios", headers=auth(victim)).status_code == 401
    # the revoker's own key is untouched on both
    assert c2.get(f"{API}/keys", headers=auth(revoker)).status_code == 200


def test_revoked_editor_cannot_write_through_a_worker_that_cached_it(workers):
    one, two = workers
    c1, c2 = one.test_client(), two.test_client()
    editor_id, editor = _key(one, "victim-editor", "editor")
    _, admin = _key(one, "admin-for-editor")
    body = {"name": "editor-write", "scenario": GB300_PEAK}
    assert c2.post(f"{API}/scenarios", json=body, headers=auth(editor)).status_code == 201
    assert c2.get(f"{API}/scenarios", headers=auth(editor)).status_code == 200  # cached read
    assert c1.delete(f"{API}/keys/{editor_id}", headers=auth(admin)).status_code == 200
    assert c2.post(f"{API}/scenarios", json=body, headers=auth(editor)).status_code == 401


def test_with_no_read_cache_reads_are_refused_at_once_too(database):
    one, two = _workers(database, KEY_CACHE_SECONDS=0)
    try:
        c1, c2 = one.test_client(), two.test_client()
        viewer_id, viewer = _key(one, "victim-viewer", "viewer")
        _, admin = _key(one, "admin-for-viewer")
        assert c2.get(f"{API}/scenarios", headers=auth(viewer)).status_code == 200
        assert c1.delete(f"{API}/keys/{viewer_id}", headers=auth(admin)).status_code == 200
        assert c2.get(f"{API}/scenarios", headers=auth(viewer)).status_code == 401
    finally:
        for a in (one, two):
            a.extensions["costmodel"].dispose()


def test_the_read_cache_is_the_only_window_and_it_is_per_app(database):
    # A cache far longer than the default makes the stated rule visible: the other worker's
    # reads answer from its cache; its writes do not.
    one, two = _workers(database, KEY_CACHE_SECONDS=3600)
    try:
        c1, c2 = one.test_client(), two.test_client()
        key_id, token = _key(one, "cached-editor", "editor")
        _, admin = _key(one, "admin-for-cached")
        assert c2.get(f"{API}/scenarios", headers=auth(token)).status_code == 200
        assert c1.delete(f"{API}/keys/{key_id}", headers=auth(admin)).status_code == 200
        assert c2.get(f"{API}/scenarios", headers=auth(token)).status_code == 200  # cached
        assert c2.post(f"{API}/scenarios", json={"name": "x", "scenario": GB300_PEAK},
                       headers=auth(token)).status_code == 401
        assert c2.get(f"{API}/scenarios", headers=auth(token)).status_code == 401
        # each app keeps its own cache: nothing is shared through the process
        assert one.extensions["costmodel.keys"] is not two.extensions["costmodel.keys"]
    finally:
        for a in (one, two):
            a.extensions["costmodel"].dispose()
