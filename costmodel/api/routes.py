"""The /api/v1 endpoints."""
from __future__ import annotations

import re
from contextlib import ExitStack
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import quote

import orjson
from flask import Blueprint, Response, json, request
from pydantic import BaseModel, Field, ValidationError

from .. import app
from ..app import catalog as stored
from ..app import keys as api_keys
from ..app import saved
from ..app.batch import price_batch as batch_use_case
from ..app.caps import MAX_TASK_CELLS, large_task, task_cells, task_workbook_too_large
from ..app.columns import price_columns as columns_use_case
from ..app.hints import hinted, with_hint
from ..http.errors import Problem, input_problem
from ..http.limits import current_limits
from ..http.services import services
from ..model.errors import InputError, more_errors
from ..model.inputs import Node, Rack, Workload, check_text, error_path, fewer_errors
from ..model.units import UnitInputError, parse_quantity
from ..render.workbook.bounds import MAX_OPTIONS, MAX_TIERS
from ..sources.catalog import split_sources
from ..sources.curve_files import curves_csv_text, read_curve_text
from . import columns as columnar
from .auth import forget_keys
from .openapi import MAX_FILTER, Answer, ListQuery, body_bytes, read_body, route
from .requests import (
    demand_of,
    markets_of,
    quote_of,
    reading_of,
    spec_of,
    specs_of,
    task_of,
)
from .schemas import (
    CATALOG_CREATE,
    CATALOG_MODELS,
    MAX_BATCH_BODY,
    MAX_CURVE_ID,
    MAX_CURVE_POINTS,
    MAX_UPLOAD_POINTS,
    BatchOut,
    BatchRequest,
    CatalogCreate,
    CatalogEntryOut,
    CatalogPage,
    CompareRequest,
    ComparisonOut,
    CurveCreate,
    CurveOut,
    CurvePage,
    GridRequest,
    Id,
    KeyCreate,
    KeyCreated,
    KeyList,
    KeyOut,
    MonteCarloRequest,
    PlanOut,
    PlanRequest,
    PriceRequest,
    PriceWhatIfRequest,
    ProfitOut,
    ProfitRequest,
    QuotesCompareOut,
    QuotesCompareRequest,
    QuotesDecideRequest,
    QuotesDecisionOut,
    QuoteTermOut,
    QuoteTermRequest,
    RepriceOut,
    ResultOut,
    RevisionOut,
    ScenarioCreate,
    ScenarioPage,
    ScenarioRevise,
    SensitivityOut,
    TaskOut,
    TaskRequest,
    TornadoRequest,
    WorkbookRequest,
)
from .views import AnswerQuery, BatchQuery, TaskQuery, select

__all__ = ["pricing", "catalog", "scenarios", "keys"]

CSV = "text/csv"
PDF = "application/pdf"


def _json_or_pdf(json_of, pdf_of, filename: str) -> Response | dict:
    """The answer as JSON, or its one-page summary when ``Accept`` prefers a PDF."""
    accept = request.accept_mimetypes
    if accept[PDF] > accept["application/json"]:
        return Response(pdf_of(), mimetype=PDF, headers={
            "Content-Disposition": f'attachment; filename="{filename}"'})
    return json_of()


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# the workbook as plain bytes: what a generated client reads and sends (openapi-python-client
# knows application/octet-stream, not a spreadsheet's own media type)
OCTET = "application/octet-stream"
ID = f"int(max={saved.MAX_ID})"  # a path id

pricing = Blueprint("pricing", __name__, url_prefix="/api/v1")
catalog = Blueprint("catalog", __name__, url_prefix="/api/v1")
scenarios = Blueprint("scenarios", __name__, url_prefix="/api/v1")
keys = Blueprint("keys", __name__, url_prefix="/api/v1")


# ---- pricing --------------------------------------------------------------------------------

@route(pricing, "/price", "POST", summary="Price a scenario (inline, or saved plus overrides), "
                                          "and optionally its what-if",
       access="read", body=PriceWhatIfRequest, response=ResultOut, errors=(404,),
       query=AnswerQuery)
def price(body: PriceWhatIfRequest, query: AnswerQuery, principal) -> Response:
    priced = services().price_answer(body, spec_of(body), query.view, body_bytes())
    if query.fields is not None:  # selected from the data, then serialised; its own ETag
        return Answer(priced.selected(lambda data: select(data, query.fields)),
                      mimetype="application/json")
    answer = Answer(priced.content, mimetype="application/json")  # (Answer: see openapi)
    answer.headers["ETag"] = priced.etag  # as the route would hash it, kept in the cache
    return answer


@route(pricing, "/price/batch", "POST", summary="Price one scenario with up to 10,000 rows "
                                                "of overrides, or up to 1,000,000 rows of "
                                                "columns", access="read", body=BatchRequest,
       response=BatchOut, errors=(404,), query=BatchQuery, body_limit=MAX_BATCH_BODY,
       also_content=(CSV, columnar.ARROW, columnar.PARQUET), forms=columnar.FORMS)
def price_batch(body: BatchRequest | columnar.ColumnarAsk, query: BatchQuery,
                principal) -> Response | dict:
    """JSON, or CSV by ``Accept: text/csv`` or ``?format=csv`` (a line a row: the columns and
    the row's errors), Arrow or Parquet likewise; a columnar request answers in its own
    format unless asked otherwise (api/columns.py); 200 when any row priced, 422 (every
    row's errors) when none did."""
    if isinstance(body, columnar.ColumnarAsk):
        return _price_columns(body, query)
    base = spec_of(PriceRequest(scenario=body.scenario, scenario_id=body.scenario_id,
                                revision=body.revision))
    with services().sessions(write=False) as session:
        try:
            batch = batch_use_case(services().context(session), base, body.overrides,
                                   body.outputs, heavy=current_limits().heavy)
        except InputError as exc:
            raise Problem.from_input(exc, prefix="") from None
    # an unknown key says which it may have meant (the path after "overrides[i]."): the
    # first MAX_HINTS of them
    listed = [{"path": e.path, "message": e.detail} for e in batch.errors]
    hinted(listed, lambda e, i: with_hint(e["path"].partition(".")[2], e["message"],
                                          dotted=True) if "." in e["path"] else e["message"])
    batch.errors = [replace(e, detail=x["message"]) if x["message"] is not e.detail else e
                    for e, x in zip(batch.errors, listed, strict=True)]
    if not batch.priced.any():
        raise input_problem(((e.path, e.detail) for e in batch.errors),
                            prefix="no row priced: ")
    accept = request.accept_mimetypes
    if query.format == "csv" or (query.format is None
                                 and accept[CSV] > accept["application/json"]):
        return Response(batch.to_csv(), mimetype=CSV)
    out = batch.to_json()
    if query.view == "summary" and out["disclosure"] is not None:
        out["disclosure"].pop("sources", None)
    fmt = columnar.answer_format(query, "json")
    if fmt in ("arrow", "parquet"):  # the columns as a columnar request's answer has them
        return columnar.as_file(fmt, [(n, u, batch.values[n]) for n, u in zip(
            batch.outputs, batch.units, strict=True)], out)
    out = out if query.fields is None else select(out, query.fields)
    return Response(orjson.dumps(out), mimetype="application/json")


def _price_columns(ask: columnar.ColumnarAsk, query: BatchQuery) -> Response:
    """A columnar batch priced (a heavy slot held past its rows, unless held already)."""
    base = spec_of(ask.base)
    with services().sessions(write=False) as session:
        try:
            batch = columns_use_case(services().context(session), base, ask.columns,
                                     ask.outputs,
                                     heavy=None if ask.held else current_limits().heavy)
        except InputError as exc:  # (the base's at its own path: scenario.accelerator...)
            raise Problem.from_input(exc) from None
    if not batch.priced.any():
        raise columnar.no_row_priced(batch)
    return columnar.answer(ask, batch, query)


@route(pricing, "/compare", "POST", summary="Price scenarios side by side, with ratios",
       access="read", body=CompareRequest, response=ComparisonOut, errors=(404,),
       query=AnswerQuery)
def compare(body: CompareRequest, query: AnswerQuery, principal) -> dict:
    specs, reading = specs_of(body.scenarios), reading_of(body.at_interactivity, body.matched)
    with services().sessions(write=False) as session:
        out = app.compare(services().context(session), specs, reading).comparison.to_json(
            query.view)
    return out if query.fields is None else select(out, query.fields)


def _xlsx(book: app.WorkbookFile, name: str | None = None) -> Response:
    """The workbook as a download named after its scenarios (or ``name``): an ASCII
    ``filename`` any client reads, and the name as written in ``filename*`` (RFC 6266)."""
    shown = name or book.filename.removesuffix(".xlsx")
    ascii_name = re.sub(r"[^A-Za-z0-9._-]+", "-", shown).strip("-.")[:120] or "scenario"
    accept = request.accept_mimetypes  # the spreadsheet's type unless bare bytes are preferred
    kind = OCTET if accept[OCTET] > accept[XLSX] else XLSX
    return Response(book.content, mimetype=kind, headers={
        "Content-Disposition": f'attachment; filename="{ascii_name}.xlsx"; '
                               f"filename*=UTF-8''{quote(shown[:120] + '.xlsx', safe='')}"})


@route(pricing, "/quotes/compare", "POST",
       summary="Rank vendor quotes against our cost at each quote's operating point",
       access="read", body=QuotesCompareRequest, response=QuotesCompareOut, errors=(404,))
def quotes_compare(body: QuotesCompareRequest, principal) -> dict:
    quotes = [quote_of(q, f"quotes[{i}]") for i, q in enumerate(body.quotes)]
    specs = specs_of(body.scenarios)
    with services().sessions(write=False) as session:
        return app.quotes_compare(services().context(session), quotes, specs).to_json()


@route(pricing, "/quotes/decide", "POST",
       summary="Price every quote and our own builds for the buyer's demand; recommend one",
       access="read", body=QuotesDecideRequest, response=QuotesDecisionOut, errors=(404,),
       also_content=(PDF, XLSX),
       heavy_note=f"The workbook (Accept naming a spreadsheet) lays out at most "
                  f"{MAX_OPTIONS} ranked options, each of at most {MAX_TIERS} tiers: a larger "
                  f"decision's is refused with 422 at quotes[i].tiers (or quotes), the bound "
                  f"said; its JSON and PDF are not.")
def quotes_decide(body: QuotesDecideRequest, principal) -> Response | dict:
    """JSON; the one-page summary by ``Accept: application/pdf``; the decision as a workbook
    (live bills, ranking, range and break-evens) by ``Accept`` naming a spreadsheet."""
    request_ = app.DecisionRequest([quote_of(q, f"quotes[{i}]") for i, q in
                                    enumerate(body.quotes)], specs_of(body.scenarios),
                                   demand_of(body.demand), body.improvement)
    with services().sessions(write=False) as session:
        answer = app.quotes_decide(services().context(session), request_)
    accept = request.accept_mimetypes
    if accept[XLSX] > max(accept["application/json"], accept[PDF]):
        return _xlsx(app.render_decision_workbook(answer))
    return _json_or_pdf(answer.to_json, lambda: app.decision_pdf(answer), "decision.pdf")


@route(pricing, "/quotes/term", "POST",
       summary="What each term length of a quote costs against waiting or switching",
       access="read", body=QuoteTermRequest, response=QuoteTermOut, errors=(404,))
def quotes_term(body: QuoteTermRequest, principal) -> dict:
    request = app.TermRequest(
        quote_of(body.quote, "quote"), spec_of(body.scenario, "scenario."),
        tuple(body.terms), body.tolerance, body.improvement,
        spec_of(body.successor, "successor.") if body.successor is not None else None,
        body.available, body.successor_rate,
        quote_of(body.successor_quote, "successor_quote")
        if body.successor_quote is not None else None)
    with services().sessions(write=False) as session:
        return app.quotes_term(services().context(session), request).to_json()


def _analysis(body, run, prefix: str = "") -> dict:
    """Run a sensitivity analysis on the request's scenario; the analysis's own errors are
    problems whose paths are the request's (``prefix`` + the input key)."""
    spec = spec_of(body.scenario, "scenario.")
    with services().sessions(write=False) as session:
        ctx = services().context(session)
        try:
            return run(ctx, spec).to_json()
        except InputError as exc:
            raise Problem.from_input(exc, prefix=None if exc.subject else prefix) from None


@route(pricing, "/sensitivity/tornado", "POST", summary="Tornado: each input moved alone",
       access="read", body=TornadoRequest, response=SensitivityOut, errors=(404,))
def sensitivity_tornado(body: TornadoRequest, principal) -> dict:
    return _analysis(body, lambda ctx, spec: app.tornado(
        ctx, spec, inputs=body.inputs, output=body.output, swing=body.swing,
        ranges=body.ranges))


@route(pricing, "/sensitivity/grid", "POST", summary="The output over two inputs",
       access="read", body=GridRequest, response=SensitivityOut, errors=(404,))
def sensitivity_grid(body: GridRequest, principal) -> dict:
    return _analysis(body, lambda ctx, spec: app.grid(ctx, spec, body.x, body.y,
                                                      output=body.output))


@route(pricing, "/sensitivity/montecarlo", "POST",
       summary="Monte Carlo: P10/P50/P90, mean and histogram of the output", access="read",
       body=MonteCarloRequest, response=SensitivityOut, errors=(404,))
def sensitivity_montecarlo(body: MonteCarloRequest, principal) -> dict:
    return _analysis(body, lambda ctx, spec: app.monte_carlo(
        ctx, spec, dict(body.distributions), draws=body.draws, seed=body.seed,
        output=body.output, bins=body.bins, truncate=body.truncate), prefix="distributions.")


@route(pricing, "/workbook", "POST", summary="An Excel workbook with live formulas",
       access="read", body=WorkbookRequest, content_type=XLSX, also_content=(OCTET,),
       errors=(404,))
def workbook(body: WorkbookRequest, principal) -> Response:
    specs, reading = specs_of(body.scenarios), reading_of(body.at_interactivity, body.matched)
    with services().sessions(write=False) as session:
        return _xlsx(app.workbook(services().context(session), specs, reading,
                                  title=body.title))


@route(pricing, "/workbook/reprice", "POST", summary="Read an edited workbook back and price it",
       access="read", response=RepriceOut, request_content_type=OCTET,
       errors=(413, 415, 422))
def reprice(principal) -> dict:
    from ..render.workbook.reader import MAX_BYTES
    if request.mimetype not in (XLSX, OCTET):
        raise Problem(415, "Unsupported media type", f"send the workbook as {XLSX} or {OCTET}")
    # a workbook may be larger than a JSON body: the reader's limit, and a 413 that says it
    body = read_body(MAX_BYTES)
    with ExitStack() as opened:
        def catalog() -> app.Context:  # a decision's offers only: a plain workbook needs
            session = opened.enter_context(services().sessions(write=False))  # no database
            return services().context(session)
        return app.reprice(body, name="upload", ctx=catalog).to_json()


def _positive(raw, field: str, unit: str) -> float | None:
    """A quantity of the body in ``unit`` [unit]; a wrong dimension or a zero is a 422 at
    ``field``."""
    if raw is None:
        return None
    try:
        return parse_quantity(raw, unit, allow_zero=False)
    except UnitInputError as exc:
        raise Problem(422, "Invalid input", f"{field}: {exc}",
                      errors=[{"path": field, "message": str(exc)}]) from None


def _wants(kind: str, *others: str) -> bool:
    """Whether ``Accept`` prefers ``kind`` to JSON (and to ``others``)."""
    accept = request.accept_mimetypes
    return accept[kind] > max(accept[x] for x in ("application/json", *others))


def _task_heavy(body: TaskRequest, query: TaskQuery) -> bool:
    """A task's workbook holds a heavy slot, and is refused over MAX_TASK_CELLS steps x
    systems before anything is priced (413); its JSON holds one when the task is larger."""
    systems = len(body.scenarios)
    steps = app.steps_asked(body.task)
    if _wants(XLSX):
        why = task_workbook_too_large(steps, systems)
        if why is not None:
            raise Problem(413, "Answer too large", why, kind="answer-too-large",
                          errors=[{"path": "task", "message": why}])
        return True
    return large_task(task_cells(steps, systems))


@route(pricing, "/task", "POST", summary="An agent's task on each system: its latency at each "
                                         "system's point, or at the cheapest point that meets "
                                         "a target, and its cost", access="read",
       body=TaskRequest, response=TaskOut, errors=(404,), also_content=(XLSX,),
       query=TaskQuery, heavy_when=_task_heavy,
       heavy_note=f"The workbook (Accept naming a spreadsheet) holds at most "
                  f"{MAX_TASK_CELLS:,} steps x systems (413 beyond, before anything is "
                  f"priced); the JSON of a larger task carries each step's latency only "
                  f"with ?series=steps. The workbook, and a task of more than "
                  f"{MAX_TASK_CELLS:,} steps x systems, is a heavy answer.")
def task(body: TaskRequest, query: TaskQuery, principal) -> Response | dict:
    """JSON, or the task's workbook (live formulas) by ``Accept`` naming a spreadsheet."""
    request_ = app.TaskRequest(specs_of(body.scenarios), task_of(body.task))
    with services().sessions(write=False) as session:
        ctx = services().context(session)
        if _wants(XLSX):
            return _xlsx(app.task_workbook(ctx, request_))
        series = None if query.series is None else query.series == "steps"
        return app.price_task(ctx, request_).to_json(series)


@route(pricing, "/plan", "POST", summary="Size a fleet for a demand, or for a power budget, "
                                         "and price it", access="read", body=PlanRequest,
       response=PlanOut, errors=(404,), also_content=(PDF,),
       heavy_when=lambda body, query: _wants(PDF),
       heavy_note="The one-page summary (Accept: application/pdf) is a heavy answer.")
def plan(body: PlanRequest, principal) -> Response | dict:
    """JSON, or the one-page summary by ``Accept: application/pdf``."""
    spec = spec_of(PriceRequest.model_construct(
        scenario=body.scenario, scenario_id=body.scenario_id, revision=body.revision,
        overrides=body.overrides))
    request = app.PlanRequest(spec, _positive(body.demand, "demand", "token/s"),
                              _positive(body.power_budget, "power_budget", "W"),
                              reading_of(body.at_interactivity, False), body.availability,
                              body.headroom, body.deployment)
    with services().sessions(write=False) as session:
        planned = app.plan(services().context(session), request)
    return _json_or_pdf(planned.to_json, lambda: app.plan_pdf(planned), "plan.pdf")


# ---- catalog --------------------------------------------------------------------------------

_KINDS = {"accelerators": "accelerator", "operating-points": "operating_point",
          "electricity-prices": "electricity", "systems": "system", "rates": "rate",
          "market-prices": "market_price", "grid-factors": "grid_factor"}


def _entry(row) -> dict:
    return {"kind": row.kind, "key": row.key, "data": row.data, "provenance": row.provenance,
            "origin": row.origin, "created_at": row.created_at}


def _invalid(exc: ValidationError, prefix: str, model: type[BaseModel], data: Any) -> Problem:
    exc, dropped = fewer_errors(exc, model, data)  # (bounded: see costmodel.model.errors)
    return input_problem([*((prefix + error_path(e["loc"]), e["msg"])
                            for e in exc.errors(include_url=False)),
                          *([("", more_errors(dropped))] if dropped else [])])


def _validate_entry(kind: str, data: dict, key: str) -> tuple[dict, dict]:
    """Check a new catalog entry the way a scenario using it would be checked (a rate: its
    key is the version its data states, ``<accelerator>/<kind>@<date>``)."""
    plain, provenance = split_sources(data)
    body = dict(plain)
    try:
        if kind == "system":
            extra = set(plain) - {"name", "node", "rack", "note"}
            if extra:
                raise InputError([(f"data.{sorted(extra)[0]}", "unknown key")])
            for label in ("name", "note"):  # labels, not read: a text, number or boolean
                if isinstance(data.get(label), dict | list):
                    raise InputError([(f"data.{label}", "must be a text, not a table or list")])
            for part, model in (("node", Node), ("rack", Rack)):
                try:
                    model.model_validate(plain.get(part, {}))
                except ValidationError as exc:
                    raise _invalid(exc, f"data.{part}.", model, plain.get(part)) from None
        else:
            workload = body.pop("workload", None) if kind == "operating_point" else None
            entry = CATALOG_MODELS[kind].model_validate(body)
            if kind == "rate" and entry.catalog_key() != key:
                raise InputError([("key", f"{key!r} is not this version's key: accelerator, "
                                          f"kind and date imply {entry.catalog_key()!r}")])
            if kind == "market_price" and key.rpartition("@")[2] != entry.date:
                raise InputError([("key", f"{key!r} is not this version's key: its date is "
                                          f"{entry.date!r} (<provider>/<offer>@{entry.date})")])
            if workload is not None:
                # as deep as a scenario's own workload: a bad one stored would break every
                # later use (entries are never overwritten)
                if not isinstance(workload, dict):
                    raise InputError([("data.workload", "must be a table")])
                try:
                    Workload.model_validate(workload)
                except ValidationError as exc:
                    raise _invalid(exc, "data.workload.", Workload, workload) from None
        for key, text in provenance.items():
            try:
                check_text(text)
            except ValueError as exc:
                raise InputError([(f"data.{key}.source", str(exc))]) from None
    except ValidationError as exc:
        raise _invalid(exc, "data.", CATALOG_MODELS[kind], body) from None
    except InputError as exc:
        raise Problem.from_input(exc) from None
    return plain, provenance


def _catalog_routes(path: str, kind: str) -> None:
    label = path.replace("-", " ")

    def list_entries(query: ListQuery, principal) -> dict:
        rows, total = stored.entries(services(), kind, q=query.q, limit=query.limit,
                                     offset=query.offset)
        return {"items": [_entry(r) for r in rows], "total": total,
                "limit": query.limit, "offset": query.offset}

    def get_entry(key: str, principal) -> dict:
        return _entry(stored.entry(services(), kind, key))

    def create_entry(body: CatalogCreate, principal) -> dict:
        plain, provenance = _validate_entry(kind, body.data, body.key)
        return _entry(stored.add_entry(services(), kind, body.key, plain, provenance,
                                       origin=f"api:{principal.name}"[:40]))

    for fn, suffix in ((list_entries, "list"), (get_entry, "get"), (create_entry, "create")):
        fn.__name__ = f"{kind}_{suffix}"
    route(catalog, f"/{path}", "GET", summary=f"List {label}", access="read",
          query=ListQuery, response=CatalogPage, cache="revalidate")(list_entries)
    route(catalog, f"/{path}/<path:key>", "GET", summary=f"One of the {label}", access="read",
          response=CatalogEntryOut, errors=(404,), cache="immutable")(get_entry)
    route(catalog, f"/{path}", "POST", summary=f"Add to the {label}", access="write",
          body=CATALOG_CREATE[kind], response=CatalogEntryOut, status=201,
          errors=(409,))(create_entry)


for _path, _kind in _KINDS.items():
    _catalog_routes(_path, _kind)


class CurveQuery(ListQuery):
    hardware: Annotated[str, Field(max_length=MAX_FILTER, description="curves of this "
                                                                      "hardware")] | None = None
    model: Annotated[str, Field(max_length=MAX_FILTER, description="curves of this model")] \
        | None = None


def _curve(row, csv: str | None = None) -> dict:
    out = {"curve_id": row.curve_id, "hardware": row.hardware, "model": row.model,
           "points": row.points, "source": row.source, "origin": row.origin,
           "created_at": row.created_at}
    if csv is not None:
        out["csv"] = csv
    return out


@route(catalog, "/curves", "GET", summary="List curves", access="read", query=CurveQuery,
       response=CurvePage, cache="revalidate")
def curves_list(query: CurveQuery, principal) -> dict:
    rows, total = stored.curves(services(), q=query.q, hardware=query.hardware,
                                model=query.model, limit=query.limit, offset=query.offset)
    return {"items": [_curve(r) for r in rows], "total": total, "limit": query.limit,
            "offset": query.offset}


@route(catalog, "/curves/<path:curve_id>", "GET", summary="A curve with its points (CSV)",
       access="read", response=CurveOut, errors=(404,), cache="immutable")
def curve_get(curve_id: str, principal) -> dict:
    if len(curve_id) > MAX_CURVE_ID:  # none is stored (see curves_create): not looked up
        raise Problem(404, "Not found", f"no curve: curve ids are at most {MAX_CURVE_ID} "
                                        f"characters")
    row, curve = stored.curve(services(), curve_id)
    # a file to save: written again from the parsed curve, so no cell a spreadsheet would
    # evaluate (neutralised as curves_csv_text does; rows stored before it did too)
    return _curve(row, csv=curves_csv_text([curve]))


@route(catalog, "/curves", "POST", summary="Import curves (InferenceX rows, API export, CSV)",
       access="write", body=CurveCreate, response=CurvePage, status=201, errors=(409,))
def curves_create(body: CurveCreate, principal) -> dict:
    try:
        parsed = read_curve_text(body.content, name="content", gpus=body.gpus,
                                 hardware=body.hardware, max_points=MAX_UPLOAD_POINTS,
                                 max_points_per_curve=MAX_CURVE_POINTS)
    except InputError as exc:
        raise Problem.from_input(exc) from None
    long = [c.key for c in parsed if len(c.key.id) > MAX_CURVE_ID or len(c.key.hardware) > 100
            or len(c.key.model) > 200]
    if long:  # the columns' widths, and a curve id must fit in a request line
        raise Problem.from_input(InputError([("content", (
            f"curve {long[0].id[:60]}...: hardware names are at most 100 characters, models "
            f"200 and curve ids {MAX_CURVE_ID}"))]))
    rows = stored.add_curves(services(), parsed, origin=f"api:{principal.name}"[:40])
    return {"items": [_curve(r) for r in rows], "total": len(rows), "limit": len(rows),
            "offset": 0}


# ---- scenarios ------------------------------------------------------------------------------

SCENARIO_ETAG = ("the saved scenario's version (its latest revision's number and content): "
                 "send it back as If-Match when saving the next revision")


def _revision_answer(rev: saved.Revision, status: int = 200) -> Answer:
    answer = Answer(json.dumps(rev.to_json()), status=status, mimetype="application/json")
    answer.headers["ETag"] = rev.etag
    return answer


def _if_match() -> saved.Expect | None:
    """The If-Match of the request as a check of the latest revision, or None without one."""
    if "If-Match" not in request.headers:
        return None
    tags = request.if_match  # strong comparison (RFC 9110 13.1.1); "*": any scenario
    return saved.if_match(tags, tags.star_tag)


def _stale(scenario_id: int, latest) -> Problem:
    return Problem(412, "Precondition failed",
                   f"scenario {scenario_id} moved on to revision {latest.number} (by "
                   f"{latest.created_by}) since the ETag given in If-Match: nothing was "
                   f"written. Read it again (its ETag is in this answer), apply the edit to "
                   f"it and send that ETag.", headers={"ETag": saved.revision_etag(latest)})


def _scenario(row: saved.Scenario) -> dict:
    return {"id": row.id, "name": row.name, "latest_revision": row.latest_revision,
            "created_at": row.created_at}


@route(scenarios, "/scenarios", "GET", summary="List saved scenarios", access="read",
       query=ListQuery, response=ScenarioPage, cache="revalidate")
def scenarios_list(query: ListQuery, principal) -> dict:
    rows, total = saved.scenarios(services(), q=query.q, limit=query.limit,
                                  offset=query.offset)
    return {"items": [_scenario(r) for r in rows], "total": total, "limit": query.limit,
            "offset": query.offset}


@route(scenarios, "/scenarios", "POST", summary="Save a scenario (priced, as revision 1)",
       access="write", body=ScenarioCreate, response=RevisionOut, status=201,
       etag=SCENARIO_ETAG)
def scenarios_create(body: ScenarioCreate, principal) -> Answer:
    done = saved.save(services(), body.scenario, principal, name=body.name)
    return _revision_answer(done.revision, 201)


@route(scenarios, f"/scenarios/<{ID}:scenario_id>", "GET",
       summary="A saved scenario's latest revision, with its result as computed then",
       access="read", response=RevisionOut, errors=(404,), cache="revalidate",
       etag=SCENARIO_ETAG)
def scenario_get(scenario_id: int, principal) -> Answer:
    return _revision_answer(saved.revision(services(), scenario_id)[1])


@route(scenarios, f"/scenarios/<{ID}:scenario_id>/revisions", "POST",
       summary="Save an edit as the next revision (201), or find it equal to the latest (200)",
       access="write", body=ScenarioRevise, response=RevisionOut, status=201, errors=(404,),
       also=(200,), etag=SCENARIO_ETAG, if_match=True)
def scenario_revise(scenario_id: int, body: ScenarioRevise, principal) -> Answer:
    """The check of If-Match, the comparison with the latest revision and the new number
    are one step, under the scenario's lock (:func:`costmodel.app.saved.save`)."""
    try:
        done = saved.save(services(), body.scenario, principal, scenario_id=scenario_id,
                          expect=_if_match())
    except saved.Stale as exc:
        raise _stale(scenario_id, exc.latest) from None
    # 200: equal to the latest, nothing new was written
    return _revision_answer(done.revision, 201 if done.created else 200)


@route(scenarios, f"/scenarios/<{ID}:scenario_id>/revisions/<{ID}:number>", "GET",
       summary="What was priced at revision n, with its result as computed then",
       access="read", response=RevisionOut, errors=(404,), cache="immutable",
       etag=SCENARIO_ETAG.replace("the saved scenario's version", "the revision's version, "
                                  "the scenario's while it is the latest"))
def revision_get(scenario_id: int, number: int, principal) -> Answer:
    return _revision_answer(saved.revision(services(), scenario_id, number)[1])


class RevisionQuery(BaseModel):
    revision: Id | None = None


@route(scenarios, f"/scenarios/<{ID}:scenario_id>/workbook", "GET",
       summary="A saved scenario as an Excel workbook (latest revision, or ?revision=n)",
       access="read", query=RevisionQuery, content_type=XLSX, also_content=(OCTET,),
       errors=(404,))
def scenario_workbook(scenario_id: int, query: RevisionQuery, principal) -> Response:
    spec = app.ScenarioSpec(app.SavedRevision(scenario_id, query.revision))
    found, rev = saved.revision(services(), scenario_id, query.revision)  # 404 first
    with services().sessions(write=False) as session:
        return _xlsx(app.workbook(services().context(session), [spec]),
                     f"{found.name} r{rev.number}")


# ---- keys -----------------------------------------------------------------------------------

def _key(row: api_keys.Key) -> dict:
    return {"id": row.id, "name": row.name, "role": row.role, "created_at": row.created_at,
            "revoked_at": row.revoked_at}


@route(keys, "/keys", "GET", summary="List API keys (never their secrets)", access="admin",
       response=KeyList)
def keys_list(principal) -> dict:
    return {"items": [_key(r) for r in api_keys.list_keys(services())]}


@route(keys, "/keys", "POST", summary="Create an API key; the token is shown once",
       access="admin", body=KeyCreate, response=KeyCreated, status=201)
def keys_create(body: KeyCreate, principal) -> dict:
    row, token = api_keys.create_key(services(), body.name, body.role)
    return {**_key(row), "token": token}


@route(keys, f"/keys/<{ID}:key_id>", "DELETE", summary="Revoke an API key", access="admin",
       response=KeyOut, errors=(404,))
def keys_revoke(key_id: int, principal) -> dict:
    row = api_keys.revoke_key(services(), key_id)
    # reads on other workers: within the key cache time (docs/pricing-tools.md#limits)
    forget_keys()
    return _key(row)


# ---- profit at market prices ------------------------------------------------------------------

@route(pricing, "/profit", "POST", summary="Sell each scenario at a market's prices: revenue, "
                                           "cost and profit per accelerator-hour, per month "
                                           "and per GW-year, and the break-even price",
       access="read", body=ProfitRequest, response=ProfitOut, errors=(404,),
       also_content=(XLSX,), heavy_when=lambda body, query: _wants(XLSX),
       heavy_note="The workbook (Accept naming a spreadsheet; at most 12 scenarios) is a "
                  "heavy answer.")
def profit(body: ProfitRequest, principal) -> Response | dict:
    """JSON, or the workbook (live formulas, with a Profit sheet) by ``Accept`` naming a
    spreadsheet."""
    request_ = app.ProfitRequest(specs_of(body.scenarios), markets_of(body))
    accept = request.accept_mimetypes
    with services().sessions(write=False) as session:
        ctx = services().context(session)
        if accept[XLSX] > accept["application/json"]:
            return _xlsx(app.profit_workbook(ctx, request_))
        return app.profit(ctx, request_).to_json()
