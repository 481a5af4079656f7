"""The docs site (mkdocs.yml, docs/): it builds with --strict (a broken link or anchor fails),
and its methodology page lists every declared step with its formula and unit, generated from
the declaration at build time (docs/hooks.py), so it cannot drift from the code."""
from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from costmodel.model.steps import MODEL

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _rows(page: Path) -> dict[str, list[str]]:
    """The methodology page's table rows by their first cell: the cells' text."""
    rows = {}
    for tr in re.findall(r"<tr>(.*?)</tr>", page.read_text(encoding="utf-8"), re.S):
        cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                 for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
        if cells:
            rows[cells[0]] = cells
    return rows


def test_methodology_lists_every_declared_step(site):
    rows = _rows(site / "methodology" / "index.html")
    for step in MODEL.steps.values():
        assert step.name in rows, f"step {step.name} is missing from the methodology page"
        _, formula, unit, description = rows[step.name]
        assert formula == step.expression
        assert unit.split(" (per ")[0] == step.unit
        assert description == step.description
    for name in [*MODEL.inputs, *MODEL.constants, *MODEL.enums]:
        assert name in rows, f"{name} is missing from the methodology page"


def test_strict_build_fails_on_a_broken_anchor(tmp_path):
    """--strict is not a formality: a link to an anchor no page has fails the build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\n[gone](other.md#no-such-heading)\n")
    (docs / "other.md").write_text("# Other\n\n## A heading\n")
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    config = re.sub(r"(?ms)^hooks:.*?(?=^\S)", "", config)
    config = re.sub(r"(?ms)^nav:.*", "nav:\n  - index.md\n  - other.md\n", config)
    (tmp_path / "mkdocs.yml").write_text(config)
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "s")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode != 0
    assert "no-such-heading" in done.stderr


def test_readme_is_a_short_guide_with_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    quick = text[text.index("## Quickstart"):]
    block = re.search(r"```sh\n(.*?)```", quick, re.S).group(1)
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == \
        ["make run", "make test"]
    for page in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / page).is_file(), page
