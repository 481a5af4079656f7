"""One door into the engine (issue 39): the declared calculation runs, for every use case and
every face, through ``costmodel.app.engine``; the hourly profile is evaluated by one function
(``costmodel.model.profile.hourly_profile``) for the what-if, the price page and the Tariff
sheet; a price answer is serialised once, and ``?fields`` selects on its data."""
from __future__ import annotations

import ast
from pathlib import Path

import orjson

import costmodel
from costmodel import app
from costmodel.app.build import build_scenario
from costmodel.model.profile import hourly_profile

PACKAGE = Path(costmodel.__file__).resolve().parent
# the modules that run the calculation: the model's own, the decisions on top of it (their
# own declarations: sensitivity, profit, tasks), and the app's one door
ENGINE = {"model", "decisions"}
DOOR = "app/engine.py"
RUNS = {"costmodel.model.chain", "costmodel.model.evaluate"}


def _imports(path: Path) -> set[str]:
    """Absolute modules ``path`` imports (relative ones resolved), anywhere in it."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = parts[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_only_the_door_runs_the_calculation_above_the_core():
    """Outside the model and the decisions, only app/engine.py imports the chain or the
    evaluator: batch rows, decisions, reprice, the what-if, the price page and the Tariff
    sheet price through it (or through hourly_profile)."""
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in ENGINE or rel == DOOR:
            continue
        found = _imports(path) & RUNS
        if found:
            bad.append(f"{rel}: {sorted(found)}")
    assert bad == []


def test_the_scan_sees_the_door():
    """Not vacuous: the door itself is found importing both."""
    assert RUNS <= _imports(PACKAGE / DOOR)


TARIFF = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
          "electricity": {"tariff": {"hourly": ["0.20 USD/kWh"] * 8 + ["0.05 USD/kWh"] * 16,
                                     "weekend": ["0.05 USD/kWh"] * 24}},
          "load": {"hourly": [0.5] * 24}}


def test_the_hourly_profile_is_the_tariff_and_the_load_by_hour():
    scenario = build_scenario(TARIFF).scenario
    profile = hourly_profile(scenario)
    assert (profile.months, profile.hours, profile.periods) == (1, 48, 1)
    # a weekday's hours, then a weekend day's: the rates as given, scale 1 and shift 0
    rate = profile.by_hour("tariff_rate_by_hour")
    assert rate[:8] == [0.20] * 8 and rate[8:24] == [0.05] * 16 and rate[24:] == [0.05] * 24
    assert profile.values["load_by_hour"][0].tolist() == [0.5] * 48
    # every block at its whole shape (the Tariff sheet writes them as they are)
    assert profile.values["electricity_tariff_rates"].shape == (1, 48)
    assert profile.values["hour_weight"][0, 0] == 5 / 7 / 24


def test_a_flat_price_has_no_rate_by_hour_and_no_profile_without_a_shape():
    flat = build_scenario({**TARIFF, "electricity": {"price": "0.1 USD/kWh"}}).scenario
    assert hourly_profile(flat).by_hour("tariff_rate_by_hour") is None
    plain = build_scenario({k: v for k, v in TARIFF.items() if k not in ("electricity", "load")})
    assert hourly_profile(plain.scenario) is None


def test_the_what_if_moves_the_load_the_profile_gives():
    """Half of a weekday's 12 serving hours (0.5 of each of 24) moves to its cheapest hours,
    earliest first, each filled up to a whole hour: 0.25 stays in every hour, and the 6
    hours moved fill 08:00-16:00 (8 x 0.75)."""
    priced = app.price(app.LocalContext(), app.ScenarioSpec(app.InlineScenario(TARIFF)))
    hourly = app.shift_flexible(priced, 0.5).after.scenario.load.hourly
    assert hourly == [0.25] * 8 + [1.0] * 8 + [0.25] * 8


class _Calls:
    def __init__(self):
        self.n = 0

    def __call__(self, content: bytes) -> str:
        self.n += 1
        return f"etag-{len(content)}"


def test_an_answer_is_serialised_once_and_selected_on_its_data(monkeypatch):
    digest = _Calls()
    pricer = app.Pricer(digest, cache_size=4)
    spec = app.ScenarioSpec(app.InlineScenario(TARIFF))
    dumped = []
    real = orjson.dumps
    monkeypatch.setattr(orjson, "dumps", lambda data, *a: dumped.append(1) or real(data, *a))
    answer = pricer.answer("k", app.LocalContext(), spec, view="summary")
    picked = answer.selected(lambda d: {"cost_per_mtok": d["cost_per_mtok"]})
    assert dumped == [1]  # the selection only: the whole answer was not serialised
    assert orjson.loads(picked) == {"cost_per_mtok": answer.data["cost_per_mtok"]}
    again = pricer.answer("k", app.LocalContext(), spec, view="summary")
    assert again is answer  # from the cache
    content = answer.content
    assert answer.content is content and len(dumped) == 2  # serialised once, then kept
    assert orjson.loads(content) == answer.data
    assert answer.etag == f"etag-{len(content)}" and answer.etag and digest.n == 1
