"""The Quotes page: vendor quotes (an uploaded quote file, or one quote typed in a form)
ranked against a scenario (a fixture, a saved scenario, or the Price page's), with flags, and
the quotes workbook to download; with the buyer's demand (typed, or the file's [demand]),
every offer and our own build priced for it, the recommendation, and its one-page summary.

The ranking is the application layer's (:func:`costmodel.app.quotes_compare`), the same as
``POST /api/v1/quotes/compare``; errors carry the API's words at the field they name. An
upload is read within the service's body limit (``MAX_CONTENT_LENGTH``).
"""
from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from flask import Response, current_app, render_template, request
from werkzeug.exceptions import RequestEntityTooLarge

from .. import app
from ..decisions.demand import Demand, validate_demand
from ..decisions.quotes import FORMS, Quote
from ..http.errors import Problem
from ..model.curves import PERCENTILES
from ..model.errors import InputError, parse_nested
from ..resources import fixtures_dir
from ..sources.quote_file import quotes_of, read_quotes_text
from ..store import repo
from .guard import computes
from .pages import fixture_scenarios  # the Compare page's list: one list of examples
from .scenario_form import FIELDS, scenario_form
from .session import need
from .site import blueprint

__all__ = ["QUOTE_FIELDS", "DEMAND_FIELDS", "QuotesForm"]

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EXAMPLE = "example-quotes.toml"
DEFAULT_SCENARIO = "fixture:published/deepseek-r1_gb300_matched"

# The one-quote form: field -> (the quote key, the unit a bare number is read in, label).
QUOTE_FIELDS: dict[str, tuple[str, str, str]] = {
    "q_name": ("name", "", "Name"),
    "q_vendor": ("vendor", "", "Vendor"),
    "q_date": ("date", "", "Date (YYYY-MM-DD)"),
    "q_form": ("form", "", "Form of price"),
    "q_price_input": ("price_input", "USD/Mtok", "Price per million input tokens"),
    "q_price_output": ("price_output", "USD/Mtok", "Price per million output tokens"),
    "q_hourly_price": ("hourly_price", "USD/h", "Price per accelerator-hour"),
    "q_monthly_price": ("monthly_price", "USD/month", "Price per month (reserved)"),
    "q_accelerators": ("accelerators", "", "Accelerators"),
    "q_term": ("term", "month", "Term"),
    "q_volume": ("volume", "Mtok/month", "Volume"),
    "q_commitment": ("commitment", "USD", "Commitment (take-or-pay)"),
    "q_interactivity": ("operating_point.interactivity", "token/s/user",
                        "Guaranteed interactivity"),
    "q_isl": ("operating_point.isl", "", "Input tokens per request (ISL)"),
    "q_osl": ("operating_point.osl", "", "Output tokens per request (OSL)"),
    "q_model": ("operating_point.model", "", "Model"),
}
# The buyer's demand: field -> (the demand key, the unit a bare number is read in, label).
DEMAND_FIELDS: dict[str, tuple[str, str, str]] = {
    "d_volume": ("volume", "Mtok/month", "Volume a month"),
    "d_peak": ("peak", "token/s", "Peak rate (blank: the average)"),
    "d_interactivity": ("interactivity", "token/s/user", "Service level (interactivity)"),
    "d_percentile": ("percentile", "", "Read at the percentile"),
}
FORM_WORDS = {"per_mtok": "per million tokens (input and output prices)",
              "per_accelerator_hour": "capacity, per accelerator-hour",
              "reserved_monthly": "capacity, reserved by the month"}

FORM_SHORT = {"per_mtok": "per million tokens", "per_accelerator_hour": "per accelerator-hour",
              "reserved_monthly": "reserved by the month"}


@dataclass
class QuotesForm:
    """What the Quotes page was sent: its quotes (as plain quote-file data), the scenario
    chosen, and the errors by field (``""``: the form as a whole)."""
    values: dict[str, str]
    scenario: str
    price_query: str = ""
    quotes_data: dict[str, Any] | None = None
    source: str = ""  # what the quotes came from, in words
    quotes: list[Quote] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)

    def error(self, where: str, message: str) -> None:
        self.errors.setdefault(where, []).append(message)

    @property
    def quotes_json(self) -> str:
        # default=str: a TOML date or time in a source note is not JSON
        return json.dumps(self.quotes_data or {}, ensure_ascii=False, default=str)


def _typed(text: str, unit: str) -> Any:
    """A bare number typed in a field is in the field's unit; a count stays a number."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not unit:
        return int(number) if number.is_integer() else number
    return f"{text} {unit}"


def _quote_of_form(values: dict[str, str]) -> dict[str, Any]:
    quote: dict[str, Any] = {}
    for name, (key, unit, _) in QUOTE_FIELDS.items():
        text = values.get(name, "")
        if not text:
            continue
        value: Any = text if key in ("name", "vendor", "date", "form", "operating_point.model") \
            else _typed(text, unit)
        section, _, leaf = key.rpartition(".")
        (quote.setdefault(section, {}) if section else quote)[leaf] = value
    return quote


def _field_of(path: str) -> str:
    """The form field of an error at ``quote[0].<key>``; ``q_file`` otherwise."""
    key = path.partition(".")[2] if path.startswith("quote[0]") else ""
    for name, (k, _, _) in QUOTE_FIELDS.items():
        if key == k or (key and key.startswith(k + ".")):
            return name
    return "q_file"


def _read(form: QuotesForm, files) -> None:
    """Fill ``form.quotes`` from an upload, the typed quote, the example or a re-post."""
    upload = files.get("quote_file")
    try:
        if upload is not None and upload.filename:
            name = Path(upload.filename).name[:100] or "upload"
            try:
                text = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                form.error("q_file", f"{name} is not UTF-8 text: upload the quote file as "
                                     f"TOML or JSON")
                return
            form.quotes = read_quotes_text(text, name)
            form.quotes_data = _plain(text, name)
            form.source = f"the file {name}"
        elif request.form.get("example"):
            path = fixtures_dir() / "quotes" / EXAMPLE
            form.quotes = read_quotes_text(path.read_text(encoding="utf-8"), EXAMPLE)
            form.quotes_data = _plain(path.read_text(encoding="utf-8"), EXAMPLE)
            form.source = f"the example file {EXAMPLE}"
        elif request.form.get("quotes_json"):  # a re-post of quotes read before
            data = parse_nested(json.loads, request.form["quotes_json"], "quotes")
            if not isinstance(data, dict):
                raise InputError([("", "the quotes sent back are not a quote file")])
            form.quotes, form.quotes_data = quotes_of(data, "quotes"), data
            form.source = request.form.get("source", "")[:200] or "the quotes read before"
        elif form.values.get("q_name") or form.values.get("q_form"):
            data = {"quote": [_quote_of_form(form.values)]}
            form.quotes, form.quotes_data = quotes_of(data, "form"), data
            form.source = "the quote typed in the form"
        else:
            form.error("q_file", "upload a quote file, use the example, or fill in the "
                                 "quote form")
    except json.JSONDecodeError:
        form.error("q_file", "the quotes sent back are not JSON: upload the file again")
    except InputError as exc:
        typed = not (upload is not None and upload.filename) and not request.form.get(
            "example") and not request.form.get("quotes_json")
        for e in Problem.from_input(exc).errors:
            where = _field_of(e["path"]) if typed else "q_file"
            form.error(where, f"{e['path']}: {e['message']}" if e["path"] and
                       where == "q_file" else e["message"])


def _demand(form: QuotesForm) -> Demand | None:
    """The buyer's demand: the quote file's [demand] with the typed fields over it; None
    when neither gives one (then today's ranking at each quote's point)."""
    data = dict((form.quotes_data or {}).get("demand") or {})
    for name, (key, unit, _) in DEMAND_FIELDS.items():
        text = form.values.get(name, "")
        if text:
            if key == "volume":
                data.pop("requests_per_day", None)
            data[key] = text if key == "percentile" else _typed(text, unit)
    if not data:
        return None
    try:
        return validate_demand(data)
    except InputError as exc:
        for e in Problem.from_input(exc).errors:
            key = e["path"].partition(".")[2].split(".")[0]
            where = next((n for n, (k, _, _) in DEMAND_FIELDS.items() if k == key), "d_volume")
            form.error(where, e["message"] if where != "d_volume" or key == "volume"
                       else f"{e['path']}: {e['message']}")
    return None


def _plain(text: str, name: str) -> dict[str, Any]:
    """A quote file's data (already read once without error), kept to post back."""
    return json.loads(text) if name.lower().endswith(".json") else tomllib.loads(text)


def _scenario_spec(form: QuotesForm) -> app.ScenarioSpec | None:
    choice = form.scenario
    kind, _, ref = choice.partition(":")
    if kind == "fixture" and choice in fixture_scenarios():
        title, data = fixture_scenarios()[choice]
        return app.ScenarioSpec(app.InlineScenario(data, title), subject="scenario.")
    if kind == "saved" and ref.isdigit() and 0 < int(ref) <= 2**31:
        return app.ScenarioSpec(app.SavedRevision(int(ref)), subject="scenario.")
    if kind == "price":
        price = scenario_form(dict(parse_qsl(form.price_query)))
        if not price.valid:
            for fld, message in price.errors.items():
                form.error("scenario", f"the Price page's {fld or 'scenario'}: {message}")
            return None
        return app.ScenarioSpec(app.InlineScenario(price.mapping, "the Price page's scenario"),
                                subject="scenario.")
    form.error("scenario", f"choose a scenario (got {choice!r})")
    return None


def _saved_choices() -> list[tuple[str, str]]:
    with current_app.extensions["costmodel"].sessions(write=False) as s:
        rows, _ = repo.scenario_list(s, limit=200)
        return [(f"saved:{r.id}", f"{r.name} (saved #{r.id}, revision {r.latest_revision})")
                for r in rows]


def _page(form: QuotesForm, ranking=None, status: int = 200, decision=None):
    return render_template(
        "web/quotes.html", form=form, ranking=ranking, decision=decision,
        demand_fields=DEMAND_FIELDS, percentiles=PERCENTILES, quote_fields=QUOTE_FIELDS,
        forms=FORMS, form_words=FORM_WORDS, form_short=FORM_SHORT,
        fixtures=[(k, title) for k, (title, _) in fixture_scenarios().items()],
        saved=_saved_choices(), body_limit=current_app.config["MAX_CONTENT_LENGTH"]), status


def _form_of(values) -> QuotesForm:
    kept = {k: str(values.get(k, "")).strip()[:200] for k in (*QUOTE_FIELDS, *DEMAND_FIELDS)}
    price_query = str(values.get("price_query", ""))[:4000]
    if not price_query and any(k in values for k in FIELDS if k != "name"):
        # arrived from the Price page (/quotes?<its query>): offer its scenario
        price_query = urlencode([(k, v) for k, v in parse_qsl(
            request.query_string.decode(), keep_blank_values=True) if k in FIELDS])
    default = "price" if price_query else DEFAULT_SCENARIO
    return QuotesForm(kept, str(values.get("scenario", default))[:100], price_query)


def _rank(form: QuotesForm, *, decide: bool = False):
    """The ranking of the form's quotes (for the buyer's demand when one is given: an app
    ``QuotesDecision``), or None (the errors are on the form)."""
    _read(form, request.files)
    demand = _demand(form) if form.quotes else None
    spec = _scenario_spec(form)
    if form.errors or spec is None or (decide and demand is None):
        if decide and demand is None and not form.errors:
            form.error("d_volume", "give the buyer's volume for a one-page summary")
        return None
    with current_app.extensions["costmodel"].sessions(write=False) as s:
        ctx = current_app.extensions["costmodel"].context(s)
        try:
            if demand is not None:
                return app.quotes_decide(ctx, app.DecisionRequest(form.quotes, [spec], demand))
            return app.quotes_compare(ctx, form.quotes, [spec])
        except InputError as exc:
            for e in Problem.from_input(exc).errors:
                where = "scenario" if e["path"].startswith("scenario") else "q_file"
                form.error(where, f"{e['path']}: {e['message']}" if e["path"] else
                           e["message"])
        except repo.NotFound as exc:
            form.error("scenario", str(exc))
    return None


@blueprint.get("/quotes")
def quotes():
    need("read")
    return _page(_form_of(request.args))


@blueprint.post("/quotes")
@computes("POST", "/api/v1/quotes/compare")
def quotes_post():
    need("read")
    form = _form_of(request.form)
    ranking = _rank(form)
    if isinstance(ranking, app.QuotesDecision):
        return _page(form, None, 200, ranking)
    return _page(form, ranking, 200 if ranking is not None else 422)


@blueprint.post("/quotes/summary.pdf")
@computes("POST", "/api/v1/quotes/decide")
def quotes_summary():
    """The one-page summary (PDF) of the offers ranked for the buyer's demand."""
    need("read")
    form = _form_of(request.form)
    answer = _rank(form, decide=True)
    if answer is None:
        return _page(form, None, 422)
    return Response(app.decision_pdf(answer), mimetype="application/pdf", headers={
        "Content-Disposition": 'attachment; filename="quotes-summary.pdf"'})


@blueprint.post("/quotes/workbook")
@computes("POST", "/api/v1/workbook")
def quotes_workbook():
    """The quotes workbook: the scenario's sheets and a Quotes sheet with live margins."""
    need("read")
    form = _form_of(request.form)
    ranking = _rank(form)
    if ranking is None:
        return _page(form, None, 422)
    if isinstance(ranking, app.QuotesDecision):
        form.error("d_volume", "a ranking for a demand has no workbook yet: download its "
                               "one-page summary, or leave the demand out for the Quotes sheet")
        return _page(form, None, 422, ranking)
    book = app.quotes_workbook(ranking)
    return Response(book.content, mimetype=XLSX, headers={
        "Content-Disposition": f'attachment; filename="{book.filename}"'})


@dataclass(frozen=True)
class _Words:
    status: int
    title: str
    message: str


@blueprint.errorhandler(RequestEntityTooLarge)
def _too_large(exc):
    """A body over the service's limit (an upload), said in words on the page it came to."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if not request.path.startswith("/quotes"):
        return render_template("web/signin.html", refused=_Words(
            413, "Too large", f"The form sent is larger than the service's limit of "
                              f"{limit // 1024:,} KiB. Nothing was saved."), next="/"), 413
    form = QuotesForm({k: "" for k in (*QUOTE_FIELDS, *DEMAND_FIELDS)}, DEFAULT_SCENARIO)
    form.error("q_file", f"the upload is larger than the service's limit of "
                         f"{limit // 1024:,} KiB (COSTMODEL_MAX_BODY): send a smaller file")
    return _page(form, None, 413)
