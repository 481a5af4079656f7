"""One printed page (A4 landscape, PDF) of headings, paragraphs and tables, drawn offline by
matplotlib's PDF backend (no network, no external program): the summary a negotiator or a
finance reader passes on.

A page is a list of blocks; text is wrapped to the page width and tables are laid out in
columns sized to their widest cell. What does not fit is cut at the page's foot with a line
saying how much was left out (the JSON holds everything), never shrunk below a legible size.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from datetime import UTC, datetime
from io import BytesIO

from .. import __version__

__all__ = ["Heading", "Paragraph", "Table", "render_page"]

PAGE = (11.69, 8.27)  # [inch] A4 landscape
MARGIN = 0.45  # [inch]
BODY_PT = 8.5  # legible printed; headings larger
LINE = 1.45  # line height as a multiple of the font size
CHAR_WIDTH = 0.52  # a DejaVu Sans character's mean width [font sizes], for wrapping and columns


@dataclass
class Heading:
    text: str


@dataclass
class Paragraph:
    text: str
    bold: bool = False
    size: float = BODY_PT


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    right: set[int] = field(default_factory=set)  # columns aligned right (numbers)
    mark_first: bool = False  # the first row is the answer: drawn bold


def _chars(width_in: float, size: float, bold: bool = False) -> int:
    """Characters of text that fit ``width_in`` [inch] at ``size`` [pt]."""
    return max(20, int(width_in * 72 / (size * CHAR_WIDTH * (1.12 if bold else 1.0))))


def render_page(title: str, blocks: list, subtitle: str | None = None) -> bytes:
    """The PDF of one page: ``title``, an optional ``subtitle`` and the blocks in order."""
    # matplotlib only when a page is drawn: the CLI and every worker import this module
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.figure import Figure
    fig = Figure(figsize=PAGE)
    FigureCanvasPdf(fig)
    width, height = PAGE
    usable = width - 2 * MARGIN
    y = height - MARGIN  # [inch] from the bottom, the top of the next line
    bottom = MARGIN + 0.3  # room for the footer

    def put(text: str, x: float, size: float, *, bold: bool = False, ha: str = "left",
            color: str = "#111111", at: float | None = None) -> None:
        fig.text(x / width, (y if at is None else at) / height, text, fontsize=size, ha=ha,
                 va="top", fontweight="bold" if bold else "normal", color=color,
                 family="DejaVu Sans")

    put(title, MARGIN, 15, bold=True)
    y -= 15 * LINE / 72
    if subtitle:
        put(subtitle, MARGIN, BODY_PT, color="#444444")
        y -= BODY_PT * LINE / 72
    y -= 0.06
    left_out = 0
    for block in blocks:
        if y < bottom:
            left_out += 1
            continue
        if isinstance(block, Heading):
            y -= 0.08
            put(block.text, MARGIN, 10.5, bold=True, color="#1f3864")
            y -= 10.5 * LINE / 72
        elif isinstance(block, Paragraph):
            for line in textwrap.wrap(block.text, _chars(usable, block.size, block.bold)) or [""]:
                if y < bottom:
                    left_out += 1
                    break
                put(line, MARGIN, block.size, bold=block.bold)
                y -= block.size * LINE / 72
        elif isinstance(block, Table):
            y, cut = _table(put, block, y, usable, bottom)
            left_out += cut
        y -= 0.05
    foot = (f"costmodel {__version__}, "
            f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. Every figure states "
            f"what it divides by; the JSON answer holds every figure at full precision.")
    if left_out:
        foot += f" {left_out} more line(s) did not fit on this page: see the JSON."
    y = MARGIN + 0.15
    put(foot, MARGIN, 7, color="#555555")
    out = BytesIO()
    fig.savefig(out, format="pdf")
    return out.getvalue()


def _table(put, t: Table, y: float, usable: float, bottom: float) -> tuple[float, int]:
    """Draw ``t`` from ``y`` down; the y after it and how many rows were cut."""
    size = BODY_PT
    ncol = len(t.header)
    widths = [max(len(str(r[i])) for r in [t.header, *t.rows]) for i in range(ncol)]
    scale = usable * 72 / (size * CHAR_WIDTH) / (sum(widths) + 2 * ncol)
    if scale < 1:  # too wide: wrap the widest (text) column
        widest = max(range(ncol), key=lambda i: widths[i] if i not in t.right else 0)
        widths[widest] = max(12, widths[widest] - int((sum(widths) + 2 * ncol) * (1 - scale)))
    col_in = [(w * 1.12 + 2.5) * size * CHAR_WIDTH / 72 for w in widths]  # bold headers
    total = sum(col_in)
    if total > usable:
        col_in = [c * usable / total for c in col_in]
    xs = [MARGIN + sum(col_in[:i]) for i in range(ncol)]

    def row(cells: list[str], bold: bool) -> int:
        nonlocal y
        wrapped = [textwrap.wrap(str(c), max(4, widths[i])) or [""] for i, c in enumerate(cells)]
        lines = max(len(w) for w in wrapped)
        top = y
        for i, w in enumerate(wrapped):
            y = top
            for line in w:
                if i in t.right:
                    put(line, xs[i] + col_in[i] - 0.08, size, bold=bold, ha="right", at=y)
                else:
                    put(line, xs[i], size, bold=bold, at=y)
                y -= size * LINE / 72
        y = top - lines * size * LINE / 72
        return lines

    row(t.header, True)
    cut = 0
    for k, cells in enumerate(t.rows):
        if y < bottom:
            cut = len(t.rows) - k
            break
        row(cells, t.mark_first and k == 0)
    return y, cut
