"""What the application layer tells whoever listens (the service's metrics,
:mod:`costmodel.http.metrics`), and nobody when nobody does: a tiny neutral hook, so the use
cases count their answers from the cache, their batch rows and their database errors without
importing a metrics library (the command line never installs a listener, and the core never
emits).

An event is a name, a value [count, or seconds where the name says so] and one label; the
listener is one function, installed once per process. Emitting with no listener is one global
read.
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["emit", "listen", "Listener", "EVENTS"]

Listener = Callable[[str, float, str], None]

# every event emitted, with what its value and label are (the listener maps each to a figure)
EVENTS = {
    "price_cache": "1 a price request; label hit or miss (the Pricer's answer cache)",
    "batch_rows": "rows of a batch priced (value: how many)",
    "store_error": "a database error; label unreachable, unwritable or other",
    "redis_error": "a failed call to the limits' Redis",
    "fail_open": "a request limited by its worker alone, Redis failing; label rate or heavy",
    "limit_refused": "a request refused by a limit; label rate or heavy",
    "heavy_slot": "a heavy slot taken (value 1) or released (value -1)",
}

_listener: Listener | None = None


def listen(listener: Listener | None) -> None:
    """Send every event to ``listener`` from now on (None: to nobody)."""
    global _listener
    _listener = listener


def emit(event: str, value: float = 1.0, label: str = "") -> None:
    """Tell the listener, if any, that ``event`` happened (see :data:`EVENTS`)."""
    listener = _listener
    if listener is not None:
        listener(event, value, label)
