"""Hand-derived chargeback cases, shared by the tests of every face.

The pool: 2 rented accelerators at 2 USD an accelerator-hour (no energy, no hosting: the cost
is the rent alone), 1,000 mixed token/s each at ISL = OSL = 1,000 and output_weight 3, so an
accelerator serves 1,000 x 3,600 x (1,000 + 3 x 1,000) / 2,000 = 7.2e6 input-token
equivalents an hour. November 2026 is 720 h: the pool costs 2 x 720 x 2 = 2,880 USD and can
serve 2 x 720 x 7.2e6 = 1.0368e10 equivalents, so usage pays 2,880 / 1.0368e10 = 1 / 3.6e6
USD an equivalent.
"""
from __future__ import annotations

from pathlib import Path

HAND_SCENARIO = {
    "name": "hand", "utilisation": 0.5, "idle_power": 0.3,
    "accelerator": {"rated_power": "1000 W", "hourly_price": "2 USD/h"},
    "operating_point": {"throughput": "1000 token/s", "token_kind": "mixed"},
    "workload": {"isl": 1000, "osl": 1000},
    "electricity": {"price": "0 USD/kWh"},
    "facility": {"hosting": "0 USD/kW/month"},
    "pricing": {"output_weight": 3},
}
HEADER = "time,tenant,model,input_tokens,cached_input_tokens,output_tokens,requests\n"

# two tenants: A 1e9 input + 1e9 output = 4e9 equivalents (1,111.11 USD of usage), B 2e9
# input = 2e9 (555.56); idle 2,880 - 1,666.67 = 1,213.33. Shared by usage (2:1): A 1,920.00,
# B 960.00; evenly: A 1,111.11 + 606.67 = 1,717.78, B 1,162.22 (largest remainder: A's
# 171,777.78 cents has the larger remainder of the two, so A gets the cent left)
TWO_TENANTS = HEADER + (
    "2026-11-03T10:00:00Z,A,m,1000000000,0,1000000000,10\n"
    "2026-11-04T10:00:00Z,B,m,2000000000,0,0,5\n"
    "2026-12-01T00:00:00Z,B,m,5,0,0,1\n")  # December: outside the period
TWO_TENANTS_CENTS = {
    "separate": {"A": 111111, "B": 55556, "idle": 121333},
    "usage": {"A": 192000, "B": 96000, "idle": 0},
    "even": {"A": 171778, "B": 116222, "idle": 0},
}

# R reserves half the pool and uses nothing: it pays 1,440.00; the other half (1,440 USD,
# 5.184e9 equivalents) is usage at the same rate: A 1.8e9 equivalents 500.00, B 0.72e9 200.00,
# idle 1,440 - 700 = 740.00
RESERVED = HEADER + ("2026-11-03T10:00:00Z,A,m,1800000000,0,0,1\n"
                     "2026-11-04T10:00:00Z,B,m,720000000,0,0,1\n")
RESERVED_CENTS = {"R": 144000, "A": 50000, "B": 20000, "idle": 74000}

# cached_weight 0.25: A's 1e9 new + 2e9 cached input are 1e9 + 0.25 x 2e9 = 1.5e9
# equivalents, 416.666... USD; B's 0.9e9 input 250.00; idle 2,213.333...: A's remainder
# (0.667 of a cent) is the largest, so A has 416.67, the idle line 2,213.33
CACHED = HEADER + ("2026-11-03T10:00:00Z,A,m,1000000000,2000000000,0,1\n"
                   "2026-11-04T10:00:00Z,B,m,900000000,0,0,1\n")
CACHED_CENTS = {"A": 41667, "B": 25000, "idle": 221333}


def fleet(reserved: dict | None = None, cached_weight: float = 1.0, **pool) -> dict:
    """The hand fleet: one pool of 2 accelerators, November 2026."""
    return {"name": "hand fleet", "period": "2026-11", "cached_weight": cached_weight,
            "pools": [{"name": "p1", "scenario": HAND_SCENARIO, "accelerators": 2,
                       **({"reserved": reserved} if reserved else {}), **pool}]}


def fleet_toml(path: Path, reserved_share: float | None = None,
               cached_weight: float = 1.0) -> Path:
    """The hand fleet as files: the scenario beside the fleet file."""
    import json
    (path / "hand.json").write_text(json.dumps(HAND_SCENARIO))
    text = (f'name = "hand fleet"\nperiod = "2026-11"\ncached_weight = {cached_weight}\n'
            f'[[pools]]\nname = "p1"\nscenario = "hand.json"\naccelerators = 2\n')
    if reserved_share is not None:
        text += f"reserved = {{ R = {{ share = {reserved_share} }} }}\n"
    out = path / "fleet.toml"
    out.write_text(text)
    return out


def cents_of(answer: dict) -> dict:
    """{tenant: cents, "idle": the idle line's cents} of a JSON answer."""
    return {**{t["tenant"]: t["charge"]["cents"] for t in answer["tenants"]},
            "idle": answer["idle_line"]["cents"]}


# The hand pool with a grid factor and a footprint (tests/decisions/test_chargeback_emissions.py,
# the Chargeback page's test): A uses 4e9 equivalents, B 2e9, of the pool's 1.0368e10: measured
# utilisation 0.5787; the chip draws 1000 W x (u + (1 - u) x 0.3) = 705.09 W, 352.55 g an hour
# at 500 g/kWh, and the footprint adds 2e6 g / (5 x 8760 h) = 45.66 g an hour; 2 accelerators
# x 720 h
EMISSIONS_SCENARIO = {**HAND_SCENARIO,
                      "electricity": {"price": "0 USD/kWh", "carbon_intensity": "500 gCO2e/kWh"},
                      "accelerator": {**HAND_SCENARIO["accelerator"], "embodied": "2000 kgCO2e"}}
EMISSIONS_USED, EMISSIONS_CAPACITY = 6e9, 1.0368e10
EMISSIONS_U = EMISSIONS_USED / EMISSIONS_CAPACITY
EMISSIONS_PER_HOUR = 1000 * (EMISSIONS_U + (1 - EMISSIONS_U) * 0.3) / 1000 * 500 + 2e6 / (5 * 8760)
EMISSIONS_TOTAL_KG = 2 * 720 * EMISSIONS_PER_HOUR / 1000  # 573.4 kg
