"""API keys and roles: viewer < editor < admin. Reads may be open when the operator says so
(``COSTMODEL_OPEN_READS``, or ``costmodel serve`` on a loopback address); writes never are.

Revocation, on every worker (gunicorn's or another host's):

- writes and key management (access ``write`` and ``admin``) read the key's row from the
  database on every request: a revoked key is refused (401) on its next such request;
- reads may answer from the worker's cache of keys it verified, for at most
  ``KEY_CACHE_SECONDS`` (``COSTMODEL_KEY_CACHE_SECONDS``, default 2; ``0`` checks every read):
  a revoked key can go on reading for up to that long on a worker that verified it just
  before. A check that finds a key revoked drops it from that worker's cache at once, and the
  worker that revokes a key forgets its whole cache.

The check is one indexed query (by the key's prefix); it costs about as much as a cached price
answer, which is why reads keep the short cache. The cache belongs to the app
(``app.extensions["costmodel.keys"]``), not to the process.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from flask import current_app, request

from ..app.keys import role_allows, verify
from ..http.errors import Problem
from ..http.services import services

__all__ = ["Principal", "require", "NEEDED_ROLE", "VerifiedKeys", "KEY_CACHE_SECONDS",
           "forget_keys", "QUERY_KEY_ENDPOINTS"]

NEEDED_ROLE = {"read": "viewer", "write": "editor", "admin": "admin"}
# endpoints that also take the key as ?key= (the spreadsheet feed: Google Sheets' IMPORTDATA
# sends no header); nowhere else, as a key in a URL is written in logs and histories
QUERY_KEY_ENDPOINTS: set[str] = set()
KEY_CACHE_SECONDS = 2.0  # the default: how long a worker's reads trust a key it verified
EXTENSION = "costmodel.keys"
# what a 401 tells the caller: keys are made by an operator on the server (the CLI), or by an
# admin key through POST /api/v1/keys
HOW_TO_GET_A_KEY = ("an operator creates one with `costmodel keys create --name NAME --role "
                    "viewer|editor|admin` (the token is shown once), or an admin through "
                    "POST /api/v1/keys")


@dataclass(frozen=True)
class Principal:
    name: str
    role: str
    key_id: int | None = None  # None: an anonymous read


ANONYMOUS = Principal("anonymous", "viewer")  # an open read (frozen: one serves them all)


class VerifiedKeys:
    """One app's cache of verified keys, by the SHA-256 of the token, for reads only."""

    def __init__(self, seconds: float = KEY_CACHE_SECONDS, size: int = 10_000):
        self.seconds, self._size = float(seconds), size
        self._items: dict[str, tuple[float, Principal]] = {}

    def get(self, digest: str) -> Principal | None:
        hit = self._items.get(digest)
        return hit[1] if hit is not None and hit[0] > time.monotonic() else None

    def put(self, digest: str, principal: Principal) -> None:
        if self.seconds <= 0:
            return
        if len(self._items) >= self._size:
            self._items.clear()
        self._items[digest] = (time.monotonic() + self.seconds, principal)

    def drop(self, digest: str) -> None:
        self._items.pop(digest, None)

    def clear(self) -> None:
        self._items.clear()


def forget_keys() -> None:
    """The current app's key cache forgets every key (after a revocation): this worker
    refuses a revoked key at once; writes and key management check the database anyway."""
    current_app.extensions[EXTENSION].clear()


def _token() -> str | None:
    # (the object behind the proxy: an attribute read through it costs 0.7 us more)
    environ = request._get_current_object().environ
    if "HTTP_AUTHORIZATION" not in environ and "HTTP_X_API_KEY" not in environ:
        if QUERY_KEY_ENDPOINTS and request.endpoint in QUERY_KEY_ENDPOINTS:
            return request.args.get("key") or None
        return None  # neither header sent (what the lookups below would find)
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("X-API-Key") or None


def require(access: str) -> Principal | None:
    """The caller, checked for ``access`` (public | read | write | admin); raises Problem."""
    if access == "public":
        return None
    token = _token()
    if token is None:
        if access == "read" and current_app._get_current_object().config.get("OPEN_READS"):
            return ANONYMOUS  # (the app behind the proxy, as in _token)
        raise Problem(401, "Unauthorized", f"an API key is required: send the header "
                                           f"'Authorization: Bearer <key>' (or 'X-API-Key: "
                                           f"<key>'); {HOW_TO_GET_A_KEY}",
                      headers={"WWW-Authenticate": 'Bearer realm="costmodel"'})
    principal = _principal(token, cached=access == "read")
    if principal is None:
        raise Problem(401, "Unauthorized", f"the API key is not valid or was revoked; "
                                           f"{HOW_TO_GET_A_KEY}",
                      headers={"WWW-Authenticate": 'Bearer realm="costmodel", '
                                                   'error="invalid_token"'})
    needed = NEEDED_ROLE[access]
    if not role_allows(principal.role, needed):
        raise Problem(403, "Forbidden", f"this needs the {needed} role; the key "
                                        f"{principal.name!r} has {principal.role}")
    return principal


def _principal(token: str, *, cached: bool) -> Principal | None:
    """The live key of ``token``: from the database, or (``cached``, reads) from this app's
    cache of keys verified within KEY_CACHE_SECONDS."""
    keys: VerifiedKeys = current_app.extensions[EXTENSION]
    digest = hashlib.sha256(token.encode()).hexdigest()
    if cached:
        hit = keys.get(digest)
        if hit is not None:
            return hit
    holder = verify(services(), token)
    principal = Principal(holder.name, holder.role, holder.key_id) if holder is not None \
        else None
    if principal is None:
        keys.drop(digest)  # revoked: this worker's reads stop trusting it at once too
    else:
        keys.put(digest, principal)
    return principal
