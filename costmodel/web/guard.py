"""Pages that compute follow their API twin's limits: one rule for work, whatever face asks.

``@computes("POST", "/api/v1/quotes/compare")`` on a page's view: the caller (the signed-in
key, or the anonymous reader's address, :func:`costmodel.web.session.need`) is counted
against the same rate as the API's requests, and the page holds a heavy slot when its twin
is a heavy analysis (:data:`costmodel.http.limits.HEAVY`), through
:meth:`costmodel.http.limits.Limits.work`. A refusal is a 429 page in words with
``Retry-After``; every counted page carries the RateLimit headers. How much a request may
ask for (quotes, scenarios, draws) is the use cases' bound (:mod:`costmodel.app.caps`), said
beside the field that asked for more.

A page whose answer can take seconds where its twin's JSON does not (a workbook, a PDF:
``heavy=True``) holds a heavy slot too; a page that finds its work large only once its
form is read (a large task) takes one through :func:`heavy_if`.

A page that falls back to another guarded view (a download whose form has errors renders
its page) is counted once and takes one slot.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import wraps
from typing import Any

from flask import g

from ..http.errors import Problem
from ..http.limits import HEAVY, current_limits
from .errors import error_page
from .session import need

__all__ = ["computes", "heavy_if"]

_INSIDE = "costmodel_guarded"  # g: this request holds its count (and slot) already
_HELD = "costmodel_heavy_held"  # g: this request holds a heavy slot already


@contextmanager
def heavy_if(large: bool) -> Iterator[None]:
    """Hold a heavy slot while the block runs when ``large`` (and the request holds none
    yet): a 429 Problem, which the guard answers as its page, when none is free."""
    if not large or g.get(_HELD):
        yield
        return
    with current_limits().heavy():
        setattr(g, _HELD, True)
        try:
            yield
        finally:
            setattr(g, _HELD, False)


def computes(method: str, api_path: str, *, access: str = "read",
             heavy: bool = False) -> Callable:
    """Guard a page with the limits of its API twin ``method api_path`` (an OpenAPI path,
    as :data:`~costmodel.http.limits.HEAVY` names it); ``access``: read | write; ``heavy``:
    the page's answer (a workbook, a PDF) holds a heavy slot though its twin's JSON may
    not."""
    operation = (method, api_path)
    slot = heavy or operation in HEAVY

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any):
            if g.get(_INSIDE):
                return view(*args, **kwargs)
            who = need(access)  # refused (401/403) before it is counted, as the API's
            setattr(g, _INSIDE, True)
            try:
                with current_limits().work(who, operation):
                    if operation in HEAVY:
                        setattr(g, _HELD, True)  # work() holds its twin's slot
                    with heavy_if(True) if heavy else nullcontext():
                        return view(*args, **kwargs)
            except Problem as exc:
                if exc.status != 429:
                    raise
                page, status = error_page(429, exc.detail)
                return page, status, {"Retry-After": exc.headers["Retry-After"]}
        wrapper.api_twin = operation  # type: ignore[attr-defined]
        wrapper.heavy = slot  # type: ignore[attr-defined]
        return wrapper
    return decorate
