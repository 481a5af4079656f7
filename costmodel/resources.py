"""Where the package data is: the fixtures (catalog, curves, quotes, sample scenarios) and the
HTML templates.

In the repository they are the top-level ``fixtures/`` and ``templates/`` folders; pyproject's
``[tool.setuptools.package-dir]`` installs them as the packages ``costmodel.fixtures`` and
``costmodel.templates``, so a wheel carries them and an editable install maps them, and both
are found the same way here, through :mod:`importlib.resources`: no path arithmetic from
``__file__`` and no environment needed.

One optional override: ``COSTMODEL_FIXTURES`` names another fixtures folder (same layout:
``catalog/``, ``curves/``, ...), for a deployment that prices against its own catalog and seeds
its database from it. Unset, the packaged fixtures are used.
"""
from __future__ import annotations

import atexit
import os
from contextlib import ExitStack
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["fixtures_dir", "templates_dir", "FIXTURES_ENV"]

FIXTURES_ENV = "COSTMODEL_FIXTURES"

_extracted = ExitStack()  # folders extracted from a non-file-system install, kept until exit
atexit.register(_extracted.close)


@cache
def _folder(package: str) -> Path:
    """The package's folder as a real path (readers glob it and hand it to Flask)."""
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{package} is not installed beside {__package__} (imported from "
            f"{Path(__file__).parent}): a source folder that was never installed is first on "
            "sys.path; install the project (pip install -e . in a checkout)", name=package) \
            from None
    if isinstance(root, Path):  # installed on a file system, as wheels and editables are
        return root
    return _extracted.enter_context(resources.as_file(root))  # e.g. a zip: extracted once


def fixtures_dir() -> Path:
    """The fixtures folder: ``$COSTMODEL_FIXTURES`` if set, else the packaged fixtures."""
    override = os.environ.get(FIXTURES_ENV)
    return Path(override) if override else _folder("costmodel.fixtures")


def templates_dir() -> Path:
    """The packaged HTML templates folder (the API's docs page)."""
    return _folder("costmodel.templates")
