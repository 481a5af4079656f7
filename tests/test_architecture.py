"""The core stays pure: importing it loads no web, database, workbook or command-line library,
and its source reads and writes no files and no environment.

The core is the model (``costmodel/model/``: units, the declaration and its evaluator, the
declared steps, inputs, profiles, reference rates, curves, power, results, the chain and the
typed errors), the decisions on top of it (``costmodel/decisions/``: quotes, demand, decision,
plan, sensitivity) and two renderings that are plain text (``render/display``, the display
rules, and ``render/report``, the terminal text). Everything that touches the outside is an
edge: ``sources/`` (files), ``render/workbook/`` (openpyxl), ``render/frontier_plot``
(matplotlib), ``render/onepage`` (PDF), ``store/`` (SQLAlchemy), ``app/`` (use cases over
sources and store), ``http/``, ``api/``, ``web/`` and ``server`` (Flask), ``cli/`` (click) and
``resources`` (package data). What each layer may import: tests/test_layering.py.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import costmodel

PACKAGE = Path(costmodel.__file__).resolve().parent

CORE = ["model.units", "model.declaration", "model.steps", "model.evaluate", "model.fused",
        "model.inputs",
        "model.curves", "model.power", "model.results", "model.rates", "model.chain",
        "model.errors", "model.profile", "model.calendar", "decisions.quotes", "decisions.demand",
        "decisions.decision", "decisions.decision_calculation", "decisions.plan",
        "decisions.sensitivity", "decisions.task", "decisions.task_calculation",
        "decisions.market", "decisions.profit", "decisions.chargeback",
        "decisions.chargeback_calculation",
        "render.display",
        "render.report"]
EDGE = ["sources", "store", "app", "http", "cli", "api", "web", "mcp", "server", "resources",
        "render.workbook", "render.frontier_plot", "render.onepage", "render.focus",
        "render.columnar"]
# packages whose modules are placed one by one (the model and the decisions are all core)
SPLIT = ("model", "decisions", "render")

# top-level import names of the libraries only an edge may load
EDGE_LIBRARIES = {"flask", "werkzeug", "sqlalchemy", "alembic", "psycopg", "openpyxl",
                  "defusedxml", "click", "matplotlib", "gunicorn", "mcp", "starlette",
                  "uvicorn"}

# calls that read or write files, or reach outside the process
IO_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "open", "iterdir", "glob",
              "rglob", "mkdir", "unlink", "touch"}
IO_FUNCTIONS = {"open", "print", "input"}
IO_MODULE_CALLS = {("tomllib", "load"), ("json", "load"), ("json", "dump"), ("pickle", "load"),
                   ("pickle", "dump"), ("os", "getenv"), ("np", "load"), ("np", "save"),
                   ("np", "loadtxt"), ("np", "savetxt"), ("np", "genfromtxt"),
                   ("np", "fromfile"), ("numpy", "load"), ("numpy", "save")}
IO_ATTRIBUTES = {("os", "environ"), ("sys", "stdin"), ("sys", "stdout"), ("sys", "stderr")}
IO_IMPORTS = {"pathlib", "shutil", "subprocess", "socket", "urllib", "http", "sqlite3",
              "tempfile", "glob"}


def _sources(name: str) -> list[Path]:
    """The source files of core module ``name`` (dotted below costmodel: a module or a
    package)."""
    folder = PACKAGE.joinpath(*name.split("."))
    if folder.is_dir() and (folder / "__init__.py").exists():
        return sorted(folder.rglob("*.py"))
    return [folder.with_suffix(".py")]


def _entries(folder: Path, prefix: str = "") -> set[str]:
    """The modules and packages directly in ``folder`` (dotted, after ``prefix``)."""
    return {prefix + (p.stem if p.suffix == ".py" else p.name) for p in folder.iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}


def test_every_module_is_core_or_edge():
    """A new module must be placed: core (pure, checked here) or edge."""
    found = _entries(PACKAGE) - set(SPLIT)
    for name in SPLIT:
        found |= _entries(PACKAGE / name, f"{name}.")
    assert found - set(CORE) - set(EDGE) == set(), "classify these in tests/test_architecture.py"
    assert set(CORE) <= found


def _edge_libraries_after_importing(names: list[str]) -> list[str]:
    """The edge libraries in ``sys.modules`` after a fresh interpreter imports ``names``."""
    script = ("import importlib, json, sys\n"
              "for name in sys.argv[1:]: importlib.import_module(name)\n"
              f"edge = {sorted(EDGE_LIBRARIES)!r}\n"
              "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(edge))))")
    proc = subprocess.run([sys.executable, "-c", script, *(f"costmodel.{n}" for n in names)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"importing {names} failed:\n{proc.stderr}"
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def loaded_by_core() -> dict[str, list[str]]:
    """For each core module, the edge libraries loaded by importing it: the whole core in one
    fresh interpreter, and only when that loads any, each module alone in its own, to name it."""
    if not _edge_libraries_after_importing(CORE):
        return {name: [] for name in CORE}
    return {name: _edge_libraries_after_importing([name]) for name in CORE}


@pytest.mark.parametrize("name", CORE)
def test_core_module_loads_no_edge_library(loaded_by_core, name):
    assert loaded_by_core[name] == [], \
        f"costmodel.{name} pulls in {loaded_by_core[name]}: the core must stay free of them"


def _io_calls(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in IO_FUNCTIONS:
                found.append(f"{where}: {f.id}(...)")
            elif isinstance(f, ast.Attribute):
                base = f.value.id if isinstance(f.value, ast.Name) else None
                if (base, f.attr) in IO_MODULE_CALLS:
                    found.append(f"{where}: {base}.{f.attr}(...)")
                elif f.attr in IO_METHODS:
                    found.append(f"{where}: .{f.attr}(...)")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and (node.value.id, node.attr) in IO_ATTRIBUTES:
            found.append(f"{where}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] in IO_IMPORTS | EDGE_LIBRARIES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in IO_IMPORTS | EDGE_LIBRARIES:
            found.append(f"{where}: from {node.module} import ...")
    return found


@pytest.mark.parametrize("name", CORE)
def test_core_module_source_does_no_io(name):
    problems = []
    for path in _sources(name):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        problems += [f"{path.relative_to(PACKAGE.parent)} {p}" for p in _io_calls(tree)]
    assert problems == [], "the core reads no files and no environment:\n" + "\n".join(problems)


def test_the_scan_sees_io():
    """The scan itself: each kind of call it must catch is caught."""
    src = ("import pathlib\nimport tomllib, os\nopen('f')\nPath('x').read_text()\n"
           "p.write_bytes(b'')\ntomllib.load(f)\nos.environ['X']\nprint(1)\n"
           "from flask import Flask\n")
    assert len(_io_calls(ast.parse(src))) == 8
    assert _io_calls(ast.parse("import math\nx = math.log(2)\nd.get('open')\n")) == []
