"""Every citation of the documentation resolves (issue 37: workbook defaults cited "(README,
Defaults)" and the OpenAPI text "README (API contract)" after both had moved to docs/).

A citation is written as a path and an anchor, ``docs/scenarios.md#defaults`` (or the whole
page, ``docs/rates.md``; ``README.md#anchor`` for the README), and is followed here to an
existing file and one of its headings, as MkDocs names them. Followed where a user meets them:
the source, templates, fixtures and deployment files as written, and the texts the program
makes (the workbook's notes on defaults, the OpenAPI document, every command's help).
"""
from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown.extensions.toc import slugify

from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]
# a published operating point and little else: its workbook notes many defaults
PUBLISHED = ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_peak.toml"
# what is cited from: the package, its data, and what deploys it
WHERE = [ROOT / "costmodel", ROOT / "templates", ROOT / "fixtures", ROOT / "deploy",
         ROOT / "Dockerfile"]
TEXT = {".py", ".html", ".js", ".css", ".toml", ".json", ".md", ".txt", ".conf", ".env", ""}

CITATION = re.compile(r"\b(README\.md|docs/[\w-]+\.md)(?:#([\w-]+))?")
# the old ways of citing, which named a section no file has: (README, Defaults),
# README "Limits", the README (API contract), see README, (docs: Negotiators)
OLD = re.compile(r"\bREADME\b(?!\.md)|\(docs: ")


@cache
def anchors(page: str) -> frozenset[str]:
    """The heading anchors of a Markdown file, as MkDocs (Python-Markdown's toc) makes them."""
    text = re.sub(r"(?ms)^```.*?^```", "", (ROOT / page).read_text(encoding="utf-8"))
    return frozenset(slugify(h, "-") for h in re.findall(r"(?m)^#{1,6}\s+(.+?)\s*#*$", text))


def unresolved(text: str) -> list[str]:
    """The citations in ``text`` that point nowhere, and citations written the old way."""
    bad = [m.group(0) for m in OLD.finditer(text)]
    for m in CITATION.finditer(text):
        page, anchor = m.groups()
        if not (ROOT / page).is_file():
            bad.append(f"{m.group(0)}: no such file")
        elif anchor and anchor not in anchors(page):
            bad.append(f"{m.group(0)}: {page} has no heading #{anchor}")
    return bad


def files() -> list[Path]:
    out = []
    for where in WHERE:
        for path in [where] if where.is_file() else sorted(where.rglob("*")):
            if path.is_file() and path.suffix in TEXT and "__pycache__" not in path.parts:
                out.append(path)
    return out


def test_every_citation_in_the_files_resolves():
    bad, cited = [], 0
    for path in files():
        text = path.read_text(encoding="utf-8", errors="replace")
        cited += len(CITATION.findall(text))
        bad += [f"{path.relative_to(ROOT)}: {b}" for b in unresolved(text)]
    assert bad == []
    assert cited >= 20  # not vacuous: the files do cite


def test_the_checker_sees_what_points_nowhere():
    assert unresolved("(README, Defaults)") and unresolved('README "Limits"')
    assert unresolved("is listed in the README (API contract).")
    assert unresolved("(docs: Negotiators)") and unresolved("for production: see README).")
    assert unresolved("docs/scenarios.md#no-such-heading") == \
        ["docs/scenarios.md#no-such-heading: docs/scenarios.md has no heading #no-such-heading"]
    assert unresolved("docs/nowhere.md") == ["docs/nowhere.md: no such file"]
    assert unresolved("docs/operations.md#api-contract-schemathesis, docs/rates.md, "
                      "README.md#quickstart, the README.md") == []


def test_the_workbook_notes_on_defaults_cite_the_defaults(tmp_path):
    from openpyxl import load_workbook

    from costmodel import app
    from costmodel.cli.common import CONTEXT, specs_for
    book = app.workbook(CONTEXT, specs_for([str(PUBLISHED)], ()))
    path = tmp_path / "published.xlsx"
    path.write_bytes(book.content)
    texts = [t for ws in load_workbook(path).worksheets for row in ws.iter_rows() for c in row
             for t in (c.value, c.comment.text if c.comment else None) if isinstance(t, str)]
    assert any("illustrative assumption (docs/scenarios.md#defaults)" in t for t in texts)
    assert [b for t in texts for b in unresolved(t)] == []


def test_the_openapi_document_cites_the_api_contract(tmp_path):
    from costmodel.server import create_app
    application = create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'c.db'}",
                              "TESTING": True})
    try:
        text = application.test_client().get("/api/v1/openapi.json").get_data(as_text=True)
    finally:
        application.extensions["costmodel"].dispose()
    description = json.loads(text)["info"]["description"]
    assert "docs/operations.md#api-contract-schemathesis" in description
    assert unresolved(text) == []


def _commands(group, path=()):
    for name in group.list_commands(None):
        command = group.get_command(None, name)
        yield (*path, name)
        if hasattr(command, "list_commands"):
            yield from _commands(command, (*path, name))


@pytest.mark.parametrize("command", list(_commands(main)), ids=" ".join)
def test_every_command_help_cites_what_exists(command):
    shown = CliRunner().invoke(main, [*command, "--help"], terminal_width=200)
    assert shown.exit_code == 0, shown.output
    assert unresolved(shown.output) == []
