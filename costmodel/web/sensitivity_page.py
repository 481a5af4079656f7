"""The Sensitivity page (``/sensitivity``): for the scenario on the Price page (the same query
string), a tornado (each input moved alone, base -/+ the swing, ranked by how much the output
moves) and a Monte Carlo histogram of the output with the inputs that move it most drawn
together.

Default distributions: each of the :data:`MC_INPUTS` inputs with the largest tornado swings is
drawn from ``triangular(low, base, high)`` over the tornado's own ends (base -/+ the swing,
kept inside the input's valid range), so the two charts tell one story. Draws are bounded
(:data:`MAX_DRAWS`) and the seed fixed, so a link reproduces the histogram.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from flask import render_template, request

from .. import app
from ..http.services import services
from ..model.errors import InputError
from ..render import display
from ..render.report import money_line
from .charts import histogram, tornado_chart
from .downloads import curl_line, json_response, xlsx_response
from .guard import computes
from .scenario_form import ScenarioForm, form_catalog, scenario_form
from .session import need
from .site import blueprint

__all__ = ["OUTPUTS", "MC_INPUTS", "DEFAULT_DRAWS", "MAX_DRAWS", "SEED", "SensitivityArgs",
           "sensitivity_args", "triangular_from"]

OUTPUTS = ("cost_per_mtok_total", "price_per_mtok_total", "cost_per_mtok_energy",
           "cost_per_mtok_capex")
MC_INPUTS = 5  # inputs drawn in the Monte Carlo: the largest tornado swings
DEFAULT_DRAWS, MAX_DRAWS = 20_000, 200_000
DEFAULT_SWING = "20"  # [%]
SEED = 1
BINS = 40


@dataclass
class SensitivityArgs:
    """The page's own fields (beside the scenario form's): output, swing [fraction], draws."""
    values: dict[str, str]
    output: str
    swing: float
    draws: int
    errors: dict[str, str]


def sensitivity_args(args) -> SensitivityArgs:
    values = {"sa_output": args.get("sa_output", OUTPUTS[0]).strip(),
              "sa_swing": args.get("sa_swing", DEFAULT_SWING).strip()[:20],
              "sa_draws": args.get("sa_draws", str(DEFAULT_DRAWS)).strip()[:20]}
    errors = {}
    output = values["sa_output"] if values["sa_output"] in OUTPUTS else OUTPUTS[0]
    if values["sa_output"] not in OUTPUTS:
        errors["sa_output"] = f"expected one of {', '.join(OUTPUTS)}"
    swing = 0.2
    try:
        swing = float(values["sa_swing"].rstrip("% ")) / 100
        if not 0 < swing < 1:
            raise ValueError
    except ValueError:
        errors["sa_swing"] = "must be a percentage above 0 and below 100"
        swing = 0.2
    draws = DEFAULT_DRAWS
    try:
        draws = int(values["sa_draws"].replace(",", ""))
        if not 1 <= draws <= MAX_DRAWS:
            raise ValueError
    except ValueError:
        errors["sa_draws"] = f"must be a whole number from 1 to {MAX_DRAWS:,}"
        draws = DEFAULT_DRAWS
    return SensitivityArgs(values, output, swing, draws, errors)


def _text(value: float, unit: str) -> str:
    """A value for the distribution mini-language, to 6 significant figures:
    ``0.0871 USD/kWh``, ``0.7``."""
    return f"{value:.6g}" if unit == "dimensionless" else f"{value:.6g} {unit}"


def triangular_from(tornado) -> dict[str, str]:
    """``key -> "triangular(low, base, high)"`` for the :data:`MC_INPUTS` inputs of largest
    finite swing whose ends differ."""
    out = {}
    for bar in sorted(tornado.bars, key=lambda b: -b.swing if math.isfinite(b.swing) else 0):
        if len(out) == MC_INPUTS:
            break
        if not math.isfinite(bar.swing) or bar.swing == 0 or bar.low >= bar.high:
            continue
        mode = min(max(bar.base, bar.low), bar.high)
        out[bar.key] = (f"triangular({_text(bar.low, bar.unit)}, {_text(mode, bar.unit)}, "
                        f"{_text(bar.high, bar.unit)})")
    return out


def _run(form: ScenarioForm, sa: SensitivityArgs):
    """(tornado analysis, Monte Carlo analysis, distributions) or Nones with the errors put
    beside the fields."""
    if not form.valid or sa.errors:
        return None, None, {}
    spec = app.ScenarioSpec(app.InlineScenario(form.mapping))
    with services().sessions(write=False) as session:
        ctx = services().context(session)
        try:
            t = app.tornado(ctx, spec, output=sa.output, swing=sa.swing)
            dists = triangular_from(t.result)
            mc = app.monte_carlo(ctx, spec, dists, draws=sa.draws, seed=SEED,
                                 output=sa.output, bins=BINS, truncate=True) if dists else None
        except InputError as exc:
            form.add_errors(exc)
            return None, None, {}
    return t, mc, dists


def _bodies(form: ScenarioForm, sa: SensitivityArgs, dists: dict[str, str]):
    tornado_body = {"scenario": form.price_request(), "output": sa.output, "swing": sa.swing}
    mc_body = {"scenario": form.price_request(), "output": sa.output,
               "distributions": dists, "draws": sa.draws, "seed": SEED, "bins": BINS,
               "truncate": True}
    return tornado_body, mc_body


@blueprint.get("/sensitivity")
@computes("POST", "/api/v1/sensitivity/montecarlo")
def sensitivity_page():
    need("read")
    form, sa = scenario_form(request.args), sensitivity_args(request.args)
    t, mc, dists = _run(form, sa)
    with services().sessions(write=False) as session:
        catalog = form_catalog(services().context(session))
    view = None
    if t is not None:
        tr = t.result
        rows = [(display.label(b.key), b.output_low, b.output_high,
                 display.format_quantity(b.low, b.unit, b.key.replace(".", "_")),
                 display.format_quantity(b.high, b.unit, b.key.replace(".", "_")))
                for b in tr.bars if math.isfinite(b.swing)][:12]
        view = {"tornado": tr, "tornado_chart": tornado_chart(rows, tr.base, tr.unit,
                                                              tr.output),
                "mc": mc.result if mc else None,
                "histogram": histogram(mc.result.edges, mc.result.counts, mc.result.unit,
                                       [("P10", mc.result.p10), ("P50", mc.result.p50),
                                        ("P90", mc.result.p90)], mc.result.output)
                if mc else None,
                "dists": dists, "name": t.scenario_name}
    money_note = money_line(t.priced.result.disclosure(sources=False)["money"]) if t else None
    tornado_body, mc_body = _bodies(form, sa, dists)
    curl = curl_line("/api/v1/sensitivity/tornado", tornado_body)
    if dists:
        curl += "\n\n" + curl_line("/api/v1/sensitivity/montecarlo", mc_body)
    query = form.query + "&" + "&".join(f"{k}={v}" for k, v in sa.values.items())
    return render_template("web/sensitivity.html", form=form, catalog=catalog, sa=sa,
                           view=view, outputs=[(o, display.label(o)) for o in OUTPUTS],
                           curl=curl, query=query, money_note=money_note,
                           max_draws=MAX_DRAWS), 200 if view else 422


def _analyses_or_page():
    form, sa = scenario_form(request.args), sensitivity_args(request.args)
    t, mc, dists = _run(form, sa)
    if t is None:
        return None, sensitivity_page()
    return (t, mc, dists), None


@blueprint.get("/sensitivity.xlsx")
@computes("POST", "/api/v1/workbook")
def sensitivity_workbook():
    need("read")
    out, page = _analyses_or_page()
    if page:
        return page
    t, mc, _ = out
    extra = [t.result] + ([mc.result] if mc else [])
    return xlsx_response(app.render_workbook([t.priced], sensitivity=extra))


@blueprint.get("/sensitivity.json")
@computes("POST", "/api/v1/sensitivity/montecarlo")
def sensitivity_json():
    need("read")
    out, page = _analyses_or_page()
    if page:
        return page
    t, mc, _ = out
    if request.args.get("analysis") == "montecarlo" and mc is not None:
        return json_response(mc.to_json(), "montecarlo.json")
    return json_response(t.to_json(), "tornado.json")
