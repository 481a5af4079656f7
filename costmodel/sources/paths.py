"""How a file is named in what the engine hands out (results, workbooks, the API, saved
revisions): never by an absolute path of the machine that read it.

Workbooks and JSON results are sent to vendors and colleagues; a path such as
``/home/alice/deals/acme/curves/x.csv`` says who made them, where, and for whom. A file is
shown by its name inside the fixtures folder (``fixtures/curves/x.csv``), else relative to the
folder of the scenario that named it when it lies inside that folder
(``curves/x.csv``), else by its file name alone (``x.csv``). Error messages on the command
line may still name the path the user typed: they are not sent out.
"""
from __future__ import annotations

from pathlib import Path, PurePath

from ..resources import fixtures_dir

__all__ = ["shown_path"]


def _inside(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (both resolved), in ``/`` form, or None if outside."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return None


def _resolved(p: str | PurePath) -> Path:
    try:
        return Path(p).resolve()
    except (OSError, RuntimeError):  # a symlink loop, an unreadable folder: as given
        return Path(p).absolute()


def shown_path(path: str | PurePath, base_dir: str | PurePath | None = None) -> str:
    """The name under which ``path`` appears in results: ``fixtures/<inside the fixtures
    folder>`` for a packaged (or ``$COSTMODEL_FIXTURES``) file; else relative to
    ``base_dir`` (the scenario file's folder) when inside it; else the file name alone."""
    full = _resolved(path)
    inside = _inside(full, _resolved(fixtures_dir()))
    if inside:
        return f"fixtures/{inside}"
    if base_dir is not None:
        inside = _inside(full, _resolved(base_dir))
        if inside:
            return inside
    return full.name or PurePath(path).name
