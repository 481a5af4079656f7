"""API keys, roles and the pages' sessions, for every face: create, list and revoke keys; find
the live key a token belongs to; check a signed-in session against its key; end every session
of a key.

Only a hash of a key's secret is stored (``costmodel.store.repo``); a token is shown once, when
the key is made. Roles: viewer < editor < admin, each allowed what the ones before it are.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from ..store import repo
from ..store.models import ApiKey
from ..store.repo import ROLES, NotFound, role_allows
from .services import Services

__all__ = ["ROLES", "NotFound", "role_allows", "Key", "Holder", "SessionState", "create_key",
           "list_keys", "revoke_key", "verify", "check_session", "end_sessions"]


@dataclass(frozen=True)
class Key:
    """A key as it is listed (never its secret)."""
    id: int
    name: str
    role: str
    created_at: datetime
    revoked_at: datetime | None


@dataclass(frozen=True)
class Holder:
    """The live key a token or a session belongs to: its id, name and role, the digest of
    its secret (what a session keeps, never the key) and its session generation."""
    key_id: int
    name: str
    role: str
    digest: str
    generation: int


class SessionState(Enum):
    """What a check of a signed-in session found."""
    SIGNED_IN = "signed_in"
    KEY_LOST = "key_lost"  # revoked or removed since, or not the key signed in with
    ENDED = "session_ended"  # signed out (here or elsewhere), or past its lifetime


def _key(row: Any) -> Key:
    return Key(row.id, row.name, row.role, row.created_at, row.revoked_at)


def _holder(row: Any) -> Holder:
    return Holder(row.id, row.name, row.role, row.secret_hash, row.session_generation)


def create_key(services: Services, name: str, role: str) -> tuple[Key, str]:
    """A new key, and its token (shown once, never stored)."""
    with services.sessions() as session:
        row, token = repo.key_create(session, name, role)
        return _key(row), token


def list_keys(services: Services) -> list[Key]:
    with services.sessions(write=False) as session:
        return [_key(r) for r in repo.key_list(session)]


def revoke_key(services: Services, key_id: int) -> Key:
    """Revoke a key (:class:`NotFound` without it); revoking twice keeps the first time."""
    with services.sessions() as session:
        return _key(repo.key_revoke(session, key_id))


def verify(services: Services, token: str) -> Holder | None:
    """The live key ``token`` belongs to, or None (malformed, unknown or revoked)."""
    with services.sessions(write=False) as session:
        row = repo.key_verify(session, token)
        return None if row is None else _holder(row)


def check_session(services: Services, key_id: Any, digest: Any, generation: Any, *,
                  within_lifetime: bool) -> tuple[SessionState, Holder | None]:
    """A session's key read again (one primary-key query): SIGNED_IN with its holder when
    the key is live and still the one signed in with (``digest``), the session's
    ``generation`` is the key's and the session is ``within_lifetime``; else KEY_LOST or
    ENDED. The arguments are as the session cookie holds them: any type."""
    with services.sessions(write=False) as session:
        row = session.get(ApiKey, key_id) if isinstance(key_id, int) else None
        if row is None or row.revoked_at is not None or not isinstance(digest, str) or \
                not hmac.compare_digest(row.secret_hash, digest):
            return SessionState.KEY_LOST, None
        if generation != row.session_generation or isinstance(generation, bool) or \
                not within_lifetime:
            return SessionState.ENDED, None
        return SessionState.SIGNED_IN, _holder(row)


def end_sessions(services: Services, key_id: int) -> None:
    """End every session signed in with this key, in every browser, on every worker."""
    with services.sessions() as session:
        repo.key_end_sessions(session, key_id)
