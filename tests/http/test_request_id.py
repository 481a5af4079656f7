"""The request id (costmodel/http/logs.py): taken from X-Request-ID when it is safe, made
otherwise, answered on every answer and in every problem+json body, and written on every log
line of the request, as text or as one JSON object a line (COSTMODEL_LOG_FORMAT=json). Through
nginx (its $request_id in its own log): test_metrics_hosts.py."""
from __future__ import annotations

import json
import logging
import re

import pytest

from costmodel.http.logs import JSONFormatter, configure, valid_request_id
from costmodel.server import create_app

API = "/api/v1"
MADE = re.compile(r"[0-9a-f]{32}")


@pytest.mark.parametrize("given,kept", [
    ("5f0c2a9e1b7d4c3a8e6f0b1d2c3e4f5a", True),  # nginx's $request_id
    ("3b241101-e2bb-4255-8caf-4136c566a962", True),  # a UUID
    ("trace:abc.DEF_123", True),
    ("a" * 128, True),
    ("a" * 129, False),  # too long
    ("two words", False),
    ("<script>", False),
    ("", False),
    ("id\u00e9", False),  # not ASCII
])
def test_an_id_is_kept_only_when_safe(make_app, given, kept):
    client = make_app().test_client()
    r = client.get(f"{API}/accelerators/gb300", headers={"X-Request-ID": given})
    assert r.status_code == 401
    answered = r.headers["X-Request-ID"]
    if kept:
        assert answered == given
    else:
        assert MADE.fullmatch(answered), answered
    assert valid_request_id(given) == (given if kept else None)
    # the problem's body quotes the same id
    assert r.mimetype == "application/problem+json"
    assert r.json["request_id"] == answered


def test_every_answer_carries_one_and_each_request_its_own(make_app):
    application = make_app(OPEN_READS=True)
    client = application.test_client()
    answers = [client.get(f"{API}/accelerators/gb300"),        # JSON
               client.get("/"),                                 # a page
               client.get("/healthz"),
               client.get("/no/such/page"),                     # the web's 404 page
               client.get(f"{API}/no-such"),                    # the API's 404 problem
               client.post(f"{API}/price", json={"scenario": {"accelerator": 3}}),  # 422
               client.get("/metrics")]
    ids = [a.headers.get("X-Request-ID") for a in answers]
    assert all(i and MADE.fullmatch(i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    for a in answers:
        if a.mimetype == "application/problem+json":
            assert a.json["request_id"] == a.headers["X-Request-ID"]


def _boom_app(db, **config):
    application = create_app({"DATABASE_URL": db, "TESTING": False, "OPEN_READS": True,
                              "PROPAGATE_EXCEPTIONS": False, **config})

    @application.get("/boom")
    def boom():
        logging.getLogger("costmodel.api").warning("about to fail")
        raise RuntimeError("kaboom")
    return application


def test_every_log_line_of_a_request_has_its_id_as_json(db, capsys):
    application = _boom_app(db, LOG_FORMAT="json")
    try:
        r = application.test_client().get("/boom", headers={"X-Request-ID": "req-json-1"})
        assert r.status_code == 500
        assert r.json["request_id"] == "req-json-1"
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()
                 if line.startswith("{")]
        ours = [x for x in lines if x.get("request_id") == "req-json-1"]
        assert [x["message"] for x in ours] == ["about to fail", "unexpected error on GET /boom"]
        assert [x["level"] for x in ours] == ["warning", "error"]
        assert "RuntimeError: kaboom" in ours[1]["exception"]
        assert ours[1]["logger"] == "costmodel.api"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", ours[0]["time"])
    finally:
        application.extensions["costmodel"].dispose()
        configure("text")


def test_text_lines_carry_the_id_too(db, capsys):
    application = _boom_app(db, LOG_FORMAT="text")
    try:
        application.test_client().get("/boom", headers={"X-Request-ID": "req-text-1"})
        err = capsys.readouterr().err
        lines = [x for x in err.splitlines() if "[req-text-1]" in x]
        assert len(lines) == 2 and "WARNING costmodel.api [req-text-1] about to fail" in lines[0]
        assert "Traceback" in err and "RuntimeError: kaboom" in err
    finally:
        application.extensions["costmodel"].dispose()


def test_the_access_log_is_one_line_a_request_when_asked(db, capsys, monkeypatch):
    monkeypatch.setenv("COSTMODEL_ACCESS_LOG", "1")
    application = create_app({"DATABASE_URL": db, "TESTING": True, "OPEN_READS": True,
                              "LOG_FORMAT": "json"})
    try:
        r = application.test_client().get(f"{API}/accelerators/gb300",
                                          headers={"X-Request-ID": "req-access-1"})
        assert r.status_code == 200
        lines = [json.loads(x) for x in capsys.readouterr().err.splitlines()
                 if x.startswith("{")]
        access = [x for x in lines if x["logger"] == "costmodel.access"]
        assert len(access) == 1
        line = access[0]
        assert (line["request_id"], line["method"], line["path"], line["status"]) == \
            ("req-access-1", "GET", "/api/v1/accelerators/gb300", 200)
    finally:
        application.extensions["costmodel"].dispose()
        configure("text")


def test_a_bad_log_format_is_refused_when_the_service_starts(monkeypatch):
    monkeypatch.setenv("COSTMODEL_LOG_FORMAT", "xml")
    with pytest.raises(ValueError, match="COSTMODEL_LOG_FORMAT='xml': expected json or text"):
        create_app({"DATABASE_URL": "sqlite://", "TESTING": True})


def test_outside_a_request_the_json_id_is_null():
    record = logging.LogRecord("costmodel.x", logging.INFO, __file__, 1, "hello %s", ("you",),
                               None)
    out = json.loads(JSONFormatter().format(record))
    assert out["message"] == "hello you" and out["request_id"] is None
