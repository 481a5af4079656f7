"""What every command shares: turning arguments into the application layer's typed
requests, one-line errors, JSON output and atomic file writes."""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from ..app import (
    MATCHED,
    OWN_POINT,
    AtInteractivity,
    FileScenario,
    LocalContext,
    Reading,
    ScenarioSpec,
    WorkbookFile,
    overrides_from_text,
)
from ..app.hints import with_hints
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity

if TYPE_CHECKING:
    from ..app.services import Services

__all__ = ["fail", "fail_input", "input_line", "emit_json", "CONTEXT", "specs_for", "reading_for",
           "check_xlsx", "write_workbook", "write_file", "service_database"]

CONTEXT = LocalContext()


def fail(message: str) -> NoReturn:
    """One readable line on stderr, exit status 2: bad input changes nothing."""
    click.echo(f"costmodel: error: {message}", err=True)
    sys.exit(2)


def fail_input(exc: InputError, options: Mapping[str, str] | None = None) -> NoReturn:
    """An input error as one line (:func:`input_line`)."""
    fail(input_line(exc, options))


def input_line(exc: InputError, options: Mapping[str, str] | None = None) -> str:
    """An input error's one line: the scenario it is about (a file) first, each key where
    it was given (``line 9: utilization: ...``, ``--set electricty.price: ...``) and, for a
    scenario's unknown keys, the closest known key, as the API says it (:func:`with_hints`);
    request fields by their option names (``improvement`` -> ``--improvement``)."""
    options = options or {}
    errors = exc.errors
    if exc.file is not None or exc.places:  # a scenario's keys: "did you mean" applies
        errors = with_hints(errors, dotted={p for p, at in exc.places.items()
                                            if isinstance(at, str)})
    parts = []
    for p, m in errors:
        at = exc.places.get(p) if p else None
        name = options.get(p, p)
        parts.append(f"{at} {name}: {m}" if isinstance(at, str) else
                     f"line {at}: {name}: {m}" if at is not None else
                     f"{name}: {m}" if name else m)
    message = "; ".join(parts)
    # the file, unless every key was given by an option (one of several: the subject)
    about = exc.subject if all(isinstance(exc.places.get(p), str) for p, _ in errors) \
        else exc.file or exc.subject
    if about and not _names(exc, errors, about):
        first = exc.places.get(errors[0][0]) if errors and errors[0][0] else None
        at_line = first is not None and not isinstance(first, str)  # "line 9: ..." first
        message = f"{about} {message}" if at_line else f"{about}: {message}"
    return message


def _names(exc: InputError, errors: Sequence[tuple[str, str]], file: str) -> bool:
    """Whether the error already names ``file`` first: a file that cannot be read (its words
    name it), or a first problem whose path is the file."""
    return getattr(exc, "filename", None) == file or (bool(errors) and errors[0][0] == file)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))


def specs_for(files: Sequence[str], overrides: Sequence[str]) -> list[ScenarioSpec]:
    """Scenario files with ``--set`` overrides; with several files, errors name the file."""
    try:
        parsed = overrides_from_text(overrides)
    except InputError as exc:
        fail_input(exc)
    named = len(files) > 1
    return [ScenarioSpec(FileScenario(Path(f)), parsed, f if named else None) for f in files]


def reading_for(at_interactivity: str | None, matched: bool) -> Reading:
    """Where curves are read: ``--matched``, ``--at-interactivity`` or each file's own."""
    if matched and at_interactivity:
        fail("give --matched or --at-interactivity, not both")
    if matched:
        return MATCHED
    if at_interactivity:
        try:
            return AtInteractivity(parse_quantity(at_interactivity, "token/s/user",
                                                  allow_zero=False))
        except UnitInputError as exc:
            fail(f"--at-interactivity: {exc}")
    return OWN_POINT


def check_xlsx(path: str | None, option: str) -> None:
    """Refuse a workbook path that is not .xlsx before any work is done."""
    if path is not None and not path.lower().endswith(".xlsx"):
        fail(f"{option} must end in .xlsx")


def write_workbook(path: str, book: WorkbookFile) -> None:
    """Write the workbook atomically: a half-written file never replaces a good one."""
    write_file(path, book.content)


def write_file(path: str, content: bytes) -> None:
    """Write ``content`` atomically: a half-written file never replaces a good one."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    try:
        tmp.write_bytes(content)
        tmp.replace(p)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    finally:
        tmp.unlink(missing_ok=True)



@contextmanager
def service_database(url: str | None) -> Iterator[Services]:
    """The service's database at ``url`` (None: ``$DATABASE_URL``, else ``sqlite:///costmodel.db``)
    as the application layer's services, for one command; the store's refusals in one line."""
    from ..app.services import Services, StoreUnreachable, StoreUnwritable
    services = Services(url)
    try:
        yield services
    except (StoreUnreachable, StoreUnwritable) as exc:
        fail(f"the database: {exc.reason}; nothing was done")
    finally:
        services.dispose()
