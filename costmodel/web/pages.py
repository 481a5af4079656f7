"""The Price page (``/``) and the Compare page (``/compare``): parse the query string, call
the application layer with the service's context, render. Each page has its downloads: the
workbook (``.xlsx``), the JSON the API answers for the same request (``.json``) and that
request as a curl line.

Every figure is read from the application layer's result; nothing is priced here.
"""
from __future__ import annotations

import copy
import math
import tomllib
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, urlencode

import numpy as np
from flask import render_template, request

from .. import app
from ..app import saved as saved_scenarios
from ..app.keys import role_allows
from ..http.services import services as _services
from ..model.errors import Bound, InputError, UnreachablePoint
from ..model.profile import hourly_profile
from ..model.results import Result
from ..model.steps import MODEL
from ..model.units import UnitInputError, parse_quantity
from ..render.report import assumed_line, flexible_line, money_line
from ..sources.shipped import SHIPPED, shipped_scenarios
from .charts import COLOURS, Segment, Series, frontier_chart, hourly_chart, stacked_bar
from .disclosure import disclosure_lines
from .downloads import curl_line, json_response, xlsx_response
from .guard import computes
from .scenario_form import (
    FIELDS,
    MONEY_FIELDS,
    ScenarioForm,
    form_catalog,
    hour_span,
    money_table,
    restate_bounds,
    scenario_form,
)
from .session import need, signed_in
from .site import blueprint

__all__ = ["HEADLINE", "BREAKDOWN", "EFFICIENCY", "COMPARE_ROWS", "fixture_scenarios",
           "MAX_SYSTEMS", "DEFAULT_COMPARE", "Choice", "system_choice", "saved_titles"]

HEADLINE = ("price_per_mtok_total", "cost_per_mtok_total", "price_per_mtok_input",
            "price_per_mtok_output")
BREAKDOWN = (("cost_per_mtok_energy", "Energy"), ("cost_per_mtok_capex", "Capital"),
             ("cost_per_mtok_opex", "Operating"))
EFFICIENCY = ("throughput", "power_per_accelerator", "throughput_per_kw", "tokens_per_kwh",
              "joules_per_token", "bandwidth_per_watt", "cost_per_hour",
              "capex_per_accelerator", "emissions_per_mtok", "emissions_market_per_mtok",
              "embodied_per_mtok", "emissions_total_per_mtok", "emissions_market_total_per_mtok")
COMPARE_ROWS = ("price_per_mtok_total", "price_per_mtok_input", "price_per_mtok_output",
                "cost_per_mtok_total", "cost_per_mtok_energy", "cost_per_mtok_capex",
                "cost_per_mtok_opex", "throughput", "power_per_accelerator", "tokens_per_kwh",
                "joules_per_token", "cost_per_hour", "emissions_per_mtok",
                "emissions_market_per_mtok", "emissions_total_per_mtok",
                "emissions_market_total_per_mtok")
MIN_SYSTEMS, MAX_SYSTEMS = 2, 6
DEFAULT_COMPARE = ("fixture:curve-gpt-oss-120b-h100", "fixture:curve-gpt-oss-120b-b200",
                   "fixture:curve-gpt-oss-120b-mi300x")
FRONTIER_SAMPLES = 80  # points along each drawn frontier line


def unit_of(name: str) -> str:
    return MODEL.steps[name].unit


# ---- Price -------------------------------------------------------------------------------------

def _price(form: ScenarioForm, ctx) -> app.Priced | None:
    """The form's scenario priced, or None with the errors beside their fields."""
    if not form.valid:
        return None
    try:
        return app.price(ctx, app.ScenarioSpec(app.InlineScenario(form.mapping)))
    except InputError as exc:
        form.add_errors(exc)
        return None


def _flexible_share(form: ScenarioForm, args) -> float | None:
    """The Price page's what-if ``flexible_share`` (a share of the load moved to the cheapest
    hours; a bare number in percent), kept in ``form.values``; None when blank; an error
    beside the field when it is not a share from 0 to 100%."""
    typed = text = str(args.get("flexible_share", "") or "").strip()[:200]
    form.values["flexible_share"] = text
    if not text:
        return None
    try:
        float(text)
        text = f"{text} %"
    except ValueError:
        pass
    try:
        share = parse_quantity(text, "dimensionless")
    except UnitInputError as exc:  # said in percent, as the field is typed
        form.errors["flexible_share"] = restate_bounds(str(exc), typed, "%", 0.01)
        return None
    low, high = app.FLEXIBLE_SHARE
    if not low <= share <= high:
        bound = Bound("at most", high, share) if share > high else Bound("at least", low, share)
        form.errors["flexible_share"] = restate_bounds(bound, typed, "%", 0.01)
        return None
    return share


def _what_if(priced: app.Priced, share: float, form: ScenarioForm) -> app.FlexibleShift | None:
    try:
        return app.shift_flexible(priced, share)
    except InputError as exc:
        for path, message in exc.errors:
            form.errors.setdefault(path if path == "flexible_share" else "", message)
        return None


# ---- the Price page's Profit section ------------------------------------------------------------

# a Profit field -> the market table's key it sets
PROFIT_FIELDS = {"market": "catalog", "market_input": "price_input",
                 "market_cached_input": "price_cached_input", "market_output": "price_output",
                 "revenue_share": "revenue_share", "cached_share": "cached_share"}
_PROFIT_FIELD_OF = {**{f"market.{key}": field for field, key in PROFIT_FIELDS.items()},
                    "market.price": "market", "market": "market"}
_SHARES = ("revenue_share", "cached_share")
# the figures of the Profit section, in order (None: a break between groups)
PROFIT_ROWS = ("market_price_input", "market_price_cached_input", "market_price_output",
               "market_price_per_mtok", None, "revenue_per_hour", "revenue_share_per_hour",
               "net_revenue_per_hour", "cost_per_hour", "profit_per_hour", "profit_margin",
               None, "profit_per_month", "profit_per_gw_year", "break_even_price",
               "break_even_factor", "tokens_per_usd")
PROFIT_LABELS = {
    "market_price_input": "Market price per million input tokens",
    "market_price_cached_input": "Market price per million cached input tokens",
    "market_price_output": "Market price per million output tokens",
    "market_price_per_mtok": "Market price per million tokens (the workload's mix)",
    "revenue_per_hour": "Revenue per accelerator-hour",
    "revenue_share_per_hour": "Revenue share paid",
    "net_revenue_per_hour": "Revenue kept",
    "cost_per_hour": "Cost per accelerator-hour (every hour, served or idle)",
    "profit_per_hour": "Profit per accelerator-hour",
    "profit_margin": "Margin on revenue",
    "profit_per_month": "Profit per accelerator-month (730 h)",
    "profit_per_gw_year": "Profit per GW-year of facility power",
    "break_even_price": "Break-even market price per million tokens",
    "break_even_factor": "Break-even: share of every market price",
    "tokens_per_usd": "Tokens per unit of cost",
}


def market_choices(ctx) -> list[tuple[str, str]]:
    """The Profit section's market picker: each offer's latest version (its reference
    without a date), then every dated version, as ``(reference, label)``."""
    catalog = ctx.catalog()
    latest: dict[str, str] = {}
    dated = []
    for key in catalog.keys("market_price"):
        d = catalog.get("market_price", key, "market").data
        offer, _, when = key.rpartition("@")
        latest[offer] = max(latest.get(offer, ""), when)

        def price(name: str, d=d) -> str:
            q = d.get(name) or {}
            return f"{q.get('value'):g} {q.get('unit')}" if isinstance(q, dict) else str(q)
        prices = (f"blended {price('price')}" if "price" in d else ", ".join(
            f"{kind} {price(f'price_{kind}')}" for kind in ("input", "output")
            if f"price_{kind}" in d))
        dated.append((key, f"{d.get('model') or offer} ({d.get('provider')}), {when}: "
                           f"{prices}"))
    return [*((offer, f"{offer}, latest version ({when})") for offer, when in
              sorted(latest.items())), *dated]


def profit_market(form: ScenarioForm, args) -> dict[str, Any] | None:
    """The Profit section's market (kept in ``form.values``): a catalog entry and/or typed
    prices (a bare number is USD per million tokens), the shares (a bare number is a
    percentage); None when no market price is chosen or typed (an error beside the market
    when only shares are)."""
    table: dict[str, Any] = {}
    for name, key in PROFIT_FIELDS.items():
        text = str(args.get(name, "") or "").strip()[:200]
        form.values[name] = text
        if not text:
            continue
        try:
            float(text)
            text = f"{text} %" if name in _SHARES else f"{text} USD/Mtok" if key != "catalog" \
                else text
        except ValueError:
            pass
        table[key] = text
    if not table.keys() - set(_SHARES):
        if table:
            form.errors.setdefault("market", "choose a market price (or type prices) for the "
                                             "shares to apply to")
        return None
    return table


def profit_query(form: ScenarioForm) -> str:
    """The page's query with its Profit fields: what the Profit downloads price."""
    return urlencode([*((k, form.values[k]) for k in FIELDS),
                      *((k, form.values.get(k, "")) for k in PROFIT_FIELDS)])


def _sell(ctx, priced: app.Priced, table: dict[str, Any],
          form: ScenarioForm) -> app.SystemProfit | None:
    """The priced scenario sold at the page's market, or None with the errors beside their
    fields (a share's bounds said in percent, as typed)."""
    try:
        return app.sell(ctx, priced, app.MarketSpec(table, given_by="typed on the Price page"))
    except InputError as exc:
        for path, message in exc.errors:
            where = _PROFIT_FIELD_OF.get(path, "market")
            if where in _SHARES:
                message = restate_bounds(message, form.values[where], "%", 0.01)
            form.errors.setdefault(where, message)
        return None


def profit_view(sold: app.SystemProfit) -> dict[str, Any]:
    """The Profit section's rows ``(name, label, value, unit)`` (money in the currency
    results are shown in) and the market's disclosure."""
    rows: list[tuple[str, str, float | None, str] | None] = []
    for name in PROFIT_ROWS:
        if name is None:
            rows.append(None)
            continue
        if name == "cost_per_hour":
            value, unit = sold.priced.result.shown(name)
        else:
            value, unit = sold.shown(name)
        rows.append((name, PROFIT_LABELS[name], value, unit))
    m = sold.market
    return {"rows": rows, "market": m, "utilisation": sold.priced.result.scenario.utilisation,
            "sold": sold, "rules": app.profit_rules()}


def profile_view(result: Result) -> dict[str, Any] | None:
    """The chart and table of the energy rate (the year's average of each hour) and the load
    (fraction of the hour serving) by hour, from the declared calculation's profile steps;
    None when the scenario has neither a tariff nor a load shape.

    ``rows``: per hour of the day, ``(hour text, [(rate, load) per day type])`` [USD/kWh,
    fraction]; ``days``: the day types (weekdays and weekend days when the tariff or the
    load tells them apart)."""
    profile = hourly_profile(result.scenario)
    if profile is None:
        return None
    hours = profile.hours
    rate = profile.by_hour("tariff_rate_by_hour")
    load = profile.values["load_by_hour"][0].tolist()
    flat = None
    if rate is None:
        flat = (result.disclosure()["electricity"].get("price") or {}).get("value")
    shown_rate = rate if rate is not None else ([flat] * hours if flat is not None else None)
    days = ["Weekdays", "Weekend days"] if hours == 48 else ["Every day"]
    rows = []
    for h in range(24):
        rows.append((hour_span(h), [(shown_rate[h + 24 * d] if shown_rate else None,
                                     load[h + 24 * d]) for d in range(len(days))]))
    return {"chart": hourly_chart(rate, load, flat), "rows": rows, "days": days,
            "tariff": rate is not None, "shaped": result.scenario.load is not None}


def _tokens(n: float) -> str:
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.6g}"


def per_request_view(result: Result) -> dict[str, Any]:
    """The price and the cost of one request [``unit``: the currency results are shown in]
    (the engine's ``price_per_request`` and ``cost_per_request``, as the result shows them)
    with their denominator: the tokens of the counted kind in one
    request of the workload (``tokens_per_request``: ISL + OSL for mixed tokens, the OSL
    for output tokens, the ISL for input tokens), and that denominator in words."""
    s = result.scenario
    kind, isl, osl = s.operating_point.token_kind, s.workload.isl, s.workload.osl
    tokens = result.value("tokens_per_request")
    if kind == "mixed":
        words = (f"{_tokens(isl)} input + {_tokens(osl)} output tokens = "
                 f"{_tokens(tokens)} tokens")
    elif kind == "output":
        words = (f"{_tokens(osl)} output tokens (the figures per million are per output "
                 f"token: the {_tokens(isl)} input tokens are paid for in them)")
    else:
        words = (f"{_tokens(isl)} input tokens (the figures per million are per input token: "
                 f"the {_tokens(osl)} output tokens are paid for in them)")
    price, unit = result.shown("price_per_request")
    return {"price": price, "cost": result.shown("cost_per_request")[0], "unit": unit,
            "tokens": tokens,
            "tokens_text": _tokens(tokens), "words": words, "model": s.workload.model}


def save_offer(args) -> dict[str, Any]:
    """What the Price page offers for saving the scenario on screen (saved through the Saved
    page's ``POST /saved/new``, the same use case and repository): ``can``: the signed-in
    key may write; ``who``: that key (None signed out); ``origin``: the saved scenario the
    page was opened from (``from_saved=<id>``), its name, latest revision and ``based_on``
    (``based_on=<n>``: its latest revision when the page was opened from it, which a save as
    its next revision expects); ``missing``: a ``from_saved`` id no scenario has."""
    who = signed_in()
    offer: dict[str, Any] = {"who": who, "can": who is not None and
                             role_allows(who.role, "editor"), "origin": None, "missing": None}
    raw = str(args.get("from_saved", "")).strip()
    if raw:
        if not (raw.isdigit() and 1 <= int(raw) <= saved_scenarios.MAX_ID):
            offer["missing"] = raw[:20]
            return offer
        try:
            row = saved_scenarios.scenario(_services(), int(raw))
        except saved_scenarios.NotFound:
            offer["missing"] = raw
            return offer
        based = str(args.get("based_on", "")).strip()
        based_on = int(based) if based.isdigit() and 1 <= int(based) <= row.latest_revision \
            else row.latest_revision
        offer["origin"] = {"id": row.id, "name": row.name, "latest": row.latest_revision,
                           "based_on": based_on}
    return offer


@blueprint.get("/")
@computes("POST", "/api/v1/price")
def price_page():
    need("read")
    return _price_page()


def _price_page(market_needed: bool = False):
    """The Price page; ``market_needed``: a Profit download's, which says when no market is
    chosen."""
    form = scenario_form(request.args)
    share = _flexible_share(form, request.args)
    market = profit_market(form, request.args)
    if market_needed and market is None:
        form.errors.setdefault("market", "choose a market price (or type prices) for the "
                                         "profit")
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        catalog = form_catalog(ctx)
        markets = market_choices(ctx)
        form.check_tariff(catalog)
        priced = _price(form, ctx)
        shift = _what_if(priced, share, form) if priced is not None and share is not None \
            else None
        sold = _sell(ctx, priced, market, form) if priced is not None and market is not None \
            else None
    save = save_offer(request.args)  # (its own read: one connection at a time)
    if share is not None and shift is None:
        priced = None  # a what-if that cannot be answered: nothing is shown as priced
    if (market is not None and sold is None) or form.errors:
        priced = None  # a market that cannot be sold at, likewise
    view = None
    if priced is not None:
        r = priced.result
        view = {
            "profile": profile_view(r),
            "per_request": per_request_view(r),
            "what_if": flexible_line(shift) if shift is not None else None,
            "result": r,
            "breakdown": stacked_bar([Segment(text, r.shown(n)[0] or 0.0, COLOURS[i])
                                      for i, (n, text) in enumerate(BREAKDOWN)],
                                     r.shown("cost_per_mtok_total")[1], "cost_per_mtok_total"),
            "frontier": frontier_chart(_series([priced], [r.name]),
                                       priced.curve.selection.interactivity, "read here")
            if priced.curve is not None else None,
            "disclosure": disclosure_lines(r),
            "sources": sorted(r.provenance.items()),
            "assumed": assumed_line(r),
            "profit": profit_view(sold) if sold is not None else None,
        }
    status = 200 if priced is not None else 422
    return render_template("web/price.html", form=form, catalog=catalog, view=view,
                           headline=HEADLINE, breakdown=BREAKDOWN, efficiency=EFFICIENCY,
                           unit_of=unit_of, save=save, fields=FIELDS, markets=markets,
                           profit_query=profit_query(form), price_query=price_query(form),
                           profit_curl=curl_line("/api/v1/profit", _profit_body(form, market))
                           if market is not None else None,
                           curl=curl_line("/api/v1/price", _price_body(form, share))), status


def price_query(form: ScenarioForm) -> str:
    """The page's query with its what-if: what the Price downloads answer (the JSON with
    ``what_if`` as the API answers it; the workbook prices the scenario as given)."""
    share = form.values.get("flexible_share", "")
    return form.query + (f"&{urlencode({'flexible_share': share})}" if share else "")


def _price_body(form: ScenarioForm, share: float | None) -> dict[str, Any]:
    """The body of the equivalent ``POST /api/v1/price``, with the page's what-if."""
    body = form.price_request()
    return body if share is None else {**body, "flexible_share": share}


def _priced_or_page(form: ScenarioForm, share: float | None = None):
    """The form's scenario priced (and its what-if, at ``share``), or the page saying why
    not."""
    shift = None
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        priced = _price(form, ctx)
        if priced is not None and share is not None:
            shift = _what_if(priced, share, form)
            priced = priced if shift is not None else None
        if form.errors:
            priced = None
        catalog = form_catalog(ctx) if priced is None else None
    if priced is None:  # nothing computed from an invalid form: the page says why
        return None, (render_template("web/price.html", form=form, catalog=catalog, view=None,
                                      headline=HEADLINE, breakdown=BREAKDOWN,
                                      efficiency=EFFICIENCY, unit_of=unit_of,
                                      curl=curl_line("/api/v1/price", _price_body(form, share))),
                      422)
    return (priced, shift), None


@blueprint.get("/price.xlsx")
@computes("POST", "/api/v1/workbook")
def price_workbook():
    need("read")
    got, page = _priced_or_page(scenario_form(request.args))
    return page or xlsx_response(app.render_workbook([got[0]]))


@blueprint.get("/price.json")
@computes("POST", "/api/v1/price")
def price_json():
    """The JSON ``POST /api/v1/price`` answers for the page's request, its what-if too."""
    need("read")
    form = scenario_form(request.args)
    share = _flexible_share(form, request.args)
    got, page = _priced_or_page(form, share)
    if page:
        return page
    priced, shift = got
    return json_response(shift.answer() if shift is not None else priced.result.to_json(),
                         "price.json")


def _profit_body(form: ScenarioForm, market: dict[str, Any]) -> dict[str, Any]:
    """The body of the equivalent ``POST /api/v1/profit``."""
    return {"scenarios": [form.price_request()], "market": market}


def _sold_or_page():
    """The Price page's scenario sold at its market, or the page saying why not."""
    form = scenario_form(request.args)
    market = profit_market(form, request.args)
    sold = None
    if market is not None and not form.errors:
        with _services().sessions(write=False) as session:
            ctx = _services().context(session)
            priced = _price(form, ctx)
            sold = _sell(ctx, priced, market, form) if priced is not None else None
    if sold is None:  # nothing to download: the page says why, beside the fields
        return None, _price_page(market_needed=True)
    return sold, None


@blueprint.get("/profit.json")
@computes("POST", "/api/v1/profit")
def profit_json():
    need("read")
    sold, page = _sold_or_page()
    return page or json_response(app.ProfitAnswer([sold]).to_json(), "profit.json")


@blueprint.get("/profit.xlsx")
@computes("POST", "/api/v1/profit", heavy=True)
def profit_xlsx():
    need("read")
    sold, page = _sold_or_page()
    return page or xlsx_response(app.render_profit_workbook([sold]))


# ---- Compare -----------------------------------------------------------------------------------

def fixture_scenarios() -> dict[str, tuple[str, dict[str, Any]]]:
    """The example scenarios shipped in fixtures/scenarios: ``fixture:<name>`` -> (title,
    mapping); a curve file named there is named by its curve id, as a request names it (found
    in the service's curves). Read once per version of the files (every page render asks, some
    several times); each call gets its own copy to change."""
    files = shipped_scenarios()
    signature = tuple((name, str(path), stat.st_mtime_ns, stat.st_size)
                      for name, path in files.items() for stat in (path.stat(),))
    if _FIXTURES_READ.get("signature") != signature:
        _FIXTURES_READ.update(signature=signature, scenarios=_read_fixture_scenarios(files))
    return copy.deepcopy(_FIXTURES_READ["scenarios"])


_FIXTURES_READ: dict[str, Any] = {}  # the files' names, sizes and times -> what they read as


def _read_fixture_scenarios(files: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for name, path in files.items():
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        op = data.get("operating_point")
        if isinstance(op, dict) and "curve" in op and "curve_id" in op:
            # as a request names it (requests never name files): the curl line works as shown
            op["curve"] = op.pop("curve_id")
        out[name] = (str(data.get("name") or name.removeprefix(SHIPPED)), data)
    return out


@dataclass(frozen=True)
class Choice:
    """One system picked for the comparison: the spec to price and the API body's entry."""
    value: str
    title: str
    spec: app.ScenarioSpec
    body: dict[str, Any]


def saved_titles() -> dict[int, str]:
    """The saved scenarios a system slot offers: id -> title (the latest hundred)."""
    rows, _ = saved_scenarios.scenarios(_services(), limit=100)
    return {r.id: f"saved: {r.name} (revision {r.latest_revision})" for r in rows}


def system_choice(value: str, index: int, saved: dict[int, str]) -> Choice:
    """A system slot's value (``fixture:<name>``, ``saved:<id>`` or ``form:<price page
    query>``) as a spec; InputError at ``systems[i]`` when it names nothing."""
    subject = f"scenarios[{index}]."
    kind, _, ref = value.partition(":")
    if kind == "fixture" and value in fixture_scenarios():
        title, data = fixture_scenarios()[value]
        return Choice(value, title, app.ScenarioSpec(app.InlineScenario(data), (), subject),
                      {"scenario": data})
    if kind == "saved" and ref.isdigit() and int(ref) in saved:
        sid = int(ref)
        return Choice(value, saved[sid], app.ScenarioSpec(app.SavedRevision(sid), (), subject),
                      {"scenario_id": sid})
    if kind == "form":
        form = scenario_form(dict(parse_qsl(ref, keep_blank_values=True)))
        if form.errors:
            field, message = next(iter(form.errors.items()))
            raise InputError([(f"systems[{index}]", f"{field}: {message}")])
        title = form.values["name"] or f"{form.values['accelerator']} (from the Price page)"
        return Choice(value, title, app.ScenarioSpec(app.InlineScenario(form.mapping), (),
                                                     subject), {"scenario": form.mapping})
    raise InputError([(f"systems[{index}]", f"no scenario {value!r}: pick one from the list")])


def _reading(how: str, typed: str) -> tuple[app.Reading, dict[str, Any], str | None]:
    """(reading, the API body's keys for it, error beside the interactivity field)."""
    if how == "matched":
        return app.MATCHED, {"matched": True}, None
    if how == "named":
        try:
            text = typed.strip()
            try:
                float(text)
                text = f"{text} token/s/user"
            except ValueError:
                pass
            value = parse_quantity(text, "token/s/user", allow_zero=False)
        except UnitInputError as exc:
            return app.OWN_POINT, {}, str(exc)
        return app.AtInteractivity(value), {"at_interactivity": text}, None
    return app.OWN_POINT, {}, None


def _series(systems: list[app.Priced], titles: list[str]) -> list[Series]:
    out = []
    for i, (p, title) in enumerate(zip(systems, titles, strict=True)):
        s = Series(title, colour=COLOURS[i % len(COLOURS)])
        reading = p.curve
        if reading is not None:
            sel = reading.selection
            frontier = reading.curve.frontier(reading.kind, sel.percentile, sel.ttft_max)
            s.points = list(zip(frontier.interactivity.tolist(), frontier.throughput.tolist(),
                                strict=True))
            if len(frontier.interactivity) >= 2:
                xs = np.linspace(frontier.interactivity[0], frontier.interactivity[-1],
                                 FRONTIER_SAMPLES)
                ys = frontier.read_many(xs)[2]
                s.line = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)
                          if math.isfinite(y)]
            if sel.interactivity is not None:
                s.chosen = (sel.interactivity, sel.throughput)
        else:
            op = p.result.scenario.operating_point
            inter, thr = op.effective_interactivity, p.result.value("throughput")
            if inter is not None and thr is not None:
                s.chosen = (inter, thr)
        out.append(s)
    return out


def _unreachable(ctx, choices: list[Choice], reading: app.Reading
                 ) -> tuple[list[dict[str, Any]], app.Compared | None]:
    """For a named interactivity some curve cannot reach: each system that cannot, with its
    best reachable interactivity [token/s/user] and the reason in words; and the systems at
    their own points (for the frontiers chart), when they price there."""
    out = []
    for c in choices:
        try:
            app.compare(ctx, [c.spec], reading)
        except UnreachablePoint as exc:
            out.append({"title": c.title, "best": exc.best, "message": exc.errors[0][1]})
        except InputError:
            continue  # said by the comparison's own error
    try:
        own = app.compare(ctx, [c.spec for c in choices], app.OWN_POINT)
    except InputError:
        own = None
    return out, own


def _compare_args() -> dict[str, Any]:
    values = request.args.getlist("sys")
    if not values and "at" not in request.args:
        values = list(DEFAULT_COMPARE)
        how = "matched"
    else:
        how = request.args.get("at", "own")
    values = [v for v in values if v][:MAX_SYSTEMS]
    money = {k: str(request.args.get(k, "") or "").strip()[:200] for k in MONEY_FIELDS}
    return {"values": values, "how": how if how in ("own", "matched", "named") else "own",
            "interactivity": request.args.get("interactivity", "").strip()[:200],
            "money": money}


def in_currency(ctx, choice: Choice, money: dict[str, Any]) -> Choice:
    """``choice`` shown in the page's currency: ``money.currency`` and ``money.fx`` (the
    scenario's own stated rates, with the page's rate for its currency) set as overrides, in
    the spec priced and in the API body."""
    source = choice.spec.source
    data = source.data if isinstance(source, app.InlineScenario) else \
        ctx.revision(source.scenario_id, source.revision)[0]
    own = data.get("money") if isinstance(data.get("money"), dict) else {}
    fx = own.get("fx") if isinstance(own.get("fx"), dict) else {}
    overrides = {"money.currency": money["currency"], "money.fx": {**fx, **money["fx"]}}
    spec = app.ScenarioSpec(source, (*choice.spec.overrides,
                                     *app.overrides_from_mapping(overrides)),
                            choice.spec.subject)
    return Choice(choice.value, choice.title, spec, {**choice.body, "overrides": overrides})


def _compare(args: dict[str, Any]):
    """Everything the Compare page and its downloads need."""
    errors: dict[str, str] = {}
    saved = saved_titles()  # (its own read: one connection at a time)
    with _services().sessions(write=False) as session:
        ctx = _services().context(session)
        choices: list[Choice] = []
        for i, v in enumerate(args["values"]):
            try:
                choices.append(system_choice(v, i, saved))
            except InputError as exc:
                errors[f"sys{i}"] = exc.errors[0][1]
        if len(args["values"]) < MIN_SYSTEMS:
            errors["systems"] = f"pick {MIN_SYSTEMS} to {MAX_SYSTEMS} systems"
        reading, reading_body, bad = _reading(args["how"], args["interactivity"])
        if bad:
            errors["interactivity"] = bad
        money, _ = money_table(args["money"], errors)
        if money is not None and not errors:
            choices = [in_currency(ctx, c, money) for c in choices]
        compared = unreachable = own = None
        if not errors:
            try:
                compared = app.compare(ctx, [c.spec for c in choices], reading)
            except UnreachablePoint:
                unreachable, own = _unreachable(ctx, choices, reading)
            except InputError as exc:
                where = exc.subject or ""
                index = next((i for i, c in enumerate(choices) if c.spec.subject == where), None)
                message = "; ".join(f"{p}: {m}" if p else m for p, m in exc.errors)
                errors[f"sys{index}" if index is not None else "systems"] = message
    body = {"scenarios": [c.body for c in choices], **reading_body}
    return {"choices": choices, "compared": compared, "unreachable": unreachable,
            "own": own, "errors": errors, "saved": saved, "body": body,
            "currency": money["currency"] if money is not None else None}


@blueprint.get("/compare")
@computes("POST", "/api/v1/compare")
def compare_page():
    need("read")
    args = _compare_args()
    out = _compare(args)
    compared: app.Compared | None = out["compared"]
    chart = None
    target = None
    if compared is not None:
        titles = [c.title for c in out["choices"]]
        if args["how"] != "own":
            first = compared.systems[0].curve
            target = first.selection.interactivity if first is not None else None
        label = ("matched" if args["how"] == "matched" else "target") if target else ""
        chart = frontier_chart(_series(compared.systems, titles), target, label)
    elif out["own"] is not None:  # unreachable: the frontiers end before the target
        own = out["own"]
        target = _reading(args["how"], args["interactivity"])[0]
        chart = frontier_chart(_series(own.systems, [c.title for c in out["choices"]]),
                               target.value, "target")
        target = None
    slots = args["values"] + [""] * (MAX_SYSTEMS - len(args["values"]))
    status = 200 if compared is not None else (200 if out["unreachable"] else 422)
    currency = out["currency"] if compared is not None else None
    return render_template(
        "web/compare.html", args=args, slots=slots, fixtures=fixture_scenarios(),
        saved=out["saved"], errors=out["errors"], compared=compared, chart=chart,
        unreachable=out["unreachable"], choices=out["choices"], rows=COMPARE_ROWS,
        unit_of=unit_of, target=target, colours=COLOURS, query=request.query_string.decode(),
        money_form=SimpleNamespace(values=args["money"], errors=out["errors"]),
        currency=currency, money_note=money_line(
            compared.comparison.results[0].disclosure(sources=False)["money"])
        if currency is not None else None,
        curl=curl_line("/api/v1/compare", out["body"])), status


def _compared_or_page():
    args = _compare_args()
    out = _compare(args)
    if out["compared"] is None:
        return None, compare_page()
    return out, None


@blueprint.get("/compare.xlsx")
@computes("POST", "/api/v1/workbook")
def compare_workbook():
    need("read")
    out, page = _compared_or_page()
    return page or xlsx_response(app.render_workbook(out["compared"].systems))


@blueprint.get("/compare.json")
@computes("POST", "/api/v1/compare")
def compare_json():
    need("read")
    out, page = _compared_or_page()
    return page or json_response(out["compared"].comparison.to_json(), "compare.json")
