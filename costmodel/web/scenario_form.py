"""The scenario form: a query string (or a posted form) <-> a scenario mapping.

One form serves the Price and Sensitivity pages, the Quotes page and "save a new revision":
:func:`scenario_form` reads the fields people fill in (every one a plain string, as typed),
builds the scenario mapping the application layer takes (:class:`costmodel.app.InlineScenario`,
the same mapping an API body's ``scenario`` holds), and checks every typed quantity with the
parsing the API uses, so a bad field carries the API's own message, said in the unit the
field is typed in (a share's bounds in percent: "must be at most 100 %, got 170 %" where the
API, which keeps shares as fractions, says "must be at most 1, got 1.7"). Errors the
application layer raises later (an unknown catalog key, an unreachable interactivity, a
cross-check) are put beside their field, in the same words, by :meth:`ScenarioForm.add_errors`.

Quantities are typed as people write them: ``0.08 USD/kWh`` or ``8 cent/kWh``; a bare number
is read in the field's display unit (percent for shares, years for the life, USD/kWh for the
electricity price, token/s/user for the interactivity).

Electricity is a flat price (a catalog entry or a typed price) or a catalog tariff
(``electricity = {"tariff": key}``); a load shape is a preset (:data:`LOAD_PRESETS`) or 24
typed fractions (and optionally 24 for weekend days), sent as ``load = {"hourly": [...],
"weekend": [...]}``; with a load shape the utilisation is the shape's mean, so the
utilisation field is not sent.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from ..model.curves import PERCENTILES
from ..model.errors import Bound, InputError, Sign, WrongDimension
from ..model.inputs import Scenario, quantity_field, validate_money
from ..model.rates import DATE_PATTERN
from ..model.steps import BASES, BOUNDARIES
from ..model.units import CURRENCIES, UnitInputError, exchange_rates, parse_quantity

__all__ = ["ScenarioForm", "scenario_form", "FIELDS", "MONEY_FIELDS", "money_table", "DEFAULTS",
           "ENGINE_DEFAULTS", "FormCatalog",
           "form_catalog", "field_of", "CURVE_PREFIX", "LoadPreset", "LOAD_PRESETS",
           "parse_load_row", "hour_span", "in_typed_unit", "restate_bounds"]

CURVE_PREFIX = "curve:"  # a ``point`` read from a curve: ``curve:<curve id>``

# field -> its value when the query does not name it (an empty value means "not given": the
# engine's default applies and the disclosure says so). The form starts from the engine's
# own defaults (the scenario model's, as the API and the CLI do): a GB300 at DeepSeek R1's
# published peak, every other input left to the engine and said next to the figure.
DEFAULTS: dict[str, str] = {
    "name": "",
    "accelerator": "gb300",
    "accelerator_price": "",
    "system": "",
    "point": "deepseek-r1/gb300/peak",
    "interactivity": "",
    "percentile": "median",
    "electricity_kind": "flat",  # flat (a catalog price or a typed one) | tariff
    "electricity": "",
    "electricity_price": "",
    "tariff": "",  # a catalog tariff's key (electricity_kind = tariff)
    "carbon": "",  # a catalog grid factor's key: the location-based factor (blank: none)
    "market_carbon": "",  # a catalog grid factor's key: the market-based factor
    "load": "",  # "": no load shape; a LOAD_PRESETS key; "custom": the typed rows
    "load_hourly": "",  # 24 fractions, weekdays (or every day)
    "load_weekend": "",  # 24 fractions, weekend days (optional)
    "boundary": "",
    "basis": "",
    "utilisation": "",
    "financing": "own",
    "life": "",
    "cost_of_capital": "",
    "salvage": "",
    "rate": "",
    "margin": "",
    # the currency results are shown in (blank: USD) and its exchange rate, dated and sourced
    "currency": "",
    "fx_rate": "",  # units of the currency per USD (a bare number: <CODE>/USD)
    "fx_date": "",
    "fx_source": "",
}
FIELDS = tuple(DEFAULTS)  # the canonical order of the query string
MONEY_FIELDS = ("currency", "fx_rate", "fx_date", "fx_source")


def _engine_defaults() -> dict[str, str]:
    """What a blank field means, in the field's own unit: the scenario model's defaults."""
    def default(model: Any, name: str) -> float:
        return model.model_fields[name].default
    financing, pricing, power = (Scenario.model_fields[n].default_factory
                                 for n in ("financing", "pricing", "power"))
    return {"utilisation": f"{default(Scenario, 'utilisation') * 100:g}",
            "life": f"{default(financing, 'life'):g}",
            "cost_of_capital": f"{default(financing, 'cost_of_capital') * 100:g}",
            "salvage": f"{default(financing, 'salvage') * 100:g}",
            "margin": f"{default(pricing, 'gross_margin') * 100:g}",
            "boundary": default(power, "boundary"), "basis": default(power, "basis")}


# field -> what leaving it blank means (shown in the field: "default: 100")
ENGINE_DEFAULTS = _engine_defaults()
MAX_TEXT = 200  # characters kept of a typed field
MAX_ROW_TEXT = 1000  # ... of a typed load row (24 numbers)
HOURS = 24


@dataclass(frozen=True)
class LoadPreset:
    """A load shape offered by name: the fraction of each hour serving (index 0 = 00:00-01:00
    local time), weekdays and, when they differ, weekend days."""
    label: str
    hourly: tuple[float, ...]
    weekend: tuple[float, ...] | None = None
    note: str = ""


# illustrative shapes (not measurements), each shown with its numbers beside the picker
LOAD_PRESETS: dict[str, LoadPreset] = {
    "flat": LoadPreset("Flat: 70% of every hour", (0.7,) * HOURS,
                       note="the default utilisation spread evenly over the day"),
    "night-batch": LoadPreset(
        "Night-heavy batch",
        (0.9,) * 6 + (0.6,) + (0.5,) * 9 + (0.2,) * 5 + (0.6,) + (0.9,) * 2,
        note="batch jobs run overnight and back off in a 16:00-21:00 peak"),
    "daytime-chat": LoadPreset(
        "Daytime chat",
        (0.2,) * 7 + (0.4, 0.7) + (0.9,) * 9 + (0.8, 0.7, 0.6, 0.5, 0.4, 0.3),
        weekend=(0.2,) * 9 + (0.5,) * 13 + (0.3,) * 2,
        note="people chat in office hours; quieter weekends"),
}

# a bare number typed in a field is in this unit (the unit the label shows)
_BARE_UNIT = {"accelerator_price": "USD", "electricity_price": "USD/kWh", "utilisation": "%",
              "life": "year", "cost_of_capital": "%", "salvage": "%", "margin": "%",
              "interactivity": "token/s/user"}
# field -> the scenario key its typed quantity sets
_KEY = {"accelerator_price": "accelerator.price", "electricity_price": "electricity.price",
        "utilisation": "utilisation", "life": "financing.life",
        "cost_of_capital": "financing.cost_of_capital", "salvage": "financing.salvage",
        "margin": "pricing.gross_margin"}

# an error's scenario path -> the form field it is shown beside (longest prefix wins)
_FIELD_OF_PATH = {
    "name": "name", "accelerator": "accelerator", "accelerator.price": "accelerator_price",
    "accelerator.hourly_price": "rate", "accelerator.all_in_power": "rate",
    "accelerator.rate": "rate", "accelerator.measured_power": "basis",
    "system": "system", "node": "system", "rack": "system",
    "operating_point": "point", "operating_point.at": "interactivity",
    "operating_point.at.interactivity": "interactivity",
    "operating_point.at.percentile": "percentile", "workload": "point",
    "electricity": "electricity", "electricity.price": "electricity_price",
    "electricity.tariff": "tariff", "electricity.site_accelerators": "tariff",
    "electricity.carbon": "carbon", "electricity.market_carbon": "market_carbon",
    "load": "load", "load.hourly": "load_hourly", "load.weekend": "load_weekend",
    "power.boundary": "boundary", "power.basis": "basis", "power": "boundary",
    "utilisation": "utilisation", "financing.life": "life",
    "financing.cost_of_capital": "cost_of_capital", "financing.salvage": "salvage",
    "financing": "life", "pricing.gross_margin": "margin", "pricing": "margin",
    "reference_rate": "rate",
    # (a rate's code in its path is read as CODE: money.fx.EUR.date -> money.fx.CODE.date)
    "money": "currency", "money.currency": "currency", "money.fx": "fx_rate",
    "money.fx.CODE": "fx_rate", "money.fx.CODE.rate": "fx_rate",
    "money.fx.CODE.currency": "fx_rate", "money.fx.CODE.date": "fx_date",
    "money.fx.CODE.source": "fx_source",
}
_FX_CODE = re.compile(r"^money\.fx\.[A-Z]{3}(?=\.|$)")


def field_of(path: str) -> str:
    """The form field an error at scenario ``path`` belongs beside; ``""`` for the form as a
    whole (the message is shown above the fields)."""
    parts = _FX_CODE.sub("money.fx.CODE", re.sub(r"\[\d+\]", "", path)).split(".") \
        if path else []
    while parts:
        found = _FIELD_OF_PATH.get(".".join(parts))
        if found is not None:
            return found
        parts.pop()
    return ""


# a field typed in another unit than the engine keeps: (the unit shown, how many engine units
# one of it is). The engine checks a share as a fraction (at most 1) and says so ("must be at
# most 1, got 1.7"); the form says it in the unit the field is typed in ("must be at most
# 100 %, got 170 %").
_SHOWN_UNIT = {f: (unit, size) for f, unit in _BARE_UNIT.items()
               for u, size in (("%", 0.01), ("year", 1.0)) if unit == u}
_LEADING = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*)", re.S)


def _amount(value: float, unit: str, digits: int = 6) -> str:
    """``170 %``, ``50 years``, ``1 year``: a magnitude in a shown unit, ``digits``
    significant digits at most."""
    text = f"{value:.{digits}g}"
    if unit == "year" and text != "1":
        unit = "years"
    return f"{text} {unit}"


def _given(typed: str, unit: str) -> str:
    """The value as typed, a bare number with the field's unit: ``170`` -> ``170 %``."""
    m = _LEADING.fullmatch(typed)
    if m and not m.group(2):
        number = m.group(1)
        return f"{number} {'years' if unit == 'year' and float(number) != 1 else unit}"
    return typed.strip()


def restate_bounds(message: str, typed: str, unit: str, size: float) -> str:
    """An engine's message about a quantity's bounds (in the engine's unit) restated in the
    unit a field is typed in: its bounds in ``unit`` (one of which is ``size`` engine units)
    and the value as ``typed`` (a bare number is in ``unit``; a value typed in another unit
    also in ``unit``: ``700 month (58.3 years)``). The message's kind (:class:`Bound`,
    :class:`Sign`, :class:`WrongDimension`) carries the numbers; other messages are returned
    as they are."""
    if not typed.strip():
        return message
    given = _given(typed, unit)
    if isinstance(message, Bound):
        bound, value = message.limit / size, message.value / size
        lead = _LEADING.fullmatch(typed)
        same = lead is not None and math.isclose(float(lead.group(1)), value, rel_tol=1e-5)
        shown = given if same else f"{given} ({_amount(value, unit, 4)})"
        return f"must be {message.relation} {_amount(bound, unit)}, got {shown}{message.rest}"
    if isinstance(message, Sign):
        return f"{message.rule}, got {given}"
    if isinstance(message, WrongDimension) and message.expected == "plain number" \
            and unit == "%":
        return f"a percentage expected (e.g. 70 or 70 %), got {message.got}"
    return message


def in_typed_unit(field_name: str, message: str, typed: str) -> str:
    """The engine's (or the API's) message about a form field, in the unit the field is
    typed in (:func:`restate_bounds`); fields typed in the engine's own unit keep it."""
    shown = _SHOWN_UNIT.get(field_name)
    return message if shown is None else restate_bounds(message, typed, *shown)


def _typed(text: str, field_name: str) -> str:
    """A typed value with its unit: a bare number gets the field's display unit."""
    text = text.strip()
    try:
        float(text)
    except ValueError:
        return text
    return f"{text} {_BARE_UNIT[field_name]}"


@dataclass
class ScenarioForm:
    """The form as typed, the scenario mapping it means, and the errors beside each field.

    ``values``: field -> text (every field of :data:`FIELDS`); ``mapping``: the scenario for
    :class:`costmodel.app.InlineScenario` (quantities as typed text, checked by the engine);
    ``errors``: field -> the API's message for the same value (``""`` is the form as a
    whole); ``query``: the canonical query string that reproduces the form.
    """
    values: dict[str, str]
    mapping: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def query(self) -> str:
        return urlencode([(k, self.values[k]) for k in FIELDS])

    @property
    def reads_curve(self) -> bool:
        return self.values["point"].startswith(CURVE_PREFIX)

    def add_errors(self, exc: InputError, prefix: str = "") -> None:
        """Put an application-layer error beside its fields: each ``(path, message)``
        (``prefix`` removed from the path first, e.g. ``scenario.``) at :func:`field_of` its
        path; the first message of a field is kept."""
        for path, message in exc.errors:
            if prefix and path.startswith(prefix):
                path = path[len(prefix):]
            hour = re.fullmatch(r"load\.(?:hourly|weekend)\[(\d+)\]", path)
            if hour and int(hour.group(1)) < HOURS:  # which hour of the typed row
                message = f"hour {hour_span(int(hour.group(1)))}: {message}"
            where = field_of(path)
            if where in _SHOWN_UNIT and path == _KEY.get(where):  # in the unit typed
                message = in_typed_unit(where, message, self.values.get(where, ""))
            self.errors.setdefault(where, message)

    def check_tariff(self, catalog: FormCatalog) -> None:
        """A tariff key the catalog's tariffs do not hold, said beside the tariff field with
        the tariffs there are (the engine's message lists every electricity entry)."""
        key = self.values["tariff"]
        known = [k for k, _ in catalog.tariffs]
        if self.values["electricity_kind"] == "tariff" and key and key not in known:
            what = ("is a flat price, not a tariff (pay by a flat price to use it)"
                    if key in dict(catalog.electricity) else "is not a tariff in the catalog")
            self.errors.setdefault("tariff", f"{key!r} {what}: choose one of "
                                             f"{', '.join(known) or '(none)'}")

    def price_request(self) -> dict[str, Any]:
        """The body of the equivalent ``POST /api/v1/price``."""
        return {"scenario": self.mapping}


def _default_name(v: Mapping[str, str]) -> str:
    """``gb300, deepseek-r1/gb300/peak``; a curve's read adds its interactivity."""
    point = v["point"].removeprefix(CURVE_PREFIX)
    at = f" at {v['interactivity']} token/s/user" if v["point"].startswith(CURVE_PREFIX) \
        and v["interactivity"] else ""
    return f"{v['accelerator']}, {point}{at}"[:200]


def _check(errors: dict[str, str], field_name: str, key: str, text: str,
           typed: str | None = None, rates: Mapping[str, float] | None = None) -> None:
    """The engine's check of a typed quantity (its unit, dimension and bounds), with the
    message the API gives for the same value, said in the unit the field is typed in
    (:func:`in_typed_unit`: a share's bounds in percent, as typed); an amount in another
    currency is read at ``rates`` (code -> units per USD: the form's stated rate), as the
    scenario's would be."""
    meta = quantity_field(key)
    assert meta is not None, key
    try:
        with exchange_rates(rates or {}):
            meta.parse(text)
    except ValueError as exc:
        errors.setdefault(field_name, in_typed_unit(field_name, str(exc),
                                                    text if typed is None else typed))


_DATE = re.compile(DATE_PATTERN)  # an exchange rate's date, as the money table reads it
# a currency chosen without its rate, date or source: what to type in the blank field
_MISSING = {
    "fx_rate": "figures in {code} need the rate they are converted at: type how many {code} "
               "one USD buys (a bare number is {code}/USD)",
    "fx_date": "type the date of the {code} rate (YYYY-MM-DD), so the figures say when it "
               "held",
    "fx_source": "type where the {code} rate comes from (e.g. a central bank's reference "
                 "rate of the day)",
}


def money_table(v: dict[str, str], errors: dict[str, str]
                ) -> tuple[dict[str, Any] | None, dict[str, float]]:
    """The scenario's ``money`` table from the currency fields (:data:`MONEY_FIELDS` of
    ``v``), and its rates (code -> units per USD) when they hold: ``(None, {})`` for results
    in USD (no currency, or USD). The code is read in any case (``eur`` is EUR: written back
    to ``v``); a blank rate, date or source is said as what to type there; a bare rate is
    in <CODE>/USD; the table is checked as a scenario's is
    (:func:`~costmodel.model.inputs.validate_money`), each error beside its field in the
    engine's words (a date's pattern said as the date it wants)."""
    typed = v["currency"]
    code = typed.upper()
    given = [n for n in MONEY_FIELDS[1:] if v[n]]
    if code in ("", "USD"):
        if given:
            errors.setdefault(given[0], "choose the currency this rate is for (without one "
                                        "results are in USD), or clear it")
        return None, {}
    if code not in CURRENCIES:
        errors.setdefault("currency", f"{typed[:20]!r} is not an ISO 4217 currency code "
                                      f"(e.g. EUR, GBP, JPY; blank for USD)")
        return None, {}
    v["currency"] = code
    for name, words in _MISSING.items():  # said as what to type, not "required"
        if not v[name]:
            errors.setdefault(name, words.format(code=code))
    fx: dict[str, Any] = {}
    if v["fx_rate"]:
        try:
            float(v["fx_rate"])
            fx["rate"] = f"{v['fx_rate']} {code}/USD"
        except ValueError:
            fx["rate"] = v["fx_rate"]
    for name, key in (("fx_date", "date"), ("fx_source", "source")):
        if v[name]:
            fx[key] = v[name]
    table = {"currency": code, "fx": {code: fx}}
    try:
        money = validate_money(table)
    except InputError as exc:
        for path, message in exc.errors:
            where = field_of(path)
            # a date not of the pattern: said as the date it wants (the value is read, not
            # the engine's words)
            if where == "fx_date" and not _DATE.fullmatch(v["fx_date"]):
                message = f"a date as YYYY-MM-DD (or YYYY-MM), got {v['fx_date']!r}"
            errors.setdefault(where, message)
        return table, {}
    return table, money.rates


def hour_span(h: int) -> str:
    """``17:00-18:00``: hour ``h`` of a day's 24 (index 0 = 00:00-01:00)."""
    return f"{h:02d}:00-{h + 1:02d}:00"


def parse_load_row(text: str) -> list[float]:
    """24 fractions of the hour serving, typed separated by commas, semicolons or spaces
    (index 0 = 00:00-01:00); ValueError with a message in words."""
    if len(text) > MAX_ROW_TEXT:
        raise ValueError(f"too long: at most {MAX_ROW_TEXT} characters (24 fractions)")
    items = [t for t in re.split(r"[,;\s]+", text.strip()) if t]
    out = []
    for i, item in enumerate(items):
        where = f"hour {hour_span(i)}" if i < HOURS else f"item {i + 1}"
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"{where}: {item[:20]!r} is not a number (type 24 fractions "
                             f"from 0 to 1, separated by commas or spaces)") from None
        if not math.isfinite(value):
            raise ValueError(f"{where}: {item[:20]!r} is not a finite number")
        if value > 1:
            raise ValueError(f"{where}: {value:g} is above 1 (a fraction of the hour "
                             f"serving: 0 to 1)")
        if value < 0:
            raise ValueError(f"{where}: {value:g} is below 0 (a fraction of the hour "
                             f"serving: 0 to 1)")
        out.append(value)
    if len(out) != HOURS:
        raise ValueError(f"needs {HOURS} fractions, one for each hour from 00:00-01:00 to "
                         f"23:00-24:00; got {len(out)}")
    return out


def _load(v: Mapping[str, str], errors: dict[str, str]) -> dict[str, Any] | None:
    """The scenario's ``load`` table from the load fields (None: no load shape)."""
    kind = v["load"]
    typed = bool(v["load_hourly"] or v["load_weekend"])
    if kind in LOAD_PRESETS:
        if typed:
            errors["load"] = ("a preset and typed rows: choose \"Custom\" to price the typed "
                              "rows, or clear them to price the preset")
            return None
        p = LOAD_PRESETS[kind]
        return {"hourly": list(p.hourly), **({"weekend": list(p.weekend)} if p.weekend
                                            else {})}
    if kind not in ("", "custom"):
        errors["load"] = (f"unknown load shape {kind!r} (known: custom, "
                          f"{', '.join(LOAD_PRESETS)})")
        return None
    if not typed:
        if kind == "custom":
            errors["load_hourly"] = "type 24 fractions (or choose no load shape)"
        return None
    if not v["load_hourly"]:
        errors["load_hourly"] = ("type 24 fractions for weekdays too (the weekend row alone "
                                 "is not a load shape)")
        return None
    out: dict[str, Any] = {}
    for name, key in (("load_hourly", "hourly"), ("load_weekend", "weekend")):
        if v[name]:
            try:
                out[key] = parse_load_row(v[name])
            except ValueError as exc:
                errors[name] = str(exc)
    return out if "load_hourly" not in errors and "load_weekend" not in errors else None


def scenario_form(args: Mapping[str, str]) -> ScenarioForm:
    """The form of a query string or posted form (missing fields take :data:`DEFAULTS`;
    values are stripped and at most 200 characters, a load row 1,000): its values, scenario
    mapping and the errors found without the catalog."""
    values = {k: str(args.get(k, DEFAULTS[k]) or "").strip()[
        :MAX_ROW_TEXT + 1 if k.startswith("load_") else MAX_TEXT] for k in FIELDS}
    errors: dict[str, str] = {}
    v = values
    data: dict[str, Any] = {}
    # a scenario is named for what it prices unless the person names it
    data["name"] = v["name"] or _default_name(v)
    money, rates = money_table(v, errors)
    accelerator: dict[str, Any] = {"catalog": v["accelerator"]}
    if v["accelerator_price"]:
        accelerator["price"] = _typed(v["accelerator_price"], "accelerator_price")
    if v["financing"] == "rent":
        if not v["rate"]:
            errors["rate"] = "choose a reference rate to rent at"
        else:
            accelerator["rate"] = v["rate"]
    elif v["financing"] != "own":
        errors["financing"] = f"expected own or rent, got {v['financing']!r}"
    data["accelerator"] = accelerator if len(accelerator) > 1 else v["accelerator"]
    if v["system"]:
        data["system"] = v["system"]

    point = v["point"]
    if point.startswith(CURVE_PREFIX):
        op: dict[str, Any] = {"curve": point[len(CURVE_PREFIX):], "token_kind": "mixed"}
        if v["interactivity"]:
            at: dict[str, Any] = {"interactivity": _typed(v["interactivity"], "interactivity")}
            if v["percentile"] and v["percentile"] != "median":
                at["percentile"] = v["percentile"]
            op["at"] = at
            try:
                parse_quantity(at["interactivity"], "token/s/user", allow_zero=False)
            except UnitInputError as exc:
                errors["interactivity"] = str(exc)
        else:
            op["at"] = "peak"
        if v["percentile"] not in PERCENTILES:
            errors["percentile"] = (f"unknown percentile {v['percentile']!r} (known: "
                                    f"{', '.join(PERCENTILES)})")
        data["operating_point"] = op
    else:
        data["operating_point"] = point
        if v["interactivity"]:
            errors["interactivity"] = ("a target interactivity needs an operating point read "
                                       "from a curve")

    if v["electricity_kind"] == "tariff":  # the flat price's fields are not used
        if v["tariff"]:
            data["electricity"] = {"tariff": v["tariff"]}
        else:
            errors["tariff"] = "choose a tariff (or a flat price above)"
    elif v["electricity_kind"] not in ("flat", ""):
        errors["electricity_kind"] = f"expected flat or tariff, got {v['electricity_kind']!r}"
    elif v["electricity_price"]:
        text = _typed(v["electricity_price"], "electricity_price")
        data["electricity"] = {"price": text}
        _check(errors, "electricity_price", "electricity.price", text, rates=rates)
    elif v["electricity"]:
        data["electricity"] = v["electricity"]
    for name in ("carbon", "market_carbon"):  # grid factors beside any electricity
        if v[name]:
            e = data.get("electricity")
            e = {"catalog": e} if isinstance(e, str) else (e or {})
            data["electricity"] = {**e, name: v[name]}
    load = _load(v, errors)
    if load is not None:
        data["load"] = load

    power = {}
    for name, choices in (("boundary", BOUNDARIES), ("basis", BASES)):
        if v[name] and v[name] not in choices:
            errors[name] = f"expected one of {', '.join(choices)}, got {v[name]!r}"
        elif v[name]:
            power[name] = v[name]
    if power:
        data["power"] = power

    for name in ("accelerator_price", "utilisation", "life", "cost_of_capital", "salvage",
                 "margin"):
        if not v[name] or (v["financing"] == "rent" and name in ("life", "cost_of_capital",
                                                                  "salvage")):
            continue
        if name == "utilisation" and load is not None:
            continue  # the load shape's mean is the utilisation
        text = _typed(v[name], name)
        _check(errors, name, _KEY[name], text, v[name], rates)
        if name == "accelerator_price":
            continue  # set in the accelerator table above
        section, _, key = _KEY[name].rpartition(".")
        (data.setdefault(section, {}) if section else data)[key] = text
    if money is not None:
        data["money"] = money
    return ScenarioForm(values, data, errors)


# ---- the choices the fields offer ------------------------------------------------------------

_PERCENTILE_WORDS = {"median": "Median", "mean": "Mean", "p90": "90th percentile (p90)",
                     "p99": "99th percentile (p99)"}
_BOUNDARY_WORDS = {"chip": "Chip (accelerator package)", "node": "Node (server)",
                   "rack": "Rack", "facility": "Facility meter (with PUE)"}


@dataclass(frozen=True)
class FormCatalog:
    """What the form's pickers offer, as ``(value, label)`` pairs: catalog accelerators,
    system presets, published operating points, curves (``curve:<id>``), electricity
    entries with a flat price, reference rates (``kind@date`` per accelerator key, and each
    kind's latest as ``kind``), and electricity entries that are tariffs (their name,
    utility and effective date)."""
    accelerators: list[tuple[str, str]]
    systems: list[tuple[str, str]]
    points: list[tuple[str, str]]
    curves: list[tuple[str, str]]
    electricity: list[tuple[str, str]]
    rates: dict[str, list[tuple[str, str]]]
    percentiles: tuple[tuple[str, str], ...] = tuple((p, _PERCENTILE_WORDS.get(p, p))
                                                     for p in PERCENTILES)
    boundaries: tuple[tuple[str, str], ...] = tuple((b, _BOUNDARY_WORDS.get(b, b))
                                                    for b in BOUNDARIES)
    bases: tuple[tuple[str, str], ...] = tuple((b, b.capitalize()) for b in BASES)
    tariffs: tuple[tuple[str, str], ...] = ()
    grid_factors: tuple[tuple[str, str], ...] = ()  # location-based catalog grid factors
    market_factors: tuple[tuple[str, str], ...] = ()  # every catalog grid factor
    load_presets: tuple[tuple[str, LoadPreset], ...] = tuple(LOAD_PRESETS.items())

    @property
    def loads(self) -> list[tuple[str, str]]:
        """The load shape picker: the presets, then the typed rows."""
        return [*((k, p.label) for k, p in self.load_presets),
                ("custom", "Custom: the rows typed below")]


def form_catalog(ctx: Any) -> FormCatalog:
    """The pickers' choices from a context's catalog and curves (:class:`costmodel.app.
    Context`: the service's, on a page)."""
    catalog, curves = ctx.catalog(), ctx.curves()

    def entries(kind: str, text) -> list[tuple[str, str]]:
        return [(k, text(k, catalog.get(kind, k, kind).data)) for k in catalog.keys(kind)]

    elect = [(k, catalog.get("electricity", k, "electricity").data)
             for k in catalog.keys("electricity")]
    factors = [(k, catalog.get("grid_factor", k, "grid_factor").data)
               for k in catalog.keys("grid_factor")]
    rates: dict[str, list[tuple[str, str]]] = {}
    for key in catalog.keys("rate"):
        d = catalog.get("rate", key, "rate").data
        acc, _, ref = key.partition("/")
        hourly = d.get("hourly_price") or {}
        price = f", {hourly.get('value'):g} {hourly.get('unit')}" if hourly else ""
        rates.setdefault(acc, []).append((ref, f"{d.get('kind')} {d.get('date')}{price}"))
    for items in rates.values():
        latest = {}
        for ref, _ in items:
            kind = ref.partition("@")[0]
            latest[kind] = max(latest.get(kind, ""), ref)
        items.sort(key=lambda item: item[0], reverse=True)
        items[:0] = [(kind, f"{kind}, latest version ({ref.partition('@')[2]})")
                     for kind, ref in sorted(latest.items())]
    return FormCatalog(
        accelerators=entries("accelerator", lambda k, d: d.get("name") or k),
        systems=entries("system", lambda k, d: d.get("name") or k),
        points=entries("operating_point", lambda k, d: d.get("label") or k),
        curves=[(CURVE_PREFIX + i, f"curve {i}") for i in curves.ids()],
        electricity=[(k, _electricity_label(k, d)) for k, d in elect if "tariff" not in d],
        rates=rates,
        tariffs=tuple((k, tariff_label(k, d["tariff"])) for k, d in elect if "tariff" in d),
        grid_factors=tuple((k, _factor_label(k, d)) for k, d in factors
                           if d.get("basis") == "location"),
        market_factors=tuple((k, _factor_label(k, d)) for k, d in factors),
    )


def _factor_label(key: str, data: Mapping[str, Any]) -> str:
    """A grid factor in the picker: ``ERCT ... 736.6 lbCO2e/MWh (2023)``."""
    factor = data.get("factor") or {}
    what = data.get("area") or data.get("region") or key
    kind = f", {data['instrument'].replace('_', ' ')}" if data.get("instrument") else ""
    return (f"{what}{kind}: {factor.get('value', '?'):g} {factor.get('unit', '')}"
            f" ({data.get('year', 'undated')}){' by hour' if data.get('hourly') else ''}")


def _electricity_label(key: str, data: Mapping[str, Any]) -> str:
    price = data.get("price") or {}
    shown = f" ({price.get('value'):g} {price.get('unit')})" if isinstance(price, dict) \
        and "value" in price else ""
    return f"{data.get('source') or key}{shown}"


def tariff_label(key: str, tariff: Mapping[str, Any]) -> str:
    """``Primary Service - Northford; Town of Wallingford ...; effective 2013-07-01``."""
    return "; ".join(str(x) for x in (
        tariff.get("name") or key, tariff.get("utility"),
        f"effective {tariff['effective']}" if tariff.get("effective") else "undated") if x)
