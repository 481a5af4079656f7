"""The decision's declared bills compiled once as a function of the scale
(costmodel.render.workbook.decision_formulas.Compiled, what the Scan sheet's 14,000 cached
bills are computed by): the engine's floats exactly, and hand figures.

Hand figures (demand 1,000 Mtok/month mixed, ISL = OSL: input share 0.5, no cache or batch):
- tiers 2 / 4 USD/Mtok in/out up to 1,500 Mtok (3 USD/Mtok mixed), then 1 / 3 (2 mixed):
  at scale 1, 1,000 x 3 = 3,000 USD; at scale 2, 1,500 x 3 + 500 x 2 = 5,500 USD;
- capacity: 2,000 token/s an accelerator at 1,000 USD/month, the demand's peak 1e9 / 2,628,000
  s = 380.5 token/s: one accelerator, 1,000 USD, up to scale 5.256 (2,000 / 380.5...), two
  at scale 6: 2,000 USD.
"""
from __future__ import annotations

import math

import pytest

from costmodel.decisions import decision_calculation as calc
from costmodel.decisions.decision import SCALES
from costmodel.render.workbook.decision_formulas import Compiled, Formula, Formulas

AVERAGE = 1000.0 * 1e6 / calc.CONSTANTS["seconds_per_month"]  # [token/s]
DEMAND = calc.Demand(1000.0, AVERAGE, AVERAGE, 0.5, 0.0, 0.0)
TIERED = calc.PerMtokTerms([calc.Tier(1500.0, 2.0, 4.0), calc.Tier(None, 1.0, 3.0)])
CAPACITY = calc.CapacityTerms(2000.0, 1.0, None, 1000.0)
EVERY = [
    TIERED,
    calc.PerMtokTerms([calc.Tier(100.0, 0.6, 2.4), calc.Tier(900.0, 0.5, 2.0),
                       calc.Tier(None, 0.3, 1.2)], cached_fraction=0.25, batch_discount=0.5,
                      committed_volume=800.0, overage=(0.7, 2.8), floor=400.0),
    calc.PerMtokTerms([calc.Tier(None, 0.6, 2.4)], committed_volume=1200.0, floor=10.0),
    CAPACITY,
    calc.CapacityTerms(700.0, 0.95, 4.0, 900.0, block=3000.0, floor=3500.0),
    calc.OwnTerms(900.0, 0.99, lambda o, u: 1.5 + 2.25 * u),
]
DEMANDS = [DEMAND, calc.Demand(1000.0, AVERAGE, 2.5 * AVERAGE, 0.8, 0.6, 0.3)]


def _compiled(terms, demand=DEMAND):
    return Compiled().function(lambda o, s: calc.bill(o, calc.scaled(o, demand, s), terms))


def test_the_hand_bills():
    tiered, capacity = _compiled(TIERED), _compiled(CAPACITY)
    assert tiered(1.0) == pytest.approx(3000.0, rel=1e-12)
    assert tiered(2.0) == pytest.approx(5500.0, rel=1e-12)
    assert capacity(5.0) == 1000.0
    assert capacity(6.0) == 2000.0


@pytest.mark.parametrize("demand", DEMANDS)
@pytest.mark.parametrize("terms", EVERY)
def test_the_compiled_bill_is_the_engines_exactly(terms, demand):
    bill = _compiled(terms, demand)
    for s in (*SCALES, 1.0, 1.0 + 2**-52, 0.7071067811865476):
        assert bill(s) == calc.bill(calc.FLOATS, calc.scaled(calc.FLOATS, demand, s), terms)


@pytest.mark.parametrize("terms", EVERY[:5])
def test_the_compiled_bill_is_the_formulas_value_exactly(terms):
    # the formula rendering carries the engine's value too: the two agree to the last bit
    demand = calc.Demand(*(Formula("d", v) for v in (DEMAND.volume, DEMAND.average,
                                                        DEMAND.peak, DEMAND.input_share,
                                                        DEMAND.cached_share,
                                                        DEMAND.batch_share)))
    bill = _compiled(terms)
    o = Formulas()
    as_formulas = _as_formulas(terms)
    for s in SCALES[::7]:
        f = calc.bill(o, calc.scaled(o, demand, Formula("s", s)), as_formulas)
        assert f.value == bill(s)


def _as_formulas(terms):
    """The terms with every figure a formula (its value kept)."""
    def f(x):
        return None if x is None else Formula("t", x)
    if isinstance(terms, calc.PerMtokTerms):
        return calc.PerMtokTerms(
            [calc.Tier(f(t.up_to), f(t.price_input), f(t.price_output)) for t in terms.tiers],
            f(terms.cached_fraction), f(terms.batch_discount), f(terms.committed_volume),
            None if terms.overage is None else (f(terms.overage[0]), f(terms.overage[1])),
            f(terms.floor))
    return calc.CapacityTerms(f(terms.throughput), f(terms.available), f(terms.offered),
                              f(terms.unit), f(terms.block), f(terms.floor))


def test_a_compiled_bill_refuses_a_count_past_the_plan_as_the_engine_does():
    bill = _compiled(CAPACITY)
    with pytest.raises(Exception) as compiled:
        bill(math.inf)
    with pytest.raises(Exception) as engine:
        calc.bill(calc.FLOATS, calc.scaled(calc.FLOATS, DEMAND, math.inf), CAPACITY)
    assert type(compiled.value) is type(engine.value)
