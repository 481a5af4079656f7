"""The decision workbook: hand figures, the cached values are the engine's, and LibreOffice
recalculates every cell to them, also after an edit of the demand and of a quote's price.

The hand decision (flat demand, ISL = OSL, no cache, no batch):
- volume 2,628 Mtok/month = 1,000 token/s (2,628e6 / 2,628,000 s);
- API: 1 / 3 USD/Mtok in/out -> 2 USD/Mtok mixed -> 5,256 USD/month;
- capacity: 300 token/s an accelerator at 1,500 USD/month -> ceil(1,000 / 300) = 4 -> 6,000;
- own build: 400 token/s an accelerator, 1.5 + 1.0 x u USD an accelerator-hour ->
  3 accelerators at u = 1,000 / 1,200 -> 3 x 2.3333 x 730 = 5,110 USD/month: the winner.
At scale s (3 own accelerators while 2 < 2.5 s <= 3): own = 730 x (4.5 + 2.5 s) = 3,285 +
1,825 s against the API's 5,256 s: equal at s = 3,285 / 3,431 (2,516.17 Mtok, the API
cheaper below). Above s = 1.2 the own build needs a fourth accelerator (4,380 + 1,825 s >
5,256 s until s = 1.2766): the winner holds up to 1.2 x 2,628 = 3,153.6 Mtok. Capacity
drops to 3 accelerators (4,500) at s <= 0.9, below the own build's 4,927.5 there: the
capacity break-even is 0.9 x 2,628 = 2,365.2 Mtok, capacity cheaper below.
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest
from openpyxl import load_workbook

from costmodel.decisions import decision_calculation as calc
from costmodel.decisions.decision import Option, decide
from costmodel.decisions.demand import (
    DemandLoad,
    Shape,
    capacity_charge,
    own_charge,
    per_mtok_charge,
)
from costmodel.model.errors import InputError
from costmodel.render.workbook.decision_sheet import (
    DECISION_SHEET,
    MAX_OPTIONS,
    MAX_TIERS,
    SCAN_SHEET,
    DecisionBook,
    write_decision,
)
from costmodel.render.workbook.layout import Names
from costmodel.render.workbook.sheet import Book
from tests.conftest import ROOT, require_libreoffice

VOLUME = 2628.0  # [Mtok/month] = 1,000 token/s


def _load(volume: float = VOLUME) -> DemandLoad:
    average = volume * 1e6 / calc.CONSTANTS["seconds_per_month"]
    return DemandLoad(volume, average, average, Shape(1000, 1000), 0.0, 0.0, False)


def _options(p_out: float = 3.0, hour=lambda o, u: 1.5 + 1.0 * u) -> list[Option]:
    api = calc.PerMtokTerms([calc.Tier(None, 1.0, p_out)])
    cap = calc.CapacityTerms(300.0, 1.0, None, 1500.0)
    own = calc.OwnTerms(400.0, 1.0, hour)
    return [Option("own", "own", "own build", 0.0, lambda L: own_charge(own, L), terms=own),
            Option("api", "per_mtok", "Y", 12.0, lambda L: per_mtok_charge(api, L),
                   terms=api),
            Option("capacity", "capacity", "X", 12.0, lambda L: capacity_charge(cap, L),
                   terms=cap)]


def _book(decision, rate: float = 0.1) -> bytes:
    """The Decision and Scan sheets alone, with the model's names they read."""
    book = Book()
    names = Names(book, 1)
    sheets = [book.add_sheet(t) for t in (DECISION_SHEET, SCAN_SHEET, "Constants")]
    for row, (name, value) in enumerate((("tokens_per_mtok", 1e6), ("months_per_year", 12.0),
                                         ("financing_cost_of_capital", rate)), 1):
        sheets[2].number(row, 1, value)
        names.add(name, "Constants", f"$A${row}")
    write_decision(sheets[0], sheets[1], DecisionBook(decision, rate), names)[1]
    return book.close()


def _named(wb, name: str):
    """A defined name's cell value(s) in a workbook read with data_only."""
    dn = wb.defined_names[name]
    (sheet, ref), = dn.destinations
    cells = wb[sheet][ref.replace("$", "")]
    if isinstance(cells, tuple):
        return [c.value for row in cells for c in row]
    return cells.value


def test_hand_figures_from_the_engine():
    d = decide(_options(), _load(), 0.1)
    assert [p.option.name for p in d.ranked] == ["own", "api", "capacity"]
    assert [p.charge.monthly for p in d.ranked] == pytest.approx([5110.0, 5256.0, 6000.0],
                                                                 rel=1e-12)
    assert d.holds[0] == pytest.approx(VOLUME * 3285 / 3431, rel=1e-9)
    assert d.holds[1] == pytest.approx(1.2 * VOLUME, rel=1e-9)
    pairs = {tuple(p["offers"]): p for p in d.break_even}
    assert pairs["own", "api"]["volume"]["value"] == pytest.approx(VOLUME * 3285 / 3431,
                                                                   rel=1e-9)
    assert pairs["own", "api"]["cheaper_below"] == "api"
    assert pairs["own", "capacity"]["volume"]["value"] == pytest.approx(0.9 * VOLUME, rel=1e-9)
    assert pairs["own", "capacity"]["cheaper_below"] == "capacity"


def test_cached_values_are_the_engines(tmp_path):
    d = decide(_options(), _load(), 0.1)
    path = tmp_path / "d.xlsx"
    path.write_bytes(_book(d))
    wb = load_workbook(path, data_only=True)
    assert _named(wb, "option_bill") == pytest.approx([5110.0, 5256.0, 6000.0], rel=1e-12)
    assert _named(wb, "option_rank") == [1, 2, 3]
    assert _named(wb, "decision_offer") == "own"
    assert _named(wb, "decision_holds_from") == pytest.approx(d.holds[0], rel=1e-12)
    assert _named(wb, "decision_holds_to") == pytest.approx(d.holds[1], rel=1e-12)
    assert _named(wb, "decision_margin") == pytest.approx(146.0, rel=1e-9)
    ws = wb[DECISION_SHEET]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 2).value == "option_break_even")
    assert ws.cell(row, 4).value in (None, "")  # the winner has no break-even with itself
    assert ws.cell(row, 5).value == pytest.approx(VOLUME * 3285 / 3431, rel=1e-9)
    assert ws.cell(row, 6).value == pytest.approx(0.9 * VOLUME, rel=1e-9)
    assert [ws.cell(row + 1, c).value for c in (5, 6)] == ["api", "capacity"]


def test_more_options_than_a_workbook_lays_out_are_refused():
    terms = [calc.PerMtokTerms([calc.Tier(None, 1.0, 3.0 + i)])
             for i in range(MAX_OPTIONS + 1)]
    many = [Option(f"api{i}", "per_mtok", "Y", 12.0,
                   lambda L, t=t: per_mtok_charge(t, L), terms=t)
            for i, t in enumerate(terms)]
    with pytest.raises(InputError, match=f"at most {MAX_OPTIONS} ranked options"):
        _book(decide(many, _load(), 0.1))


def _tiered(tiers: int) -> calc.PerMtokTerms:
    """An offer of ``tiers`` tiers of 100 Mtok, each a cent cheaper, the last open."""
    return calc.PerMtokTerms([calc.Tier(None if k == tiers - 1 else 100.0 * (k + 1),
                                        1.0 - 0.01 * k, 3.0 - 0.01 * k)
                              for k in range(tiers)])


def test_more_tiers_than_a_workbook_lays_out_are_refused_at_the_quote():
    # the bound keeps the Scan's bills short enough to write in bounded time (issue 42)
    terms = _tiered(MAX_TIERS + 1)
    many = [*_options(), Option("tiered", "per_mtok", "Z", 12.0,
                                lambda L: per_mtok_charge(terms, L), terms=terms, quote=4)]
    with pytest.raises(InputError) as got:
        _book(decide(many, _load(), 0.1))
    assert got.value.errors[0][0] == "quotes[4].tiers"
    assert (f"at most {MAX_TIERS} tiers an offer" in got.value.errors[0][1]
            and f"'tiered' states {MAX_TIERS + 1}" in got.value.errors[0][1])


def test_an_offer_at_the_tiers_bound_is_laid_out(tmp_path):
    terms = _tiered(MAX_TIERS)
    d = decide([*_options(), Option("tiered", "per_mtok", "Z", 12.0,
                                    lambda L: per_mtok_charge(terms, L), terms=terms)],
               _load(), 0.1)
    path = tmp_path / "d.xlsx"
    path.write_bytes(_book(d))
    wb = load_workbook(path, data_only=True)
    # tier k's mixed price (ISL = OSL): (1 - 0.01 k + 3 - 0.01 k) / 2 = 2 - 0.01 k; 100 Mtok
    # in each of the first 19 tiers, the rest of 2,628 (728 Mtok) in the 20th, open one
    hand = sum(100.0 * (2.0 - 0.01 * k) for k in range(19)) + 728.0 * (2.0 - 0.01 * 19)
    column = [p.option.name for p in d.ranked].index("tiered")
    assert _named(wb, "option_bill")[column] == pytest.approx(hand, rel=1e-12)


def test_an_own_build_off_a_line_is_refused_in_words():
    curved = _options(hour=lambda o, u: 1.5 + 1.0 * u * u)
    with pytest.raises(InputError, match="off the line"):
        _book(decide(curved, _load(), 0.1))


def _every_cell_alike(before, after) -> int:
    """Every numeric and text cell of the Decision and Scan sheets equal (1e-9); the count."""
    count = 0
    for title in (DECISION_SHEET, SCAN_SHEET):
        for row in before[title].iter_rows():
            for c in row:
                v, w = c.value, after[title][c.coordinate].value
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    assert isinstance(w, (int, float)), (title, c.coordinate, v, w)
                    assert math.isclose(v, w, rel_tol=1e-9, abs_tol=1e-9), \
                        (title, c.coordinate, v, w)
                    count += 1
                elif v not in (None, "") or w not in (None, ""):
                    assert v == w, (title, c.coordinate, v, w)
    return count


@pytest.fixture(scope="module")
def libreoffice():
    require_libreoffice(module=False)
    from costmodel.render.workbook.recalc import recalculate
    return recalculate


def _edit(path: Path, out: Path, edits: dict[str, float]) -> Path:
    wb = load_workbook(path)
    for name, value in edits.items():
        sheet, ref = next(iter(wb.defined_names[name.split("[")[0]].destinations))
        cells = wb[sheet][ref.replace("$", "")]
        cell = cells if not isinstance(cells, tuple) else \
            [c for r in cells for c in r][int(name.split("[")[1].rstrip("]"))]
        cell.value = value
    wb.save(out)
    return out


def test_libreoffice_recalculates_to_the_engine_before_and_after_edits(tmp_path, libreoffice):
    path = tmp_path / "d.xlsx"
    path.write_bytes(_book(decide(_options(), _load(), 0.1)))
    cached = load_workbook(path, data_only=True)
    again = load_workbook(libreoffice(path, tmp_path / "out"), data_only=True)
    assert _every_cell_alike(cached, again) > 1000
    # the demand to 3,000 Mtok a month and the API's output price to 2 USD/Mtok: the API
    # (1.5 USD/Mtok mixed, 4,500 USD/month) now wins; the engine on the same figures agrees
    edited = _edit(path, tmp_path / "edited.xlsx",
                   {"decision_volume": 3000.0, "option_tier1_output[1]": 2.0})
    recalculated = load_workbook(libreoffice(edited, tmp_path / "out2"), data_only=True)
    d = decide(_options(p_out=2.0), _load(3000.0), 0.1)
    assert d.ranked[0].option.name == "api"
    assert d.ranked[0].charge.monthly == pytest.approx(4500.0, rel=1e-12)
    assert _named(recalculated, "decision_offer") == "api"
    by_name = {p.option.name: p.charge.monthly for p in d.ranked}
    assert _named(recalculated, "option_bill") == pytest.approx(
        [by_name[n] for n in ("own", "api", "capacity")], rel=1e-9)
    assert _named(recalculated, "option_rank") == [2, 1, 3]
    assert _named(recalculated, "decision_bill") == pytest.approx(4500.0, rel=1e-9)
    for got, want in ((_named(recalculated, "decision_holds_from"), d.holds[0]),
                      (_named(recalculated, "decision_holds_to"), d.holds[1])):
        assert (got in (None, "")) if want is None else got == pytest.approx(want, rel=1e-9)
    # the break-evens with the new winner, option by option, as the engine's pairs
    ws = recalculated[DECISION_SHEET]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 2).value == "option_break_even")
    pairs = {tuple(p["offers"]): p for p in d.break_even}
    for col, other in ((4, "own"), (6, "capacity")):
        want = pairs["api", other]["volume"]
        got = ws.cell(row, col).value
        assert (got in (None, "")) if want is None else \
            got == pytest.approx(want["value"], rel=1e-9), other
        if want is not None:
            assert ws.cell(row + 1, col).value == pairs["api", other]["cheaper_below"]


def test_the_negotiation_example_recalculates_to_the_engine(tmp_path, libreoffice):
    """Tiers, take-or-pay with overage, batch and cache prices, availability from MTBI, own
    builds read off curves: every cell of the Decision and Scan sheets as the engine's."""
    from costmodel import app
    from costmodel.cli import CONTEXT, specs_for
    from costmodel.decisions.demand import validate_demand
    from costmodel.sources.quote_file import read_quotes
    quotes = ROOT / "fixtures" / "quotes" / "negotiation.toml"
    table = tomllib.loads(quotes.read_text())["demand"]
    req = app.DecisionRequest(read_quotes(str(quotes)), specs_for(
        tuple(str(ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml")
              for hw in ("b200", "h100")), ()), validate_demand(table), None)
    d = app.quotes_decide(CONTEXT, req).decision
    path = tmp_path / "n.xlsx"
    path.write_bytes(app.decision_workbook(CONTEXT, req).content)
    cached = load_workbook(path, data_only=True)
    assert _named(cached, "option_bill") == pytest.approx(
        [p.charge.monthly for p in d.ranked], rel=1e-12)
    assert _named(cached, "decision_holds_from") == pytest.approx(d.holds[0], rel=1e-12)
    assert _every_cell_alike(cached, load_workbook(libreoffice(path, tmp_path / "out"),
                                                   data_only=True)) > 4000


def _negotiation_request():
    from costmodel import app
    from costmodel.cli import specs_for
    from costmodel.decisions.demand import validate_demand
    from costmodel.sources.quote_file import read_quotes
    quotes = ROOT / "fixtures" / "quotes" / "negotiation.toml"
    table = tomllib.loads(quotes.read_text())["demand"]
    return app.DecisionRequest(read_quotes(str(quotes)), specs_for(
        tuple(str(ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml")
              for hw in ("b200", "h100")), ()), validate_demand(table), None)


def test_reprice_reads_an_edited_decision_back_and_decides_again(tmp_path):
    """Unedited, the decision read back is the one exported; the volume to 20,000 Mtok and
    the API's tier-1 output price to 1.20 USD/Mtok, it is the engine's decision at those."""
    import dataclasses

    from costmodel import app
    from costmodel.cli import CONTEXT
    from costmodel.decisions.demand import validate_demand
    from costmodel.decisions.quotes import validate_quote
    req = _negotiation_request()
    path = tmp_path / "n.xlsx"
    path.write_bytes(app.decision_workbook(CONTEXT, req).content)
    exported = app.quotes_decide(CONTEXT, req).decision
    same = app.reprice(path, ctx=CONTEXT)
    assert same.changes == []
    assert [p.option.name for p in same.decision.decision.ranked] == \
        [p.option.name for p in exported.ranked]
    assert [p.charge.monthly for p in same.decision.decision.ranked] == pytest.approx(
        [p.charge.monthly for p in exported.ranked], rel=1e-12)
    assert same.decision.decision.holds[0] == pytest.approx(exported.holds[0], rel=1e-9)
    assert same.decision.decision.holds[1] is exported.holds[1] is None
    ranked = [p.option.name for p in exported.ranked]
    api = ranked.index("api-tokens")
    cap = ranked.index("h100-capacity")
    edited = _edit(path, tmp_path / "edited.xlsx", {"decision_volume": 20000.0,
                                                    f"option_tier1_output[{api}]": 1.2,
                                                    f"option_unit[{cap}]": 1460.0})
    again = app.reprice(edited, ctx=CONTEXT)
    assert sorted((c.system, c.name, round(c.before, 9), c.after) for c in again.changes) == [
        ("api-tokens", "option_tier1_output", 2.4, 1.2),
        ("demand", "decision_volume", 50000.0, 20000.0),
        ("h100-capacity", "option_unit", 1533.0, 1460.0)]  # 2.10 USD/h x 730 h
    # the engine at the same figures: the demand's volume (its peak follows the exported
    # average over peak) and the quote's price
    quotes = [q.to_data() for q in req.quotes]
    quotes[1]["tiers"][0]["price_output"] = {"value": 1.2, "unit": "USD/Mtok"}
    quotes[0]["hourly_price"] = {"value": 2.0, "unit": "USD/h"}  # 1,460 / 730 h
    factor = 50000e6 / (730 * 3600) / 30000
    demand = {**req.demand.to_data(), "volume": {"value": 20000.0, "unit": "Mtok/month"},
              "peak": {"value": 20000e6 / (730 * 3600) / factor, "unit": "token/s"},
              "isl": {"value": 8192.0, "unit": "token"}, "osl": {"value": 1024.0, "unit": "token"}}
    want = app.quotes_decide(CONTEXT, dataclasses.replace(
        req, quotes=[validate_quote(q) for q in quotes], demand=validate_demand(demand)))
    got = again.decision.decision
    assert [p.option.name for p in got.ranked] == [p.option.name for p in want.decision.ranked]
    assert [p.charge.monthly for p in got.ranked] == pytest.approx(
        [p.charge.monthly for p in want.decision.ranked], rel=1e-9)
    assert got.load.volume == 20000.0 and got.load.peak == pytest.approx(20000 / 50000 * 30000)
    # an own build's figure is its model's: refused at its cell
    own = ranked.index("gpt-oss-120b b200 (illustrative curve)")
    refused = _edit(path, tmp_path / "own.xlsx", {f"option_throughput[{own}]": 9000.0})
    with pytest.raises(InputError, match=r"Decision!D\d+ \(option_throughput, gpt-oss-120b "
                                         r"b200.*change them on the Inputs sheet"):
        app.reprice(refused, ctx=CONTEXT)


def test_formulas_are_written_as_xlsxwriter_would_write_them(tmp_path):
    """The short way past XlsxWriter's newer-function patterns changes no formula: every
    formula of a decision's workbook as XlsxWriter's own preparation gives it."""
    from xlsxwriter.worksheet import Worksheet

    from costmodel import app
    from costmodel.cli import CONTEXT
    from costmodel.render.workbook.sheet import _Worksheet
    path = tmp_path / "n.xlsx"
    path.write_bytes(app.decision_workbook(CONTEXT, _negotiation_request()).content)
    wb = load_workbook(path)
    ours, theirs = _Worksheet(), Worksheet()
    formulas = [c.value for ws in wb for row in ws.iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]
    assert len(formulas) > 4000
    for f in [*formulas, "=SEQUENCE(3)", "=STDEV.S(A1:A3)", "=IF(A1>0,XLOOKUP(1,B:B,C:C),0)"]:
        assert ours._prepare_formula(f) == theirs._prepare_formula(f), f


def test_a_shaped_demands_workbook_reads_back_with_a_defaulted_utilisation(tmp_path):
    """An own build whose utilisation is its default is priced at the demand's load shape;
    read back (where every input is written out), it still is, not refused as disagreeing."""
    from costmodel import app
    from costmodel.cli import CONTEXT
    from costmodel.decisions.demand import validate_demand
    from costmodel.sources.quote_file import read_quotes
    quotes = ROOT / "fixtures" / "quotes" / "negotiation.toml"
    demand = {k: v for k, v in tomllib.loads(quotes.read_text())["demand"].items()
              if k not in ("peak", "interactivity")}
    demand["load"] = {"hourly": [0.5] * 8 + [1.0] * 16}  # a mean of 5/6
    scenario = tomllib.loads((ROOT / "fixtures" / "scenarios" / "published" /
                              "deepseek-r1_gb300_matched.toml").read_text())
    del scenario["utilisation"]
    req = app.DecisionRequest(read_quotes(str(quotes)),
                              [app.ScenarioSpec(app.InlineScenario(scenario))],
                              validate_demand(demand), None)
    exported = app.quotes_decide(CONTEXT, req).decision
    path = tmp_path / "shaped.xlsx"
    path.write_bytes(app.decision_workbook(CONTEXT, req).content)
    wb = load_workbook(path, data_only=True)
    assert _named(wb, "decision_load_factor") == pytest.approx(5 / 6, rel=1e-12)
    again = app.reprice(path, ctx=CONTEXT).decision.decision
    assert [p.charge.monthly for p in again.ranked] == pytest.approx(
        [p.charge.monthly for p in exported.ranked], rel=1e-12)
