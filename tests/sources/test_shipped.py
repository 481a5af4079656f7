"""The shipped example scenarios are listed once (sources/shipped.py) and every face names them
the same way: ``fixture:<path without .toml>``; a request names one by that name, never a path."""
from __future__ import annotations

import pytest

from costmodel.model.errors import InputError
from costmodel.resources import fixtures_dir
from costmodel.sources.shipped import shipped_scenario, shipped_scenarios


def test_every_toml_under_scenarios_is_listed_by_its_name():
    root = (fixtures_dir() / "scenarios").resolve()
    files = sorted(root.rglob("*.toml"))
    assert len(files) > 10
    assert shipped_scenarios() == {
        "fixture:" + p.relative_to(root).with_suffix("").as_posix(): p for p in files}
    assert shipped_scenario("fixture:sample-tco", "x") == root / "sample-tco.toml"
    assert "fixture:published/deepseek-r1_gb300_peak" in shipped_scenarios()


@pytest.mark.parametrize("name", ["fixture:../../etc/passwd", "fixture:", "sample-tco",
                                  "fixture:sample-tco.toml", "fixture:/etc/passwd",
                                  "fixture:published/../sample-tco", "fixture:" + "a" * 5000])
def test_anything_else_is_refused_at_its_field(name):
    with pytest.raises(InputError) as caught:
        shipped_scenario(name, "pools[0].scenario")
    (path, message), = caught.value.errors
    assert path == "pools[0].scenario" and message.startswith("no shipped scenario")
    assert len(message) < 200


def test_the_faces_list_the_same_names():
    from costmodel.api.chargeback import SHIPPED_NAMES
    from costmodel.web.pages import fixture_scenarios
    assert list(SHIPPED_NAMES) == list(fixture_scenarios()) == list(shipped_scenarios())
