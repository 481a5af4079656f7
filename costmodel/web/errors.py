"""Errors on the pages: a plain page in words, never a stack trace.

A page's own input problems are shown beside their fields by the page itself; what reaches
these handlers is the rest: an unknown address or saved scenario (404), a refused request
(4xx in words) and anything unexpected (500: logged with its trace, the page says only that
the failure is logged).
"""
from __future__ import annotations

import logging

from flask import render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import NotFound as UnknownAddress

from ..app.saved import NotFound
from ..app.services import StoreUnreachable, StoreUnwritable
from ..model.errors import InputError
from .site import blueprint

__all__ = ["error_page"]

log = logging.getLogger("costmodel.web")
_API_PATHS = ("/api/", "/healthz")  # answered as problem+json, whoever asks

_WORDS = {
    400: ("Request not understood", "The address or form could not be read."),
    404: ("Not found", "There is no page or saved scenario at this address."),
    405: ("Not allowed here", "This page cannot be used that way."),
    413: ("Too large", "What was sent is larger than the service accepts."),
    422: ("Cannot price this", "The inputs cannot be priced."),
    429: ("Too many requests", "Wait a moment and try again."),
    500: ("Something went wrong", "The server failed to answer this page; the failure is "
                                  "logged. Try again, or go back to the previous page."),
    503: ("The store cannot write", "Nothing was saved: the service cannot write to its "
                                    "database just now. Pages and saved scenarios can still "
                                    "be read; try saving again later."),
}


def error_page(status: int, detail: str | None = None, title: str | None = None):
    """The error page for ``status``, with ``detail`` in words (a default otherwise) under
    ``title`` (the status's own otherwise)."""
    own, words = _WORDS.get(status, ("Error", "The request could not be answered."))
    return render_template("web/error.html", status=status, title=title or own,
                           detail=detail or words), status


@blueprint.errorhandler(NotFound)
def _not_found(exc: NotFound):
    return error_page(404, str(exc))


@blueprint.app_errorhandler(UnknownAddress)
def _unknown_address(exc: UnknownAddress):
    """An address no route serves: a page in words for a browser; the API's problem+json for
    the API's paths and for clients that do not ask for HTML."""
    if request.path.startswith(_API_PATHS) or not request.accept_mimetypes.accept_html:
        from ..http.errors import Problem, problem_response
        return problem_response(Problem(404, exc.name, exc.description or ""))
    return error_page(404)


@blueprint.errorhandler(InputError)
def _input(exc: InputError):
    # a page shows its own fields' errors; one that escapes it is said in words
    return error_page(422, "; ".join(f"{p}: {m}" if p else m for p, m in exc.errors))


@blueprint.errorhandler(StoreUnwritable)
def _unwritable(exc: StoreUnwritable):
    """A save the store refused (disk full, read-only database): nothing was kept."""
    from ..http.errors import UNWRITABLE_RETRY_AFTER
    log.error("the store cannot write on page %s %s: %s", request.method, request.path,
              exc.reason)
    words = _WORDS[503][1]
    body, status = error_page(503, f"{words} ({exc.reason[0].upper()}{exc.reason[1:]}.)")
    return body, status, {"Retry-After": str(UNWRITABLE_RETRY_AFTER)}


@blueprint.errorhandler(StoreUnreachable)
def _unreachable(exc: StoreUnreachable):
    """The database did not answer: nothing was done; the page says to try again."""
    from ..http.errors import UNREACHABLE_RETRY_AFTER
    log.error("the store is not answering on page %s %s: %s", request.method, request.path,
              exc.reason)
    body, status = error_page(
        503, f"The service cannot reach its database just now ({exc.reason}); nothing was "
             f"done. Try again in a few seconds.", title="The service is not answering")
    return body, status, {"Retry-After": str(UNREACHABLE_RETRY_AFTER)}


@blueprint.errorhandler(HTTPException)
def _http(exc: HTTPException):
    status = exc.code or 500
    if status >= 500:
        return error_page(status)
    return error_page(status, _WORDS.get(status, (None, exc.description))[1])


@blueprint.errorhandler(Exception)
def _unexpected(exc: Exception):
    # the API's problem (an auth refusal) keeps its status and words
    from ..http.errors import Problem
    if isinstance(exc, Problem):
        return error_page(exc.status, exc.detail or exc.title)
    log.exception("unexpected error on page %s %s", request.method, request.path)
    return error_page(500)
