"""Charts drawn on the server as SVG: no script, no library, nothing fetched.

Each function answers :class:`markupsafe.Markup` (an ``<svg>`` element with ``role="img"``, a
``<title>`` and a ``<desc>`` that says in words what the chart shows) sized by its viewBox, so
it scales to the column it sits in (phone or desktop). Colours are a colour-blind-safe set
(Okabe-Ito); text is escaped.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from ..render import display

__all__ = ["COLOURS", "Segment", "Series", "stacked_bar", "frontier_chart", "tornado_chart",
           "histogram", "nice_ticks", "hourly_chart", "StepSeries", "step_chart"]

COLOURS = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#f0e442",
           "#000000")
FONT = 'font-family="system-ui, DejaVu Sans, sans-serif"'


def _e(text: object) -> str:
    return str(escape(str(text)))


def _f(v: float) -> str:
    """A coordinate, short."""
    return f"{v:.1f}"


def _tick(t: float) -> str:
    """A tick label: ``5,000``, ``2.5``, ``0.04``."""
    return f"{t:,.0f}" if float(t).is_integer() else f"{t:,.6g}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (about ``count`` of them)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1 if math.isfinite(low) else 1.0
    raw = (high - low) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(low / step) * step
    ticks = [round(start, 10)]
    while ticks[-1] < high - step * 1e-9:  # the last tick at or above high
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _svg(width: int, height: int, title: str, desc: str, body: list[str],
         css_class: str, font: int = 13) -> Markup:
    return Markup(
        f'<svg class="chart {css_class}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{css_class}-t {css_class}-d" {FONT} font-size="13">'
        f'<title id="{css_class}-t">{_e(title)}</title><desc id="{css_class}-d">{_e(desc)}'
        f'</desc>{"".join(body)}</svg>')


# ---- the cost breakdown ----------------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    label: str
    value: float  # [unit of the bar]
    colour: str


def stacked_bar(segments: Sequence[Segment], unit: str, name: str | None = None,
                title: str = "Cost per million tokens, by part") -> Markup:
    """One horizontal bar split into its parts, each labelled with its value and share."""
    parts = [s for s in segments if s.value is not None and math.isfinite(s.value)
             and s.value > 0]
    total = sum(s.value for s in parts) or 1.0
    width, bar_h, left, right = 480, 36, 4, 4
    body, x = [], float(left)
    span = width - left - right
    words = []
    for s in parts:
        w = span * s.value / total
        shown = display.format_quantity(s.value, unit, name)
        share = display.format_percent(s.value / total)
        words.append(f"{s.label} {shown} ({share})")
        body.append(f'<rect x="{_f(x)}" y="8" width="{_f(w)}" height="{bar_h}" '
                    f'fill="{s.colour}"><title>{_e(f"{s.label}: {shown} ({share})")}</title>'
                    f'</rect>')
        x += w
    # the legend below the bar: a swatch, the part, its value and share, one a line
    for i, s in enumerate(parts):
        lx, ly = left, 8 + bar_h + 24 + i * 22
        body.append(f'<rect x="{_f(lx)}" y="{_f(ly - 11)}" width="12" height="12" '
                    f'fill="{s.colour}"/><text x="{_f(lx + 18)}" y="{_f(ly)}">'
                    f'{_e(words[i])}</text>')
    height = 8 + bar_h + 24 + 22 * len(parts)
    return _svg(width, height, title, "; ".join(words) or "no cost", body, "breakdown", font=15)


def _plot_area(box: tuple[float, float, float, float], xt: Sequence[float],
               yt: Sequence[float], px, py, height: int, x_label: str) -> list[str]:
    """A plot's white area (``box``: left, top, width, height [px]), its grid lines and tick
    labels at ``xt`` and ``yt`` (placed by ``px`` and ``py``), and the x axis's label."""
    ml, mt, pw, ph = box
    body = [f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fff" '
            f'stroke="#d0d7de"/>']
    for t in xt:
        body.append(f'<line x1="{_f(px(t))}" x2="{_f(px(t))}" y1="{mt}" y2="{mt + ph}" '
                    f'stroke="#eaeef2"/><text x="{_f(px(t))}" y="{mt + ph + 18}" '
                    f'text-anchor="middle">{_tick(t)}</text>')
    for t in yt:
        body.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{_f(py(t))}" y2="{_f(py(t))}" '
                    f'stroke="#eaeef2"/><text x="{ml - 6}" y="{_f(py(t) + 4)}" '
                    f'text-anchor="end">{_tick(t)}</text>')
    body.append(f'<text x="{ml + pw / 2}" y="{height - 12}" text-anchor="middle">'
                f'{_e(x_label)}</text>')
    return body


# ---- throughput-interactivity frontiers ------------------------------------------------------

@dataclass
class Series:
    """One system on the frontier chart: its frontier (interactivity [token/s/user] ->
    throughput [token/s per accelerator], drawn as a line through ``line``), its measured
    frontier points, and the chosen point (None when it has none)."""
    name: str
    line: list[tuple[float, float]] = field(default_factory=list)
    points: list[tuple[float, float]] = field(default_factory=list)
    chosen: tuple[float, float] | None = None
    colour: str = COLOURS[0]


def frontier_chart(series: Sequence[Series], target: float | None = None,
                   target_label: str = "") -> Markup:
    """Throughput per accelerator against interactivity, one colour per system, the chosen
    points as large rings, the target interactivity as a dashed vertical line."""
    xs = [p[0] for s in series for p in (*s.line, *s.points, *([s.chosen] if s.chosen else []))]
    ys = [p[1] for s in series for p in (*s.line, *s.points, *([s.chosen] if s.chosen else []))]
    if target is not None:
        xs.append(target)
    width, height = 720, 420
    ml, mr, mt, mb = 78, 16, 16, 58
    pw, ph = width - ml - mr, height - mt - mb
    if not xs:
        return _svg(width, 80, "Throughput-interactivity frontiers",
                    "no system here has an operating point with an interactivity", [
                        '<text x="10" y="40">No interactivity is known for these '
                        'operating points.</text>'], "frontier")
    xt = nice_ticks(0, max(xs) * 1.05)
    yt = nice_ticks(0, max(ys) * 1.08)
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]

    def px(x: float) -> float:
        return ml + pw * (x - x0) / (x1 - x0)

    def py(y: float) -> float:
        return mt + ph - ph * (y - y0) / (y1 - y0)

    body = _plot_area((ml, mt, pw, ph), xt, yt, px, py, height,
                      "Interactivity [tokens per second per user]")
    body.append(f'<text transform="translate(16 {mt + ph / 2}) rotate(-90)" '
                f'text-anchor="middle">Throughput per accelerator [tokens per second]</text>')
    if target is not None:
        body.append(f'<line x1="{_f(px(target))}" x2="{_f(px(target))}" y1="{mt}" '
                    f'y2="{mt + ph}" stroke="#57606a" stroke-dasharray="6 4"/>'
                    f'<text x="{_f(px(target) + 4)}" y="{mt + 14}" fill="#57606a">'
                    f'{_e(target_label)}</text>')
    words = []
    for s in series:
        if len(s.line) >= 2:
            d = " ".join(f"{'M' if i == 0 else 'L'}{_f(px(x))},{_f(py(y))}"
                         for i, (x, y) in enumerate(s.line))
            body.append(f'<path d="{d}" fill="none" stroke="{s.colour}" stroke-width="2.5"/>')
        for x, y in s.points:
            body.append(f'<circle cx="{_f(px(x))}" cy="{_f(py(y))}" r="3.5" fill="#fff" '
                        f'stroke="{s.colour}" stroke-width="1.5"/>')
        if s.chosen is not None:
            x, y = s.chosen
            text = (f"{s.name}: {display.format_quantity(y, 'token/s')} at "
                    f"{display.format_quantity(x, 'token/s/user')}")
            words.append(text)
            body.append(f'<circle cx="{_f(px(x))}" cy="{_f(py(y))}" r="8" fill="{s.colour}" '
                        f'fill-opacity="0.85" stroke="#000" stroke-width="1.5">'
                        f'<title>{_e(text)}</title></circle>')
    # the legend: one line per system, top right inside the plot
    # the legend under the axis title, one line per system (none for a single system)
    lx = ml
    for i, s in enumerate(series if len(series) > 1 else ()):
        ly = height + 16 + i * 22
        name = s.name if len(s.name) <= 80 else s.name[:79] + "…"
        body.append(f'<line x1="{lx}" x2="{lx + 22}" y1="{ly - 4}" y2="{ly - 4}" '
                    f'stroke="{s.colour}" stroke-width="3"/><circle cx="{lx + 11}" '
                    f'cy="{ly - 4}" r="5" fill="{s.colour}" stroke="#000"/>'
                    f'<text x="{lx + 30}" y="{ly}">{_e(name)}</text>')
    height += 22 * len(series) + 8 if len(series) > 1 else 0
    desc = "Chosen points: " + "; ".join(words) if words else "No chosen point has an " \
        "interactivity."
    return _svg(width, height, "Throughput against interactivity, with the chosen points",
                desc, body, "frontier")


# ---- sensitivity ------------------------------------------------------------------------------

def tornado_chart(rows: Sequence[tuple[str, float, float, str, str]], base: float, unit: str,
                  name: str | None = None) -> Markup:
    """Horizontal bars from the output at each input's low to its high value, around the
    base (a vertical line); ``rows`` are (label, output at low, output at high, low text,
    high text), largest swing first."""
    width, row_h, ml, mr, mt = 760, 30, 290, 20, 28
    height = mt + row_h * len(rows) + 34
    values = [v for r in rows for v in r[1:3] if math.isfinite(v)] + [base]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.05 or abs(base) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad
    pw = width - ml - mr

    def px(v: float) -> float:
        return ml + pw * (v - lo) / (hi - lo)

    body = [f'<line x1="{_f(px(base))}" x2="{_f(px(base))}" y1="{mt - 8}" '
            f'y2="{mt + row_h * len(rows)}" stroke="#1b1f24" stroke-width="1.5"/>',
            f'<text x="{_f(px(base))}" y="{mt - 12}" text-anchor="middle">base '
            f'{_e(display.format_quantity(base, unit, name))}</text>']
    words = []
    for i, (label, at_low, at_high, low_text, high_text) in enumerate(rows):
        y = mt + i * row_h
        a, b = sorted((at_low, at_high))
        body.append(f'<text x="{ml - 8}" y="{y + row_h / 2 + 4}" text-anchor="end">'
                    f'{_e(label if len(label) <= 38 else label[:37] + "…")}</text>')
        if math.isfinite(a) and math.isfinite(b):
            for v0, v1, colour in ((a, min(b, base), COLOURS[0]), (max(a, base), b,
                                                                    COLOURS[1])):
                if v1 > v0:
                    body.append(f'<rect x="{_f(px(v0))}" y="{y + 5}" width="{_f(px(v1) - px(v0))}"'
                                f' height="{row_h - 10}" fill="{colour}"/>')
        text = (f"{label}: {display.format_quantity(at_low, unit, name)} at {low_text}, "
                f"{display.format_quantity(at_high, unit, name)} at {high_text}")
        words.append(text)
        body.append(f'<rect x="{ml}" y="{y}" width="{pw}" height="{row_h}" fill="transparent">'
                    f'<title>{_e(text)}</title></rect>')
    body.append(f'<text x="{ml}" y="{height - 8}">Below the base</text>'
                f'<rect x="{ml + 110}" y="{height - 19}" width="12" height="12" '
                f'fill="{COLOURS[0]}"/><text x="{ml + 180}" y="{height - 8}">Above the base'
                f'</text><rect x="{ml + 290}" y="{height - 19}" width="12" height="12" '
                f'fill="{COLOURS[1]}"/>')
    return _svg(width, height, "Tornado: the output as each input moves alone",
                "; ".join(words), body, "tornado")


def histogram(edges: Sequence[float], counts: Sequence[int], unit: str,
              marks: Sequence[tuple[str, float]] = (), name: str | None = None) -> Markup:
    """Bars of a histogram (``len(edges) == len(counts) + 1``) with labelled vertical marks
    (P10, P50, P90)."""
    width, height, ml, mr, mt, mb = 720, 300, 56, 16, 24, 52
    pw, ph = width - ml - mr, height - mt - mb
    lo, hi = float(edges[0]), float(edges[-1])
    if hi <= lo:
        hi = lo + 1.0
    top = max(max(counts, default=0), 1)
    yt = nice_ticks(0, top)

    def px(v: float) -> float:
        return ml + pw * (v - lo) / (hi - lo)

    def py(c: float) -> float:
        return mt + ph - ph * c / yt[-1]

    body = [f'<line x1="{ml}" x2="{ml + pw}" y1="{mt + ph}" y2="{mt + ph}" stroke="#57606a"/>']
    for t in yt:
        body.append(f'<text x="{ml - 6}" y="{_f(py(t) + 4)}" text-anchor="end">'
                    f'{_e(display.format_number(t, "", "node_accelerators"))}</text>'
                    f'<line x1="{ml}" x2="{ml + pw}" y1="{_f(py(t))}" y2="{_f(py(t))}" '
                    f'stroke="#eaeef2"/>')
    for i, c in enumerate(counts):
        x0, x1 = px(edges[i]), px(edges[i + 1])
        body.append(f'<rect x="{_f(x0)}" y="{_f(py(c))}" width="{_f(max(x1 - x0 - 1, 0.5))}" '
                    f'height="{_f(mt + ph - py(c))}" fill="{COLOURS[0]}"/>')
    for t in nice_ticks(lo, hi, 6):
        if lo <= t <= hi:
            body.append(f'<text x="{_f(px(t))}" y="{mt + ph + 18}" text-anchor="middle">'
                        f'{_e(display.format_number(t, unit, name))}</text>')
    body.append(f'<text x="{ml + pw / 2}" y="{height - 10}" text-anchor="middle">'
                f'{_e(display.label(name or ""))} [{_e(display.unit_words(unit))}]</text>')
    words = []
    for i, (label, v) in enumerate(marks):
        if not math.isfinite(v):
            continue
        words.append(f"{label} {display.format_quantity(v, unit, name)}")
        body.append(f'<line x1="{_f(px(v))}" x2="{_f(px(v))}" y1="{mt}" y2="{mt + ph}" '
                    f'stroke="{COLOURS[4]}" stroke-dasharray="5 3" stroke-width="1.5"/>'
                    f'<text x="{_f(px(v) + 3)}" y="{mt + 12 + 14 * (i % 3)}" '
                    f'fill="{COLOURS[4]}">{_e(label)}</text>')
    return _svg(width, height, "Monte Carlo: how often each output value came up",
                "; ".join(words), body, "histogram")


# ---- rate and load by hour -------------------------------------------------------------------

def _days(values: Sequence[float]) -> list[tuple[str, list[float]]]:
    """(day type, its 24 values): weekdays and weekend days for 48 values, else one day."""
    v = [float(x) for x in values]
    if len(v) == 48:
        return [("Weekdays", v[:24]), ("Weekend days", v[24:])]
    return [("Every day", v[:24])]


def _span_text(day: list[float], top: float) -> str:
    """``16:00-21:00``: the hours at ``top`` (runs joined; the first three runs)."""
    runs, start = [], None
    for h in range(25):
        on = h < 24 and math.isclose(day[h], top, rel_tol=1e-9, abs_tol=1e-12)
        if on and start is None:
            start = h
        elif not on and start is not None:
            runs.append(f"{start:02d}:00-{h:02d}:00")
            start = None
    return ", ".join(runs[:3]) + (" and others" if len(runs) > 3 else "")


def hourly_chart(rate: Sequence[float] | None, load: Sequence[float],
                 flat_rate: float | None = None) -> Markup:
    """The energy rate [USD/kWh, the year's average of each hour] above and the load
    [fraction of the hour serving] below, by hour of the day (local time), as steps: one
    line a day type (weekdays solid, weekend days dashed when the 48 values tell them
    apart). ``rate`` None: a flat price (``flat_rate``, drawn level when given)."""
    if rate is None and flat_rate is not None:
        rate = [flat_rate] * len(load)
    rate_days = _days(rate) if rate is not None else []
    load_days = _days(load)
    if len(rate_days) != len(load_days) and rate_days:  # one of them by day type
        rate_days = _days(list(rate) * 2 if len(rate) == 24 else rate)
        load_days = _days(list(load) * 2 if len(load) == 24 else load)
    width, ml, mr = 720, 78, 30
    top_h, gap, bot_h = 170, 64, 120
    legend_h = 40
    mt = 16 + legend_h
    pw = width - ml - mr
    rate_top = mt
    load_top = mt + top_h + gap
    height = load_top + bot_h + 58
    styles = [(COLOURS[0], ""), (COLOURS[4], ' stroke-dasharray="7 4"')]

    def px(h: float) -> float:
        return ml + pw * h / 24

    body = []
    # the legend: one entry a day type
    x = ml
    for i, (name, _) in enumerate(load_days):
        colour, dash = styles[i]
        body.append(f'<line x1="{x}" x2="{x + 28}" y1="{18}" y2="{18}" stroke="{colour}" '
                    f'stroke-width="3"{dash}/><text x="{x + 36}" y="{22}">{_e(name)}</text>')
        x += 36 + 9 * len(name) + 28

    def panel(top: float, h: float, days, ticks: list[float], axis: str, fill: bool,
              tick_text) -> None:
        lo, hi = ticks[0], ticks[-1]

        def py(v: float) -> float:
            return top + h - h * (v - lo) / (hi - lo)

        body.append(f'<rect x="{ml}" y="{top}" width="{pw}" height="{h}" fill="#fff" '
                    f'stroke="#d0d7de"/>')
        for t in ticks:
            body.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{_f(py(t))}" y2="{_f(py(t))}" '
                        f'stroke="#eaeef2"/><text x="{ml - 6}" y="{_f(py(t) + 4)}" '
                        f'text-anchor="end">{_e(tick_text(t))}</text>')
        for hr in range(0, 25, 3):
            body.append(f'<line x1="{_f(px(hr))}" x2="{_f(px(hr))}" y1="{top}" '
                        f'y2="{top + h}" stroke="#eaeef2"/><text x="{_f(px(hr))}" '
                        f'y="{top + h + 18}" text-anchor="middle">{hr:02d}:00</text>')
        body.append(f'<text x="{ml}" y="{top - 8}" font-weight="600">{_e(axis)}</text>')
        for i, (_, day) in enumerate(days):
            colour, dash = styles[i]
            pts = []
            for hr, v in enumerate(day):
                pts += [(px(hr), py(v)), (px(hr + 1), py(v))]
            d = " ".join(f"{'M' if j == 0 else 'L'}{_f(a)},{_f(b)}" for j, (a, b) in
                         enumerate(pts))
            if fill and i == 0:
                body.append(f'<path d="{d} L{_f(px(24))},{_f(py(lo))} L{_f(px(0))},'
                            f'{_f(py(lo))} Z" fill="{colour}" fill-opacity="0.15"/>')
            body.append(f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="2.5"'
                        f'{dash}/>')
        for hr in range(24):  # each hour's values on hover
            said = "; ".join(f"{name.lower()} {tick_text(day[hr], True)}" for name, day in days)
            body.append(f'<rect x="{_f(px(hr))}" y="{top}" width="{_f(pw / 24)}" '
                        f'height="{h}" fill="transparent"><title>{hr:02d}:00-{hr + 1:02d}:00: '
                        f'{_e(said)}</title></rect>')

    words = []
    if rate_days:
        top_rate = max(max(d) for _, d in rate_days)
        panel(rate_top, top_h, rate_days, nice_ticks(0, top_rate * 1.1 or 0.1, 4),
              "Energy rate [USD per kWh]" + (", the flat price" if flat_rate is not None
                                            and rate is not None and len(set(rate)) == 1
                                            else ", the year's average of each hour"),
              False, lambda t, full=False: (display.format_quantity(t, "USD/kWh",
                                                                    "tariff_rate_by_hour")
                                            if full else _tick(t)))
        for name, day in rate_days:
            hi, lo = (display.format_quantity(v, "USD/kWh", "tariff_rate_by_hour")
                      for v in (max(day), min(day)))
            words.append(f"{name}: rate {lo}" + (f" to {hi}, highest "
                                                 f"{_span_text(day, max(day))}"
                                                 if max(day) > min(day) else " in every hour"))
    else:
        body.append(f'<text x="{ml}" y="{rate_top + 40}">No rate by hour: the flat price '
                    f'applies in every hour.</text>')
    panel(load_top, bot_h, load_days, [0, 0.25, 0.5, 0.75, 1.0],
          "Load [fraction of the hour serving]", True,
          lambda t, full=False: f"{t:.3g}" if full else _tick(t))
    for name, day in load_days:
        hi, lo = max(day), min(day)
        words.append(f"{name}: load {lo:.3g}" + (f" to {hi:.3g}, highest "
                                                 f"{_span_text(day, hi)}" if hi > lo
                                                 else " in every hour"))
    body.append(f'<text x="{ml + pw / 2}" y="{height - 12}" text-anchor="middle">'
                f'Hour of the day [local time]</text>')
    return _svg(width, height, "Energy rate and load by hour of the day", "; ".join(words),
                body, "hourly")


# ---- an agent's task, step by step -----------------------------------------------------------

MARKED_STEPS = 60  # at most this many steps: each step's point drawn, with its value on hover


@dataclass(frozen=True)
class StepSeries:
    """One system on a chart by step: a value [s] for each step 1..n."""
    name: str
    values: Sequence[float]
    colour: str = COLOURS[0]


def _step_ticks(n: int) -> list[int]:
    """Whole step numbers for the x axis: step 1 and round numbers up to ``n``."""
    ticks = [int(t) for t in nice_ticks(0, max(n, 1)) if float(t).is_integer() and 1 < t <= n]
    return [1, *ticks] if not ticks or ticks[0] > 1 else ticks


def _drawn(points: list[tuple[float, float]], tolerance: float = 0.05) -> list[tuple[float,
                                                                                       float]]:
    """The vertices a line through ``points`` [px] needs: a vertex within ``tolerance`` px
    of the straight line between its neighbours is left out (ten thousand steps of one
    latency are one segment)."""
    if len(points) <= 2:
        return points
    kept = [points[0]]
    for i in range(1, len(points) - 1):
        here, after = points[i], points[i + 1]
        (x0, y0), (x1, y1), (x2, y2) = kept[-1], here, after
        span = math.hypot(x2 - x0, y2 - y0)
        off = abs((x2 - x0) * (y0 - y1) - (x0 - x1) * (y2 - y0)) / span if span else 0.0
        if off > tolerance:
            kept.append(here)
    kept.append(points[-1])
    return kept


def step_chart(series: Sequence[StepSeries], *, title: str, axis: str, css_class: str,
               target: float | None = None, target_label: str = "") -> Markup:
    """A line a system through its value [s] at each step (x: step 1..n, y: seconds; a
    point drawn at each step when there are at most :data:`MARKED_STEPS`), and
    ``target`` [s] as a dashed horizontal line. Each system is a ``<g class="series">`` with
    ``data-series`` (its name) and ``data-points`` (its number of steps)."""
    n = max((len(s.values) for s in series), default=0)
    width, height = 720, 380
    ml, mr, mt, mb = 78, 16, 16, 58
    pw, ph = width - ml - mr, height - mt - mb
    ys = [float(v) for s in series for v in s.values if math.isfinite(v)]
    if not n or not ys:
        return _svg(width, 80, title, "no system here has a latency by step", [
            '<text x="10" y="40">No latency by step is known for these systems.</text>'],
            css_class)
    top = max(ys + ([target] if target is not None and math.isfinite(target) else []))
    yt = nice_ticks(0, top * 1.08 or 1.0)
    y1 = yt[-1]

    def px(step: float) -> float:
        return ml + pw / 2 if n == 1 else ml + pw * (step - 1) / (n - 1)

    def py(v: float) -> float:
        return mt + ph - ph * v / y1

    body = _plot_area((ml, mt, pw, ph), _step_ticks(n), yt, px, py, height, "Step")
    body.append(f'<text transform="translate(16 {mt + ph / 2}) rotate(-90)" '
                f'text-anchor="middle">{_e(axis)}</text>')
    if target is not None and math.isfinite(target):
        body.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{_f(py(target))}" '
                    f'y2="{_f(py(target))}" stroke="#57606a" stroke-dasharray="6 4"/>'
                    f'<text x="{ml + 6}" y="{_f(py(target) - 6)}" fill="#57606a">'
                    f'{_e(target_label)}</text>')
    words = []
    for s in series:
        values = [float(v) for v in s.values]
        shown = [(i + 1, v) for i, v in enumerate(values) if math.isfinite(v)]
        if not shown:
            continue
        q = [display.format_quantity(v, "s") for v in (min(values), max(values))]
        words.append(f"{s.name}: {q[0]}" + (f" to {q[1]}" if q[1] != q[0] else "") +
                     f" over {len(values):,} steps")
        d = " ".join(f"{'M' if i == 0 else 'L'}{_f(x)},{_f(y)}"
                     for i, (x, y) in enumerate(_drawn([(px(k), py(v)) for k, v in shown])))
        parts = [f'<g class="series" data-series="{_e(s.name)}" data-points="{len(shown)}">',
                 f'<path d="{d}" fill="none" stroke="{s.colour}" stroke-width="2.5"/>']
        if n <= MARKED_STEPS:
            for k, v in shown:
                parts.append(f'<circle cx="{_f(px(k))}" cy="{_f(py(v))}" r="3.5" '
                             f'fill="{s.colour}"><title>{_e(s.name)}, step {k}: '
                             f'{_e(display.format_quantity(v, "s"))}</title></circle>')
        body.append("".join(parts) + "</g>")
    for i, s in enumerate(series if len(series) > 1 else ()):  # the legend, under the axis
        ly = height + 16 + i * 22
        name = s.name if len(s.name) <= 80 else s.name[:79] + "\u2026"
        body.append(f'<line x1="{ml}" x2="{ml + 22}" y1="{ly - 4}" y2="{ly - 4}" '
                    f'stroke="{s.colour}" stroke-width="3"/><text x="{ml + 30}" y="{ly}">'
                    f'{_e(name)}</text>')
    height += 22 * len(series) + 8 if len(series) > 1 else 0
    if target is not None:
        words.append(f"{target_label}: the dashed line")
    return _svg(width, height, title, "; ".join(words), body, css_class)
