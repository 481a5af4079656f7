"""Sign-in with an API key, sign-out, CSRF, and who may read or write the pages.

A person signs in by pasting an API key; it is verified as the API verifies a bearer token
(:func:`costmodel.app.keys.verify`: the key's digest against the store, revoked keys
refused). The session cookie (Flask's, signed with ``SECRET_KEY``) then holds the key's id
and its stored digest, never the key itself: a stolen cookie is not an API key, and every
request that needs the identity reads the key's row again (one primary-key query), so a key
revoked through the API or the CLI stops working on its next page, on every worker.

Sessions end. The cookie also holds the key's session generation when it signed in and the
time it signed in; each page compares both with the key's row (read anyway):

- signing out moves the key's generation on (``api_keys.session_generation``), which ends
  every session of that key, in every browser and on every worker and host: a copy of the
  cookie taken before sign-out is refused after it (401, in words);
- a session older than its lifetime (``COSTMODEL_SESSION_HOURS``, default 12: absolute,
  from sign-in, whatever the activity) is refused, and the cookie's signature expires with
  it (``PERMANENT_SESSION_LIFETIME``).

Access follows the API (:mod:`costmodel.api.auth`): reads are open when the operator opened
them (``OPEN_READS``: ``costmodel serve`` on a loopback address), else they need a signed-in
viewer or better; writes need an editor, always.

Every POST of the ``web`` blueprint carries the session's CSRF token in a hidden field
(``csrf_field()`` in a template) and is refused (400, in words) without it.
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from flask import (
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask.sessions import SecureCookieSessionInterface
from markupsafe import Markup, escape

from ..app.keys import check_session, end_sessions, role_allows, verify
from ..http.services import services
from .site import blueprint

__all__ = ["Refused", "SignedIn", "signed_in", "need", "csrf_token", "SECRET_ENV",
           "SESSION_ENV", "session_seconds"]

log = logging.getLogger("costmodel.web")
SECRET_ENV = "COSTMODEL_SECRET_KEY"
# One secret per process when the operator gives none: sessions survive nothing but this
# process, and several workers would reject each other's cookies (docs/getting-started.md#web-app).
_PROCESS_SECRET = secrets.token_hex(32)
CSRF_FIELD = "csrf_token"
SESSION_ENV = "COSTMODEL_SESSION_HOURS"
SESSION_HOURS = 12.0  # the default lifetime of a session, from sign-in
_NEEDED = {"read": "viewer", "write": "editor"}


@dataclass(frozen=True)
class SignedIn:
    """Who the session's key belongs to, as read from the store on this request."""
    key_id: int | None
    name: str
    role: str


ANONYMOUS = SignedIn(None, "anonymous", "viewer")  # an open read on loopback


class Refused(Exception):
    """A page refused: ``status`` (400, 401, 403) and the reason in words."""

    def __init__(self, status: int, message: str, *, title: str | None = None):
        super().__init__(message)
        self.status, self.message = status, message
        self.title = title or {400: "Form not accepted", 401: "Sign in needed",
                               403: "Not allowed"}.get(status, "Refused")


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _plain_http_on_loopback() -> bool:
    """A plain-http request from this machine to this machine (``make run``)."""
    host = urlsplit(f"//{request.host}").hostname
    return request.scheme == "http" and _loopback(host) and _loopback(request.remote_addr)


class _CookieSessions(SecureCookieSessionInterface):
    """Flask's signed cookie, HttpOnly and SameSite=Lax (set in :func:`_configure`), and
    Secure except on plain http between loopback addresses."""

    def get_cookie_secure(self, app) -> bool:
        # A browser never sends back a Secure cookie it received over plain http (except on
        # localhost), so sign-in at http://127.0.0.1:8000 (`make run`) would never stick.
        # Anywhere else (behind the TLS proxy, whose X-Forwarded-Proto gunicorn trusts) the
        # cookie must never travel in clear: it is a credential for as long as the key lives.
        return not _plain_http_on_loopback()

    def get_signing_serializer(self, app):
        # one serializer per secret (Flask makes one per request; the API never needs it)
        keys = (app.secret_key, tuple(app.config["SECRET_KEY_FALLBACKS"] or ()))
        cached = getattr(self, "_serializer", None)
        if cached is None or cached[0] != keys:
            cached = self._serializer = (keys, super().get_signing_serializer(app))
        return cached[1]

    def open_session(self, app, request):
        if not request.environ.get("HTTP_COOKIE") and self.get_signing_serializer(app):
            return self.session_class()  # no cookie: a new session, as Flask's own answers
        return super().open_session(app, request)

    def save_session(self, app, session, response) -> None:
        if not session and not session.modified and not session.accessed:
            return  # Flask's own does nothing then either (no cookie, no Vary)
        super().save_session(app, session, response)


@blueprint.record_once
def _configure(state) -> None:
    app = state.app
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = os.environ.get(SECRET_ENV) or _PROCESS_SECRET
    app.config["SESSION_COOKIE_HTTPONLY"] = True
    app.config["SESSION_COOKIE_SAMESITE"] = "Lax"
    app.config.setdefault("SESSION_SECONDS", session_seconds(app))
    # the cookie's signature is refused past the lifetime too (Flask reads it as max_age)
    app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(seconds=app.config["SESSION_SECONDS"])
    app.session_interface = _CookieSessions()


def session_seconds(app) -> int:
    """How long a session lasts from sign-in [s]: the app's ``SESSION_SECONDS``, else
    ``COSTMODEL_SESSION_HOURS`` (default 12)."""
    if app.config.get("SESSION_SECONDS"):
        return int(app.config["SESSION_SECONDS"])
    raw = os.environ.get(SESSION_ENV, "").strip()
    try:
        hours = float(raw) if raw else SESSION_HOURS
    except ValueError:
        raise ValueError(f"{SESSION_ENV} must be a number of hours, not {raw!r}") from None
    if not 0 < hours <= 24 * 366:
        raise ValueError(f"{SESSION_ENV} must be more than 0 and at most a year of hours, "
                         f"not {raw!r}")
    return int(hours * 3600)


# ---- who is signed in -----------------------------------------------------------------------

_IDENTITY = ("key_id", "key_digest", "generation", "issued_at")


def _current(issued: object) -> bool:
    """A session signed in at ``issued`` [Unix s] is still within its lifetime."""
    if not isinstance(issued, int) or isinstance(issued, bool):
        return False  # none: signed in before sessions had one, refused as ended
    age = time.time() - issued
    return -60 <= age < current_app.config["SESSION_SECONDS"]  # (a minute of clock skew)


def signed_in() -> SignedIn | None:
    """The session's key, read again from the store (once per request); None when signed
    out, when the key was revoked since, or when the session ended (signed out elsewhere,
    or past its lifetime): the session forgets the key then."""
    if "signed_in" in g:
        return g.signed_in
    who, why = None, None
    key_id, digest = session.get("key_id"), session.get("key_digest")
    if key_id is not None:
        # the key read again: still live, the one signed in with, at this generation, in time
        state, holder = check_session(services(), key_id, digest, session.get("generation"),
                                      within_lifetime=_current(session.get("issued_at")))
        if holder is not None:
            who = SignedIn(holder.key_id, holder.name, holder.role)
        else:
            why = state.value  # "key_lost" or "session_ended": said on the next page
        if who is None:
            for k in _IDENTITY:
                session.pop(k, None)
            session[why] = True  # said once, on the next refusal or sign-in page
    g.signed_in = who
    return who


def need(access: str) -> SignedIn:
    """The caller, allowed ``access`` (read | write); raises :class:`Refused` in words."""
    who = signed_in()
    if who is None:
        if access == "read" and current_app.config.get("OPEN_READS"):
            return ANONYMOUS
        lost = " Your key was revoked or removed since you signed in." if session.pop(
            "key_lost", False) else ""
        if session.pop("session_ended", False):
            lost += (f" Your session ended: signed out (signing out ends every session of "
                     f"the key, in every browser), or signed in more than "
                     f"{_hours()} ago.")
        doing = "see saved scenarios" if access == "read" else "save"
        raise Refused(401, f"Sign in with an API key to {doing}: reads are open only on the "
                           f"operator's say-so (a loopback address), and writing needs an "
                           f"editor key.{lost}" + (" Nothing was saved." if access == "write"
                                                   else ""))
    needed = _NEEDED[access]
    if not role_allows(who.role, needed):
        raise Refused(403, f"This needs the {needed} role; the key {who.name!r} you are "
                           f"signed in with has the {who.role} role."
                      + (" Nothing was saved." if access == "write" else ""))
    return who


# ---- CSRF -----------------------------------------------------------------------------------

def csrf_token() -> str:
    """This session's CSRF token (made on first use)."""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


@blueprint.app_template_global("csrf_field")
def csrf_field() -> Markup:
    """The hidden field every POST form of the pages carries."""
    return Markup(f'<input type="hidden" name="{CSRF_FIELD}" '
                  f'value="{escape(csrf_token())}">')


@blueprint.app_template_global("signed_in")
def _signed_in_global() -> SignedIn | None:
    """For the header of every page: an error page (the database down) must still render."""
    try:
        return signed_in()
    except Exception:  # logged; the page says "Sign in" instead
        log.warning("who is signed in could not be read", exc_info=True)
        return None


@blueprint.before_request
def _check_csrf():
    if request.method != "POST":
        return None
    sent, kept = request.form.get(CSRF_FIELD), session.get("csrf")
    if not sent or not isinstance(kept, str) or not hmac.compare_digest(sent, kept):
        why = "it carries no security token" if not sent else \
            "its security token does not match this browser's session"
        return _refusal(Refused(400, f"The form was not accepted: {why} (a form from another "
                                     f"site, or a page opened before the session changed). "
                                     f"Nothing was saved. Reload the page and send it again."))
    return None


# ---- pages ----------------------------------------------------------------------------------

def _refusal(exc: Refused):
    return render_template("web/signin.html", refused=exc, next=_next_target(),
                           ), exc.status


@blueprint.errorhandler(Refused)
def _refused(exc: Refused):
    return _refusal(exc)


def _next_target() -> str:
    """Where to go after signing in: a path on this site only (never another host)."""
    target = request.values.get("next") or (request.full_path if request.method == "GET"
                                             else request.referrer or "")
    parts = urlsplit(target)
    if parts.netloc and parts.netloc == request.host and parts.scheme in ("http", "https"):
        parts = parts._replace(scheme="", netloc="")  # this site's own page (the referrer)
    # "/\\host" is "//host" to a browser: another site
    if parts.scheme or parts.netloc or not parts.path.startswith("/") or "\\" in target or \
            parts.path.startswith("//") or parts.path.startswith("/signin"):
        return url_for("web.saved_list")
    return parts.geturl().rstrip("?")


@blueprint.get("/signin")
def signin():
    out = signed_in() is None
    lost = out and session.pop("key_lost", False)
    ended = out and session.pop("session_ended", False)
    return render_template("web/signin.html", next=_next_target(), key_lost=lost,
                           session_ended=ended)


@blueprint.app_template_global("session_lifetime")
def _hours() -> str:
    """A session's lifetime in words: "12 hours"."""
    hours = current_app.config["SESSION_SECONDS"] / 3600
    return f"{hours:g} hour" + ("" if hours == 1 else "s")


@blueprint.post("/signin")
def signin_post():
    token = (request.form.get("api_key") or "").strip()
    if not token:
        return render_template("web/signin.html", next=_next_target(),
                               error="Paste an API key (it starts with cm_)."), 400
    holder = verify(services(), token)
    who = None if holder is None else (holder.key_id, holder.digest, holder.generation)
    if who is None:
        # the API's words for a bad bearer token
        return render_template("web/signin.html", next=_next_target(),
                               error="The API key is not valid or was revoked."), 401
    session.clear()  # a fresh session (and CSRF token) for the new identity
    session["key_id"], session["key_digest"], session["generation"] = who
    session["issued_at"] = int(time.time())
    csrf_token()
    return redirect(_next_target(), code=303)


@blueprint.post("/signout")
def signout():
    """Sign out: every session of the key ends, here and in any other browser or worker
    (a copy of the cookie is refused after this)."""
    who = signed_in()
    if who is not None and who.key_id is not None:
        end_sessions(services(), who.key_id)
    session.clear()
    return redirect(url_for("web.signin", signed_out=1), code=303)
