"""Whatever a client sends is read before it is answered, so that a refusal never looks like a
dead host.

A request refused before its body is read (401 without a key, 413 past the body limit, 429,
a 4xx of the route) would otherwise leave the body unread: the worker answers and closes, the
kernel resets the connection while nginx is still sending the body ("writev() failed (32:
Broken pipe) while sending request to upstream"), nginx answers 502, counts the failure against
a healthy host, tries the next one and marks hosts down (issue 38, item 1: one client's 1 to
3 MB bodies without a key took every host down for the others).

:class:`DrainBody` wraps the WSGI application: when the application starts its answer, the
rest of the body is read and discarded, bounded in bytes (``DRAIN_MAX``, at least nginx's
largest ``client_max_body_size``) and in time (``DRAIN_SECONDS``). Behind nginx the body was
buffered whole before the worker was chosen and comes over loopback at once. A body larger
than the bound, or not sent in time, is not waited for: the answer says ``Connection: close``
(the connection is closed after it; nginx speaks HTTP/1.0 to the hosts, so it always is).

It reads only a server's own bounded stream (``wsgi.input_terminated``: gunicorn's, which ends
at the request's Content-Length or last chunk); a server whose stream does not end there
(reading on would wait for the next request) is left as it is.
"""
from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["DrainBody", "DRAIN_MAX", "DRAIN_SECONDS", "drain_from_env"]

DRAIN_MAX = 32 * 2**20  # [bytes] above nginx's largest client_max_body_size (21m, reprice)
DRAIN_SECONDS = 5.0  # [s] behind nginx a body comes over loopback in milliseconds
_CHUNK = 64 * 1024  # [bytes] one read


def drain_from_env(environ: dict[str, str]) -> tuple[int, float]:
    """(``COSTMODEL_DRAIN_MAX`` [bytes], ``COSTMODEL_DRAIN_SECONDS`` [s]) from ``environ``,
    each with its default when unset; a ValueError names a bad one."""
    out: list[float] = []
    for name, default, kind in (("COSTMODEL_DRAIN_MAX", DRAIN_MAX, int),
                                ("COSTMODEL_DRAIN_SECONDS", DRAIN_SECONDS, float)):
        raw = environ.get(name, "").strip()
        try:
            value = kind(raw) if raw else default
        except ValueError:
            value = -1
        if value < 0:
            raise ValueError(f"{name}={raw}: expected a number >= 0")
        out.append(value)
    return int(out[0]), float(out[1])


class DrainBody:
    """WSGI middleware: the rest of a request's body read before its answer starts (at most
    ``limit`` bytes [bytes] within ``seconds`` [s]; beyond, ``Connection: close``)."""

    def __init__(self, app: Callable[..., Iterable[bytes]], limit: int = DRAIN_MAX,
                 seconds: float = DRAIN_SECONDS):
        self.app, self.limit, self.seconds = app, limit, seconds

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]):
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None):
            if not self.drain(environ):
                headers = [(k, v) for k, v in headers if k.lower() != "connection"]
                headers.append(("Connection", "close"))
            return start_response(status, headers, exc_info) if exc_info is not None \
                else start_response(status, headers)
        return self.app(environ, start)

    def drain(self, environ: dict[str, Any]) -> bool:
        """Read and drop what is left of the body; whether it was read to its end (True when
        there is none, or the server's stream cannot be read safely: nothing to do)."""
        if environ.get("_costmodel.drained"):
            return True  # start_response called again (an error after the start)
        environ["_costmodel.drained"] = True
        stream = environ.get("wsgi.input")
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if stream is None or not environ.get("wsgi.input_terminated") or not (
                length > 0 or chunked):
            return True
        if length > self.limit:
            return False  # not worth reading: close instead
        sock = environ.get("gunicorn.socket")
        before = _timeout_of(sock)
        deadline = time.monotonic() + self.seconds
        read = 0
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or read > self.limit:
                    return False
                if isinstance(sock, socket.socket):
                    sock.settimeout(left)  # one read never outlasts the bound
                data = stream.read(_CHUNK)
                if not data:
                    return True
                read += len(data)
        except Exception:  # a timeout, a reset, a malformed chunk: close rather than read on
            return False
        finally:
            if isinstance(sock, socket.socket):
                with contextlib.suppress(OSError):  # the peer may have gone meanwhile
                    sock.settimeout(before)


def _timeout_of(sock: Any) -> float | None:
    try:
        return sock.gettimeout() if isinstance(sock, socket.socket) else None
    except OSError:
        return None
