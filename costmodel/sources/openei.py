"""Electricity tariffs from the OpenEI Utility Rate Database (URDB) into ``[electricity.tariff]``.

Reads a URDB record as the ``utility_rates`` API returns it (versions 3-8, ``detail=full``): a
response ``{"items": [...]}`` (choose one with ``item``) or one tariff object (as NREL REopt
stores a ``urdb_response``). :func:`read_openei` is pure: parsed JSON in, the tariff table out
(plain data: the shape ``[electricity.tariff]`` takes in a scenario); :func:`parse_openei_json`
bounds and parses the text; :func:`tariff_toml` writes the table as TOML.

Supported, and how it is read:

- ``energyratestructure``: one tier a period; a period's rate [USD/kWh] is ``rate + adj``
  (``adj`` absent = 0); tier ``unit`` absent or ``"kWh"``. ``sell`` (an export price) is not
  a purchase price and is not read.
- ``energyweekdayschedule`` / ``energyweekendschedule``: 12 x 24 period indices (month x hour,
  0-based; hour 0 is 00:00-01:00 local time), both required.
- ``fueladjustmentsmonthly``: 12 adders [USD/kWh], month by month, added to every hour.
- ``flatdemandstructure`` + ``flatdemandmonths``: the monthly-peak demand charge
  [USD/kW/month], one tier, ``rate + adj``, by month.
- ``demandratestructure`` + ``demandweekdayschedule`` / ``demandweekendschedule``: in a month
  whose every hour (weekday and weekend) maps to a period of the same charge, that charge is a
  monthly-peak charge like the flat one (with both, a month's demand charge is their sum:
  URDB bills them as separate line items on the same monthly peak). In a month whose hours
  map to periods of different charges (time-of-use), each period of a charge above 0 is a
  ``demand_periods`` entry billed on the busiest hour within its hours (weekday hours, and
  weekend hours where they differ), months with the same hours for a period forming one
  entry (named by the URDB period, ``"period 2"``, with its ``months``), besides the flat
  charge.
- ``fixedchargefirstmeter`` + ``fixedchargeunits``: ``$/month``; ``$/day`` x 365/12;
  ``$/year`` / 12 [USD/month]; the older ``fixedmonthlycharge`` [USD/month] when
  ``fixedchargefirstmeter`` is absent (both, disagreeing: refused). The conversion is stated in
  ``source``.
- demand charge units (``flatdemandunit``, ``demandrateunit``; ``demandunits`` when those are
  absent): ``kW`` only.

Months whose (weekday hours, weekend hours, demand charge) are the same form a season: the
top level holds the most common one (ties: the one with January, then the earliest), and
``seasons`` the others, months ascending, named by their runs (``"Jun-Sep"``, ``"Nov-Mar"``).
``weekend`` is written only when some month's weekend differs from its weekday; ``demand_charge``
and ``fixed_charge`` only when some month has one.

Refused by name, with the field's path (``items[0].energyratestructure[2]``), never dropped:
tiered energy or demand rates; energy units other than kWh (``kWh/kW``, ``kWh daily``);
demand units other than kW; a time-of-use demand period on weekend days only, or more of
them than a tariff holds (:data:`MAX_DEMAND_PERIODS`); coincident demand charges
(``coincidentratestructure``); missing schedules, schedules not 12 x 24, period indices out of
range; non-numeric, non-finite or negative rates (a negative ``adj`` is fine while the sum is
not negative); an unknown ``fixedchargeunits``; and charges the table cannot hold and that may
bind: a minimum charge (``mincharge``: a floor on the monthly bill, binding for a small load),
demand ratchets (``demandratchetpercentage``, ``lookbackpercent``), a reactive power charge
(``demandreactivepowercharge``, USD/kVAR) and the charge for each additional meter
(``fixedchargeeaaddl``). Those four (:data:`WAIVABLE`) may be waived by name (``ignore``); a
waived charge is then named in ``source``. Free text (``description``, ``*comments``,
``*attrs``) is not read.

Bounds (hostile input): :data:`MAX_JSON_BYTES` of text, :data:`MAX_ITEMS` tariffs a
response (the API's page limit), :data:`MAX_PERIODS` periods a structure; all checked before
anything is iterated.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable
from typing import Any

from ..model.errors import InputError
from ..model.inputs import MAX_DEMAND_PERIODS

__all__ = ["read_openei", "parse_openei_json", "tariff_toml", "MAX_JSON_BYTES", "MAX_ITEMS",
           "MAX_PERIODS", "WAIVABLE", "DAYS_PER_MONTH"]

# a URDB record with detail=full is 10-60 kB; a page of 500 of them about 25 MB
MAX_JSON_BYTES = 32_000_000
MAX_ITEMS = 500  # the utility_rates API's largest page
MAX_PERIODS = 288  # a 12 x 24 schedule can tell at most this many periods apart
DAYS_PER_MONTH = 365 / 12  # a $/day fixed charge's month [day/month]
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
FIXED_UNITS = {"$/month": 1.0, "$/day": DAYS_PER_MONTH, "$/year": 1 / 12}
# charges the table cannot hold but a user may know do not apply, waived by name
WAIVABLE = {
    "mincharge": "a minimum charge (a floor on the monthly bill)",
    "demandratchetpercentage": "a demand ratchet",
    "lookbackpercent": "a demand ratchet (look-back)",
    "demandreactivepowercharge": "a reactive power charge [USD/kVAR]",
    "fixedchargeeaaddl": "a fixed charge for each additional meter",
}
_WAIVE_HINT = ("; if it does not apply to your load, waive it with --ignore {field} (it is "
               "then named in the tariff's source)")


def parse_openei_json(text: str | bytes, *, name: str = "<text>") -> Any:
    """The parsed JSON of a URDB file, refusing text over :data:`MAX_JSON_BYTES`, malformed
    or too deeply nested JSON."""
    if len(text) > MAX_JSON_BYTES:
        raise InputError([(name, f"{len(text):,} bytes; the limit is "
                                 f"{MAX_JSON_BYTES / 1e6:g} MB a URDB file (save one page "
                                 f"of at most {MAX_ITEMS} tariffs, or one tariff)")])
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError([(name, f"malformed JSON at line {exc.lineno}: {exc.msg}")]) from None
    except RecursionError:
        raise InputError([(name, "JSON nested too deeply")]) from None
    except UnicodeDecodeError:
        raise InputError([(name, "not UTF-8 text")]) from None


def read_openei(data: Any, item: int | None = None, *,
                ignore: Iterable[str] = ()) -> dict:
    """The ``[electricity.tariff]`` table of one URDB tariff (see the module docstring).

    ``data`` is a response ``{"items": [...]}`` or one tariff object; ``item`` chooses among a
    response's items (needed when there are several). ``ignore`` waives the named
    :data:`WAIVABLE` charges. Raises :class:`InputError` naming the field of each refusal."""
    ignore = set(ignore)
    unknown = sorted(ignore - set(WAIVABLE))
    if unknown:
        raise InputError([("ignore", f"{', '.join(unknown)}: only {', '.join(sorted(WAIVABLE))} "
                                     f"may be waived")])
    rec, prefix = _choose(data, item)
    return _Reader(rec, prefix, ignore).table()


def _choose(data: Any, item: int | None) -> tuple[dict, str]:
    if not isinstance(data, dict):
        raise InputError([("", "expected a URDB response {\"items\": [...]} or one tariff "
                               f"object, got {_kind(data)}")])
    if "items" not in data:
        if item not in (None, 0):
            raise InputError([("item", f"{item}: the file holds one tariff, not a list")])
        return data, ""
    items = data["items"]
    if not isinstance(items, list):
        raise InputError([("items", f"expected a list of tariffs, got {_kind(items)}")])
    if len(items) > MAX_ITEMS:
        raise InputError([("items", f"{len(items):,} tariffs; the limit is {MAX_ITEMS} a file")])
    if not items:
        raise InputError([("items", "no tariff (the query matched nothing)")])
    if item is None:
        if len(items) > 1:
            listed = "; ".join(f"{i} = {_title(r)}" for i, r in enumerate(items[:10]))
            more = f"; ... ({len(items) - 10} more)" if len(items) > 10 else ""
            raise InputError([("items", f"{len(items)} tariffs: choose one with --item N "
                                        f"({listed}{more})")])
        item = 0
    if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < len(items):
        raise InputError([("item", f"{item!r}: the file holds tariffs 0 to {len(items) - 1}")])
    rec = items[item]
    if not isinstance(rec, dict):
        raise InputError([(f"items[{item}]", f"expected a tariff object, got {_kind(rec)}")])
    return rec, f"items[{item}]."


def _title(rec: Any) -> str:
    if not isinstance(rec, dict):
        return _kind(rec)
    return f"{str(rec.get('name', '?'))[:60]} ({str(rec.get('utility', '?'))[:40]})"


def _kind(x: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(x), "a number")


def _num(x: float) -> float:
    """A float without binary noise (0.0687 + 0.008376 -> 0.077076)."""
    return float(f"{x:.12g}") + 0.0  # + 0.0: no -0.0


class _Reader:
    def __init__(self, rec: dict, prefix: str, ignore: set[str]):
        self.rec, self.prefix, self.ignore = rec, prefix, ignore
        self.errors: list[tuple[str, str]] = []
        self.notes: list[str] = []

    # ---- helpers -------------------------------------------------------------------------
    def path(self, field: str) -> str:
        return f"{self.prefix}{field}"

    def fail(self, field: str, message: str) -> None:
        self.errors.append((self.path(field), message))

    def number(self, x: Any, field: str) -> float | None:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            self.fail(field, f"expected a number, got {_kind(x)}")
            return None
        if not math.isfinite(x):
            self.fail(field, f"{x}: not a finite number")
            return None
        return float(x)

    def present(self, field: str) -> bool:
        """Whether a field holds something (absent, null, empty list or string: not)."""
        v = self.rec.get(field)
        return v is not None and v != [] and v != ""

    # ---- the table -----------------------------------------------------------------------
    def table(self) -> dict:
        rec = self.rec
        name = self.text("name")
        utility = self.text("utility")
        effective = self.effective()
        self.refusals()
        energy = self.energy()  # [month] -> (weekday 24, weekend 24) [USD/kWh]
        demand = self.demand()  # ([month] -> USD/kW/month, time-of-use demand periods)
        fixed = self.fixed()
        if self.errors:
            raise InputError(self.errors)
        assert energy is not None and demand is not None
        demand, periods = demand
        where = rec.get("uri") or (f"label {rec['label']}" if rec.get("label") else None)
        source = ", ".join(str(p) for p in ("OpenEI Utility Rate Database", where, name, utility,
                                            f"effective {effective}") if p)
        if self.notes:
            source += "; " + "; ".join(self.notes)
        out: dict[str, Any] = {"name": name, "utility": utility, "effective": effective,
                               "source": source}
        out.update(_seasons(energy, demand))
        if periods:
            out["demand_periods"] = periods
        if fixed:
            out["fixed_charge"] = {"value": fixed, "unit": "USD/month"}
        return out

    def text(self, field: str) -> str:
        v = self.rec.get(field)
        if not isinstance(v, str) or not v.strip():
            self.fail(field, "missing: the tariff's " + ("name" if field == "name" else
                                                           "utility") + " is its provenance")
            return ""
        return v.strip()

    def effective(self) -> str:
        v = self.rec.get("startdate")
        if v is None:
            self.fail("startdate", "missing: the date the tariff took effect is its provenance")
            return ""
        t = self.number(v, "startdate")
        if t is None:
            return ""
        try:
            return _dt.datetime.fromtimestamp(t, _dt.UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            self.fail("startdate", f"{v}: not a date (seconds since 1970-01-01 UTC)")
            return ""

    def refusals(self) -> None:
        """Charges the table cannot hold: refused unless waived (and then named)."""
        rec = self.rec
        for field, what in WAIVABLE.items():
            v = rec.get(field)
            values = v if isinstance(v, list) else [v]
            if v is None or all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                and x == 0 for x in values):
                continue
            shown = (f"{max(values)}" if all(isinstance(x, (int, float)) for x in values)
                     else json.dumps(v)[:40])
            if field in self.ignore:
                unit = rec.get("minchargeunits") if field == "mincharge" else None
                self.notes.append(f"{what} ({field} = {shown}{' ' + unit if unit else ''}) "
                                  f"left out at the user's request")
                continue
            self.fail(field, f"{shown}: {what} is not supported" + _WAIVE_HINT.format(
                field=field))
        if self.present("coincidentratestructure"):
            rates = self.structure("coincidentratestructure")
            if rates is not None and any(r for r in rates):
                self.fail("coincidentratestructure", "coincident demand charges (on the "
                          "system's peak hour) are not supported")

    # ---- energy --------------------------------------------------------------------------
    def structure(self, field: str) -> list[float] | None:
        """A rate structure's period charges (rate + adj), one tier a period."""
        s = self.rec.get(field)
        if not isinstance(s, list) or not s:
            self.fail(field, f"expected a list of periods, got {_kind(s)}"
                      if not isinstance(s, list) else "no period")
            return None
        if len(s) > MAX_PERIODS:
            self.fail(field, f"{len(s):,} periods; the limit is {MAX_PERIODS}")
            return None
        rates: list[float] = []
        ok = True
        for p, period in enumerate(s):
            at = f"{field}[{p}]"
            if not isinstance(period, list) or not period:
                self.fail(at, "expected a list of tiers" if not isinstance(period, list)
                          else "no tier")
                ok = False
                continue
            if len(period) > 1:
                first = period[0] if isinstance(period[0], dict) else {}
                cap = first.get("max")
                limit = (f" (max {cap:g} {_tier_unit(field, first)})"
                         if isinstance(cap, (int, float)) and not isinstance(cap, bool) else "")
                self.fail(at, f"{len(period)} tiers{limit}: tiered {_what(field)} rates are "
                              f"not supported")
                ok = False
                continue
            tier = period[0]
            if not isinstance(tier, dict):
                self.fail(f"{at}[0]", f"expected a tier object, got {_kind(tier)}")
                ok = False
                continue
            if tier.get("max") is not None:
                self.fail(f"{at}[0].max", f"a single tier with a limit ({tier['max']}): use "
                          f"above it has no rate")
                ok = False
            if field == "energyratestructure":
                u = tier.get("unit", "kWh")
                if u != "kWh":
                    self.fail(f"{at}[0].unit", f"{u!r}: energy charges in {u} are not "
                              f"supported (only kWh)")
                    ok = False
            if "rate" not in tier:
                self.fail(f"{at}[0].rate", "missing")
                ok = False
                continue
            rate = self.number(tier["rate"], f"{at}[0].rate")
            adj = self.number(tier.get("adj", 0) if tier.get("adj") is not None else 0,
                              f"{at}[0].adj")
            if rate is None or adj is None:
                ok = False
                continue
            if rate + adj < 0:
                self.fail(at, f"rate {rate:g} + adj {adj:g} = {rate + adj:g}: negative charges "
                          f"are not supported")
                ok = False
                continue
            rates.append(rate + adj)
        return rates if ok else None

    def schedule(self, field: str, periods: int) -> list[list[int]] | None:
        s = self.rec.get(field)
        if s is None:
            self.fail(field, "missing: a 12 x 24 (month x hour) schedule is required")
            return None
        if not isinstance(s, list) or len(s) != 12:
            self.fail(field, f"expected 12 months of 24 hours, got "
                             f"{len(s) if isinstance(s, list) else _kind(s)}"
                             f"{' months' if isinstance(s, list) else ''}")
            return None
        out: list[list[int]] = []
        ok = True
        for m, row in enumerate(s):
            if not isinstance(row, list) or len(row) != 24:
                self.fail(f"{field}[{m}]", f"expected 24 hours, got "
                          f"{len(row) if isinstance(row, list) else _kind(row)}")
                ok = False
                continue
            r = []
            for h, p in enumerate(row):
                if (isinstance(p, bool) or not isinstance(p, (int, float))
                        or not (isinstance(p, int) or (math.isfinite(p) and p == int(p)))):
                    self.fail(f"{field}[{m}][{h}]", f"{p!r}: expected a period index")
                    ok = False
                    continue
                if not 0 <= p < periods:
                    self.fail(f"{field}[{m}][{h}]", f"period {p:g} out of range (the "
                              f"structure has {periods} period{'s' if periods != 1 else ''})")
                    ok = False
                    continue
                r.append(int(p))
            out.append(r)
        return out if ok else None

    def energy(self) -> list[tuple[tuple[float, ...], tuple[float, ...]]] | None:
        rates = self.structure("energyratestructure")
        n = len(rates) if rates is not None else 10**9
        wd = self.schedule("energyweekdayschedule", n)
        we = self.schedule("energyweekendschedule", n)
        fuel = [0.0] * 12
        if self.present("fueladjustmentsmonthly"):
            f = self.rec["fueladjustmentsmonthly"]
            if not isinstance(f, list) or len(f) != 12:
                self.fail("fueladjustmentsmonthly", "expected 12 monthly adders [USD/kWh]")
            else:
                vals = [self.number(x, f"fueladjustmentsmonthly[{m}]") for m, x in enumerate(f)]
                if all(v is not None for v in vals):
                    fuel = [float(v) for v in vals]  # type: ignore[arg-type]
                    self.notes.append("monthly fuel adjustments (fueladjustmentsmonthly) added")
        if rates is None or wd is None or we is None:
            return None
        out = []
        for m in range(12):
            days = []
            for sched, kind in ((wd, "energyweekdayschedule"), (we, "energyweekendschedule")):
                row = tuple(_num(rates[p] + fuel[m]) for p in sched[m])
                if min(row) < 0:
                    self.fail(f"fueladjustmentsmonthly[{m}]", f"makes {kind}[{m}]'s rate "
                              f"{min(row):g} USD/kWh: negative charges are not supported")
                days.append(row)
            out.append((days[0], days[1]))
        return out

    # ---- demand --------------------------------------------------------------------------
    def demand_unit(self, field: str) -> bool:
        unit = self.rec.get(field) or self.rec.get("demandunits") or "kW"
        if unit != "kW":
            shown = field if self.rec.get(field) else "demandunits"
            self.fail(shown, f"{unit!r}: demand charges in {unit} are not supported (only kW)")
            return False
        return True

    def demand(self) -> tuple[list[float], list[dict]] | None:
        """Each month's demand charge on its peak [USD/kW/month], and the time-of-use
        demand periods (``demand_periods`` entries)."""
        monthly = [0.0] * 12
        periods: list[dict] = []
        ok = True
        if self.present("flatdemandstructure"):
            rates = self.structure("flatdemandstructure")
            ok &= self.demand_unit("flatdemandunit")
            months = self.rec.get("flatdemandmonths")
            if not isinstance(months, list) or len(months) != 12:
                self.fail("flatdemandmonths", "expected 12 period indices, one a month")
                ok = False
            elif rates is not None:
                for m, p in enumerate(months):
                    if (isinstance(p, bool) or not isinstance(p, (int, float))
                            or p != int(p) or not 0 <= p < len(rates)):
                        self.fail(f"flatdemandmonths[{m}]", f"{p!r}: not a period of "
                                  f"flatdemandstructure (0 to {len(rates) - 1})")
                        ok = False
                    else:
                        monthly[m] += rates[int(p)]
            ok &= rates is not None
        if self.present("demandratestructure"):
            rates = self.structure("demandratestructure")
            ok &= self.demand_unit("demandrateunit")
            n = len(rates) if rates is not None else 10**9
            wd = self.schedule("demandweekdayschedule", n)
            we = self.schedule("demandweekendschedule", n)
            if rates is None or wd is None or we is None:
                return None
            uniform = False
            for m in range(12):
                charges = {rates[p] for p in wd[m] + we[m]}
                if len(charges) == 1:
                    charge = charges.pop()
                    monthly[m] += charge
                    uniform |= charge != 0
            periods = self.demand_periods(rates, wd, we)
            if periods is None:
                return None
            if uniform and self.present("flatdemandstructure"):
                self.notes.append("demand charge = flatdemandstructure + demandratestructure "
                                  "(the same in every hour of a month), on the monthly peak")
            if periods:
                self.notes.append("time-of-use demand charges (demandratestructure) each on "
                                  "the busiest hour within its period's hours")
        return ([_num(x) for x in monthly], periods) if ok else None

    def demand_periods(self, rates: list[float], wd: list[list[int]],
                       we: list[list[int]]) -> list[dict] | None:
        """The months whose hours map to periods of different charges, as ``demand_periods``:
        each period of a charge above 0, months with the same hours in it forming one entry
        (weekend hours given where they differ from the weekdays')."""
        groups: dict[tuple[int, tuple[int, ...], tuple[int, ...]], list[int]] = {}
        for m in range(12):
            if len({rates[p] for p in wd[m] + we[m]}) == 1:
                continue  # a monthly-peak charge (above)
            for p in sorted(set(wd[m] + we[m])):
                if rates[p] == 0:
                    continue  # bills nothing
                weekday = tuple(h for h in range(24) if wd[m][h] == p)
                weekend = tuple(h for h in range(24) if we[m][h] == p)
                if not weekday:
                    self.fail(f"demandweekendschedule[{m}]", f"period {p} "
                              f"({rates[p]:g} USD/kW) only on weekend days in {MONTHS[m]}: a "
                              f"demand period on weekend days alone is not supported")
                    return None
                groups.setdefault((p, weekday, weekend), []).append(m + 1)
        if len(groups) > MAX_DEMAND_PERIODS:
            self.fail("demandratestructure", f"{len(groups)} time-of-use demand periods "
                      f"(a period's hours differing by month count apart); the limit is "
                      f"{MAX_DEMAND_PERIODS} a tariff")
            return None
        out = []
        for (p, weekday, weekend), months in sorted(groups.items(),
                                                    key=lambda kv: (kv[0][0], kv[1][0])):
            period: dict[str, Any] = {
                "name": f"period {p}",
                "demand_charge": {"value": _num(rates[p]), "unit": "USD/kW/month"},
                "hours": list(weekday)}
            if weekend != weekday:
                period["weekend_hours"] = list(weekend)
            if len(months) < 12:
                period["months"] = months
            out.append(period)
        return out

    # ---- fixed ---------------------------------------------------------------------------
    def _charge(self, raw: Any, field: str) -> float:
        """A fixed charge's number [its units]; 0 where absent or refused (then failed)."""
        v = self.number(raw, field)
        if v is None:
            return 0.0
        if v < 0:
            self.fail(field, f"{v:g}: negative charges are not supported")
            return 0.0
        return v

    def fixed(self) -> float:
        rec = self.rec
        first, old = rec.get("fixedchargefirstmeter"), rec.get("fixedmonthlycharge")
        if first is None and old is None:
            return 0.0
        if first is None:
            return _num(self._charge(old, "fixedmonthlycharge"))
        v = self._charge(first, "fixedchargefirstmeter")
        if v == 0:
            return 0.0
        units = rec.get("fixedchargeunits")
        if units not in FIXED_UNITS:
            self.fail("fixedchargeunits", f"{units!r}: expected one of "
                      f"{', '.join(FIXED_UNITS)}" if units is not None else
                      "missing: the unit of fixedchargefirstmeter ($/month, $/day or $/year)")
            return 0.0
        monthly = _num(v * FIXED_UNITS[units])
        if old is not None and isinstance(old, (int, float)) and not isinstance(old, bool) \
                and abs(old - monthly) > 1e-9 * max(1.0, abs(monthly)):
            self.fail("fixedmonthlycharge", f"{old:g} USD/month disagrees with "
                      f"fixedchargefirstmeter ({v:g} {units} = {monthly:g} USD/month)")
        if units == "$/day":
            self.notes.append(f"fixed charge {v:g} USD/day x 365/12 day/month = "
                              f"{monthly:g} USD/month")
        elif units == "$/year":
            self.notes.append(f"fixed charge {v:g} USD/year / 12 = {monthly:g} USD/month")
        return monthly


def _what(field: str) -> str:
    return {"energyratestructure": "energy", "flatdemandstructure": "demand",
            "demandratestructure": "demand", "coincidentratestructure": "coincident demand"}[field]


def _tier_unit(field: str, tier: dict) -> str:
    return str(tier.get("unit") or "kWh") if field == "energyratestructure" else "kW"


def _fmt(values: Iterable[float]) -> str:
    return ", ".join(f"{v:g}" for v in values)


# ---- seasons --------------------------------------------------------------------------------

def _seasons(energy: list[tuple[tuple[float, ...], tuple[float, ...]]],
             demand: list[float]) -> dict:
    """The top level and ``seasons`` from each month's (weekday, weekend, demand)."""
    keys = [(energy[m][0], energy[m][1], demand[m]) for m in range(12)]
    groups: dict[tuple, list[int]] = {}
    for m, k in enumerate(keys):
        groups.setdefault(k, []).append(m + 1)
    # most months first; ties: January's group, then the earliest month
    order = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))
    weekend = any(wd != we for wd, we, _ in keys)
    has_demand = any(d != 0 for d in demand)

    def level(k: tuple) -> dict:
        wd, we, d = k
        out: dict[str, Any] = {"hourly": {"value": list(wd), "unit": "USD/kWh"}}
        if weekend:
            out["weekend"] = {"value": list(we), "unit": "USD/kWh"}
        if has_demand:
            out["demand_charge"] = {"value": d, "unit": "USD/kW/month"}
        return out

    top = level(order[0][0])
    seasons = [{"name": season_name(months), "months": months, **level(k)}
               for k, months in sorted(order[1:], key=lambda kv: kv[1][0])]
    out: dict[str, Any] = {"hourly": top["hourly"]}
    if weekend:
        out["weekend"] = top["weekend"]
    if seasons:
        out["seasons"] = seasons
    if has_demand:
        out["demand_charge"] = top["demand_charge"]
    return out


def season_name(months: list[int]) -> str:
    """Months (1-12, ascending) by their runs: ``Jun-Sep``, ``Nov-Mar``, ``Jan, Mar-May``."""
    runs: list[list[int]] = []
    for m in months:
        if runs and m == runs[-1][-1] + 1:
            runs[-1].append(m)
        else:
            runs.append([m])
    if len(runs) > 1 and runs[0][0] == 1 and runs[-1][-1] == 12:
        runs[0] = runs.pop() + runs[0]  # a run across the new year
    return ", ".join(MONTHS[r[0] - 1] if len(r) == 1 else f"{MONTHS[r[0] - 1]}-{MONTHS[r[-1] - 1]}"
                     for r in runs)


# ---- TOML -----------------------------------------------------------------------------------

def tariff_toml(table: dict) -> str:
    """The table as ``[electricity.tariff]`` TOML, paste-able into a scenario file."""
    lines = ["[electricity.tariff]"]
    for key in ("name", "utility", "effective", "source"):
        lines.append(f"{key} = {_toml_string(table[key])}")
    for key in ("hourly", "weekend", "demand_charge", "fixed_charge"):
        if key in table:
            lines.append(f"{key} = {_toml_quantity(table[key])}")
    for season in table.get("seasons", []):
        lines += _toml_entry("seasons", season, ("name", "months", "hourly", "weekend",
                                                 "demand_charge"))
    for period in table.get("demand_periods", []):
        lines += _toml_entry("demand_periods", period, ("name", "demand_charge", "hours",
                                                        "weekend_hours", "months"))
    return "\n".join(lines) + "\n"


def _toml_entry(array: str, entry: dict, keys: tuple[str, ...]) -> list[str]:
    """One ``[[electricity.tariff.<array>]]`` table: its keys present, in ``keys``' order (a
    name as text, a list of whole numbers, a quantity)."""
    lines = ["", f"[[electricity.tariff.{array}]]"]
    for key in keys:
        if key not in entry:
            continue
        v = entry[key]
        text = _toml_string(v) if isinstance(v, str) else \
            f"[{', '.join(str(int(x)) for x in v)}]" if isinstance(v, list) else \
            _toml_quantity(v)
        lines.append(f"{key} = {text}")
    return lines


def _toml_quantity(q: dict) -> str:
    v = q["value"]
    value = (f"[{', '.join(_toml_float(x) for x in v)}]" if isinstance(v, list)
             else _toml_float(v))
    return f"{{ value = {value}, unit = {_toml_string(q['unit'])} }}"


def _toml_float(x: float) -> str:
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{x}: TOML tariffs hold finite numbers")
    return repr(x)


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def _toml_string(s: str) -> str:
    """A TOML basic string: quote, backslash and control characters escaped."""
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
