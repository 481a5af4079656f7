"""What the model prices with: ``catalog`` (its entries) and ``steps`` (the declared
calculation)."""
from __future__ import annotations

import click

from ..model.rates import NOT_A_QUOTE
from ..model.steps import MODEL
from ..sources.catalog import KINDS, default_catalog

__all__ = ["catalog", "steps"]


@click.command()
@click.argument("kind", required=False, type=click.Choice(sorted(KINDS)))
def catalog(kind: str | None) -> None:
    """List catalog entries (accelerators, published operating points, electricity prices,
    systems, reference rates, market prices)."""
    cat = default_catalog()
    for k in [kind] if kind else sorted(KINDS):
        click.echo(f"{k}:")
        for key in cat.keys(k):
            entry = cat.get(k, key, k)
            label = entry.data.get("name") or entry.data.get("label") or entry.data.get(
                "source") or ""
            if k == "rate":
                price, power = entry.data["hourly_price"], entry.data["all_in_power"]
                label = (f"{price['value']:g} {price['unit']}, all-in {power['value']:g} "
                         f"{power['unit']} ({NOT_A_QUOTE})")
            elif k == "market_price":
                label = f"{entry.data.get('model')} ({entry.data.get('provider')}): " + ", ".join(
                    f"{what} {q['value']:g} {q['unit']}" for what, q in (
                        (w, entry.data.get(f)) for w, f in (
                            ("blended", "price"), ("input", "price_input"),
                            ("cached input", "price_cached_input"), ("output", "price_output")))
                    if isinstance(q, dict))
            click.echo(f"  {key:32s} {label}")


@click.command()
def steps() -> None:
    """Print the declared calculation: every step with its unit and expression."""
    for s in MODEL.steps.values():
        along = f" by {' and '.join(s.axes)}" if s.axes else ""
        click.echo(f"{s.name} [{s.unit}]{along}\n    = {s.expression}\n    {s.description}")
