"""A request id on every request, and the service's log lines.

The request id is the ``X-Request-ID`` the request came with (nginx sets it to its own
``$request_id`` and logs it: deploy/nginx.conf) when that is 1 to 128 characters of letters,
digits and ``. _ : -``; otherwise (absent, too long, another character: nothing a client sends
reaches a log line unchecked) one is made (32 hex digits, as nginx's). It is answered in the
``X-Request-ID`` header of every answer, in the ``request_id`` member of every problem+json
body (:mod:`costmodel.http.errors`), and in every log line written while the request is
answered.

Log lines (the ``costmodel`` loggers) go to standard error, as text or, with
``COSTMODEL_LOG_FORMAT=json``, one JSON object a line (``time``, ``level``, ``logger``,
``message``, ``request_id``, ``exception``). ``COSTMODEL_ACCESS_LOG=1`` adds one line a
request (``costmodel.access``: method, path, status, seconds); off by default, since nginx
logs every request (with the same id). ``COSTMODEL_LOG_LEVEL`` (default ``INFO``).
"""
from __future__ import annotations

import logging
import os
import re
import sys
import time
import uuid
from datetime import UTC, datetime
from typing import Any

__all__ = ["install", "request_id", "valid_request_id", "JSONFormatter", "TextFormatter",
           "configure", "HEADER", "log_format_from_env"]

HEADER = "X-Request-ID"
MAX_LENGTH = 128
_SAFE = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_LENGTH}}}")
_ENVIRON = "costmodel.request_id"  # where the request's id is kept (its WSGI environ)
_HANDLER_MARK = "_costmodel_handler"

access_log = logging.getLogger("costmodel.access")


def valid_request_id(value: str | None) -> str | None:
    """``value`` if it may serve as a request id (1-128 of ``A-Za-z0-9._:-``), else None."""
    return value if value is not None and _SAFE.fullmatch(value) else None


def request_id() -> str | None:
    """The current request's id (None outside a request)."""
    from flask import has_request_context, request
    if not has_request_context():
        return None
    environ = request.environ
    rid = environ.get(_ENVIRON)
    if rid is None:  # asked before the app's first hook ran (a refusal of the router)
        rid = environ[_ENVIRON] = _take(environ)
    return rid


def _take(environ: dict[str, Any]) -> str:
    return valid_request_id(environ.get("HTTP_X_REQUEST_ID")) or uuid.uuid4().hex


# ---- log lines ---------------------------------------------------------------------------------

class _RequestIdFilter(logging.Filter):
    """Gives every record the id of the request it was written in (``-`` outside one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id() or "-"
        return True


class _Stderr(logging.StreamHandler):
    """Standard error as it is when a line is written (a test's capture, a daemon's)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:  # type: ignore[override]
        return sys.stderr


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")


class JSONFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, RFC 3339), level, logger, message, request_id, and
    the exception's trace when there is one; ``extra`` fields of the record as given."""

    _STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
        "message", "asctime", "request_id"}

    def format(self, record: logging.LogRecord) -> str:
        import orjson
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname.lower(), "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id()}
        for key, value in record.__dict__.items():
            if key not in self._STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, (str, int, float, bool)) or value is None \
                    else str(value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out).decode()


def log_format_from_env() -> str:
    """``COSTMODEL_LOG_FORMAT``: ``json`` or ``text`` (the default); anything else is an
    error, said when the service starts."""
    fmt = os.environ.get("COSTMODEL_LOG_FORMAT", "text").strip().lower() or "text"
    if fmt not in ("json", "text"):
        raise ValueError(f"COSTMODEL_LOG_FORMAT={fmt!r}: expected json or text")
    return fmt


def configure(fmt: str | None = None, level: str | None = None) -> logging.Handler:
    """The ``costmodel`` loggers write to standard error in ``fmt`` (once a process: a second
    call sets the format and level of the same handler)."""
    fmt = fmt or log_format_from_env()
    logger = logging.getLogger("costmodel")
    handler = next((h for h in logger.handlers if getattr(h, _HANDLER_MARK, False)), None)
    if handler is None:
        handler = _Stderr()
        setattr(handler, _HANDLER_MARK, True)
        handler.addFilter(_RequestIdFilter())
        logger.addHandler(handler)
    handler.setFormatter(JSONFormatter() if fmt == "json" else TextFormatter())
    level = (level or os.environ.get("COSTMODEL_LOG_LEVEL") or "INFO").upper()
    logger.setLevel(level)
    return handler


# ---- the app -----------------------------------------------------------------------------------

def install(app: Any, *, access: bool | None = None) -> None:
    """Give every request of ``app`` its id, answered in ``X-Request-ID``; log one line a
    request when ``access`` (default: ``COSTMODEL_ACCESS_LOG``)."""
    from flask import request
    if access is None:
        access = os.environ.get("COSTMODEL_ACCESS_LOG", "0").strip().lower() in (
            "1", "true", "yes", "on")
    configure(app.config.get("LOG_FORMAT"))

    @app.before_request
    def _request_id() -> None:
        environ = request.environ
        if _ENVIRON not in environ:
            environ[_ENVIRON] = _take(environ)
        if access:
            environ["costmodel.started"] = time.perf_counter()

    @app.after_request
    def _answer_id(response: Any) -> Any:
        rid = request_id()
        response.headers[HEADER] = rid
        if access:
            started = request.environ.get("costmodel.started")
            access_log.info("%s %s %s %.4f", request.method, request.path,
                            response.status_code,
                            time.perf_counter() - started if started else 0.0,
                            extra={"method": request.method, "path": request.path,
                                   "status": response.status_code})
        return response
