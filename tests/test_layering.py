"""The faces (CLI, API, web pages) orchestrate nothing themselves: every use case is the application
layer's (costmodel.app), so a third face cannot become a third copy.

A face may parse (quantities, quote and curve files, the sensitivity mini-language) and
render (tables, JSON); it may not price, compare, read curves, rank quotes, run analyses or
build workbooks by calling the core or the scenario loader directly.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "costmodel"
FACES = sorted([PACKAGE / "cli.py", *(PACKAGE / "commands").glob("*.py"),
                *(PACKAGE / "api").glob("*.py"), *(PACKAGE / "web").glob("*.py")])

# module -> names a face must not import from it ("*" = nothing at all)
ORCHESTRATION = {
    "costmodel.model.chain": "*",
    "costmodel.sources.scenario_file": "*",
    "costmodel.render.workbook.export": "*",
    "costmodel.model.curves": {"select", "matched_interactivity"},
    "costmodel.decisions.quotes": {"compare_quote", "rank", "term_table", "months_until",
    "quote_start",
                         "quote_interactivity"},
    "costmodel.decisions.sensitivity": {"tornado", "grid", "monte_carlo", "sample_inputs"},
}


def _package(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])


def _imports(path: Path, package: str | None = None) -> list[tuple[str, str]]:
    """(absolute module, name) for every import in a face module of ``package``."""
    package = package or _package(path)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out += [(module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, "*") for a in node.names]
    return out


def test_faces_are_found():
    names = {p.name for p in FACES}
    assert {"cli.py", "routes.py", "services.py", "sensitivity.py"} <= names


def _orchestration(imports: list[tuple[str, str]]) -> list[str]:
    bad = []
    for module, name in imports:
        for forbidden, names in ORCHESTRATION.items():
            whole = module == forbidden or module.startswith(forbidden + ".")
            if whole and (names == "*" or name in names):
                bad.append(f"{module}.{name}")
            # `from costmodel import chain` names the module itself
            if module == forbidden.rpartition(".")[0] and name == forbidden.rpartition(".")[2]:
                bad.append(forbidden)
    return bad


@pytest.mark.parametrize("face", FACES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_faces_leave_orchestration_to_the_app_layer(face):
    bad = _orchestration(_imports(face))
    assert not bad, f"{face.name} orchestrates itself: {bad}"


def test_the_rule_catches_a_face_that_orchestrates(tmp_path):
    # the scan is not vacuous: relative, absolute and module imports are all caught
    fake = tmp_path / "probe.py"
    fake.write_text("from ..chain import price\nfrom costmodel.model.curves import select\n"
                    "from .. import chain\nfrom ..curves import Curve\n")
    assert _orchestration(_imports(fake, "costmodel.api")) == [
        "costmodel.model.chain.price", "costmodel.model.curves.select", "costmodel.model.chain"]
