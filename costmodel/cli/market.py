"""``costmodel market import FILE``: a model catalog's published price list (OpenRouter's
``/api/v1/models`` JSON) into the service's catalog as dated, cited market prices."""
from __future__ import annotations

from datetime import UTC, datetime

import click

from ..model.errors import InputError
from .common import fail_input, service_database

__all__ = ["market"]

SHOWN_SKIPPED = 5  # models left out, named one by one before "and N more"


@click.group()
def market() -> None:
    """Market prices per million tokens, from the lists people price with."""


@market.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--date", metavar="YYYY-MM-DD",
              help="The day the list was fetched: the prices' version (default: today, UTC).")
@click.option("--source", metavar="TEXT",
              help="How the list was obtained, cited by every price (default: OpenRouter's "
                   "model list, its URL, fetched on --date).")
@click.option("--url", help="Database URL (default: $DATABASE_URL or sqlite:///costmodel.db).")
@click.option("--no-seed", is_flag=True, help="Do not load fixtures/ into the database.")
@click.option("--dry-run", is_flag=True, help="Read and check the file; add nothing.")
def market_import(file: str, date: str | None, source: str | None, url: str | None,
                  no_seed: bool, dry_run: bool) -> None:
    """Add each model's prices in FILE (OpenRouter's GET /api/v1/models answer, saved as
    JSON) to the catalog as market_price openrouter/<author>.<model>@DATE: per million
    input, cached-input and output tokens, each citing the list, the model and the date.
    Entries already there are left alone; an error in the file adds nothing."""
    from ..app.database import database_url, prepare
    from ..app.market_import import import_openrouter
    from ..sources.catalog import fixtures_dir
    date = date or datetime.now(UTC).date().isoformat()
    url = database_url(url)
    prepare(url, None if no_seed else fixtures_dir())
    with service_database(url) as services:
        try:
            done = import_openrouter(services, file, date=date, source=source,
                                     dry_run=dry_run)
        except InputError as exc:
            fail_input(exc, {"date": "--date"})
    verb = "would add" if dry_run else "added"
    click.echo(f"{file}: {verb} {len(done.added)} market prices dated {done.date} "
               f"({len(done.existing)} already in the catalog, {len(done.skipped)} models "
               f"left out)")
    for key in done.added[:SHOWN_SKIPPED]:
        click.echo(f"  {key}")
    if len(done.added) > SHOWN_SKIPPED:
        click.echo(f"  ... and {len(done.added) - SHOWN_SKIPPED} more "
                   f"(GET /api/v1/market-prices lists them)")
    for s in done.skipped[:SHOWN_SKIPPED]:
        click.echo(f"  left out {s.path} {s.model_id}: {s.why}")
    if len(done.skipped) > SHOWN_SKIPPED:
        click.echo(f"  left out {len(done.skipped) - SHOWN_SKIPPED} more")
