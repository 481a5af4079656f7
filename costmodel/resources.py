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

And the user's cache folder (:func:`cached_build`), where what is slow to build and the same on
every run is kept: pint's parsed unit definitions. ``COSTMODEL_CACHE_DIR`` names another
folder; set empty, nothing is cached. Older caches of a kind are pruned as new ones are made
(the two most recent kept).
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TypeVar

__all__ = ["fixtures_dir", "templates_dir", "FIXTURES_ENV", "CACHE_ENV", "cache_dir",
           "cached_build", "content_digest", "once_per_content"]

FIXTURES_ENV = "COSTMODEL_FIXTURES"
CACHE_ENV = "COSTMODEL_CACHE_DIR"

T = TypeVar("T")

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


def cache_dir() -> Path | None:
    """The folder costmodel caches in: ``$COSTMODEL_CACHE_DIR`` if set (None if set empty),
    else the user's cache folder (``~/.cache/costmodel`` on Linux)."""
    override = os.environ.get(CACHE_ENV)
    if override is not None:
        return Path(override) if override.strip() else None
    import platformdirs  # only here: a process that finds its cache needs no more
    return platformdirs.user_cache_path("costmodel", appauthor=False)


# Of the older caches of one kind (another pint, an edited catalog, another declaration), the
# newest few are kept: venvs of other versions beside this one keep theirs; the rest would only
# pile up, one folder for every upgrade or edit. A private folder left by a process that died
# while building is removed once it is clearly nobody's (an hour: a build takes seconds).
KEEP_OLDER = 2
STALE_PRIVATE_S = 3600.0


def cached_build(name: str, build: Callable[[Path | None], T], *,
                 kind: str | None = None) -> T:
    """``build(folder)`` with ``folder`` the cache ``name`` in :func:`cache_dir`, a folder that
    holds only complete caches; ``build(None)`` when there is none to use.

    ``build`` reads what the folder holds and writes what it lacks. The first run builds into a
    private folder of its own and renames it into place whole, so a process starting beside it
    never reads half a file; runs that lose that race keep what they built and remove their
    folder. A cache folder that cannot be created (no home, read-only disk) or whose contents
    fail to load (truncated, unreadable, written by another version) costs time, never a
    failure: the build runs again without a cache.

    ``kind`` (``name`` being ``kind-...``): when this run puts a new cache in place, the older
    caches of that kind past the :data:`KEEP_OLDER` most recent are removed (:func:`_prune`).
    """
    base = cache_dir()
    if base is None:
        return build(None)
    folder = base / name
    if folder.is_dir():
        try:
            return build(folder)
        except Exception:  # whatever a damaged cache raises: build as if there were none
            return build(None)
    try:
        base.mkdir(parents=True, exist_ok=True)
        private = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=base))
    except OSError:
        return build(None)
    try:
        built = build(private)
    except Exception:
        shutil.rmtree(private, ignore_errors=True)
        return build(None)
    try:
        private.rename(folder)
    except OSError:  # another process put its cache in place first
        shutil.rmtree(private, ignore_errors=True)
    else:
        if kind is not None:
            _prune(base, kind, keep=folder)
    return built


def _prune(base: Path, kind: str, keep: Path) -> None:
    """Remove the caches ``kind-*`` in ``base`` other than ``keep`` and the :data:`KEEP_OLDER`
    most recently written, and the private folders ``.kind-*`` older than
    :data:`STALE_PRIVATE_S`. A process still reading a removed cache fails over to building
    without one (:func:`cached_build`), so a race costs time, never an error."""
    try:
        entries = [(p.stat().st_mtime, p) for p in base.glob(f"{kind}-*")
                   if p.is_dir() and p != keep]
        now = time.time()
        stale = [p for p in base.glob(f".{kind}-*")
                 if p.is_dir() and now - p.stat().st_mtime > STALE_PRIVATE_S]
    except OSError:
        return
    entries.sort(reverse=True)
    for path in [p for _, p in entries[KEEP_OLDER:]] + stale:
        shutil.rmtree(path, ignore_errors=True)


def content_digest(content: str, modules: tuple[str, ...]) -> str:
    """A short digest of ``content`` and of the source of ``modules`` (the code that reads or
    checks it), naming a cache folder that holds for exactly these (:func:`cached_build`)."""
    digest = hashlib.sha256(content.encode())
    for module in modules:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        digest.update(Path(origin).read_bytes() if origin else module.encode())
    return digest.hexdigest()[:24]


def once_per_content(name: str, content: str, modules: tuple[str, ...],
                     run: Callable[[], None]) -> None:
    """Call ``run`` (a check that raises when it fails) unless it passed before on this machine
    for the very same ``content`` and the same source of ``modules`` (the code that checks):
    a pass leaves a folder named by their digest in the cache folder (:func:`cached_build`:
    complete folders only); a failure raises and leaves nothing; no cache folder, ``run``
    every time. The model's unit check is remembered so (issue 37)."""
    def check(folder: Path | None) -> None:
        if folder is None or not (folder / "passed").exists():
            run()
            if folder is not None:
                (folder / "passed").write_text("passed\n", encoding="utf-8")

    cached_build(f"{name}-{content_digest(content, modules)}", check, kind=name)
