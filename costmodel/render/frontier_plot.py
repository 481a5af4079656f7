"""A frontier plot: raw points, the Pareto frontier (as interpolated) and the chosen point."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..model.curves import Curve, Selection

__all__ = ["plot_curves"]


def plot_curves(curves: list[Curve], path: str | Path, *, kind: str = "mixed",
                chosen: list[Selection | None] | None = None) -> None:
    """Write a PNG or SVG (by extension) of throughput per accelerator [token/s] against
    interactivity [token/s/user], one colour per curve."""
    import matplotlib
    matplotlib.use("Agg")  # no display here; also keeps the import cheap for the CLI
    import matplotlib.pyplot as plt

    p = Path(path)
    if p.suffix.lower() not in (".png", ".svg"):
        raise ValueError(f"plot file must end in .png or .svg, got {p.name!r}")
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    for n, curve in enumerate(curves):
        colour = f"C{n}"
        y = curve.throughput_of(kind)
        ax.scatter(curve.interactivity, y, s=18, color=colour, alpha=0.45,
                   label=f"{curve.key.id} (measured)")
        if np.all(np.isnan(curve.interactivity)):
            continue
        f = curve.frontier(kind)
        if len(f.interactivity) >= 2:
            xs = np.linspace(f.interactivity[0], f.interactivity[-1], 200)
            ax.plot(xs, f.read_many(xs)[2], color=colour, lw=1.8, label="Pareto frontier (PCHIP)")
        ax.scatter(f.interactivity, f.throughput, s=36, facecolors="none", edgecolors=colour)
        sel = chosen[n] if chosen and n < len(chosen) else None
        if sel is not None and sel.interactivity is not None:
            ax.scatter([sel.interactivity], [sel.throughput], marker="*", s=220, color=colour,
                       edgecolors="black", zorder=5, label=f"chosen ({sel.status})")
    ax.set_xlabel("interactivity [token/s/user]")
    ax.set_ylabel(f"{kind} throughput per accelerator [token/s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    tmp = p.with_name(f".{p.stem}.tmp{p.suffix}")
    fig.savefig(tmp)
    plt.close(fig)
    tmp.replace(p)  # never leave a half-written plot behind
