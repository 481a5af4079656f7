"""The Plan page (``/plan``): for the scenario on the Price page (the same query string), the
fleet an average demand needs or the whole nodes (or racks) a power budget holds with a
planning headroom, and per gigawatt, and what it costs: the application
layer's :func:`costmodel.app.plan`, as ``costmodel plan`` and ``POST /api/v1/plan`` answer it,
with its one-page summary (PDF), the workbook of its scenario as the plan prices it (live
formulas; no plan sheet exists, so the fleet's counts and totals are the page's, the PDF's
and the JSON's), its JSON and the API call to download."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from flask import Response, render_template, request

from .. import app
from ..http.services import services
from ..model.errors import InputError
from ..model.units import UnitInputError, parse_quantity
from ..render.report import money_line
from .downloads import curl_line, json_response, xlsx_response
from .guard import computes
from .scenario_form import ScenarioForm, form_catalog, restate_bounds, scenario_form
from .session import need
from .site import blueprint

__all__ = ["PLAN_FIELDS", "PlanArgs", "plan_args"]

# the page's own fields: field -> (the request key, the unit a bare number is read in)
PLAN_FIELDS = {"pl_demand": ("demand", "token/s"), "pl_budget": ("power_budget", "W"),
               "pl_availability": ("availability", "dimensionless"),
               "pl_headroom": ("headroom", "dimensionless")}
_WORDS = {"demand": "pl_demand", "power_budget": "pl_budget", "availability": "pl_availability",
          "headroom": "pl_headroom", "deployment": "pl_deployment"}
DEPLOYMENT_CHOICES = [("node", "a node"), ("rack", "a rack")]
_FRACTIONS = ("pl_availability", "pl_headroom")  # answered in percent when typed so


@dataclass
class PlanArgs:
    """The page's fields as typed, the request's magnitudes [token/s, W, fraction], the
    deployment chosen (None: the default) and the errors by field."""
    values: dict[str, str]
    demand: float | None
    power_budget: float | None
    availability: float | None
    headroom: float | None
    deployment: str | None
    errors: dict[str, str]

    @property
    def body(self) -> dict:
        """The plan fields of ``POST /api/v1/plan``'s body, as typed (a fraction typed in
        percent as the number the API takes: ``10 %`` is 0.1)."""
        body = {key: _with_unit(self.values[name], unit)
                for name, (key, unit) in PLAN_FIELDS.items() if self.values[name]}
        for key in ("availability", "headroom"):
            if key in body and getattr(self, key) is not None:
                body[key] = getattr(self, key)
        if self.deployment is not None:
            body["deployment"] = self.deployment
        return body


def _with_unit(text: str, unit: str):
    try:
        number = float(text)
    except ValueError:
        return text
    return number if unit == "dimensionless" else f"{text} {unit}"


_PERCENT = re.compile(r"\s*[-+]?[\d.eE+-]+\s*(?:%|percent)\s*")


def _as_typed(name: str, message: str, typed: str) -> str:
    """A percent-typed availability's or headroom's message in percent (``got 0 %``, not
    ``0 percent``)."""
    return restate_bounds(message, typed, "%", 0.01) if name in _FRACTIONS and \
        _PERCENT.fullmatch(typed) else message


def plan_args(args) -> PlanArgs:
    values = {name: str(args.get(name, "")).strip()[:60]
              for name in (*PLAN_FIELDS, "pl_deployment")}
    if not values["pl_demand"] and not values["pl_budget"]:
        values["pl_demand"] = "1e6"  # a first look: a million tokens a second
    errors: dict[str, str] = {}
    got: dict[str, float | None] = {}
    for name, (key, unit) in PLAN_FIELDS.items():
        got[key] = None
        if values[name]:
            try:
                got[key] = parse_quantity(_with_unit(values[name], unit), unit,
                                          allow_zero=key == "headroom",
                                          allow_negative=key == "headroom")
            except UnitInputError as exc:
                errors[name] = _as_typed(name, str(exc), values[name])
    # an availability typed in percent is answered in percent (the use case's words are in
    # the fraction it takes: "at most 1, got 1.5")
    a, typed = got["availability"], values["pl_availability"]
    if a is not None and a > 1 and _PERCENT.fullmatch(typed):
        errors["pl_availability"] = f"must be greater than zero and at most 100 %, got {typed}"
    h, typed = got["headroom"], values["pl_headroom"]
    if h is not None and not 0 <= h < 1 and _PERCENT.fullmatch(typed):
        errors["pl_headroom"] = f"must be at least 0 % and less than 100 %, got {typed}"
    if values["pl_demand"] and values["pl_budget"]:
        errors["pl_budget"] = "give a demand or a power budget, not both"
    return PlanArgs(values, got["demand"], got["power_budget"], got["availability"], h,
                    values["pl_deployment"] or None, errors)


def _plan(form: ScenarioForm, pa: PlanArgs):
    if not form.valid or pa.errors:
        return None
    req = app.PlanRequest(app.ScenarioSpec(app.InlineScenario(form.mapping)), pa.demand,
                          pa.power_budget, app.OWN_POINT, pa.availability, pa.headroom,
                          pa.deployment)
    with services().sessions(write=False) as session:
        try:
            return app.plan(services().context(session), req)
        except InputError as exc:
            plan_errors = [e for e in exc.errors if e[0] in _WORDS]
            for where, message in plan_errors:
                pa.errors[_WORDS[where]] = message
            if len(plan_errors) < len(exc.errors):
                form.add_errors(exc)
    return None


def _query(form: ScenarioForm, pa: PlanArgs) -> str:
    from urllib.parse import urlencode
    return form.query + "&" + urlencode(pa.values)


@blueprint.get("/plan")
@computes("POST", "/api/v1/plan")
def plan_page():
    need("read")
    form, pa = scenario_form(request.args), plan_args(request.args)
    planned = _plan(form, pa)
    with services().sessions(write=False) as session:
        catalog = form_catalog(services().context(session))
    body = {"scenario": form.price_request()["scenario"], **pa.body}
    view = planned.to_json() if planned else None
    # the fleet's tonnes a year where a grid factor is given (the form's pickers)
    emissions = [(key, tonnes, words) for key, tonnes, words in planned.emission_rows()
                 if math.isfinite(tonnes)] if planned else []
    return render_template("web/plan.html", form=form, catalog=catalog, pa=pa,
                           plan=planned, view=view, emissions=emissions,
                           money_note=money_line(view["disclosure"]["money"]) if view else None,
                           deployments=DEPLOYMENT_CHOICES,
                           curl=curl_line("/api/v1/plan", body), query=_query(form, pa)), \
        200 if planned else 422


def _download(answer):
    """``answer(plan)`` for the page's query, or the page with its errors."""
    need("read")
    planned = _plan(scenario_form(request.args), plan_args(request.args))
    return plan_page() if planned is None else answer(planned)


@blueprint.get("/plan.pdf")
@computes("POST", "/api/v1/plan", heavy=True)
def plan_pdf():
    return _download(lambda planned: Response(
        app.plan_pdf(planned), mimetype="application/pdf",
        headers={"Content-Disposition": 'attachment; filename="plan.pdf"'}))


@blueprint.get("/plan.xlsx")
@computes("POST", "/api/v1/workbook")
def plan_workbook():
    """The workbook of the plan's scenario as the plan prices it (live formulas; there is
    no plan sheet: the page says so, and the cover's title names the fleet)."""
    return _download(lambda planned: xlsx_response(app.plan_workbook(planned)))


@blueprint.get("/plan.json")
@computes("POST", "/api/v1/plan")
def plan_json():
    return _download(lambda planned: json_response(planned.to_json(), "plan.json"))
