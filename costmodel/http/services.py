"""The application layer's :class:`~costmodel.app.services.Services` of a Flask app: handed to
it once, when :func:`costmodel.server.create_app` builds it (:func:`install`), and read by both
HTTP faces through one helper (:func:`services`), which they pass to the use cases."""
from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask, current_app

if TYPE_CHECKING:
    from ..app.services import Services

__all__ = ["install", "services", "EXTENSION"]

EXTENSION = "costmodel"  # app.extensions[EXTENSION]: the app's Services


def install(app: Flask, services: Services) -> None:
    """Hand ``app`` its Services (one database, its catalog and caches) for its lifetime."""
    app.extensions[EXTENSION] = services


def services() -> Services:
    """The current app's Services."""
    # (the app behind the proxy: an attribute read through it costs 0.7 us more)
    return current_app._get_current_object().extensions[EXTENSION]
