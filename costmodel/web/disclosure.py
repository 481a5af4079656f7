"""A result's disclosure in plain words: what was divided by what, and where each input came
from (:meth:`costmodel.model.results.Result.disclosure`), as lines a finance reader can follow."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.profile import month_runs
from ..model.results import Result
from ..render import display
from ..render.report import electricity_text, emissions_text, load_text, money_line

__all__ = ["Line", "disclosure_lines"]

_BOUNDARY = {"chip": "the accelerator package (chip)", "node": "the server (node), with its "
             "share of host power and supply losses", "rack": "the rack, with its share of "
             "switches and power delivery", "facility": "the facility meter (rack power x PUE)"}
_KIND = {"mixed": "mixed tokens (input and output tokens together, as InferenceX counts them)",
         "output": "output tokens only", "input": "input tokens only"}


@dataclass(frozen=True)
class Line:
    """One disclosure line: a heading, the sentence, and where its inputs came from."""
    heading: str
    text: str
    source: str = ""


def _q(q: dict[str, Any] | None, name: str | None = None) -> str:
    if not q or q.get("value") is None:
        return ""
    return display.format_quantity(q["value"], q["unit"], name)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _electricity(e: dict[str, Any], source) -> Line:
    """The electricity line: a flat price and its source, or the tariff (what it charges,
    its seasons and weekend rates) with the tariff's own source."""
    carbon = f"carbon intensity {_q(e['carbon_intensity'])}" if e.get("carbon_intensity") \
        else ""
    t = e.get("tariff")
    if t is None:
        return Line("Electricity", _join(electricity_text(e, _q), carbon)
                    + f", from {e.get('source') or 'no source given'}"
                    f" ({e.get('date') or 'undated'}).", source("electricity.price"))
    seasons = [s for s in t.get("seasons") or [] if s]
    adjust = _join(f"rates x {display.format_number(t['scale'], '')}"
                   if t.get("scale", 1) != 1 else "",
                   f"{_q(t['shift'])} added to every rate"
                   if (t.get("shift") or {}).get("value") else "")
    text = _join(
        _capital(electricity_text(e, _q)),
        ("rates differ by season (" + "; ".join(month_runs(m) for m in seasons) + ")")
        if seasons else "",
        "weekend days have their own rates" if t.get("weekend_rates") else "",
        adjust, carbon,
        "the tariff is undated" if not t.get("effective") else "")
    where = source("electricity.tariff")
    if t.get("source") and t["source"] not in where:
        where = _join(where, t["source"])
    return Line("Electricity", text + ".", where or "no source given")


def disclosure_lines(result: Result) -> list[Line]:
    """The disclosure of ``result`` as lines in words, each with its source."""
    d = result.disclosure()
    src = d["sources"]

    def source(*keys: str) -> str:
        return _join(*dict.fromkeys(src[k] for k in keys if src.get(k)))

    op, w, e, f = d["operating_point"], d["workload"], d["electricity"], d["financing"]
    weight = display.format_number(d["pricing"]["output_weight"], "", "pricing_output_weight")
    lines = [
        Line("Power", f"{d['power_basis'].capitalize()} power counted at "
                      f"{_BOUNDARY.get(d['boundary'], d['boundary'])}: "
                      f"{_q(d['power_per_accelerator'])} per accelerator "
                      f"({d['accelerator']}).",
             source("power.boundary", "power.basis", "accelerator.rated_power",
                    "accelerator.measured_power")),
        Line("Operating point", _join(
            op["chosen"], op.get("label") or "",
            f"throughput {_q(op['throughput'])} per accelerator",
            (f"given as {_q(op['throughput_per_kw_as_given'])} normalised by "
             f"{_q(op['normalised_by'])}") if op.get("throughput_per_kw_as_given") else "",
            f"interactivity {_q(op['interactivity'])}" if op.get("interactivity") else "",
            f"time between tokens {_q(op['tbt'])}" if op.get("tbt") else "",
            f"time to first token {_q(op['ttft'])}" if op.get("ttft") else "",
            f"end-to-end latency {_q(op['e2e_latency'])}" if op.get("e2e_latency") else "",
            op.get("note") or "") + ".",
             op.get("source") or source("operating_point.throughput",
                                        "operating_point.throughput_per_kw")),
        Line("Tokens counted",
             f"Costs are per million {_KIND.get(d['token_kind'], d['token_kind'])}."),
        Line("Workload", _join(
            w.get("model") or "model not named",
            f"{_q(w['isl'])} in, {_q(w['osl'])} out per request",
            f"precision {w['precision']}" if w.get("precision") else "",
            f"framework {w['framework']}" if w.get("framework") else "",
            f"speculative decoding {w['speculative_decoding']}"
            if w.get("speculative_decoding") else "") + ".",
             source("workload.model", "workload.isl", "workload.osl")),
        _electricity(e, source),
        Line("Emissions", _capital(emissions_text(d["emissions"], _q)) + ".",
             source("electricity.carbon_intensity", "electricity.market_carbon_intensity",
                    "accelerator.embodied", "node.embodied")),
        Line("Financing", (_join(
            f"owned over {_q(f['life'], 'life_years')}",
            f"cost of capital {_q(f['cost_of_capital'], 'financing_cost_of_capital')}",
            f"salvage {display.format_percent(f['salvage'])} of capex",
            f"maintenance {_q(f['maintenance'], 'financing_maintenance')} of capex")
            if f["cost_basis"] == "own" else
            f"rented at {_q(f['hourly_price'])} per accelerator-hour") + ".",
             source("financing.life", "financing.cost_of_capital", "accelerator.price",
                    "accelerator.hourly_price")),
        Line("Use", f"Utilisation {display.format_percent(d['utilisation'])} of hours at the "
                    f"operating point{load_text(d['load'])}; idle draw "
                    f"{display.format_percent(d['idle_power'])} "
                    f"of operating power.", source("utilisation", "load.hourly", "load.weekend",
                                                      "idle_power")),
        Line("Pricing", f"Gross margin {display.format_percent(d['pricing']['gross_margin'])}"
                        f"; an output token is priced as "
                        f"{weight}"
                        f" input tokens ({d['pricing']['allocation']}).",
             source("pricing.gross_margin", "pricing.output_weight")),
    ]
    money = money_line(d["money"]) if "money" in d else None  # (saved before: none)
    if money is not None:
        lines.append(Line("Money", _capital(money) + "."))
    rate = d.get("reference_rate")
    if rate:
        lines.append(Line("Reference rate", _join(
            f"{rate['kind']} rate for {rate['accelerator']}, version {rate['version']}",
            f"{_q(rate['hourly_price'])} all in at {_q(rate['all_in_power'])}",
            rate["status"], *rate["departures"]) + ".", rate.get("origin") or ""))
    if d["defaults_used"]:
        lines.append(Line("Defaults used", ", ".join(display.label(k)
                                                     for k in d["defaults_used"]) + "."))
    return lines
