"""Price requests built from a known scenario (costmodel.app.variants) answer exactly what
the ordinary path answers: the same bytes for every movable key changed (alone and
together, in every spelling), the same problem for a value that does not parse or a
scenario that fails a cross check, and every answer of a varied run, byte for byte."""
from __future__ import annotations

import random

import pytest

from costmodel.app.variants import MOVABLE, Variants, shape_of
from costmodel.server import create_app

BASE = {"name": "varied", "accelerator": {"name": "test", "rated_power": "1000 W",
                                          "price": "30000 USD", "memory_bandwidth": "8 TB/s",
                                          "hourly_price": "2.5 USD/h",
                                          "all_in_power": "1800 W", "measured_power": "900 W"},
        "operating_point": "deepseek-r1/gb300/peak",
        "node": {"accelerators": 8, "host_power": "1500 W", "psu_efficiency": 0.94,
                 "price": "40000 USD"},
        "rack": {"nodes": 4, "switch_power": "800 W", "other_power": "400 W",
                 "power_delivery_efficiency": "96 %", "price": "50000 USD"},
        "facility": {"pue": 1.3, "hosting": "150 USD/kW/month"},
        "financing": {"life": "5 year", "cost_of_capital": 0.1, "salvage": 0.1,
                      "maintenance": "3 %"},
        "electricity": {"price": "0.08 USD/kWh", "carbon_intensity": "380 gCO2e/kWh"},
        "pricing": {"gross_margin": 0.5, "output_weight": 4},
        "power": {"boundary": "facility"}, "utilisation": 0.7, "idle_power": 0.3}
# another value for each movable key, in another spelling where it has one
CHANGED = {"accelerator.price": "31000 USD", "accelerator.hourly_price": "3 USD/h",
           "accelerator.rated_power": "1.2 kW", "accelerator.measured_power": "950 W",
           "accelerator.memory_bandwidth": "7.5 TB/s", "accelerator.all_in_power": "1900 W",
           "node.accelerators": 4, "node.host_power": "1.6 kW", "node.psu_efficiency": "92 %",
           "node.price": "45000 USD", "rack.nodes": 2, "rack.switch_power": "900 W",
           "rack.other_power": "0.5 kW", "rack.power_delivery_efficiency": 0.95,
           "rack.price": "55000 USD", "facility.pue": "1.2", "facility.hosting": "120 USD/kW/month",
           "financing.life": "4 year", "financing.cost_of_capital": 0.08,
           "financing.salvage": "5 %", "financing.maintenance": 0.02,
           "electricity.price": "12 USD/MWh", "electricity.carbon_intensity": "200 gCO2e/kWh",
           "pricing.gross_margin": "40 %", "pricing.output_weight": 3,
           "utilisation": "55 %", "idle_power": 0.25}


# a third value of each key
AGAIN = {"accelerator.price": "32000 USD", "accelerator.hourly_price": "2.75 USD/h",
         "accelerator.rated_power": "1100 W", "accelerator.measured_power": "960 W",
         "accelerator.memory_bandwidth": "7.6 TB/s", "accelerator.all_in_power": "1.95 kW",
         "node.accelerators": 2, "node.host_power": "1700 W", "node.psu_efficiency": "93 %",
         "node.price": "46000 USD", "rack.nodes": 3, "rack.switch_power": "1 kW",
         "rack.other_power": "600 W", "rack.power_delivery_efficiency": "94 %",
         "rack.price": "66000 USD", "facility.pue": 1.25, "facility.hosting": "130 USD/kW/month",
         "financing.life": "6 year", "financing.cost_of_capital": "7 %",
         "financing.salvage": 0.06, "financing.maintenance": "2.5 %",
         "electricity.price": "0.11 USD/kWh", "electricity.carbon_intensity": "0.3 kgCO2e/kWh",
         "pricing.gross_margin": 0.35, "pricing.output_weight": "5",
         "utilisation": 0.45, "idle_power": "20 %"}


def with_values(changes: dict) -> dict:
    scenario = {k: dict(v) if isinstance(v, dict) else v for k, v in BASE.items()}
    for key, value in changes.items():
        section, _, name = key.rpartition(".")
        (scenario[section] if section else scenario)[name] = value
    return scenario


@pytest.fixture(scope="module")
def apps(database):
    """The service, and one that prices every request the ordinary way."""
    fast = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    ordinary = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})

    class Ordinary:
        built = 0

        def price(self, scenario, catalog, ordinary, *, sources, answer):
            return ordinary()
    ordinary.extensions["costmodel"].variants = Ordinary()
    yield fast.test_client(), ordinary.test_client(), fast.extensions["costmodel"].variants
    for a in (fast, ordinary):
        a.extensions["costmodel"].dispose()


def both(apps, scenario: dict, view: str = "summary"):
    fast, ordinary, _ = apps
    url = "/api/v1/price" + ("?view=summary" if view == "summary" else "")
    # one request id for both, so a refusal's body (which carries it) is the same body
    same = {"X-Request-ID": "variants-vs-ordinary"}
    a = fast.post(url, json={"scenario": scenario}, headers=same)
    b = ordinary.post(url, json={"scenario": scenario}, headers=same)
    return a, b


def test_every_movable_key_is_given_and_changed_here():
    assert set(CHANGED) == MOVABLE
    assert shape_of(BASE)[1].keys() == MOVABLE


@pytest.mark.parametrize("view", ["summary", "full"])
def test_each_key_changed_alone_answers_as_priced_in_full(apps, view):
    variants = apps[2]
    a, b = both(apps, BASE, view)  # the known scenario
    assert a.status_code == b.status_code == 200
    for key in CHANGED:
        # the first value is compared once (priced both ways), the second is built
        for value, built in ((CHANGED[key], 0), (AGAIN[key], 1)):
            before = variants.built
            a, b = both(apps, with_values({key: value}), view)
            assert a.status_code == b.status_code == 200, (key, a.json)
            assert a.data == b.data, key
            assert a.headers["ETag"] == b.headers["ETag"]
            assert variants.built == before + built, key


def test_a_varied_run_answers_byte_for_byte(apps):
    """Many keys at once, random values: the answers of a pricing tool's loop."""
    rng = random.Random(5)
    variants = apps[2]
    # the known scenario, whether or not a test before this one priced it
    a, b = both(apps, BASE)
    assert a.status_code == b.status_code == 200 and a.data == b.data
    before = variants.built
    for _ in range(60):
        changes = {"electricity.price": f"{rng.uniform(0.01, 0.3):.6f} USD/kWh",
                   "utilisation": round(rng.uniform(0.2, 1.0), 4),
                   "facility.pue": round(rng.uniform(1.05, 1.6), 3),
                   "accelerator.price": f"{rng.randint(20000, 60000)} USD",
                   "financing.life": f"{rng.choice([3, 4, 6, 7])} year"}  # never 5
        a, b = both(apps, with_values(changes))
        assert a.status_code == b.status_code == 200
        assert a.data == b.data
    assert variants.built - before == 59  # all but the first, compared once


@pytest.mark.parametrize("key, value", [
    ("electricity.price", "-1 USD/kWh"), ("electricity.price", "0.1 W"),
    ("electricity.price", True), ("utilisation", 0), ("utilisation", "120 %"),
    ("node.accelerators", "8"), ("node.accelerators", 0), ("node.accelerators", 2.0),
    ("facility.pue", 0.9), ("pricing.gross_margin", 1), ("financing.life", "5 W"),
    ("electricity.price", "1e400 USD/kWh"), ("accelerator.price", "1e300 USD"),
])
def test_a_value_refused_is_the_ordinary_refusal(apps, key, value):
    both(apps, BASE)
    both(apps, with_values({key: CHANGED[key]}))  # the keys' first, compared
    a, b = both(apps, with_values({key: value}))
    assert a.status_code == b.status_code
    assert a.status_code in (200, 422)
    assert a.data == b.data


def test_a_cross_check_failed_is_the_ordinary_refusal(apps):
    """A load shape whose mean is the utilisation; a changed utilisation contradicts it."""
    shaped = with_values({"utilisation": 0.5})
    shaped["load"] = {"hourly": [0.5] * 24}
    a, b = both(apps, shaped)
    assert a.status_code == b.status_code == 200
    for u in (0.5, 0.6, 0.6):
        a, b = both(apps, {**shaped, "utilisation": u})
        assert a.status_code == b.status_code
        assert a.data == b.data
    assert a.status_code == 422
    assert "utilisation" in a.json["detail"]


def test_keys_whose_answers_differed_are_priced_in_full_ever_after():
    """The once-only comparison: an answer that differs marks its keys."""
    from costmodel import app
    from costmodel.app import InlineScenario, ScenarioSpec
    from costmodel.app.context import LocalContext

    ctx = LocalContext()
    variants = Variants()
    calls = []

    def ordinary_of(scenario):
        def ordinary():
            calls.append(1)
            return app.price(ctx, ScenarioSpec(InlineScenario(scenario)), sources=False)
        return ordinary
    count = iter(range(10**6))
    rendered = []

    def answer(priced):
        rendered.append(1)
        return next(count)  # never equal
    for price in ("0.08", "0.09", "0.10", "0.11"):
        scenario = with_values({"electricity.price": f"{price} USD/kWh"})
        variants.price(scenario, "m", ordinary_of(scenario), sources=False, answer=answer)
    assert variants.built == 0
    assert len(calls) == 4  # every request priced the ordinary way
    assert len(rendered) == 2  # compared once (the second request), never again


def test_what_is_not_built_from_another():
    assert shape_of({"money": {"currency": "USD"}, "utilisation": 0.5}) is None
    assert shape_of({"accelerator": "gb300", "operating_point": "x"}) is None  # nothing moves
    catalog_table = {"electricity": {"catalog": "us-tx", "price": "0.05 USD/kWh"}}
    assert shape_of(catalog_table) is None
    _, values = shape_of({"electricity": {"price": {"value": 0.1, "unit": "USD/kWh",
                                                    "source": "a bill"}},
                          "utilisation": 0.5})
    assert values == {"utilisation": 0.5}  # a cited table is part of the shape
    _, values = shape_of({"electricity": {"price": {"value": 0.1, "unit": "USD/kWh"}}})
    assert values == {"electricity.price": {"value": 0.1, "unit": "USD/kWh"}}


@pytest.mark.parametrize("value", [
    {"value": 0.09, "unit": "USD/kWh"}, {"value": 90, "unit": "USD/MWh"},
    {"value": 1, "unit": "USD/kWh"}, {"value": 1.0, "unit": "USD/kWh"},
    {"value": True, "unit": "USD/kWh"}, {"value": 0.1, "unit": "W"},
    {"value": -0.1, "unit": "USD/kWh"}, {"value": 0.1, "unit": "USD/kWh", "note": "x"},
    "0.09 USD/kWh", 0.09,
])
def test_a_value_unit_table_answers_as_priced_in_full(apps, value):
    """The API's structured quantity moves too, type for type (1, 1.0 and True differ)."""
    known = with_values({"electricity.price": {"value": 0.08, "unit": "USD/kWh"}})
    both(apps, known)
    both(apps, with_values({"electricity.price": {"value": 0.07, "unit": "USD/kWh"}}))
    before = apps[2].built
    a, b = both(apps, with_values({"electricity.price": value}))
    assert a.status_code == b.status_code
    assert a.data == b.data
    cited = isinstance(value, dict) and "note" in value  # another shape: priced in full
    assert apps[2].built == before + (a.status_code == 200 and not cited)
