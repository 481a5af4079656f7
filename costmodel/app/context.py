"""Where the use cases find what a scenario refers to: the catalog, the curves, saved
revisions, and whether scenario files may name other files.

The CLI works on the fixtures folder and the files it is given (:class:`LocalContext`); the
service works on its database and never reads a file a request names (its own context, in
:mod:`costmodel.app.services`). A context may be a moment behind other writers: ``fresh=True``
asks it to look again (the use cases do, once, on an unknown catalog key or curve id).
"""
from __future__ import annotations

from typing import Any, Protocol

from ..model.errors import InputError
from ..sources.catalog import Catalog, default_catalog
from ..sources.curve_point import CurveLibrary, fixture_curves

__all__ = ["Context", "LocalContext"]


class Context(Protocol):
    files_allowed: bool  # may a scenario name curve files and power traces?
    override_label: str  # how overrides are named in the disclosure ("--set", "overrides")
    limited: bool  # the service's: a request's counts are bounded (costmodel.app.caps)

    def catalog(self, fresh: bool = False) -> Catalog: ...

    def curves(self, fresh: bool = False) -> CurveLibrary: ...

    def revision(self, scenario_id: int, number: int | None) -> tuple[dict[str, Any], str]:
        """A saved revision's scenario mapping and its label for the disclosure."""
        ...


class LocalContext:
    """The fixtures' catalog and curves; files allowed; no saved scenarios."""
    files_allowed = True
    override_label = "--set"
    limited = False  # the command line's own machine: no request bounds

    def catalog(self, fresh: bool = False) -> Catalog:
        return default_catalog()

    def curves(self, fresh: bool = False) -> CurveLibrary:
        return fixture_curves()

    def revision(self, scenario_id: int, number: int | None) -> tuple[dict[str, Any], str]:
        raise InputError([("scenario_id", "saved scenarios live in the service's database: "
                                          "price them through the API")])
