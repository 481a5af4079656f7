"""Typed errors of input that cannot be priced.

Every face renders these (a problem+json, one CLI line); where behaviour depends on the kind
of error (the problem type, whether another worker may have just added a catalog entry), the
face tells them apart by class, never by the wording of a message.
"""
from __future__ import annotations

__all__ = ["InputError", "UnknownReference", "UnreachablePoint", "NonFiniteResult"]


class InputError(ValueError):
    """Input that cannot be priced. ``errors`` is a list of ``(field path, message)``."""

    subject: str | None = None  # the face's name of the input it is about, when known

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in errors))

    def about(self, subject: str | None) -> InputError:
        """This error, marked as being about ``subject`` (kept if already marked)."""
        if self.subject is None:
            self.subject = subject
        return self


class UnknownReference(InputError):
    """A catalog key or curve id that the catalog or curve library does not hold (yet: a
    service's copy may be a moment behind another worker's write)."""

    def __init__(self, path: str, message: str, *, kind: str, key: str):
        super().__init__([(path, message)])
        self.kind = kind  # a catalog kind (accelerator, ...) or "curve"
        self.key = key


class UnreachablePoint(InputError):
    """A target interactivity above a curve's frontier; ``best`` is the best reachable
    interactivity [token/s/user]."""

    def __init__(self, path: str, message: str, *, best: float):
        super().__init__([(path, message)])
        self.best = best


class NonFiniteResult(InputError):
    """Inputs so extreme that a cost overflows float64 (``1e-308 token/s``, ``1e308 USD``):
    no figure is answered or saved; ``errors`` name the inputs that overflowed."""
