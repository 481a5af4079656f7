"""``costmodel curves``: benchmark curves imported and shown."""
from __future__ import annotations

from pathlib import Path

import click

from .. import __version__, app
from ..model.errors import InputError
from ..model.steps import TOKEN_KINDS
from ..model.units import UnitInputError, parse_quantity
from ..render.report import curve_table
from ..sources.curve_files import curves_csv_text, read_curves, write_curves_csv
from .common import CONTEXT, fail, fail_input

__all__ = ["curves"]


@click.group()
def curves() -> None:
    """Benchmark curves: import InferenceX results, show frontiers."""


@curves.command("import")
@click.argument("files", nargs=-1, required=True)
@click.option("--out", metavar="FILE.csv", help="Write the curves here (default: stdout).")
@click.option("--gpus", type=int, help="GPUs of the run (raw benchmark_serving results only).")
@click.option("--hardware", help="Hardware of the run (raw benchmark_serving results only).")
@click.option("--comment", "comments", multiple=True, metavar="TEXT",
              help="A provenance line written at the top of the CSV. Repeatable.")
def curves_import(files: tuple[str, ...], out: str | None, gpus: int | None,
                  hardware: str | None, comments: tuple[str, ...]) -> None:
    """Read InferenceX rows, API exports or curve CSVs; write costmodel's curve CSV.

    Points of the same curve key from several files are merged into one curve.
    """
    found: dict = {}
    try:
        for f in files:
            for c in read_curves(f, gpus=gpus, hardware=hardware):
                found[c.key] = found[c.key].merged(c) if c.key in found else c
    except InputError as exc:
        fail(str(exc))
    merged = list(found.values())
    for c in merged:
        click.echo(f"{c.key.id}: {len(c)} points", err=True)
        for note in c.notes:
            click.echo(f"  note: {note}", err=True)
    lines = [*comments, f"imported by costmodel {__version__} from "
                        f"{', '.join(Path(f).name for f in files)}"]
    if out:
        write_curves_csv(merged, out, lines)
    else:
        click.echo(curves_csv_text(merged, lines), nl=False)


@curves.command("show")
@click.argument("curve")
@click.option("--curve-id", help="Which curve, when the file holds several.")
@click.option("--token-kind", "kind", type=click.Choice(TOKEN_KINDS),
              default="mixed", show_default=True)
@click.option("--at-interactivity", metavar="QUANTITY", help="Mark the point read here.")
@click.option("--plot", metavar="FILE.png|FILE.svg", help="Write a frontier plot.")
def curves_show(curve: str, curve_id: str | None, kind: str, at_interactivity: str | None,
                plot: str | None) -> None:
    """Show a curve (a file or a fixture curve id): its points, frontier and a reading."""
    try:
        target = (parse_quantity(at_interactivity, "token/s/user", allow_zero=False)
                  if at_interactivity else None)
    except UnitInputError as exc:
        fail(f"--at-interactivity: {exc}")
    try:
        view = app.show_curve(CONTEXT, curve, curve_id, kind, target)
    except InputError as exc:
        fail_input(exc, {"curve": "CURVE", "at_interactivity": "--at-interactivity"})
    click.echo(curve_table(view.curve, kind, view.origin, view.reading))
    if plot:
        from ..render.frontier_plot import plot_curves
        try:
            plot_curves([view.curve], plot, kind=kind, chosen=[view.reading])
        except ValueError as exc:
            fail(f"--plot: {exc}")
        click.echo(f"plot written to {plot}")
