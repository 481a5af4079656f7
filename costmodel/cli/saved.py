"""Saved scenarios on the service's database: ``save`` (price a scenario file, then save it as
a new scenario or as the next revision of one) and ``saved`` (list them, or one revision as
the API answers it). The use cases are the application layer's (:mod:`costmodel.app.saved`),
the ones the API and the Saved pages call: this face only parses and prints."""
from __future__ import annotations

from dataclasses import dataclass

import click

from .common import emit_json, fail, fail_input, service_database

__all__ = ["save", "saved"]

URL_HELP = "Database URL (default: $DATABASE_URL or sqlite:///costmodel.db)."
# the store's largest id (costmodel.app.saved.MAX_ID): written out, since this module is
# imported by --help, and the database's modules only when a command runs
MAX_ID = 2**31 - 1


@dataclass(frozen=True)
class _Author:
    name: str
    key_id: int | None = None  # no API key: the operator at the server's command line


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--name", help="Save as a new scenario with this name.")
@click.option("--scenario", "scenario_id", type=click.IntRange(1, MAX_ID),
              help="Save as the next revision of this saved scenario.")
@click.option("--based-on", type=click.IntRange(1, MAX_ID),
              help="With --scenario: the revision this edit is based on; nothing is saved "
                   "when the scenario has moved on since (the API's If-Match).")
@click.option("--by", "author", default="command line", show_default=True,
              help="Who saved it, as the revision's history shows.")
@click.option("--url", help=URL_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the revision saved as JSON.")
def save(file: str, name: str | None, scenario_id: int | None, based_on: int | None,
         author: str, url: str | None, as_json: bool) -> None:
    """Price a scenario file as the service prices it, then save it: a new scenario
    (--name) or the next revision of one (--scenario). Content equal to the latest revision
    saves nothing."""
    from ..app import saved as use_case
    from ..app.caps import scenario_name_error
    from ..model.errors import InputError
    if (name is None) == (scenario_id is None):
        fail("give --name (a new scenario) or --scenario ID (its next revision)")
    if name is not None and (wrong := scenario_name_error(name)) is not None:
        fail(f"--name: {wrong}")
    if based_on is not None and scenario_id is None:
        fail("--based-on goes with --scenario")
    if not 1 <= len(author) <= 100:
        fail("--by: 1 to 100 characters")
    try:
        data = use_case.read_file(file)
    except InputError as exc:
        fail_input(exc)
    expect = None if based_on is None else use_case.based_on(based_on)
    with service_database(url) as services:
        try:
            done = use_case.save(services, data, _Author(author), name=name,
                                 scenario_id=scenario_id, expect=expect, subject=file)
        except InputError as exc:
            fail_input(exc)
        except use_case.Stale as exc:
            fail(f"--based-on: {exc}")
        except use_case.NotFound as exc:
            fail(f"--scenario: {exc}")
    rev = done.revision
    if as_json:
        emit_json(rev.to_json())
        return
    what = "saved as" if done.created else "equal to the latest: nothing saved; it is"
    click.echo(f"{what} scenario {rev.scenario_id} revision {rev.number}")


@click.command()
@click.argument("scenario_id", required=False, type=click.IntRange(1, MAX_ID))
@click.option("--revision", type=click.IntRange(1, MAX_ID),
              help="This revision (default: the latest).")
@click.option("--url", help=URL_HELP)
def saved(scenario_id: int | None, revision: int | None, url: str | None) -> None:
    """List saved scenarios; given SCENARIO_ID, print a revision as the API answers it
    (JSON: the scenario as saved and its result as computed then)."""
    from ..app import saved as use_case
    if scenario_id is None:
        if revision is not None:
            fail("--revision goes with a SCENARIO_ID")
        with service_database(url) as services:
            rows, _ = use_case.scenarios(services, limit=MAX_ID)
        for row in rows:
            click.echo(f"{row.id:4d}  revision {row.latest_revision:<4d} {row.name}")
        return
    with service_database(url) as services:
        try:
            _, rev = use_case.revision(services, scenario_id, revision)
        except use_case.NotFound as exc:
            fail(str(exc))
    emit_json(rev.to_json())
