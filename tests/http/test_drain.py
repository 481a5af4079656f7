"""A body the service answered without reading is read and dropped before the answer starts
(costmodel/http/drain.py), bounded in bytes and time; beyond, the answer closes the
connection. tests/http/test_hosts.py shows what it prevents through nginx and three hosts
(issue 38, item 1)."""
from __future__ import annotations

import io

import pytest

from costmodel.http.drain import DrainBody, drain_from_env


def _refusing(environ, start_response):
    """An application that answers 401 without reading the body."""
    start_response("401 UNAUTHORIZED", [("Content-Type", "application/problem+json")])
    return [b"{}"]


def _call(app, environ) -> list[tuple[str, str]]:
    seen: list = []
    app(environ, lambda status, headers, exc_info=None: seen.extend(headers))
    return seen


def _environ(body: bytes, *, length: bool = True, terminated: bool = True) -> dict:
    environ = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(body)}
    if length:
        environ["CONTENT_LENGTH"] = str(len(body))
    else:
        environ["HTTP_TRANSFER_ENCODING"] = "chunked"
    if terminated:
        environ["wsgi.input_terminated"] = True
    return environ


def test_a_refused_body_is_read_to_its_end_before_the_answer():
    body = b"x" * (3 * 2**20)  # 3 MiB: what nginx passes on
    environ = _environ(body)
    headers = _call(DrainBody(_refusing, limit=4 * 2**20, seconds=5), environ)
    assert environ["wsgi.input"].tell() == len(body)
    assert ("Connection", "close") not in headers


def test_a_chunked_body_is_read_to_its_end_within_the_bound():
    environ = _environ(b"y" * 100_000, length=False)
    assert ("Connection", "close") not in _call(DrainBody(_refusing, limit=2**20), environ)
    assert environ["wsgi.input"].tell() == 100_000


def test_a_body_past_the_bound_is_not_read_and_the_connection_closes():
    environ = _environ(b"z" * 5000)
    headers = _call(DrainBody(_refusing, limit=4096), environ)
    assert environ["wsgi.input"].tell() == 0
    assert ("Connection", "close") in headers
    # chunked, no length said: read up to the bound (plus one read), then closed
    environ = _environ(b"z" * 300_000, length=False)
    headers = _call(DrainBody(_refusing, limit=100_000), environ)
    assert ("Connection", "close") in headers
    assert environ["wsgi.input"].tell() == 2 * 65536  # the read that passed 100,000 bytes


def test_a_stream_that_does_not_end_at_the_body_is_left_alone():
    # a server whose input is the raw connection (no wsgi.input_terminated): reading on would
    # wait for the client's next request
    environ = _environ(b"w" * 1000, terminated=False)
    assert ("Connection", "close") not in _call(DrainBody(_refusing), environ)
    assert environ["wsgi.input"].tell() == 0


def test_what_the_application_read_is_not_read_twice():
    def reading(environ, start_response):
        environ["wsgi.input"].read(600)
        return _refusing(environ, start_response)
    environ = _environ(b"v" * 1000)
    _call(DrainBody(reading, limit=2**20), environ)
    assert environ["wsgi.input"].tell() == 1000


def test_the_bounds_come_from_the_environment():
    assert drain_from_env({}) == (32 * 2**20, 5.0)
    assert drain_from_env({"COSTMODEL_DRAIN_MAX": "1048576",
                           "COSTMODEL_DRAIN_SECONDS": "0.5"}) == (2**20, 0.5)
    for bad in ({"COSTMODEL_DRAIN_MAX": "lots"}, {"COSTMODEL_DRAIN_SECONDS": "-1"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            drain_from_env(bad)
