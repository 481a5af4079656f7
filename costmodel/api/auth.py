"""API keys and roles: viewer < editor < admin. Reads may be open when the operator says so
(``COSTMODEL_OPEN_READS``, or ``costmodel serve`` on a loopback address); writes never are."""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from flask import current_app, request

from ..store.repo import key_verify, role_allows
from .errors import Problem

__all__ = ["Principal", "require", "NEEDED_ROLE"]

NEEDED_ROLE = {"read": "viewer", "write": "editor", "admin": "admin"}
_CACHE_SECONDS = 10.0  # a revoked key stops working within this long on every worker


@dataclass(frozen=True)
class Principal:
    name: str
    role: str


_verified: dict[str, tuple[float, Principal]] = {}


def _token() -> str | None:
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
        if access == "read" and current_app.config.get("OPEN_READS"):
            return Principal("anonymous", "viewer")
        raise Problem(401, "Unauthorized", "an API key is required: send "
                                           "'Authorization: Bearer <key>' or 'X-API-Key'",
                      headers={"WWW-Authenticate": 'Bearer realm="costmodel"'})
    principal = _principal(token)
    if principal is None:
        raise Problem(401, "Unauthorized", "the API key is not valid or was revoked",
                      headers={"WWW-Authenticate": 'Bearer realm="costmodel", '
                                                   'error="invalid_token"'})
    needed = NEEDED_ROLE[access]
    if not role_allows(principal.role, needed):
        raise Problem(403, "Forbidden", f"this needs the {needed} role; the key "
                                        f"{principal.name!r} has {principal.role}")
    return principal


def _principal(token: str) -> Principal | None:
    digest = hashlib.sha256(token.encode()).hexdigest()
    now = time.monotonic()
    hit = _verified.get(digest)
    if hit is not None and hit[0] > now:
        return hit[1]
    services = current_app.extensions["costmodel"]
    with services.sessions(write=False) as session:
        row = key_verify(session, token)
        principal = Principal(row.name, row.role) if row is not None else None
    if principal is not None:
        if len(_verified) > 10000:
            _verified.clear()
        _verified[digest] = (now + _CACHE_SECONDS, principal)
    return principal
