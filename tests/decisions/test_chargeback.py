"""The chargeback's arithmetic on hand-derived cases (tests/chargeback_support.py): the
two-tenant month with idle cost shared three ways, a reserved tenant that used nothing,
cached tokens at a cached_weight below 1; conservation to the cent; largest remainder; the
period; the errors."""
from __future__ import annotations

import numpy as np
import pytest
from chargeback_support import (
    CACHED,
    CACHED_CENTS,
    RESERVED,
    RESERVED_CENTS,
    TWO_TENANTS,
    TWO_TENANTS_CENTS,
    cents_of,
    fleet,
)

from costmodel import app
from costmodel.app.chargeback import ChargebackRequest, chargeback
from costmodel.decisions import chargeback_calculation as calc
from costmodel.decisions.chargeback import largest_remainder, parse_period
from costmodel.model.errors import InputError
from costmodel.sources.usage import read_usage_bytes

CTX = app.LocalContext()


def ledger(csv: str, idle: str = "separate", **kw):
    return chargeback(CTX, ChargebackRequest(fleet(**kw), read_usage_bytes(csv.encode(), "u.csv"),
                                             idle=idle))


@pytest.mark.parametrize("idle", ["separate", "usage", "even"])
def test_a_two_tenant_month_with_idle_shared_three_ways(idle):
    answer = ledger(TWO_TENANTS, idle).to_json()
    assert cents_of(answer) == TWO_TENANTS_CENTS[idle]
    assert answer["total"]["cents"] == 288000
    pool = answer["pools"][0]
    assert pool["capacity"]["value"] == pytest.approx(1.0368e10, rel=1e-12)
    assert pool["used"]["value"] == pytest.approx(6e9, rel=1e-12)
    assert pool["utilisation"]["measured"] == pytest.approx(6e9 / 1.0368e10, rel=1e-12)
    assert pool["utilisation"]["assumed"] == 0.5
    assert pool["idle"]["value"] == pytest.approx(2880 - 6e9 / 3.6e6, rel=1e-12)
    assert answer["disclosure"]["records"] == {"in_period": 2, "outside_period": 1}
    assert answer["check"]["conserved"] is True
    a = answer["tenants"][0]
    # A: 2e9 tokens, 4e9 of the 1.0368e10 equivalents of capacity
    assert a["tokens"]["total"] == 2e9
    assert a["utilisation"] == pytest.approx(4e9 / 1.0368e10, rel=1e-12)
    assert a["cost_per_mtok"]["value"] == pytest.approx(
        TWO_TENANTS_CENTS[idle]["A"] / 100 / 2e3, rel=1e-12)
    assert a["share"] == pytest.approx(TWO_TENANTS_CENTS[idle]["A"] / 288000, rel=1e-12)


def test_a_reserved_tenant_that_used_nothing_pays_its_share():
    answer = ledger(RESERVED, reserved={"R": {"share": 0.5}}).to_json()
    assert cents_of(answer) == RESERVED_CENTS
    r = next(t for t in answer["tenants"] if t["tenant"] == "R")
    assert r["tokens"]["total"] == 0 and r["parts"]["reserved"]["cents"] == 144000
    assert r["cost_per_mtok"]["value"] is None
    assert r["reserved_utilisation"] == 0.0
    # the same in accelerators: 1 of the pool's 2
    again = ledger(RESERVED, reserved={"R": {"accelerators": 1}}).to_json()
    assert cents_of(again) == RESERVED_CENTS


def test_cached_tokens_at_a_cached_weight_below_one():
    answer = ledger(CACHED, cached_weight=0.25).to_json()
    assert cents_of(answer) == CACHED_CENTS
    a = answer["tenants"][0]
    assert a["equivalents"] == pytest.approx(1.5e9, rel=1e-12)
    assert a["parts"]["input"]["cents"] + a["parts"]["cached_input"]["cents"] == 41667
    # 1e9 of the 1.5e9 equivalents are new input: two thirds of 416.666...
    assert a["parts"]["input"]["value"] == pytest.approx(277.78, abs=0.006)


def test_the_list_price_equivalent_at_a_market_price():
    # 0.6 / 0.15 / 2.4 USD/Mtok: A's 1e9 input + 1e9 output = 600 + 2,400; B's 2e9 input 1,200
    market = {"price_input": "0.6 USD/Mtok", "price_cached_input": "0.15 USD/Mtok",
              "price_output": "2.4 USD/Mtok"}
    answer = ledger(TWO_TENANTS, market=market).to_json()
    assert answer["tenants"][0]["list_price"]["value"] == pytest.approx(3000, rel=1e-12)
    assert answer["tenants"][1]["list_price"]["value"] == pytest.approx(1200, rel=1e-12)
    assert answer["list_price"]["value"] == pytest.approx(4200, rel=1e-12)
    assert answer["saving"]["value"] == pytest.approx(4200 - 2880, rel=1e-12)


def test_energy_follows_the_measured_utilisation():
    # the sample scenario (energy at 0.0871 USD/kWh): the pool priced at its measured
    # utilisation, not at the scenario's 0.7
    from costmodel.resources import fixtures_dir
    data = fleet()
    data["pools"][0]["scenario"] = "sample-tco.toml"
    led = chargeback(CTX, ChargebackRequest(data, read_usage_bytes(TWO_TENANTS.encode(), "u"),
                                            base=fixtures_dir() / "scenarios"))
    p = led.pools[0]
    u = float(p.charge.utilisation)
    assert p.result.scenario.utilisation == pytest.approx(u, rel=1e-12)
    assert p.assumed.scenario.utilisation == 0.7
    assert p.terms.energy == pytest.approx(p.result.values["electricity_cost_per_hour"])
    assert p.terms.energy < p.assumed.values["electricity_cost_per_hour"]  # u < 0.7
    assert led.total_cents == round(led.total * 100)


def test_conservation_to_the_cent_on_many_tenants_and_two_pools():
    rng = np.random.default_rng(7)
    rows = ["time,tenant,model,input_tokens,cached_input_tokens,output_tokens,requests"]
    for k in range(400):
        rows.append(f"2026-11-{1 + k % 28:02d}T00:00:00Z,t{k % 37},{'ab'[k % 2]},"
                    f"{rng.integers(0, 10**8)},{rng.integers(0, 10**7)},"
                    f"{rng.integers(0, 10**7)},1")
    data = fleet(reserved={"t3": {"share": 0.2}}, models=["a"])
    data["pools"].append({"name": "p2", "scenario": data["pools"][0]["scenario"],
                          "accelerators": 3, "models": ["b"]})
    for idle in calc.IDLE_RULES:
        led = chargeback(CTX, ChargebackRequest(
            data, read_usage_bytes("\n".join(rows).encode(), "u"), idle=idle))
        tenants = sum(led.tenant_cents(t) for t in led.tenants)
        assert tenants + led.idle_cents == round(led.total * 100) == (2 + 3) * 720 * 2 * 100
        for line in led.lines:
            assert sum(c for _, c in line.parts.values()) == line.cents


def test_largest_remainder_by_hand():
    # 1/3 each of 1.00: 33.33 cents each, the cent left to the first (ties: the earlier)
    assert largest_remainder([1 / 3] * 3, 1.0).tolist() == [34, 33, 33]
    # 0.664 -> 66.4 cents, 0.336 -> 33.6: the larger remainder (0.6) gets the cent
    assert largest_remainder([0.664, 0.336], 1.0).tolist() == [66, 34]


def test_the_period():
    p = parse_period("2026-11")
    assert p.hours == 720 and p.iso("start") == "2026-11-01T00:00:00Z"
    assert parse_period("2026-12").iso("end") == "2027-01-01T00:00:00Z"
    assert parse_period("2026-11-01..2026-11-15").hours == 15 * 24
    with pytest.raises(InputError, match="ends before it starts"):
        parse_period("2026-11-15..2026-11-01")
    with pytest.raises(InputError, match="a month"):
        parse_period("November")


def test_an_empty_period_a_missing_key_and_a_model_no_pool_serves_are_clear_answers():
    with pytest.raises(InputError) as e:
        chargeback(CTX, ChargebackRequest(fleet(), read_usage_bytes(TWO_TENANTS.encode(), "u"),
                                          period="2027-01"))
    assert e.value.errors[0][0] == "period" and "no usage record starts in 2027-01" in \
        e.value.errors[0][1]
    with pytest.raises(InputError) as e:
        chargeback(CTX, ChargebackRequest(fleet(), read_usage_bytes(TWO_TENANTS.encode(), "u"),
                                          by="team"))
    assert e.value.errors[0] == ("by", "no record has the tenant key 'team' (the records' "
                                       "columns: model, tenant)")
    with pytest.raises(InputError) as e:
        ledger(TWO_TENANTS, models=["other"])
    assert e.value.errors[0] == ("models", "no pool serves the model(s) m: add them to a "
                                           "pool's models")
    with pytest.raises(InputError) as e:
        ledger(TWO_TENANTS, reserved={"R": {"share": 0.7}, "S": {"share": 0.5}})
    assert e.value.errors[0][0] == "fleet.pools[0].reserved"


def test_a_bad_row_is_refused_with_file_line_and_column():
    from costmodel.sources.usage import UsageError
    bad = TWO_TENANTS.replace("2000000000,0,0,5", "2000000000,0,lots,5")
    with pytest.raises(UsageError) as e:
        read_usage_bytes(bad.encode(), "u.csv")
    assert (e.value.file, e.value.line, e.value.column) == ("u.csv", 3, "output_tokens")
