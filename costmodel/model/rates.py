"""Public reference rates per accelerator-hour, in dated versions: which version a reference
names.

A catalog ``rate`` entry is keyed ``<accelerator>/<kind>@<date>`` (``gb300/rental@2026-09``):
one version of one kind of rate (owning, neocloud or rental) for one accelerator. Versions are
never overwritten; a later one is a new entry with its own date.

A reference names a rate as ``<accelerator>/<kind>[@<date>]`` (or ``<kind>[@<date>]`` where
the accelerator is known, as in a scenario's ``[accelerator] catalog = ..., rate = ...``):

- no date: the latest version of that accelerator and kind;
- a date (``YYYY-MM`` or ``YYYY-MM-DD``): the version of exactly that date if there is one,
  else the latest version on or before it. Dates are compared at the precision both give: a
  month holds each of its days (``2026-07`` is on or before ``2026-07-14`` and
  ``2026-07-14`` on or before ``2026-07``), so ``rental@2026-08`` is the 2026-07-14 version
  and ``rental@2026-09-01`` the 2026-09 one.

:func:`resolve_rate` is pure: the reference and the keys the catalog holds in, a key out.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

__all__ = ["RATE_KINDS", "RateRef", "RateError", "RateNotFound", "parse_rate_date",
           "parse_rate_ref", "rate_key", "on_or_before", "resolve_rate", "ALL_IN",
           "NOT_A_QUOTE", "ACCELERATOR_PATTERN", "DATE_PATTERN", "REF_PATTERN",
           "FULL_REF_PATTERN", "KEY_PATTERN"]

RATE_KINDS = ("owning", "neocloud", "rental")
ALL_IN = "all-in: energy and hosting inside the rate"
NOT_A_QUOTE = "a public dashboard's assumption, not a quote"

# The grammar, as patterns a JSON Schema can state too (ASCII digits only): an accelerator's
# catalog key (no "/" or "@"), a version date, a reference (its accelerator optional where
# the context gives it), a full reference, and a version's catalog key.
ACCELERATOR_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._+-]{0,59}"
DATE_PATTERN = r"[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?"
_KINDS = "|".join(RATE_KINDS)
REF_PATTERN = rf"^(?:{ACCELERATOR_PATTERN}/)?(?:{_KINDS})(?:@{DATE_PATTERN})?$"
FULL_REF_PATTERN = rf"^{ACCELERATOR_PATTERN}/(?:{_KINDS})(?:@{DATE_PATTERN})?$"
KEY_PATTERN = rf"^{ACCELERATOR_PATTERN}/(?:{_KINDS})@{DATE_PATTERN}$"

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})(?:-([0-9]{2}))?")
_REF = re.compile(rf"(?:(?P<accelerator>{ACCELERATOR_PATTERN})/)?(?P<kind>[^/@\s]+)"
                  rf"(?:@(?P<date>[^/@\s]+))?")


class RateError(ValueError):
    """A reference that is not one (malformed, an unknown kind, not a date)."""


class RateNotFound(LookupError):
    """A well-formed reference that names no version the catalog holds."""


def parse_rate_date(text: str) -> tuple[int, ...]:
    """``"2026-09"`` -> ``(2026, 9)``, ``"2026-07-14"`` -> ``(2026, 7, 14)``; RateError if it
    is not a calendar month or day written so."""
    m = _DATE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise RateError(f"not a date: {text!r} (write YYYY-MM or YYYY-MM-DD)")
    parts = tuple(int(g) for g in m.groups() if g is not None)
    try:
        date(parts[0], parts[1], parts[2] if len(parts) == 3 else 1)
    except ValueError as exc:
        raise RateError(f"not a date: {text!r} ({exc})") from None
    return parts


def on_or_before(version: tuple[int, ...], query: tuple[int, ...]) -> bool:
    """Whether a version dated ``version`` is on or before ``query``, compared at the
    precision both give (a month holds each of its days)."""
    n = min(len(version), len(query))
    return version[:n] <= query[:n]


def _order(d: tuple[int, ...]) -> tuple[int, int, int]:
    """Versions in time: a month before the days it holds (a month has no day: 0)."""
    return (d[0], d[1], d[2] if len(d) == 3 else 0)


@dataclass(frozen=True)
class RateRef:
    """A parsed reference: accelerator (None where the context gives it), kind and date
    (None: the latest)."""
    accelerator: str | None
    kind: str
    date: tuple[int, ...] | None
    date_text: str | None

    def text(self, accelerator: str | None = None) -> str:
        acc = self.accelerator or accelerator
        out = f"{acc}/{self.kind}" if acc else self.kind
        return f"{out}@{self.date_text}" if self.date_text else out


def parse_rate_ref(text: object) -> RateRef:
    """``"gb300/rental@2026-09"``, ``"rental@2026-09"`` or ``"rental"`` -> a RateRef;
    RateError if it is none of those."""
    if not isinstance(text, str):
        raise RateError(f"must be a rate reference (text), got {text!r}")
    m = _REF.fullmatch(text)
    if m is None:
        raise RateError(f"expected <accelerator>/<kind>[@YYYY-MM[-DD]] or "
                        f"<kind>[@YYYY-MM[-DD]], got {text!r}")
    kind = m.group("kind")
    if kind not in RATE_KINDS:
        raise RateError(f"unknown kind of rate {kind!r} (kinds: {', '.join(RATE_KINDS)})")
    raw = m.group("date")
    return RateRef(m.group("accelerator"), kind, parse_rate_date(raw) if raw else None, raw)


def rate_key(accelerator: str, kind: str, when: str) -> str:
    """The catalog key of one version: ``gb300/rental@2026-09``."""
    return f"{accelerator}/{kind}@{when}"


def _versions(keys: Iterable[str], accelerator: str, kind: str) -> list[tuple[tuple, str]]:
    """(date, key) of every version of ``accelerator``/``kind`` among ``keys``, oldest
    first; keys that are not version keys are skipped."""
    out = []
    prefix = f"{accelerator}/{kind}@"
    for key in keys:
        if not key.startswith(prefix):
            continue
        try:
            when = parse_rate_date(key[len(prefix):])
        except RateError:
            continue
        out.append((when, key))
    return sorted(out, key=lambda v: _order(v[0]))


def resolve_rate(ref: str | RateRef, keys: Iterable[str],
                 accelerator: str | None = None) -> str:
    """The catalog key of the version ``ref`` names among ``keys`` (see the module
    docstring). ``accelerator`` is the hardware the context gives (a scenario's catalog
    accelerator): a reference that names another is a RateError.

    Raises RateError (not a reference) or RateNotFound (no such version)."""
    r = ref if isinstance(ref, RateRef) else parse_rate_ref(ref)
    if r.accelerator and accelerator and r.accelerator != accelerator:
        raise RateError(f"{r.text()!r} names a rate of {r.accelerator}, but the accelerator "
                        f"implies {accelerator}'s")
    acc = r.accelerator or accelerator
    if not acc:
        raise RateError(f"name the accelerator: <accelerator>/{r.text()}")
    versions = _versions(keys, acc, r.kind)
    if not versions:
        raise RateNotFound(f"unknown catalog entry {r.text(acc)!r}: no {r.kind} rate for "
                           f"{acc}")
    if r.date is None:
        return versions[-1][1]
    exact = [key for when, key in versions if when == r.date]
    if exact:
        return exact[0]
    before = [key for when, key in versions if on_or_before(when, r.date)]
    if not before:
        listed = ", ".join(k.rpartition("@")[2] for _, k in versions)
        raise RateNotFound(f"unknown catalog entry {r.text(acc)!r}: no version on or before "
                           f"{r.date_text} (versions: {listed})")
    return before[-1]
