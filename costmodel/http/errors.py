"""RFC 9457 problem details for every error the API answers, and nothing else leaking."""
from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from flask import Flask, Response, json, request
from werkzeug.exceptions import HTTPException

from ..app.hints import with_hints
from ..model.errors import InputError, UnreachablePoint, bounded
from ..store.health import StoreUnreachable, StoreUnwritable
from ..store.repo import Conflict, NotFound
from .logs import request_id

__all__ = ["Problem", "problem_response", "input_problem", "register_error_handlers",
           "PROBLEM_TYPES", "unwritable_problem", "unreachable_problem"]

log = logging.getLogger("costmodel.api")
_BASE = "https://costmodel.dev/problems/"
PROBLEM_TYPES = {
    400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found",
    405: "method-not-allowed", 409: "conflict", 412: "precondition-failed",
    413: "payload-too-large", 415: "unsupported-media-type", 422: "invalid-input",
    429: "rate-limited", 500: "internal-error", 503: "service-unavailable",
}
UNWRITABLE_RETRY_AFTER = 60  # [s] a full disk or a read-only database takes a person to fix
UNREACHABLE_RETRY_AFTER = 5  # [s] a database restarting is back in seconds


def unwritable_problem(exc: StoreUnwritable) -> Problem:
    """503: the store cannot write (disk full, read-only); nothing of the request was kept."""
    return Problem(503, "The store cannot write",
                   f"{exc.reason}: nothing was saved (reads still answer); try again later",
                   kind="store-unwritable",
                   headers={"Retry-After": str(UNWRITABLE_RETRY_AFTER)})


def unreachable_problem(exc: StoreUnreachable) -> Problem:
    """503: the database did not answer; nothing of the request was done."""
    return Problem(503, "The store is not answering",
                   f"{exc.reason}: nothing of this request was done; try again shortly",
                   kind="store-unreachable",
                   headers={"Retry-After": str(UNREACHABLE_RETRY_AFTER)})


class Problem(Exception):
    """An error answered as ``application/problem+json``.

    ``errors`` lists ``{"path": dotted field path, "message": ...}`` for input problems.
    """

    def __init__(self, status: int, title: str, detail: str = "", *,
                 errors: list[dict[str, str]] | None = None, kind: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(detail or title)
        self.status, self.title, self.detail = status, title, detail
        self.errors = errors or []
        self.kind = kind or PROBLEM_TYPES.get(status, "error")
        self.headers = headers or {}

    @classmethod
    def from_input(cls, exc: InputError, prefix: str | None = None) -> Problem:
        """A 422 listing the error's paths, each after ``prefix`` (default: the face's name
        of the scenario the error is about, when marked); an unreachable operating point has
        its own problem type."""
        prefix = (exc.subject or "") if prefix is None else prefix
        dotted = prefix.endswith("overrides.")  # each path is one override's dotted key
        errors = [{"path": f"{prefix}{p}" if p else prefix.rstrip("."), "message": m}
                  for p, m in with_hints(exc.errors, dotted=dotted)]
        unreachable = isinstance(exc, UnreachablePoint)
        return cls(422, "Operating point unreachable" if unreachable else "Invalid input",
                   "; ".join(f"{e['path']}: {e['message']}" if e["path"] else e["message"]
                             for e in errors),
                   errors=errors, kind="unreachable" if unreachable else "invalid-input")


def input_problem(errors: Iterable[tuple[str, str]], title: str = "Invalid input",
                  prefix: str = "") -> Problem:
    """A 422 listing (path, message) errors, bounded as every error is
    (:func:`~costmodel.model.errors.bounded`: at most MAX_ERRORS, then a count of the rest)."""
    listed = [{"path": p or "body", "message": m} for p, m in bounded(errors)]
    return Problem(422, title, prefix + "; ".join(f"{e['path']}: {e['message']}"
                                                  for e in listed), errors=listed)


def problem_response(p: Problem) -> Response:
    body: dict[str, Any] = {"type": _BASE + p.kind, "title": p.title, "status": p.status,
                            "detail": p.detail or p.title, "instance": request.path}
    if p.errors:
        body["errors"] = p.errors
    body["request_id"] = request_id()  # the answer's X-Request-ID, to quote when reporting it
    resp = Response(json.dumps(body), status=p.status, mimetype="application/problem+json")
    for k, v in p.headers.items():
        resp.headers[k] = v
    return resp


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(p: Problem):
        return problem_response(p)

    @app.errorhandler(InputError)
    def _input(exc: InputError):
        return problem_response(Problem.from_input(exc))

    @app.errorhandler(NotFound)
    def _not_found(exc: NotFound):
        return problem_response(Problem(404, "Not found", str(exc)))

    @app.errorhandler(Conflict)
    def _conflict(exc: Conflict):
        return problem_response(Problem(409, "Conflict", str(exc)))

    @app.errorhandler(StoreUnwritable)
    def _unwritable(exc: StoreUnwritable):
        log.error("the store cannot write on %s %s: %s", request.method, request.path,
                  exc.reason)
        return problem_response(unwritable_problem(exc))

    @app.errorhandler(StoreUnreachable)
    def _unreachable(exc: StoreUnreachable):
        log.error("the store is not answering on %s %s: %s", request.method, request.path,
                  exc.reason)
        return problem_response(unreachable_problem(exc))

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        status = exc.code or 500
        detail = {413: f"the request body is larger than "
                       f"{app.config['MAX_CONTENT_LENGTH'] // 1024} KiB"}.get(
            status, exc.description or "")
        return problem_response(Problem(status, exc.name, detail,
                                        headers={"Allow": ", ".join(exc.valid_methods)}
                                        if getattr(exc, "valid_methods", None) else None))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        # the trace goes to the log, never to the client
        log.exception("unexpected error on %s %s", request.method, request.path)
        return problem_response(Problem(500, "Internal error",
                                        "the server failed to answer; the failure is logged"))
