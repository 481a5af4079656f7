"""The Quotes page: vendor quotes against our own builds, for the buyer's demand.

With a demand (a quote file's ``[demand]`` table, the demand fields typed over it) every offer
and each own build is priced and sized for that same demand, ranked by what the month costs,
with break-evens and a recommendation: the application layer's
:func:`costmodel.app.quotes_decide`, as ``POST /api/v1/quotes/decide`` and ``costmodel quotes
compare`` with a demand answer it, with its one-page summary (PDF). Without a demand the
quotes are ranked by unit price at each offer's own volume and term
(:func:`costmodel.app.quotes_compare`, ``POST /api/v1/quotes/compare``), with the quotes
workbook; that ranking recommends nothing, since the volumes it compares differ.

A first visit (``GET /quotes``, no query) shows the decision docs/negotiators.md walks
through: the quotes and buyer's demand of fixtures/quotes/negotiation.toml against the
gpt-oss-120b B200 and H100 example scenarios (:data:`DEFAULT_QUOTES`,
:data:`DEFAULT_SCENARIOS`).

The whole view is its query string (:meth:`QuotesForm.pairs`): the quotes (``quotes``: an
example file, ``typed`` for the one-quote form's ``q_*`` fields, or ``file`` for an uploaded
file carried in the link, compressed, as ``qf`` with its name ``qn``), the demand
(``demand=buyer|none`` and the ``d_*`` fields), the own builds (``scenario``, repeated) and,
when the Price page's scenario is one, the Price page's own fields. An upload is the one
POST: the file is read within the service's body limit (``MAX_CONTENT_LENGTH``) and answered
by a redirect to the link of the view it makes. A file too large to carry in a link
(:data:`LINK_LIMIT`) is answered on the POST itself; that view says it has no link, and its
form and downloads post the file along. Errors carry the API's words at the field they name.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
import tomllib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, urlencode

from flask import Response, current_app, redirect, render_template, request
from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import RequestEntityTooLarge

from .. import app
from ..app import saved as saved_scenarios
from ..app.caps import MAX_SCENARIOS, check_quotes_first
from ..app.money import USD_MONEY
from ..decisions.demand import Demand, typed_over, validate_demand
from ..decisions.quotes import FORMS, Quote
from ..http.errors import Problem
from ..http.services import services
from ..model.curves import PERCENTILES
from ..model.errors import InputError, parse_nested
from ..model.units import UnitInputError, parse_quantity
from ..render import display
from ..resources import fixtures_dir
from ..sources.quote_file import quotes_of, read_quotes_text
from .guard import computes
from .labels import LABELS, label_of
from .pages import Choice, fixture_scenarios, in_currency  # the Compare page's examples
from .scenario_form import FIELDS, MONEY_FIELDS, money_table, scenario_form
from .session import need
from .site import blueprint

__all__ = ["QUOTE_FIELDS", "DEMAND_FIELDS", "EXAMPLES", "DEFAULT_QUOTES", "DEFAULT_SCENARIOS",
           "LINK_LIMIT", "QuotesForm", "pack_quotes", "unpack_quotes"]

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# quotes=<key>: the example quote files in fixtures/quotes, and what each holds
EXAMPLES: dict[str, tuple[str, str]] = {
    "negotiation": ("negotiation.toml", "an H100 capacity offer and a tiered API offer for "
                                        "gpt-oss-120b, with a buyer's demand"),
    "example-quotes": ("example-quotes.toml", "three offers for DeepSeek R1 at 169 "
                                              "token/s/user, with no demand of its own"),
}
# each example's own builds, serving the model its quotes do (a link naming no own build
# gets its example's): DeepSeek R1 quotes beside DeepSeek R1 builds, not gpt-oss curves
EXAMPLE_BUILDS: dict[str, tuple[str, ...]] = {
    "example-quotes": ("fixture:published/deepseek-r1_gb300_matched",
                       "fixture:published/deepseek-r1_jalapeno_matched"),
}
# the examples the page links to: the DeepSeek R1 quotes decided for an illustrative demand
# (20,000 Mtok a month, the volume vendor-a-tokens quotes, at the 169 token/s/user they
# guarantee) against their own builds, and the same quotes by unit price (docs/negotiators.md)
EXAMPLE_DEMAND = (("d_volume", "20000"), ("d_interactivity", "169"))
EXAMPLE_LINKS = {
    "deepseek-decision": urlencode([("quotes", "example-quotes"), ("demand", "buyer"),
                                    *EXAMPLE_DEMAND,
                                    *(("scenario", s) for s in EXAMPLE_BUILDS["example-quotes"])]),
    "deepseek-unit-price": urlencode([("quotes", "example-quotes"), ("demand", "none"),
                                      *(("scenario", s)
                                        for s in EXAMPLE_BUILDS["example-quotes"])]),
}
# the first view: the decision docs/negotiators.md shows (its quotes, its demand, its builds)
DEFAULT_QUOTES = "negotiation"
DEFAULT_SCENARIOS = ("fixture:curve-gpt-oss-120b-b200", "fixture:curve-gpt-oss-120b-h100")
QUOTE_SOURCES = (*EXAMPLES, "typed", "file")
DEMAND_MODES = ("buyer", "none")
SLOTS = 3  # own-build pickers shown at least (a link may name more, up to MAX_SCENARIOS)
# The longest link the page offers [characters]: nginx and gunicorn take a request line of
# at most 4 KB ("GET " + the link + " HTTP/1.1"; deploy/nginx.conf), and the form, sent by GET,
# adds its empty fields (about 300 characters) to the view's link.
LINK_LIMIT = 3500

# The one-quote form: field -> (the quote key, the unit a bare number is read in, label).
# (the labels' words are :data:`~costmodel.web.labels.LABELS`, the one mapping every list of
# errors names a field by)
QUOTE_FIELDS: dict[str, tuple[str, str, str]] = {name: (key, unit, LABELS[name])
                                                 for name, key, unit in (
    ("q_name", "name", ""), ("q_vendor", "vendor", ""), ("q_date", "date", ""),
    ("q_form", "form", ""), ("q_market", "market", ""),
    ("q_price_input", "price_input", "USD/Mtok"),
    ("q_price_output", "price_output", "USD/Mtok"), ("q_hourly_price", "hourly_price", "USD/h"),
    ("q_monthly_price", "monthly_price", "USD/month"), ("q_accelerators", "accelerators", ""),
    ("q_term", "term", "month"), ("q_volume", "volume", "Mtok/month"),
    ("q_commitment", "commitment", "USD"),
    ("q_interactivity", "operating_point.interactivity", "token/s/user"),
    ("q_isl", "operating_point.isl", ""), ("q_osl", "operating_point.osl", ""),
    ("q_model", "operating_point.model", ""))}
# The buyer's demand: field -> (the demand key, the unit a bare number is read in, label).
DEMAND_FIELDS: dict[str, tuple[str, str, str]] = {name: (key, unit, LABELS[name])
                                                  for name, key, unit in (
    ("d_volume", "volume", "Mtok/month"), ("d_peak", "peak", "token/s"),
    ("d_interactivity", "interactivity", "token/s/user"), ("d_percentile", "percentile", ""),
    ("d_load", "load", ""))}
LOAD_CHARS = 800  # a typed load shape: 48 numbers of up to 15 characters with separators
# the yearly fall of the market price that prices a winning offer's lock-in (not the demand's)
IMPROVEMENT = "d_improvement"
TEXT_FIELDS = (*QUOTE_FIELDS, *DEMAND_FIELDS, IMPROVEMENT)
FORM_WORDS = {"per_mtok": "per million tokens (input and output prices)",
              "per_accelerator_hour": "capacity, per accelerator-hour",
              "reserved_monthly": "capacity, reserved by the month"}

FORM_SHORT = {"per_mtok": "per million tokens", "per_accelerator_hour": "per accelerator-hour",
              "reserved_monthly": "reserved by the month"}
KIND_WORDS = {"own": "own build", "per_mtok": "per million tokens", "capacity": "capacity"}


def pack_quotes(data: dict[str, Any]) -> str:
    """A quote file's data for a link: its JSON, deflated, in unpadded base64url."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode().rstrip("=")


def unpack_quotes(packed: str, limit: int) -> dict[str, Any]:
    """The data :func:`pack_quotes` packed, at most ``limit`` bytes of it inflated; anything
    else is an InputError in words."""
    def bad(why: str) -> InputError:
        return InputError([("", f"the quote file in this link {why}: upload the file "
                                  f"again")])
    try:
        raw = base64.urlsafe_b64decode(packed + "=" * (-len(packed) % 4))
        inflate = zlib.decompressobj()
        text = inflate.decompress(raw, limit)
    except (binascii.Error, ValueError, zlib.error):
        raise bad("is damaged (cut short when copied?)") from None
    if inflate.unconsumed_tail:  # (an InputError is a ValueError: said outside the try)
        raise bad(f"is larger than the service's limit of {limit // 1024:,} KiB")
    try:
        data = parse_nested(json.loads, text.decode("utf-8"), "the quote file")
    except (ValueError, zlib.error):  # JSONDecodeError, UnicodeDecodeError
        raise bad("is damaged (cut short when copied?)") from None
    if not isinstance(data, dict):
        raise bad("is not a quote file")
    return data


@dataclass
class QuotesForm:
    """The page's state: its fields as typed (``values``), which quotes (``quotes_from``,
    with ``file_name`` and ``packed`` for a file), the demand mode, the own builds
    (``scenarios``: ``fixture:<name>``, ``saved:<id>`` or ``price``) and the Price page's
    query; once read, the quotes (as plain quote-file data too), the demand, and the errors
    by field (``""``: the page as a whole)."""
    values: dict[str, str]
    quotes_from: str = DEFAULT_QUOTES
    scenarios: list[str] = field(default_factory=lambda: list(DEFAULT_SCENARIOS))
    demand_mode: str = "buyer"
    price_query: str = ""
    file_name: str = ""
    packed: str = ""
    quotes_data: dict[str, Any] | None = None
    source: str = ""  # what the quotes came from, in words
    quotes: list[Quote] = field(default_factory=list)
    demand: Demand | None = None
    demand_typed: list[str] = field(default_factory=list)  # the demand fields typed
    errors: dict[str, list[str]] = field(default_factory=dict)
    # the Currency fields (:data:`MONEY_FIELDS`), as the Compare page takes them
    money: dict[str, str] = field(default_factory=lambda: dict.fromkeys(MONEY_FIELDS, ""))

    @property
    def money_form(self) -> Any:
        """The Currency fields for the fieldset macro: their values and first errors."""
        return SimpleNamespace(values=self.money, errors={
            k: self.errors[k][0] for k in MONEY_FIELDS if self.errors.get(k)})

    def error(self, where: str, message: str) -> None:
        self.errors.setdefault(where, []).append(message)

    def pairs(self, *, state: bool = True) -> list[tuple[str, str]]:
        """The view as query pairs, in a fixed order (empty fields left out); ``state=False``:
        only what the main form does not show as a field (the file, the Price page's)."""
        out: list[tuple[str, str]] = [("quotes", self.quotes_from)] if state else []
        if self.quotes_from == "file":
            out += [("qn", self.file_name), ("qf", self.packed)]
        if state:
            out += [(k, self.values[k]) for k in QUOTE_FIELDS if self.values[k]]
            out.append(("demand", self.demand_mode))
            out += [(k, self.values[k]) for k in (*DEMAND_FIELDS, IMPROVEMENT) if self.values[k]]
            out += [("scenario", s) for s in self.scenarios]
            out += [(k, self.money[k]) for k in MONEY_FIELDS if self.money[k]]
        return out + parse_qsl(self.price_query, keep_blank_values=True)

    @property
    def query(self) -> str:
        return urlencode(self.pairs())

    @property
    def link(self) -> str:
        """The link that opens this view again, in any browser."""
        return f"/quotes?{self.query}"

    @property
    def linkable(self) -> bool:
        """Whether the view fits in a link (a large quote file does not)."""
        return (self.quotes_from != "file" or bool(self.packed)) and \
            len(self.link) <= LINK_LIMIT

    @property
    def file_demand(self) -> dict[str, Any]:
        """The quote file's own [demand] table (empty without one)."""
        table = (self.quotes_data or {}).get("demand")
        return table if isinstance(table, dict) else {}

    @property
    def typed_unused(self) -> bool:
        """A quote is typed in the form but other quotes are shown."""
        return self.quotes_from != "typed" and any(self.values[k] for k in QUOTE_FIELDS)


def _typed(text: str, unit: str) -> Any:
    """A bare number typed in a field is in the field's unit; a count stays a number."""
    try:
        number = float(text)
    except ValueError:
        return text
    if not unit:
        return int(number) if number.is_integer() else number
    return f"{text} {unit}"


def _load_of(text: str) -> Any:
    """A load shape typed as numbers (commas or spaces between): 24 for every day, or 48 for
    weekdays then weekend days; any other count is left for the demand's check to name."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    values = [_typed(p, "") for p in parts]
    if len(values) == 48:
        return {"hourly": values[:24], "weekend": values[24:]}
    return {"hourly": values}


def _quote_of_form(values: dict[str, str]) -> dict[str, Any]:
    quote: dict[str, Any] = {}
    for name, (key, unit, _) in QUOTE_FIELDS.items():
        text = values.get(name, "")
        if not text:
            continue
        value: Any = text if key in ("name", "vendor", "date", "form", "market",
                                     "operating_point.model") \
            else _typed(text, unit)
        section, _, leaf = key.rpartition(".")
        (quote.setdefault(section, {}) if section else quote)[leaf] = value
    return quote


def _typed_field_of(path: str) -> str:
    """The form field of an error at ``quote[0].<key>``; ``quotes`` otherwise."""
    key = path.partition(".")[2] if path.startswith("quote[0]") else ""
    for name, (k, _, _) in QUOTE_FIELDS.items():
        if key == k or (key and key.startswith(k + ".")):
            return name
    return "quotes"


def _form_of(values: MultiDict) -> QuotesForm:
    """The page's state from a query string or a posted form (what it does not name takes
    the first view's)."""
    kept = {k: str(values.get(k, "")).strip()[:LOAD_CHARS if k == "d_load" else 200]
            for k in TEXT_FIELDS}
    form = QuotesForm(kept)
    # the Currency fields are the page's (the Price page's currency arrives in them)
    form.money = {k: str(values.get(k, "") or "").strip()[:200] for k in MONEY_FIELDS}
    form.price_query = str(values.get("price_query", ""))[:4000]
    scenario_fields = [k for k in FIELDS if k not in MONEY_FIELDS]
    if not form.price_query and any(k in values for k in scenario_fields if k != "name"):
        # arrived from the Price page (/quotes?<its query>), or a link carrying its fields
        form.price_query = urlencode([(k, values.get(k, "")) for k in scenario_fields
                                      if k in values])
    chosen = str(values.get("quotes", "")).strip()
    if not chosen:  # a quote typed in a link that names no quotes means that quote
        chosen = "typed" if kept["q_name"] or kept["q_form"] or kept["q_market"] \
            else DEFAULT_QUOTES
    if chosen in QUOTE_SOURCES:
        form.quotes_from = chosen
    else:
        form.error("quotes", f"no quotes {chosen[:40]!r}: choose an example, the quote typed "
                             f"below or upload a file")
    form.file_name = Path(str(values.get("qn", ""))).name[:100] or "the quote file"
    form.packed = str(values.get("qf", ""))
    mode = str(values.get("demand", "buyer"))
    if mode in DEMAND_MODES:
        form.demand_mode = mode
    else:
        form.error("demand", f"expected buyer or none, got {mode[:20]!r}")
    if "scenario" in values:
        form.scenarios = [s.strip()[:100] for s in values.getlist("scenario")
                          if s.strip()][:MAX_SCENARIOS]
        if not form.scenarios:
            form.error("scenario1", "choose at least one own build")
    elif form.price_query:
        form.scenarios = ["price"]
    else:
        form.scenarios = list(EXAMPLE_BUILDS.get(form.quotes_from, DEFAULT_SCENARIOS))
    return form


# ---- reading the quotes, the demand and the own builds --------------------------------------

def _plain(text: str, name: str) -> dict[str, Any]:
    """A quote file's data (already read once without error), as a link carries it (JSON:
    a TOML date is its text)."""
    data = json.loads(text) if name.lower().endswith(".json") else tomllib.loads(text)
    return json.loads(json.dumps(data, ensure_ascii=False, default=str))


def _read_upload(form: QuotesForm, upload) -> None:
    """An uploaded quote file becomes the view's quotes (errors at ``q_file``)."""
    name = Path(upload.filename).name[:100] or "upload"
    try:
        text = upload.read().decode("utf-8")
    except UnicodeDecodeError:
        form.error("q_file", f"{name} is not UTF-8 text: upload the quote file as TOML or "
                             f"JSON")
        return
    try:
        try:  # counted before any quote is read (the cap first, then the validation)
            parsed = _plain(text, name)
        except (ValueError, RecursionError):  # malformed: the file's own words below
            parsed = None
        check_quotes_first(parsed)
        read_quotes_text(text, name)  # the file's own words for what is wrong
        data = _plain(text, name)
        quotes_of(data, name)
    except InputError as exc:
        for e in Problem.from_input(exc).errors:
            form.error("q_file", f"{e['path']}: {e['message']}" if e["path"] else e["message"])
        return
    form.quotes_from, form.file_name, form.packed = "file", name, pack_quotes(data)


def _read_quotes(form: QuotesForm) -> None:
    """Fill ``form.quotes`` (and its data and source) from the quotes the view names."""
    where = {"typed": None, "file": "q_file"}.get(form.quotes_from, "quotes")
    try:
        if form.quotes_from in EXAMPLES:
            name = EXAMPLES[form.quotes_from][0]
            text = (fixtures_dir() / "quotes" / name).read_text(encoding="utf-8")
            data, form.source = _plain(text, name), f"the example file fixtures/quotes/{name}"
        elif form.quotes_from == "file":
            if not form.packed:
                form.error("q_file", "this link carries no quote file: upload it")
                return
            data = unpack_quotes(form.packed, current_app.config["MAX_CONTENT_LENGTH"])
            check_quotes_first(data)  # before any quote is validated or compared
            form.source = f"your file {form.file_name}"
        else:
            if not any(form.values[k] for k in QUOTE_FIELDS):
                form.error("q_name", "type a quote below (its name, vendor, form and prices)")
                return
            data, form.source = {"quote": [_quote_of_form(form.values)]}, \
                "the quote typed in the form"
        form.quotes = quotes_of(data, form.file_name if form.quotes_from == "file" else
                                "quotes")
        form.quotes_data = data
    except InputError as exc:
        for e in Problem.from_input(exc).errors:
            at = where or _typed_field_of(e["path"])
            form.error(at, e["message"] if where is None and at != "quotes" else
                       (f"{e['path']}: {e['message']}" if e["path"] else e["message"]))


def _demand(form: QuotesForm) -> Demand | None:
    """The buyer's demand: the quote file's [demand] with the typed fields over it; None
    without one, or when the view asks for none (then the ranking by unit price)."""
    if form.demand_mode == "none":
        return None
    table = (form.quotes_data or {}).get("demand")
    if table is not None and not isinstance(table, dict):
        form.error("q_file", "demand: must be a table")
        return None
    typed: dict[str, Any] = {}
    for name, (key, unit, label) in DEMAND_FIELDS.items():
        text = form.values[name]
        if text:
            typed[key] = (text if key == "percentile" else _load_of(text) if key == "load"
                          else _typed(text, unit))
            form.demand_typed.append(label.partition(" (")[0].lower())
    data = typed_over(table or {}, **typed)  # a volume in tokens, requests or tasks
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


def _improvement(form: QuotesForm) -> float | None:
    """The yearly fall of the market price [fraction] (a bare number in %), or None."""
    text = form.values[IMPROVEMENT]
    if not text:
        return None
    try:
        value = parse_quantity(_typed(text, "%"), "dimensionless")
    except UnitInputError as exc:
        form.error(IMPROVEMENT, str(exc))
        return None
    if not 0 <= value < 1:
        form.error(IMPROVEMENT, f"expected 0 to 100 % a year, got {value:.4g} "
                                f"({value:.1%})")
        return None
    return value


def _own_builds(form: QuotesForm) -> list[app.ScenarioSpec]:
    """The own builds the view names, as specs (each error at its picker)."""
    specs = []
    for i, choice in enumerate(form.scenarios, 1):
        where, subject = f"scenario{i}", f"scenario{i}."
        kind, _, ref = choice.partition(":")
        if choice in form.scenarios[:i - 1]:
            form.error(where, "chosen twice: choose another own build, or none")
        elif kind == "fixture" and choice in fixture_scenarios():
            title, data = fixture_scenarios()[choice]
            specs.append(app.ScenarioSpec(app.InlineScenario(data, title), subject=subject))
        elif kind == "saved" and ref.isdigit() and 0 < int(ref) <= 2**31:
            specs.append(app.ScenarioSpec(app.SavedRevision(int(ref)), subject=subject))
        elif choice == "price" and form.price_query:
            price = scenario_form(dict(parse_qsl(form.price_query)))
            for fld, message in price.errors.items():
                form.error(where, f"the Price page's {fld or 'scenario'}: {message}")
            specs.append(app.ScenarioSpec(app.InlineScenario(
                price.mapping, "the Price page's scenario"), subject=subject))
        else:
            form.error(where, f"no own build {choice!r}: choose one from the list")
    return specs


def _titles(form: QuotesForm, saved: dict[str, str]) -> list[str]:
    out = []
    for choice in form.scenarios:
        if choice in fixture_scenarios():
            out.append(fixture_scenarios()[choice][0])
        elif choice == "price":
            out.append("the Price page's scenario")
        else:
            out.append(saved.get(choice, choice))
    return out


def _answer(form: QuotesForm):
    """The view's answer: a ``QuotesDecision`` for the demand, else a ``QuotesRanking`` by
    unit price; None with the errors on the form."""
    _read_quotes(form)
    form.demand = _demand(form) if form.quotes else None
    improvement = _improvement(form)
    specs = _own_builds(form)
    money_errors: dict[str, str] = {}
    table, _ = money_table(form.money, money_errors)
    for where, message in money_errors.items():
        form.error(where, message)
    if form.errors or not specs:
        return None
    with services().sessions(write=False) as s:
        ctx = services().context(s)
        try:
            if table is not None:  # every own build shown in the page's currency
                specs = [in_currency(ctx, Choice("", "", spec, {}), table).spec
                         for spec in specs]
            if form.demand is not None:
                return app.quotes_decide(ctx, app.DecisionRequest(form.quotes, specs,
                                                                  form.demand, improvement))
            return app.quotes_compare(ctx, form.quotes, specs)
        except InputError as exc:
            _place(form, exc)
        except saved_scenarios.NotFound as exc:  # a saved scenario deleted since the list was shown
            form.error(next((f"scenario{i}" for i, c in enumerate(form.scenarios, 1)
                             if c.startswith("saved:")), "scenario1"), str(exc))
    return None


def _place(form: QuotesForm, exc: InputError) -> None:
    """An application-layer error beside the field it is about."""
    for e in Problem.from_input(exc).errors:
        path, message = e["path"], e["message"]
        slot = re.match(r"(scenario\d+)\.?(.*)", path)
        if slot:
            form.error(slot[1], f"{slot[2]}: {message}" if slot[2] else message)
        elif path.startswith("demand"):
            form.error("d_volume", f"{path}: {message}")
        elif form.quotes_from == "typed":
            form.error(_typed_field_of(path), message)
        else:
            form.error("q_file" if form.quotes_from == "file" else "quotes",
                       f"{path}: {message}" if path else message)


def _saved_choices() -> list[tuple[str, str]]:
    rows, _ = saved_scenarios.scenarios(services(), limit=200)
    return [(f"saved:{r.id}", f"{r.name} (saved #{r.id}, revision {r.latest_revision})")
            for r in rows]


# ---- what the page says the view uses ------------------------------------------------------

def demand_words(demand: Demand) -> list[str]:
    """The demand's terms, each in a few words (its volume and peak are the decision's)."""
    q = display.format_quantity
    out = [] if demand.load is None else [demand.load.words()]
    if demand.interactivity is not None:
        out.append(f"service level {q(demand.interactivity, 'token/s/user')} "
                   f"({demand.percentile or 'median'})")
    else:
        out.append("no service level (each own build at its own operating point)")
    if demand.ttft_max is not None:
        out.append(f"time to first token at most {q(demand.ttft_max, 's')}")
    if demand.model or demand.precision:
        out.append("serving " + " ".join(x for x in (demand.model, demand.precision) if x))
    if demand.batch_share:
        out.append(f"{display.format_percent(demand.batch_share)} sent as batch")
    if demand.cached_input_share:
        out.append(f"{display.format_percent(demand.cached_input_share)} of input tokens "
                   f"from a prefix cache")
    own = demand.own
    if own.availability is not None or own.mtbi is not None:
        out.append(f"our own build available {display.format_percent(own.available)} of hours"
                   + (f" (an interruption every {own.mtbi:g} h, {own.recovery:g} h to recover)"
                      if own.mtbi is not None else ""))
    return out


def _error_list(form: QuotesForm) -> list[tuple[str, str, str]]:
    """Every error of the form as (the anchor of its field, its label's words, message)."""
    where_words = {"": ("#quotes-fs", "Quotes"), "quotes": ("#quotes-fs", "Quotes"),
                   "q_file": ("#f-quote-file", label_of("q_file")),
                   "demand": ("#demand-fs", "The buyer's demand")}
    out = []
    for where, messages in form.errors.items():
        if where in where_words:
            anchor, words = where_words[where]
        elif where.startswith("scenario"):
            anchor, words = f"#f-{where}", f"Own build {where.removeprefix('scenario')}"
        else:
            anchor, words = f"#f-{where}", label_of(where)
        out += [(anchor, words, m) for m in messages]
    return out


def _page(form: QuotesForm, status: int = 200, *, decision=None, ranking=None,
          saved: list[tuple[str, str]] | None = None):
    saved = _saved_choices() if saved is None else saved
    money = (decision or ranking).money if (decision or ranking) is not None else USD_MONEY
    money_note = money.quotes_words() or None
    slots = form.scenarios + [""] * max(SLOTS - len(form.scenarios),
                                        1 if len(form.scenarios) < MAX_SCENARIOS else 0)
    return render_template(
        "web/quotes.html", form=form, ranking=ranking, decision=decision, money=money,
        money_note=money_note,
        error_list=_error_list(form),
        demand_fields=DEMAND_FIELDS, improvement_field=IMPROVEMENT, percentiles=PERCENTILES,
        quote_fields=QUOTE_FIELDS, forms=FORMS, form_words=FORM_WORDS, form_short=FORM_SHORT,
        kind_words=KIND_WORDS, examples=EXAMPLES, example_links=EXAMPLE_LINKS,
        default_scenarios=DEFAULT_SCENARIOS,
        fixtures=[(k, title) for k, (title, _) in fixture_scenarios().items()],
        saved=saved, slots=slots, titles=_titles(form, dict(saved)),
        demand_words=demand_words(form.demand) if form.demand is not None else [],
        body_limit=current_app.config["MAX_CONTENT_LENGTH"], link_limit=LINK_LIMIT), status


def _view(form: QuotesForm):
    """The page for the form's view: its decision or ranking, or its errors (422)."""
    saved = _saved_choices()
    answer = _answer(form)
    if answer is None:
        return _page(form, 422, saved=saved)
    if isinstance(answer, app.QuotesDecision):
        return _page(form, decision=answer, saved=saved)
    return _page(form, ranking=answer, saved=saved)


def _received() -> QuotesForm:
    """The view a request names: its query (GET), or its form and an uploaded quote file in
    it (POST; the file's errors at ``q_file``)."""
    if request.method != "POST":
        return _form_of(request.args)
    form = _form_of(request.form)
    upload = request.files.get("quote_file")
    if upload is not None and upload.filename:
        _read_upload(form, upload)
    elif request.form.get("upload"):
        form.error("q_file", "choose a quote file to upload")
    return form


# A page's twin: a view for a demand is POST /api/v1/quotes/decide; without one it is
# /quotes/compare's work, of the same heavy class and counted against the same rate.
@blueprint.get("/quotes")
@computes("POST", "/api/v1/quotes/decide")
def quotes():
    """The view the query names; with no query, the decision of the negotiators' example."""
    need("read")
    return _view(_form_of(request.args))


@blueprint.post("/quotes")
@computes("POST", "/api/v1/quotes/decide")
def quotes_post():
    """An uploaded quote file (or the form of a view too large for a link): answered by a
    redirect to the view's link, or on the POST when the view does not fit in one."""
    need("read")
    form = _received()
    if form.errors.get("q_file"):
        return _page(form, 422)
    if form.linkable:
        return redirect(form.link, 303)
    return _view(form)


@blueprint.route("/quotes/summary.pdf", methods=["GET", "POST"])
@computes("POST", "/api/v1/quotes/decide")
def quotes_summary():
    """The one-page summary (PDF) of the view's decision."""
    need("read")
    form = _received()
    saved = _saved_choices()
    answer = None if form.errors else _answer(form)
    if isinstance(answer, app.QuotesDecision):
        return Response(app.decision_pdf(answer), mimetype="application/pdf", headers={
            "Content-Disposition": 'attachment; filename="quotes-summary.pdf"'})
    if answer is not None:
        form.error("d_volume", "give the buyer's volume for a one-page summary")
    return _page(form, 422, ranking=answer, saved=saved)


@blueprint.route("/quotes/workbook", methods=["GET", "POST"])
@computes("POST", "/api/v1/workbook")
def quotes_workbook():
    """The view's workbook: for a demand, the decision (the Decision and Scan sheets, live,
    before the own builds' sheets); else the ranking by unit price (the scenarios' sheets and
    a Quotes sheet with live margins)."""
    need("read")
    form = _received()
    saved = _saved_choices()
    answer = None if form.errors else _answer(form)
    if answer is None:
        return _page(form, 422, saved=saved)
    try:
        book = (app.render_decision_workbook(answer) if isinstance(answer, app.QuotesDecision)
                else app.quotes_workbook(answer))
    except InputError as exc:  # more ranked offers than a workbook lays out, say
        form.error("demand", "; ".join(m for _, m in exc.errors))
        return _page(form, 422, decision=answer, saved=saved)
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
    form = _form_of(MultiDict())
    form.error("q_file", f"the upload is larger than the service's limit of "
                         f"{limit // 1024:,} KiB (COSTMODEL_MAX_BODY): send a smaller file")
    return _page(form, 413)
