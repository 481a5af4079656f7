"""Frames (costmodel.sources.frames): a scenario loaded from a frame met before is the
scenario the ordinary steps load, for every scenario of the fixtures and for changes of each
key outside its frame (the guard of what :func:`frame_names` says the steps read); a frame
whose steps touch a key it leaves out is never kept; the frames a worker keeps are bounded."""
from __future__ import annotations

from pathlib import Path

import pytest

from costmodel import app
from costmodel.app import InlineScenario, ScenarioSpec
from costmodel.app.context import LocalContext
from costmodel.model.errors import InputError
from costmodel.sources import frames as frames_module
from costmodel.sources.catalog import fixtures_dir
from costmodel.sources.frames import Frames, frame_names
from costmodel.sources.scenario_file import read_scenario_file

SCENARIOS = sorted((fixtures_dir() / "scenarios").rglob("*.toml"))


class ServiceLike(LocalContext):
    """The fixtures' catalog and curves, no files (as the service), and frames or not."""
    files_allowed = False
    override_label = "overrides"

    def __init__(self, frames: Frames | None):
        self.frames = frames


def loaded(ctx: ServiceLike, data: dict, sources: bool = True):
    """(scenario, provenance items, curve) or the errors."""
    try:
        x = app.load(ctx, ScenarioSpec(InlineScenario(data)), sources=sources)
    except InputError as exc:
        return ("refused", exc.errors)
    return (x.scenario, list(x.provenance.items()), x.curve)


def nudged(value):
    """``value`` with every number in it moved a little (whole numbers by one), quantities
    written as text too: another value of the same keys."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 0.93
    if isinstance(value, str):
        number, _, unit = value.partition(" ")
        try:
            return f"{float(number) * 0.93!r} {unit}".strip()
        except ValueError:
            return value
    if isinstance(value, dict):
        return {k: nudged(v) if k not in ("source", "note", "unit") else v
                for k, v in value.items()}
    if isinstance(value, list):
        return [nudged(v) for v in value]
    return value


def variants(data: dict) -> list[dict]:
    """The scenario with each key outside its frame changed, one at a time and all at once,
    and with each left out."""
    names = frame_names(data)
    if names is None:  # a money table: never framed
        return []
    free = [k for k in data if k not in names]
    out = [{**data, k: nudged(data[k])} for k in free]
    out.append({**data, **{k: nudged(data[k]) for k in free}})
    out.extend({n: v for n, v in data.items() if n != k} for k in free)
    return out


@pytest.mark.parametrize("sources", [True, False])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_fixture_and_its_changes_load_as_the_ordinary_steps_load(path: Path, sources):
    data = read_scenario_file(path)
    framed, ordinary = ServiceLike(Frames()), ServiceLike(None)
    assert loaded(framed, data, sources) == loaded(ordinary, data, sources)  # the frame, met
    for changed in variants(data):
        assert loaded(framed, changed, sources) == loaded(ordinary, changed, sources)
        assert loaded(framed, changed, sources) == loaded(ordinary, changed, sources)


def test_the_fixtures_are_assembled_from_their_frames():
    """The check above is about assembly: most of the fixtures' changes are assembled."""
    framed = ServiceLike(Frames())
    changes = 0
    for path in SCENARIOS:
        data = read_scenario_file(path)
        loaded(framed, data)
        for changed in variants(data)[:-1]:
            changes += 1
            loaded(framed, changed)
    assert changes >= 40
    assert framed.frames.assembled >= 0.4 * changes


def test_a_frame_whose_steps_touch_a_left_out_key_is_never_kept(monkeypatch):
    """Told (wrongly) that a published point's workload is free, or that a reference rate
    leaves electricity alone, the frames see it when they meet the frame, and load those
    scenarios the ordinary way ever after."""
    point = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
             "workload": {"isl": 2048}, "utilisation": 0.6}
    rate = {"accelerator": {"catalog": "gb300", "rate": "rental@2026-09"},
            "operating_point": "deepseek-r1/gb300/peak",
            "electricity": {"price": "0.05 USD/kWh"}, "utilisation": 0.6}
    real = frames_module.frame_names
    for data, wrong in ((point, "workload"), (rate, "electricity")):
        monkeypatch.setattr(frames_module, "frame_names", lambda d, w=wrong: real(d) - {w})
        framed, ordinary = ServiceLike(Frames()), ServiceLike(None)
        for u in (0.6, 0.7, 0.8):
            changed = {**data, "utilisation": u}
            assert loaded(framed, changed) == loaded(ordinary, changed)
        assert list(framed.frames._frames.values()) == [None]
        assert framed.frames.assembled == 0


def test_the_frames_kept_are_the_most_recent_few():
    frames = Frames(size=2)
    ctx = ServiceLike(frames)
    base = {"accelerator": "gb300", "utilisation": 0.5}
    for op in ("deepseek-r1/gb300/peak", "deepseek-r1/gb300/matched",
               "kimi-k2.5/gb300/peak"):
        loaded(ctx, {**base, "operating_point": op})
    assert len(frames._frames) == 2
    loaded(ctx, {**base, "operating_point": "kimi-k2.5/gb300/peak", "utilisation": 0.9})
    assert frames.assembled == 1
    loaded(ctx, {**base, "operating_point": "deepseek-r1/gb300/peak", "utilisation": 0.9})
    assert frames.assembled == 1  # forgotten: met again


@pytest.mark.parametrize("data, frame", [
    ({"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"},
     {"system", "reference_rate", "accelerator", "operating_point", "workload"}),
    ({"accelerator": {"name": "x"}, "operating_point": {"throughput": "10 token/s"},
      "electricity": {"price": "0.1 USD/kWh"}},
     {"system", "reference_rate"}),
    ({"accelerator": {"catalog": "gb300", "rate": "rental"},
      "operating_point": {"throughput": "1 token/s"}, "system": "gb300-nvl72"},
     {"system", "reference_rate", "accelerator", "electricity", "facility", "power", "node",
      "rack"}),
    ({"accelerator": {"name": "x"}, "operating_point": {"curve_id": "a/b"},
      "electricity": {"tariff": "x"}, "power": {"trace": "p.csv"}},
     {"system", "reference_rate", "accelerator", "operating_point", "workload",
      "electricity", "power"}),
])
def test_what_each_step_may_touch(data, frame):
    # electricity and accelerator named by reference, or not at all: in the frame
    assert frame_names(data) == frame | ({"electricity"} if "electricity" not in data else set())


def test_a_money_table_is_never_framed():
    assert frame_names({"money": {"currency": "EUR"}, "utilisation": 0.5}) is None
