"""``costmodel tariff import FILE``: an OpenEI Utility Rate Database tariff (JSON) as the
``[electricity.tariff]`` table of a scenario file (the conversion is
:mod:`costmodel.sources.openei`; this command reads the file and writes the TOML)."""
from __future__ import annotations

from pathlib import Path

import click

from ..model.errors import InputError
from ..sources.openei import (
    MAX_JSON_BYTES,
    WAIVABLE,
    parse_openei_json,
    read_openei,
    tariff_toml,
)
from .common import fail, fail_input, write_file

__all__ = ["tariff"]


@click.group("tariff")
def tariff() -> None:
    """Electricity tariffs: import one from the OpenEI Utility Rate Database."""


@tariff.command("import")
@click.argument("file")
@click.option("--item", type=int, metavar="N",
              help="Which tariff of a response with several items (0-based).")
@click.option("-o", "--output", metavar="OUT.toml",
              help="Write the table to this file (atomically) instead of standard output.")
@click.option("--ignore", "ignore", multiple=True, type=click.Choice(sorted(WAIVABLE)),
              help="Leave out a charge the table cannot hold (named in the tariff's source); "
                   "refused otherwise. Repeatable.")
def tariff_import(file: str, item: int | None, output: str | None,
                  ignore: tuple[str, ...]) -> None:
    """Convert the URDB tariff in FILE (an API response or one tariff, JSON) into an
    [electricity.tariff] table to paste into a scenario file, time-of-use demand charges as
    its demand periods. Tiered demand rates, ratchets and other charges the table cannot
    hold are refused by name."""
    path = Path(file)
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            fail(f"{file}: {size / 1e6:,.1f} MB; the limit is {MAX_JSON_BYTES / 1e6:g} MB a "
                 f"URDB file")
        raw = path.read_bytes()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}")
    try:
        table = read_openei(parse_openei_json(raw, name=file), item, ignore=ignore)
    except InputError as exc:
        fail_input(exc.about(file), {"item": "--item", "ignore": "--ignore"})
    text = tariff_toml(table)
    if output is None:
        click.echo(text, nl=False)
        return
    write_file(output, text.encode("utf-8"))
    click.echo(f"tariff {table['name']!r} written to {output}")
