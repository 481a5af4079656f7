"""pint's unit definitions are parsed once per machine and kept in the user's cache folder
(``costmodel.resources.cached_build``; issue 37: the registry was 0.5 s of every command's
start). A cache folder that cannot be written, is damaged or is being written by another process
at the same moment costs time, never a wrong unit or a failure.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from costmodel.model.units import build_registry
from costmodel.resources import CACHE_ENV, cached_build

ROOT = Path(__file__).resolve().parents[1]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.iterdir())}


def _month_in_hours(registry) -> float:
    """pint's default registry: a month is 1/12 of a Julian year (costmodel redefines it)."""
    return registry.Quantity(1, "month").to("hour").magnitude


JULIAN_MONTH_H = 365.25 * 24 / 12  # 730.5 h


def test_the_first_run_fills_the_cache_and_the_next_reads_it(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    seen = []

    def build(folder):
        seen.append(folder)
        return build_registry(folder)

    first = cached_build("pint-test", build)
    folder = tmp_path / "pint-test"
    assert folder.is_dir() and any(p.suffix == ".pickle" for p in folder.iterdir())
    # built in a private folder, renamed into place whole: no other folder is left
    assert [p.name for p in tmp_path.iterdir()] == ["pint-test"]
    assert seen[0] != folder and seen[0].parent == tmp_path
    before = _snapshot(folder)
    second = cached_build("pint-test", build)
    assert seen[1] == folder
    assert _snapshot(folder) == before  # a complete cache is only read (read-only is fine)
    assert _month_in_hours(first) == _month_in_hours(second) == pytest.approx(JULIAN_MONTH_H)
    for unit, base in (("kWh", "J"), ("MW", "W"), ("GiB", "byte"), ("week", "s"),
                       ("percent", "dimensionless"), ("kg", "g")):
        assert first.Quantity(1, unit).to(base).magnitude == \
            second.Quantity(1, unit).to(base).magnitude
    assert second.Quantity(1, "kWh").to("J").magnitude == 3.6e6


def test_no_cache_folder_means_no_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "")
    assert cached_build("pint-test", lambda folder: folder) is None


def test_a_cache_folder_that_cannot_be_made_builds_without_one(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    registry = cached_build("pint-test", build_registry)
    assert _month_in_hours(registry) == pytest.approx(JULIAN_MONTH_H)


def test_a_damaged_cache_builds_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    cached_build("pint-test", build_registry)
    for p in (tmp_path / "pint-test").glob("*.pickle"):
        p.write_bytes(p.read_bytes()[:100])  # truncated, as by a full disk
    folders = []

    def build(folder):
        folders.append(folder)
        return build_registry(folder)

    registry = cached_build("pint-test", build)
    assert folders == [tmp_path / "pint-test", None]  # tried, refused, built afresh
    assert _month_in_hours(registry) == pytest.approx(JULIAN_MONTH_H)


# A process's units, as one line: costmodel's month in hours, then units of each kind (pint's
# own, prefixed, costmodel's redefined bit and its own dimensions) in their root units.
# (Not the count of pint's unit table: a registry that parsed its definitions afresh holds a
# few prefixed units more, made while it derived the others; one read from the cache makes
# them on first use.)
UNITS = ("kWh", "MW", "GiB", "week", "percent", "kilometer", "microgram", "decitex",
         "USD/kWh", "gCO2e/kWh", "Mtok/h")
SCRIPT = ("from costmodel.model.units import ureg\n"
          "print(ureg.Quantity(1, 'month').to('hour').magnitude, '; '.join("
          f"f'{{u}}={{ureg.Quantity(1, u).to_base_units():~}}' for u in {UNITS!r}))")


def _units_of(env: dict) -> str:
    done = subprocess.run([sys.executable, "-c", SCRIPT], env={**os.environ, **env,
                          "PYTHONPATH": str(ROOT)}, text=True, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_registry_parsed_afresh_has_the_units_of_one_read_from_the_cache(tmp_path):
    """No cache folder, the first run filling one, and a run reading it: the same units (a
    registry parsed afresh once kept byte as 8 dimensionless bits, refusing "1 GiB" in bits)."""
    none = _units_of({CACHE_ENV: ""})
    first = _units_of({CACHE_ENV: str(tmp_path)})
    assert [p.name[:5] for p in tmp_path.iterdir()] == ["pint-"]  # the cache, filled
    again = _units_of({CACHE_ENV: str(tmp_path)})
    assert none == first == again
    month, shown = none.split(" ", 1)
    assert month == "730.0"  # 8,760 h / 12
    shown = dict(pair.split("=") for pair in shown.strip().split("; "))
    assert list(shown) == list(UNITS)
    assert shown["GiB"] == "8589934592 bit" and shown["kilometer"] == "1000.0 m"
    assert shown["kWh"] == "3600000.0 kg * m ** 2 / s ** 2"


def test_processes_starting_together_on_an_empty_cache(tmp_path):
    env = {**os.environ, CACHE_ENV: str(tmp_path), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(4)]
    answers = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in answers]
    # costmodel's month: 8,760 h / 12; the same units in every process (whether it read the
    # cache another had just written or parsed them itself)
    assert len({out for out, _ in answers}) == 1
    assert answers[0][0].split()[0] == "730.0"
    # one complete cache, no private folder left behind
    assert len([p for p in tmp_path.iterdir()]) == 1
    assert next(tmp_path.iterdir()).name.startswith("pint-")


# -- the declaration's unit check and the parsed catalog, remembered the same way ------------

def _count_checks(monkeypatch):
    from costmodel.model.declaration import Declaration
    calls = []
    real = Declaration.check_units

    def counted(self):
        calls.append(sorted(self.steps))
        return real(self)

    monkeypatch.setattr(Declaration, "check_units", counted)
    return calls


def _declare(expression):
    from costmodel.model.declaration import Constant, Declaration, Input, Step
    return Declaration([Input("power", "W", "", "power"), Input("price", "USD/kWh", "", "price")],
                       [], [Constant("watts_per_kilowatt", 1000.0, "W/kW", "")],
                       [Step("cost", "USD/h", expression, "")])


def test_a_declaration_that_passed_is_not_checked_again(tmp_path, monkeypatch):
    from costmodel.model.declaration import DeclarationError
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    calls = _count_checks(monkeypatch)
    _declare("power * price / watts_per_kilowatt")
    _declare("power * price / watts_per_kilowatt")
    assert len(calls) == 1  # the second, the very same declaration, found the marker
    assert len(list(tmp_path.glob("units-checked-*/passed"))) == 1
    _declare("price * power / watts_per_kilowatt")  # another text: checked
    assert len(calls) == 2
    for _ in range(2):  # a failing declaration fails every time and leaves no marker
        with pytest.raises(DeclarationError, match=r"hidden factor 0\.001"):
            _declare("power * price")
    assert len(list(tmp_path.glob("units-checked-*"))) == 2


def test_the_unit_check_runs_every_time_without_a_cache(monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "")
    calls = _count_checks(monkeypatch)
    _declare("power * price / watts_per_kilowatt")
    _declare("power * price / watts_per_kilowatt")
    assert len(calls) == 2


def test_the_catalog_is_read_again_when_a_file_changes(tmp_path, monkeypatch):
    from costmodel.sources.catalog import Catalog
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    catalog = tmp_path / "fixtures" / "catalog"
    catalog.mkdir(parents=True)
    price = catalog / "electricity.toml"
    price.write_text('[site]\nprice = { value = 0.05, unit = "USD/kWh", source = "a" }\n')
    assert Catalog.load(tmp_path / "fixtures").get("electricity", "site", "x").data == \
        {"price": {"value": 0.05, "unit": "USD/kWh"}}
    kept = list((tmp_path / "cache").glob("catalog-*/catalog.pickle"))
    assert len(kept) == 1
    again = Catalog.load(tmp_path / "fixtures").get("electricity", "site", "x")
    assert again.provenance == {"price": "a"}
    price.write_text('[site]\nprice = { value = 0.07, unit = "USD/kWh", source = "b" }\n')
    edited = Catalog.load(tmp_path / "fixtures").get("electricity", "site", "x")
    assert edited.data["price"]["value"] == 0.07 and edited.provenance == {"price": "b"}
    kept[0].write_bytes(b"\x80damaged")  # a damaged cache is read around, never trusted
    price.write_text('[site]\nprice = { value = 0.05, unit = "USD/kWh", source = "a" }\n')
    assert Catalog.load(tmp_path / "fixtures").get("electricity", "site", "x").data[
        "price"]["value"] == 0.05
    price.write_text('[site\n')  # a broken file is an error, cache or not
    with pytest.raises(Exception, match="line 1"):
        Catalog.load(tmp_path / "fixtures")


def test_older_caches_of_a_kind_are_pruned_when_a_new_one_is_made(tmp_path, monkeypatch):
    """One folder per upgrade or edited catalog would pile up: a new cache of a kind leaves
    the two most recent older ones (another venv's version) and removes the rest; other kinds
    and a private folder still being written are left alone, a dead one is removed."""
    import time

    from costmodel import resources
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    now = time.time()
    ages = {"catalog-aaa": 50, "catalog-bbb": 40, "catalog-ccc": 30, "catalog-ddd": 20,
            "units-checked-eee": 90, ".catalog-dead": 2 * 3600, ".catalog-busy": 5}
    for name, age in ages.items():
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (now - age, now - age))
    cached_build("catalog-new", lambda folder: None)  # no kind: nothing is pruned
    assert len(list(tmp_path.iterdir())) == len(ages) + 1
    built = cached_build("catalog-newer", lambda folder: folder, kind="catalog")
    assert built is not None and built.parent == tmp_path
    left = sorted(p.name for p in tmp_path.iterdir())
    # the new one, the two most recent others (catalog-new just now, ddd 20 s ago)
    assert left == [".catalog-busy", "catalog-ddd", "catalog-new", "catalog-newer",
                    "units-checked-eee"]
    assert resources.KEEP_OLDER == 2
    # reading a cache in place prunes nothing
    (tmp_path / "catalog-zzz").mkdir()
    os.utime(tmp_path / "catalog-zzz", (now - 999, now - 999))
    cached_build("catalog-newer", lambda folder: folder, kind="catalog")
    assert (tmp_path / "catalog-zzz").is_dir()
