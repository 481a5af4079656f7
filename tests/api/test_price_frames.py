"""Price requests assembled from a frame met before (costmodel.sources.frames) answer
exactly what the ordinary steps answer: the same bytes for every key of the scenario's own
changed (alone and together, in every spelling, and keys added or left out), the same
problem for a value that does not validate or a scenario that fails a cross check, and every
answer of a varied run, byte for byte. The other service prices with no frames at all."""
from __future__ import annotations

import random

import pytest

from costmodel.server import create_app
from costmodel.sources.frames import frame_names

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
# another value for each key, in another spelling where it has one
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
    """The service, and one that loads every scenario the ordinary way (no frames)."""
    fast = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    ordinary = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    ordinary.extensions["costmodel"].frames = None
    yield fast.test_client(), ordinary.test_client(), fast.extensions["costmodel"].frames
    for a in (fast, ordinary):
        a.extensions["costmodel"].dispose()


def both(apps, scenario: dict, view: str = "summary"):
    fast, ordinary, _ = apps
    url = "/api/v1/price" + ("?view=summary" if view == "summary" else "")
    a = fast.post(url, json={"scenario": scenario})
    b = ordinary.post(url, json={"scenario": scenario})
    return a, b


def free(key: str) -> bool:
    """Whether ``key`` of BASE is outside its frame (BASE names a published point: the
    point, its workload and the accelerator are the frame's)."""
    return key.partition(".")[0] not in frame_names(BASE)


def test_the_frame_of_the_base():
    assert frame_names(BASE) == {"system", "reference_rate", "operating_point", "workload",
                                 "accelerator"}
    assert [k for k in CHANGED if not free(k)] == [k for k in CHANGED
                                                    if k.startswith("accelerator.")]


@pytest.mark.parametrize("view", ["summary", "full"])
def test_each_key_changed_alone_answers_as_loaded_in_full(apps, view):
    frames = apps[2]
    a, b = both(apps, BASE, view)  # the frame, met
    assert a.status_code == b.status_code == 200
    for key in CHANGED:
        for value in (CHANGED[key], AGAIN[key]):
            before = frames.assembled
            a, b = both(apps, with_values({key: value}), view)
            assert a.status_code == b.status_code == 200, (key, a.json)
            assert a.data == b.data, key
            assert a.headers["ETag"] == b.headers["ETag"]
            # an accelerator changed is another frame: loaded the ordinary way
            assert frames.assembled == before + free(key), key


@pytest.mark.parametrize("view", ["summary", "full"])
def test_keys_added_or_left_out_answer_as_loaded_in_full(apps, view):
    """A citation of the file's own, a key left to its default: the same frame; a key left
    out or added: another frame of the same content, met once."""
    frames = apps[2]
    sourced = with_values({"electricity.price": {"value": 0.07, "unit": "USD/kWh",
                                                 "source": "our PPA, 2026"}})
    no_idle = {k: v for k, v in BASE.items() if k != "idle_power"}
    no_pricing = {k: v for k, v in BASE.items() if k != "pricing"}
    with_date = with_values({"electricity.date": "2026-10"})
    for scenario, met in ((sourced, True), (no_idle, False), (no_pricing, False),
                          (with_date, True)):
        for turn, utilisation in enumerate((0.4, 0.5)):
            before = frames.assembled
            a, b = both(apps, {**scenario, "utilisation": utilisation}, view)
            assert a.status_code == b.status_code == 200, a.json
            assert a.data == b.data
            assert frames.assembled == before + (met or turn)  # met, then assembled
    for turn, share in enumerate((0.5, 0.6)):  # a load shape and its mean
        before = frames.assembled
        a, b = both(apps, {**BASE, "utilisation": share, "load": {"hourly": [share] * 24}},
                    view)
        assert a.status_code == b.status_code == 200, a.json
        assert a.data == b.data
        assert frames.assembled == before + turn
    a, b = both(apps, {**with_date, "utilisation": 0.45}, view)
    if view == "full":
        assert a.json["disclosure"]["sources"]["electricity.date"] == "request"
        assert a.json["disclosure"]["sources"]["electricity.price"] == "request"


def test_a_varied_run_answers_byte_for_byte(apps):
    """Many keys at once, random values: the answers of a pricing tool's loop."""
    rng = random.Random(5)
    frames = apps[2]
    before = frames.assembled
    for _ in range(60):
        changes = {"electricity.price": f"{rng.uniform(0.01, 0.3):.6f} USD/kWh",
                   "utilisation": round(rng.uniform(0.2, 1.0), 4),
                   "facility.pue": round(rng.uniform(1.05, 1.6), 3),
                   "financing.life": f"{rng.choice([3, 4, 6, 7])} year"}  # never 5
        a, b = both(apps, with_values(changes))
        assert a.status_code == b.status_code == 200
        assert a.data == b.data
    assert frames.assembled - before == 60  # the frame was met before


@pytest.mark.parametrize("key, value", [
    ("electricity.price", "-1 USD/kWh"), ("electricity.price", "0.1 W"),
    ("electricity.price", True), ("utilisation", 0), ("utilisation", "120 %"),
    ("node.accelerators", "8"), ("node.accelerators", 0), ("node.accelerators", 2.0),
    ("facility.pue", 0.9), ("pricing.gross_margin", 1), ("financing.life", "5 W"),
    ("electricity.price", "1e400 USD/kWh"), ("accelerator.price", "1e300 USD"),
    ("electricity.unknown", 1), ("facility.pue", {"value": 1.2, "unit": "W"}),
])
def test_a_value_refused_is_the_ordinary_refusal(apps, key, value):
    both(apps, BASE)
    both(apps, with_values({key: CHANGED.get(key, 1)}))
    a, b = both(apps, with_values({key: value}))
    assert a.status_code == b.status_code
    assert a.status_code == (200 if key == "accelerator.price" else 422)  # (a large capex)
    assert a.data == b.data


def test_an_unknown_key_or_a_bad_table_is_the_ordinary_refusal(apps):
    both(apps, BASE)
    for scenario in ({**BASE, "colour": "blue"}, {**BASE, "facility": [1, 2]},
                     {**BASE, "facility": "dc-1"}, {**BASE, "utilisation": None},
                     {**BASE, "financing": {"life": {"value": {"value": 1}}}}):
        for _ in range(2):
            a, b = both(apps, scenario)
            assert a.status_code == b.status_code == 422
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


def test_a_comparison_at_each_scenarios_own_point_answers_byte_for_byte(apps):
    """Compare loads through the frames too; a comparison with one scenario refused is the
    ordinary refusal (which error comes first)."""
    fast, ordinary, frames = apps
    other = with_values({"operating_point": "deepseek-r1/jalapeno/peak"})
    for u in (0.61, 0.62):
        before = frames.assembled
        body = {"scenarios": [{"scenario": {**BASE, "utilisation": u}},
                              {"scenario": {**other, "utilisation": u}}]}
        a = fast.post("/api/v1/compare", json=body)
        b = ordinary.post("/api/v1/compare", json=body)
        assert a.status_code == b.status_code == 200, a.json
        assert a.data == b.data
    assert frames.assembled >= before + 2
    body = {"scenarios": [{"scenario": {**BASE, "utilisation": 2}},
                          {"scenario": {**other, "operating_point": "no/such/point"}}]}
    a = fast.post("/api/v1/compare", json=body)
    b = ordinary.post("/api/v1/compare", json=body)
    assert a.status_code == b.status_code == 422
    assert a.data == b.data
