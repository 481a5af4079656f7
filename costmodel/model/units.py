"""The single unit registry of costmodel, and the parsing of quantities at the edges.

Every quantity that enters the engine passes through :func:`parse_quantity`, which accepts
``"700 W"``, ``{"value": 700, "unit": "W"}`` or a pint Quantity, checks its dimension, rejects
NaN, infinities and (unless allowed) negatives, and converts it once to the canonical unit of
the field. The engine's hot path then works on plain float magnitudes in those units.

Conventions fixed here (pinned by tests and stated in every disclosure):

- a year is 8,760 hours (365 days) and 12 months, so a month is 730 hours;
- money is USD; ``cent`` is 0.01 USD; every other ISO 4217 currency (``EUR``, ``GBP``...) is a
  dimension of its own, so an amount in it is never read as USD: only a scenario's stated
  exchange rates convert it (:func:`exchange_rates`), and nothing converts it silently;
- ``token``, ``user``, ``request`` and ``task`` (an agent's) are base units of their own,
  ``Mtok`` is 10^6 token;
- ``gCO2e`` (grams of CO2-equivalent) is the base unit of emissions (``kgCO2e``, ``tCO2e``,
  ``lbCO2e``: eGRID's pound);
- ``bit`` (and so byte, GB, GiB) has a dimension of its own, ``[information]``.
"""
from __future__ import annotations

import logging
import math
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pint

from ..resources import cached_build
from .errors import KindedError, Sign, WrongDimension

if TYPE_CHECKING:
    from os import PathLike

__all__ = ["ureg", "UnitInputError", "parse_quantity", "parse_unit", "unit_text",
           "HOURS_PER_YEAR", "MONTHS_PER_YEAR", "HOURS_PER_MONTH", "CURRENCIES",
           "exchange_rates", "SHOWN_CURRENCY"]

HOURS_PER_YEAR = 8760.0
MONTHS_PER_YEAR = 12.0
HOURS_PER_MONTH = HOURS_PER_YEAR / MONTHS_PER_YEAR  # 730


def build_registry(cache_folder: PathLike[str] | None) -> pint.UnitRegistry:
    """pint's default registry, its parsed definitions read from ``cache_folder`` (and written
    there when missing) or, with None, parsed again (0.3 s of every process's start)."""
    return pint.UnitRegistry(cache_folder=cache_folder)


# built from the cache kept in the user's cache folder (resources.cached_build: complete
# caches only, none when it cannot be written); named by the versions whose pickles it holds
ureg = cached_build(f"pint-{pint.__version__}-py{sys.version_info[0]}.{sys.version_info[1]}",
                    build_registry, kind="pint")
# pint's default year is the Julian year (365.25 days); financial models here use 365 days.
# Redefining ``year`` also redefines ``month`` (= year / 12) because pint resolves it lazily.
_pint_log = logging.getLogger("pint")
_level = _pint_log.level
_pint_log.setLevel(logging.ERROR)  # the redefinition is deliberate; do not warn about it
try:
    ureg.define("year = 8760 * hour = a = yr = julian_year")
    # pint counts bits as dimensionless, which would let "50 %" pass as a memory size and
    # "5 Hz" as a bandwidth; information is a dimension of its own here.
    ureg.define("bit = [information]")
finally:
    _pint_log.setLevel(_level)
# A registry that parsed its definitions afresh (the first run, or no cache folder) has
# already derived every unit's root units and dimension, before the two redefinitions above:
# its byte stayed 8 dimensionless bits ("1 GiB" to bit was refused), where one that read its
# definitions from the cache folder derives them on first use, after. Dropped here, so that
# every process derives them the same way, whichever it was (tests/test_unit_cache.py).
ureg._cache = type(ureg._cache)()
ureg.define("USD = [currency] = usd = dollar")
ureg.define("cent = 0.01 USD = ct = cents")
ureg.define("token = [token] = tok = tokens")
ureg.define("Mtok = 1e6 * token = Mtoken")
ureg.define("ktok = 1e3 * token")
ureg.define("user = [user] = users")
ureg.define("request = [request] = req = requests")
ureg.define("task = [task] = tasks")  # an agent's task: many requests, one after another
ureg.define("gCO2e = [emissions] = gCO2eq")
ureg.define("kgCO2e = 1000 * gCO2e")
ureg.define("tCO2e = 1e6 * gCO2e")
# eGRID publishes its rates in lb/MWh: a pound of CO2e (the avoirdupois pound, exactly
# 453.59237 g) so that "740.832 lbCO2e/MWh" reads as a carbon intensity; a bare "lb/MWh" is
# mass per energy and is refused (mass is not emissions)
ureg.define("lbCO2e = 453.59237 * gCO2e")
ureg.define("accelerator_hour = hour")
# the currency a scenario's results are shown in (its money.currency), in the declared
# calculation's conversion steps; rendered with the currency's code
SHOWN_CURRENCY = "shown_currency"
ureg.define(f"{SHOWN_CURRENCY} = [{SHOWN_CURRENCY}]")

# ISO 4217 currency codes in use (2026), besides USD; each is defined when first named
_CODES = """
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN
BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD
FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY
KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP
MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT
TND TOP TRY TTD TWD TZS UAH UGX UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL"""
CURRENCIES = frozenset(_CODES.split())
_FX: ContextVar[dict[str, float] | None] = ContextVar("exchange_rates", default=None)
_FX_USED: ContextVar[set[str] | None] = ContextVar("currencies_used", default=None)


@contextmanager
def exchange_rates(rates: Mapping[str, float]) -> Iterator[set[str]]:
    """While the block runs, amounts in a currency of ``rates`` (code -> units of it per
    USD) are converted to USD as they are parsed; the set yielded collects the codes used.
    An amount in any other currency is refused with the rate it needs."""
    used: set[str] = set()
    token, token_used = _FX.set(dict(rates)), _FX_USED.set(used)
    try:
        yield used
    finally:
        _FX.reset(token)
        _FX_USED.reset(token_used)


def _currency_dimension(code: str) -> str:
    return f"[currency_{code}]"


def _in_usd(q: pint.Quantity) -> pint.Quantity:
    """``q`` with every foreign currency in its unit converted to USD at the active
    exchange rates (:func:`exchange_rates`); UnitInputError naming a currency without one."""
    codes = [name for name in q.units._units if name in CURRENCIES]
    if not codes:
        return q
    rates = _FX.get() or {}
    missing = [c for c in codes if c not in rates]
    if missing:
        raise UnitInputError(f"an amount in {missing[0]}, but the scenario states no exchange "
                             f"rate for it: give [money.fx.{missing[0]}] rate = \"... "
                             f"{missing[0]}/USD\", with its date and source")
    used = _FX_USED.get()
    for code in codes:
        q = q * ureg.Quantity(1 / rates[code], f"USD/{code}") ** q.units._units[code]
        if used is not None:
            used.add(code)
    return q

assert ureg.Quantity(1, "month").to("hour").magnitude == HOURS_PER_YEAR / MONTHS_PER_YEAR


# Fields in these units may be given as plain numbers: fractions, and token counts (ISL/OSL).
# Anything else needs its unit, so 700 is never silently read as watts or kilowatts.
BARE_NUMBER_UNITS = frozenset({"dimensionless", "token"})


class UnitInputError(KindedError):
    """A quantity that could not be accepted; the message is meant for the user (a
    :class:`Sign` or :class:`WrongDimension` where it is one of those kinds)."""


# A unit expression is read by this grammar, never by pint's expression evaluator, which
# evaluates arithmetic ("9**9**9 W" takes a worker forever; "2**1100 W" overflows):
#   unit    := term (("*" | "/" | " ") term)*
#   term    := factor (("**" | "^") exponent)?
#   factor  := name | "1" | "%" | "(" unit ")"
#   exponent:= an integer from -MAX_EXPONENT to MAX_EXPONENT, optionally in parentheses
# Names are looked up one by one in the registry (each a plain name, nothing to evaluate).
MAX_UNIT_TEXT = 100  # characters of a unit expression
MAX_EXPONENT = 6
MAX_DEPTH = 4  # nested parentheses
_TOKEN = re.compile(r"\s*(?:(\*\*|\^)|([*/()%])|([^\W\d]\w*)|(\d+)|(-\d+))", re.UNICODE)


class _UnitReader:
    """A recursive-descent reader of one unit expression (see the grammar above)."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = self._tokenize(text)
        self.pos = 0

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        i = 0
        while text[i:].strip():
            m = _TOKEN.match(text, i)
            if m is None:
                raise UnitInputError(f"unknown unit {text!r}: unexpected "
                                     f"{text[i:].strip()[:10]!r}")
            value = m.group(m.lastindex)
            kind = {1: "pow", 3: "name", 4: "int", 5: "int"}.get(m.lastindex) or \
                {"(": "open", ")": "close", "%": "%"}.get(value, "op")
            out.append((kind, value))
            i = m.end()
        return out

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _fail(self, why: str) -> UnitInputError:
        return UnitInputError(f"unknown unit {self.text!r}: {why}")

    def read(self) -> pint.Unit:
        if not self.tokens:
            raise self._fail("empty")
        unit = self._unit(0)
        if self._peek() is not None:
            raise self._fail(f"unexpected {self._peek()[1]!r}")
        return unit

    def _unit(self, depth: int) -> pint.Unit:
        unit = self._term(depth)
        while (tok := self._peek()) is not None and tok[0] in ("op", "name", "%", "open"):
            if tok[0] == "op":
                self.pos += 1
            # "kW h": factors side by side multiply, as pint reads them
            right = self._term(depth)
            unit = unit / right if tok == ("op", "/") else unit * right
        return unit

    def _term(self, depth: int) -> pint.Unit:
        unit = self._factor(depth)
        tok = self._peek()
        if tok is not None and tok[0] == "pow":
            self.pos += 1
            unit = unit ** self._exponent()
        return unit

    def _exponent(self) -> int:
        tok = self._peek()
        wrapped = tok is not None and tok[0] == "open"
        if wrapped:
            self.pos += 1
            tok = self._peek()
        if tok is None or tok[0] != "int":
            raise self._fail("an exponent must be a whole number")
        self.pos += 1
        n = int(tok[1])
        if abs(n) > MAX_EXPONENT:
            raise self._fail(f"exponent {n} is beyond +/-{MAX_EXPONENT}")
        if wrapped:
            if self._peek() is None or self._peek()[0] != "close":
                raise self._fail("unbalanced parentheses")
            self.pos += 1
        return n

    def _factor(self, depth: int) -> pint.Unit:
        tok = self._peek()
        if tok is None:
            raise self._fail("ends too early")
        self.pos += 1
        kind, value = tok
        if kind == "open":
            if depth >= MAX_DEPTH:
                raise self._fail("too deeply nested")
            unit = self._unit(depth + 1)
            if self._peek() is None or self._peek()[0] != "close":
                raise self._fail("unbalanced parentheses")
            self.pos += 1
            return unit
        if kind == "int" and value == "1":
            return ureg.dimensionless
        if kind == "%":
            return ureg.Unit("percent")
        if kind == "name":
            return _named_unit(value)
        raise self._fail(f"unexpected {value!r}")


@lru_cache(maxsize=1024)
def _named_unit(name: str) -> pint.Unit:
    """One unit name (W, kWh, token, USD...) from the registry: letters first, then letters,
    digits or underscores ("½" is alphanumeric to Python but no unit name, and pint asserts on
    it)."""
    if not (name[:1].isalpha() and all(c.isalpha() or c.isdecimal() or c == "_"
                                       for c in name)):
        raise UnitInputError(f"unknown unit {name!r}")
    if name in CURRENCIES and name not in ureg:  # defined when first named (~150 of them)
        ureg.define(f"{name} = {_currency_dimension(name)}")
    try:
        return ureg.Unit(name)
    except Exception as exc:  # pint's parser has raised, and asserted, on odd names
        raise UnitInputError(f"unknown unit {name!r}") from exc


@lru_cache(maxsize=4096)
def _read_unit(text: str) -> pint.Unit:
    return _UnitReader(text).read()


def parse_unit(text: str) -> pint.Unit:
    """Parse a unit expression such as ``"USD/kW/month"`` by the grammar above; raise
    :class:`UnitInputError`. Bounded: at most :data:`MAX_UNIT_TEXT` characters."""
    if not isinstance(text, str):
        raise UnitInputError("a unit must be text")
    if len(text) > MAX_UNIT_TEXT:
        raise UnitInputError(f"a unit is at most {MAX_UNIT_TEXT} characters, got {len(text)}")
    return _read_unit(text.strip())


_DIMENSION_NAMES = {
    "W": "power", "kWh": "energy", "s": "time", "kg": "mass", "USD": "money",
    "token": "token count", "GB": "data size", "TB/s": "bandwidth", "USD/kWh": "energy price",
    "USD/h": "hourly price", "USD/kW/month": "price per kW and month",
    "gCO2e/kWh": "carbon intensity", "token/s": "throughput", "token/s/kW": "throughput per kW",
    "token/s/user": "interactivity", "dimensionless": "plain number",
}


def _dimension_name(dim) -> str | None:
    """A readable name for a dimensionality (``power``), or None if it has none."""
    for unit, name in _DIMENSION_NAMES.items():
        if ureg.Quantity(1, unit).dimensionality == dim:
            return name
    return None


def describe_units(q: pint.Quantity) -> str:
    """Name what a quantity is for an error message, e.g. ``kilogram``."""
    return "a plain number" if q.dimensionless and str(q.units) == "dimensionless" else str(q.units)


def parse_quantity(raw: Any, canonical: str, *, allow_negative: bool = False,
                   allow_zero: bool = True, bare_number_ok: bool | None = None,
                   per: tuple[str, ...] = ()) -> float:
    """Parse ``raw`` and return its magnitude in the ``canonical`` unit [canonical].

    ``raw`` may be ``"700 W"``, ``{"value": 700, "unit": "W"}``, a pint Quantity, or, for
    the units in :data:`BARE_NUMBER_UNITS` (or where ``bare_number_ok``), a plain int/float
    (never a bool).

    ``per`` names dimensions (``"[energy]"``, ``"[power]"``, ``"[time]"``) that the unit must
    divide by explicitly: USD/kWh and USD/kW/month share a dimension, and only the way the
    unit is written tells an electricity price from a hosting rate.

    The common spellings (a number and a unit) take a fast path: the unit's conversion
    factor to ``canonical`` is looked up once per distinct unit text and cached, so a service
    parsing thousands of bodies a second does not re-parse ``"USD/kWh"`` each time.
    """
    if bare_number_ok is None:
        bare_number_ok = canonical in BARE_NUMBER_UNITS
    split = _split(raw, bare_number_ok, canonical)
    conversion = None
    if split is not None:
        try:
            conversion = _conversion(split[1], canonical, per)
        except _NotSimple:
            conversion = None
        except UnitInputError:
            if not _foreign_money(split[1]):
                raise
            conversion = None  # an amount in another currency: converted below
    q = None
    if conversion is not None:
        value = split[0] * conversion[0]
    else:  # anything else goes through pint in full
        q = _to_quantity(raw, canonical if bare_number_ok else None)
        if _is_money(canonical):
            q = _in_usd(q)
        _check_dimension(q, canonical)
        _check_per(q, per, canonical)
        value = float(q.to(ureg.Unit(canonical)).magnitude)
    if math.isnan(value):
        raise UnitInputError("must be a number, got NaN")
    if math.isinf(value):
        raise UnitInputError("must be finite, got infinity")
    if (value < 0 and not allow_negative) or (value == 0 and not allow_zero):
        # the value as given, written only for the error
        display = _fmt(q) if q is not None else f"{split[0]:g} {conversion[1]}".rstrip()
        raise UnitInputError(Sign("must not be negative" if value < 0 else
                                  "must be greater than zero", display))
    return value


# a number (nan and inf are read so that they get their own clear refusal), then the unit
_NUMBER_THEN_UNIT = re.compile(r"\s*([-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
                               r"|(?i:nan|inf(?:inity)?)))\s*(.*?)\s*$")
MAX_QUANTITY_TEXT = 200  # characters of a quantity written as text
_NAME_START = re.compile(r"[^\W\d]|%|\(|1\s*/", re.UNICODE)
_PLAIN_UNIT = re.compile(r"[A-Za-z%][A-Za-z0-9_%/ .*]*$")


def unit_text(raw: Any) -> str | None:
    """The unit a quantity is written in, as written (``"0.92EUR / USD"`` -> ``EUR / USD``;
    ``{value, unit}`` -> its unit), or None when ``raw`` is no quantity with a unit."""
    if isinstance(raw, dict):
        unit = raw.get("unit")
        return unit if isinstance(unit, str) else None
    if isinstance(raw, str) and len(raw) <= MAX_QUANTITY_TEXT:
        m = _NUMBER_THEN_UNIT.fullmatch(raw)
        return m.group(2) if m is not None and m.group(2) else None
    return None


def _split(raw: Any, bare_number_ok: bool, canonical: str) -> tuple[float, str] | None:
    """(magnitude, unit text) for the common spellings, or None for the full parser."""
    if isinstance(raw, str):
        m = _NUMBER_THEN_UNIT.fullmatch(raw)
        if m is None:
            return None
        unit = m.group(2)
        if not unit:
            if canonical == "dimensionless":
                return float(m.group(1)), ""
            return None  # the full parser says "has no unit"
        return (float(m.group(1)), unit) if _PLAIN_UNIT.match(unit) else None
    if isinstance(raw, dict) and set(raw) == {"value", "unit"} and isinstance(raw["unit"], str) \
            and isinstance(raw["value"], (int, float)) and not isinstance(raw["value"], bool):
        return (float(raw["value"]), raw["unit"]) if _PLAIN_UNIT.match(raw["unit"]) else None
    if isinstance(raw, (int, float)) and not isinstance(raw, bool) and bare_number_ok:
        return float(raw), ""
    return None


@lru_cache(maxsize=256)
def _is_money(canonical: str) -> bool:
    return "[currency]" in ureg.Quantity(1, canonical).dimensionality


def _foreign_money(unit_text: str) -> bool:
    """Whether a unit text names a currency other than USD (by its code)."""
    return any(word in CURRENCIES for word in re.findall(r"[A-Z]{3}", unit_text))


class _NotSimple(Exception):
    """Not a plain multiplicative unit: let the full parser handle (and word) it."""


@lru_cache(maxsize=4096)
def _conversion(unit_text: str, canonical: str, per: tuple[str, ...]) -> tuple[float, str]:
    """(factor to ``canonical``, the unit as shown) for a unit text; errors are not cached."""
    if not unit_text:
        return 1.0, ""
    try:
        unit = parse_unit(unit_text)
    except UnitInputError:
        raise _NotSimple from None
    q = ureg.Quantity(1.0, unit)
    if not q._ok_for_muldiv():  # offset units such as degC
        raise _NotSimple
    _check_dimension(q, canonical)
    _check_per(q, per, canonical)
    return float(q.to(ureg.Unit(canonical)).magnitude), str(q.units)


def _check_dimension(q: pint.Quantity, canonical: str) -> None:
    target = ureg.Quantity(1, ureg.Unit(canonical)).dimensionality
    if q.dimensionality != target:
        raise UnitInputError(WrongDimension(_dimension_name(target), canonical,
                                            describe_units(q)))


def _check_per(q: pint.Quantity, per: tuple[str, ...], canonical: str) -> None:
    divisors = [ureg.Quantity(1, name).dimensionality
                for name, exponent in q.units._units.items() if exponent < 0]
    for dim in per:
        if ureg.get_dimensionality(dim) not in divisors:
            label = dim.strip("[]")
            raise UnitInputError(f"write it per {label} explicitly, e.g. {canonical!r} "
                                 f"(got {q.units})")


def _shorten(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _fmt(q: pint.Quantity) -> str:
    return f"{q.magnitude:g} {q.units}" if not q.dimensionless else f"{q.magnitude:g}"


def _number(value: Any, where: str) -> float:
    # bool is an int in Python; a JSON `true` must never become 1.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UnitInputError(f"{where} must be a number, got {type(value).__name__}")
    return float(value)


def _to_quantity(raw: Any, bare_unit: str | None) -> pint.Quantity:
    if isinstance(raw, pint.Quantity):
        return raw
    if isinstance(raw, dict):
        extra = set(raw) - {"value", "unit"}
        if "value" not in raw or "unit" not in raw or extra:
            raise UnitInputError('a quantity object needs exactly "value" and "unit"')
        if not isinstance(raw["unit"], str):
            raise UnitInputError('"unit" must be a string')
        return ureg.Quantity(_number(raw["value"], '"value"'), parse_unit(raw["unit"]))
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            raise UnitInputError("empty quantity")
        if len(text) > MAX_QUANTITY_TEXT:
            raise UnitInputError(f"a quantity is at most {MAX_QUANTITY_TEXT} characters, "
                                 f"got {len(text)}")
        m = _NUMBER_THEN_UNIT.fullmatch(text)
        if m is None:
            raise UnitInputError(f"cannot read {_shorten(raw)!r} as a quantity: expected a "
                                 f"number then a unit, e.g. \"700 W\"")
        number, unit_text = float(m.group(1)), m.group(2)
        if not unit_text:
            if bare_unit is None:
                raise UnitInputError(f"{raw!r} has no unit")
            return ureg.Quantity(number, bare_unit)
        try:
            return ureg.Quantity(number, parse_unit(unit_text))
        except UnitInputError as exc:
            why = str(exc) if _NAME_START.match(unit_text) else \
                'expected a number then a unit, e.g. "700 W"'
            raise UnitInputError(f"cannot read {_shorten(raw)!r} as a quantity: {why}") \
                from None
    if isinstance(raw, bool):
        raise UnitInputError("must be a number or a quantity, got a boolean")
    if isinstance(raw, (int, float)):
        if bare_unit is None:
            raise UnitInputError(f"a unit is required, e.g. \"{raw} <unit>\" or "
                                 f'{{"value": {raw}, "unit": "..."}}')
        return ureg.Quantity(float(raw), bare_unit)
    raise UnitInputError(f"expected a quantity such as \"700 W\", got {type(raw).__name__}")
