"""The ``costmodel`` command."""
from __future__ import annotations

import json
import sys

import click

from . import __version__
from .chain import compare as compare_scenarios
from .chain import price as price_scenario
from .inputs import InputError
from .model import MODEL
from .report import comparison_table, result_table
from .sources.catalog import KINDS, default_catalog
from .sources.scenario_file import load_scenario_file

SET_HELP = ('Override an input: dotted.key=VALUE, e.g. electricity.price="0.10 USD/kWh" or '
            "power.boundary=facility. Repeatable.")


def _fail(message: str) -> None:
    click.echo(f"costmodel: error: {message}", err=True)
    sys.exit(2)


def _emit_json(data) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="costmodel")
def main() -> None:
    """Price LLM inference per million tokens, and say what it divided by."""


@main.command()
@click.argument("file")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help=SET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def price(file: str, overrides: tuple[str, ...], as_json: bool) -> None:
    """Price the scenario in FILE (TOML or JSON)."""
    try:
        loaded = load_scenario_file(file, overrides)
    except InputError as exc:
        _fail(str(exc))
    result = price_scenario(loaded.scenario, loaded.provenance)
    if as_json:
        _emit_json(result.to_json())
    else:
        click.echo(result_table(result))


@main.command()
@click.argument("files", nargs=-1, required=True)
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help=SET_HELP + " Applies to every scenario.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare(files: tuple[str, ...], overrides: tuple[str, ...], as_json: bool) -> None:
    """Price scenarios side by side; ratios are against the first FILE."""
    if len(files) < 2:
        _fail("compare needs at least two scenario files")
    loaded = []
    for f in files:
        try:
            loaded.append(load_scenario_file(f, overrides))
        except InputError as exc:
            message = str(exc)
            _fail(message if message.startswith(f) else f"{f}: {message}")
    comparison = compare_scenarios([(x.scenario, x.provenance) for x in loaded])
    if as_json:
        _emit_json(comparison.to_json())
    else:
        click.echo(comparison_table(comparison))


@main.command()
@click.argument("kind", required=False, type=click.Choice(sorted(KINDS)))
def catalog(kind: str | None) -> None:
    """List catalog entries (accelerators, published operating points, electricity prices)."""
    cat = default_catalog()
    for k in [kind] if kind else sorted(KINDS):
        click.echo(f"{k}:")
        for key in cat.keys(k):
            entry = cat.get(k, key, k)
            label = entry.data.get("name") or entry.data.get("label") or entry.data.get(
                "source") or ""
            click.echo(f"  {key:32s} {label}")


@main.command()
def steps() -> None:
    """Print the declared calculation: every step with its unit and expression."""
    for s in MODEL.steps.values():
        click.echo(f"{s.name} [{s.unit}]\n    = {s.expression}\n    {s.description}")


if __name__ == "__main__":  # pragma: no cover
    main()
