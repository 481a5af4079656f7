"""The command line loads what a command needs, when it runs (issue 37: ``--version`` took 2.4 s
and ``price FILE`` 2.1 s, 2.0 s of it importing). No timing here: which modules a command
leaves in ``sys.modules``; the seconds are bench/cli.py's.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from costmodel.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"

# run `costmodel ARGS...` in a fresh interpreter; print its output, then the modules it loaded
SCRIPT = """
import contextlib, io, json, sys
from costmodel.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        assert exc.code in (0, None), exc.code
print(json.dumps({"out": out.getvalue(), "modules": sorted(sys.modules)}))
"""

# what no command of the list below needs: the analyses' and curves' scipy, the workbooks,
# the plots and PDFs, the web and the database
HEAVY = ("scipy.interpolate", "scipy.stats", "scipy.optimize", "scipy.special", "openpyxl",
         "xlsxwriter", "matplotlib", "flask", "werkzeug", "sqlalchemy", "alembic", "gunicorn",
         "costmodel.app.analyses", "costmodel.decisions.sensitivity",
         "costmodel.render.workbook")


def run(*args: str) -> tuple[str, set[str]]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    return answer["out"], set(answer["modules"])


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_version_loads_click_alone():
    out, modules = run("--version")
    assert out == "costmodel, version 0.1.0\n"
    # not even the units (pint, numpy) or the application layer
    assert loaded(modules, (*HEAVY, "scipy", "numpy", "pint", "pydantic",
                            "costmodel.model", "costmodel.app")) == []


def test_price_loads_pricing_alone():
    out, modules = run("price", str(SAMPLE))
    assert "=> Cost per million tokens                0.0680  USD per million tokens" in out
    assert loaded(modules, HEAVY) == []
    # a scenario that names no curve and no power trace reads neither (nor their readers)
    assert loaded(modules, ("costmodel.sources.curve_files", "costmodel.sources.power_log",
                            "costmodel.model.power")) == []
    assert "costmodel.app.pricing" in modules  # not vacuous: it did price through the app


def test_a_curve_scenario_still_reads_its_curve():
    out, modules = run("price", str(ROOT / "fixtures" / "scenarios"
                                    / "curve-gpt-oss-120b-h100.toml"))
    assert "costmodel.sources.curve_files" in modules
    assert "=> Cost per million tokens" in out


def test_every_command_is_found_under_its_name():
    assert sorted(COMMANDS) == main.list_commands(click.Context(main))
    for name in COMMANDS:
        command = main.get_command(click.Context(main), name)
        assert isinstance(command, click.Command) and command.name == name


@pytest.mark.parametrize("name", ["profit", "reprice", "load"])
def test_a_use_case_named_like_its_module_stays_the_use_case(name):
    # the import system binds app/profit.py to `app.profit` when it is first imported
    script = (f"import costmodel.app.{name}; from costmodel import app; "
              f"print(callable(app.{name}) and not isinstance(app.{name}, type(app)))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.stdout.strip() == "True", proc.stderr
