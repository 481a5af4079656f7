"""Slow clients behind nginx (deploy/nginx.conf): a client trickling its request is closed,
and normal requests keep being answered meanwhile.

gunicorn (2 workers x 4 threads) and nginx run as subprocesses on loopback ports, nginx with
deploy/nginx.conf as bench/slowclients.py derives it (ports, user and prefix substituted;
client_header_timeout and client_body_timeout shortened to 2 s where a test waits for them).
Outcomes only: nothing here asserts how fast an answer comes. Skipped where nginx is not
installed (Debian package nginx-light), unless COSTMODEL_REQUIRE_NGINX is set (as .ci/run
does, after installing it).
"""
from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import bench_module

NGINX = Path("/usr/sbin/nginx")

if not NGINX.exists() and os.environ.get("COSTMODEL_REQUIRE_NGINX"):
    raise RuntimeError("COSTMODEL_REQUIRE_NGINX is set but /usr/sbin/nginx is not installed")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not NGINX.exists(), reason="nginx is not installed")]


sc = bench_module("slowclients.py")  # the test starts the servers the way it does


@pytest.fixture(scope="module")
def gunicorn(tmp_path_factory):
    folder = tmp_path_factory.mktemp("slow-clients")
    env = sc.prepare_database(folder)
    port = sc.free_port()
    proc = sc.start_gunicorn(port, env, folder / "gunicorn.log")
    yield port, folder
    sc.stop(proc)


@pytest.fixture
def nginx(gunicorn, tmp_path):
    """Start nginx in front of the module's gunicorn: ``nginx(**timeouts)`` -> its port."""
    upstream, _ = gunicorn
    procs = []

    def start(**timeouts: str) -> int:
        port = sc.free_port()
        config = sc.nginx_config(port, upstream, **timeouts)
        procs.append(sc.start_nginx(tmp_path / f"nginx{len(procs)}", config, port))
        return port

    yield start
    for proc in procs:
        sc.stop(proc)


def _ended_by_server(s: socket.socket) -> bool:
    """True once the server closed or reset the connection (it never answers data here)."""
    try:
        return s.recv(4096) == b""
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


def _trickle_until_closed(port: int, payload: bytes, interval: float, bound: float) -> bool:
    """Send ``payload`` a byte every ``interval``; whether the server ended the connection
    within ``bound`` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.setblocking(False)
        deadline = time.monotonic() + bound
        for byte in payload:
            if time.monotonic() > deadline:
                return False
            try:
                s.send(bytes([byte]))
            except (ConnectionResetError, BrokenPipeError):
                return True
            except BlockingIOError:
                pass
            time.sleep(interval)
            if _ended_by_server(s):
                return True
    return False


def test_a_client_trickling_its_headers_is_closed(nginx):
    port = nginx(header_timeout="2s", body_timeout="2s")
    # a byte every 0.2 s: never a pause that a timeout between reads would catch
    assert _trickle_until_closed(port, sc.HEADER_TRICKLE, 0.2, bound=10)


def _answer(s: socket.socket, wait: float) -> bytes | None:
    """The status code the server answers on ``s`` within ``wait`` s; b"" when it closes or
    resets the connection without one; None when it does neither."""
    s.settimeout(wait)
    try:
        data = s.recv(4096)
    except TimeoutError:
        return None
    except (ConnectionResetError, BrokenPipeError):
        return b""
    return data.split(b" ", 2)[1] if data.startswith(b"HTTP/") else b""


def test_a_client_stalling_its_body_is_closed(nginx):
    port = nginx(header_timeout="2s", body_timeout="2s")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(sc.BODY_TRICKLE_HEADER + b"{")
        # closed (nginx logs a 408 and sends nothing, or answers 408 first)
        assert _answer(s, 10) in (b"", b"408")


def test_one_address_holds_at_most_32_requests_in_progress(nginx):
    port = nginx()  # the deployed body timeout (10 s): the 32 held stay held meanwhile
    conns = []
    try:
        for _ in range(40):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(sc.BODY_TRICKLE_HEADER + b"{")  # a body under way: counted
            conns.append(s)
        # what the server says within 2 s (the held ones would be closed after 10 s)
        answers = dict.fromkeys(conns)
        with selectors.DefaultSelector() as sel:
            for s in conns:
                sel.register(s, selectors.EVENT_READ)
            deadline = time.monotonic() + 2
            while sel.get_map() and (left := deadline - time.monotonic()) > 0:
                for key, _ in sel.select(left):
                    answers[key.fileobj] = _answer(key.fileobj, 1)
                    sel.unregister(key.fileobj)
        assert list(answers.values()).count(b"429") == 8
        assert list(answers.values()).count(None) == 32
    finally:
        for s in conns:
            s.close()


def test_normal_requests_answer_during_16_trickles(nginx):
    port = nginx()  # the deployed timeouts (10 s): the trickles outlast the requests below
    trickles = []
    try:
        for _ in range(16):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(sc.HEADER_TRICKLE[:1])
            s.setblocking(False)
            trickles.append(s)
        stop = threading.Event()

        def keep_trickling() -> None:
            for byte in sc.HEADER_TRICKLE[1:20]:
                if stop.wait(0.5):
                    return
                for s in trickles:
                    with contextlib.suppress(OSError):
                        s.send(bytes([byte]))

        sender = threading.Thread(target=keep_trickling, daemon=True)
        sender.start()
        try:
            assert sc.request(port, "GET", "/healthz", timeout=10) == 200
            assert sc.request(port, "POST", "/api/v1/price", sc.PRICE_BODY, timeout=30) == 200
            # the requests above were answered while the trickles were still in progress
            assert not any(_ended_by_server(s) for s in trickles)
        finally:
            stop.set()
            sender.join(5)
    finally:
        for s in trickles:
            s.close()


def test_nginx_refuses_a_body_over_its_limit_as_problem_json(gunicorn, nginx):
    # the substitutions the test and the benchmark make all find their line (or raise)
    upstream, _ = gunicorn
    config = sc.nginx_config(8080, upstream, header_timeout="2s", body_timeout="2s")
    assert "client_header_timeout 2s;" in config and "proxy_request_buffering on;" in config
    port = nginx()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        # refused on its Content-Length (3 MiB at most here), before any of it is sent
        s.sendall(b"POST /api/v1/price HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 4194304\r\n\r\n")
        data = b""
        while b"}" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert b"Content-Type: application/problem+json" in head
    assert b"/problems/payload-too-large" in body
