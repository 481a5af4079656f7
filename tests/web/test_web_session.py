"""Sessions of the pages end: sign-out ends every session of the key (a copy of the cookie
taken before is refused after), and a session older than its lifetime is refused; on each
backend (the ``database`` fixture)."""
from __future__ import annotations

import uuid

from test_web_saved import _count, _csrf, _key, _save, _sign_in, _text

from costmodel.web.session import session_seconds


def _copy(app, client):
    """A second browser holding a copy of ``client``'s session cookie."""
    other = app.test_client()
    other.set_cookie("session", client.get_cookie("session").value)
    return other


def test_a_cookie_copied_before_sign_out_is_refused_after_it(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    stolen = _copy(app, client)
    assert stolen.get("/saved").status_code == 200  # the copy works while signed in
    name = f"after sign-out {uuid.uuid4().hex[:8]}"
    csrf = _csrf(stolen, "/saved")  # a form the copy holds, opened before the sign-out
    r = client.post("/signout", data={"csrf_token": _csrf(client, "/saved")})
    assert r.status_code == 303
    # a read with the copy: refused
    r = stolen.get("/saved")
    assert r.status_code == 401
    assert "Your session ended" in _text(r.text)
    # a save with the copy: refused, nothing written
    from costmodel.web.scenario_form import DEFAULTS
    r = stolen.post("/saved/new", data={**DEFAULTS, "target": "new", "saved_name": name,
                                        "csrf_token": csrf})
    assert r.status_code == 401
    assert "Nothing was saved" in _text(r.text)
    assert _count(app, name) == (0, 0)
    # signing in again works, and the new session reads and saves
    _sign_in(client, editor)
    assert client.get("/saved").status_code == 200
    assert _save(client, name).status_code == 303
    assert _count(app, name) == (1, 1)
    # the old copy stays dead
    assert stolen.get("/saved").status_code == 401


def test_sign_out_ends_every_session_of_the_key(app, client):
    _, editor = _key(app, "editor")
    _, other_key = _key(app, "editor")
    _sign_in(client, editor)
    laptop, phone, colleague = app.test_client(), app.test_client(), app.test_client()
    _sign_in(laptop, editor)
    _sign_in(phone, editor)
    _sign_in(colleague, other_key)
    laptop.post("/signout", data={"csrf_token": _csrf(laptop, "/saved")})
    assert phone.get("/saved").status_code == 401
    assert client.get("/saved").status_code == 401
    assert colleague.get("/saved").status_code == 200  # another key's session is untouched


def test_an_expired_session_is_refused(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    assert client.get("/saved").status_code == 200
    with client.session_transaction() as sess:  # signed in longer ago than the lifetime
        sess["issued_at"] -= session_seconds(app) + 60
    r = client.get("/saved")
    assert r.status_code == 401
    assert "Your session ended" in _text(r.text)
    name = f"expired {uuid.uuid4().hex[:8]}"
    assert _save(client, name).status_code == 401
    assert _count(app, name) == (0, 0)
    _sign_in(client, editor)
    assert client.get("/saved").status_code == 200


def test_a_session_from_before_issued_at_existed_is_refused(app, client):
    # a cookie signed in by a release without the session's generation and issue time
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    with client.session_transaction() as sess:
        del sess["issued_at"], sess["generation"]
    assert client.get("/saved").status_code == 401


def test_the_lifetime_is_configurable(monkeypatch):
    from flask import Flask
    monkeypatch.setenv("COSTMODEL_SESSION_HOURS", "2")
    assert session_seconds(Flask("x")) == 7200
    monkeypatch.delenv("COSTMODEL_SESSION_HOURS")
    assert session_seconds(Flask("x")) == 12 * 3600
