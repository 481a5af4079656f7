"""The package's layers, and what each may import (docs: architecture).

Bottom to top::

    costmodel (__version__), resources   package metadata and data
    model/       the declared calculation and what it reads: pure
    decisions/   quotes, demand, decisions, planning, sensitivity: pure, on the model
    sources/     files in, files out (scenario, quote, curve and power files; catalogs)
    store/       the database (the app's alone: no face imports it)
    render/      display rules, terminal text, PDF one-pagers, plots, workbooks
    app/         the use cases every face calls, saving and keys included
    http/        the HTTP plumbing both HTTP faces share (problems, limits, headers)
    cli/ api/ web/   the faces, side by side: none imports another
    server       the application factory: the one module that imports both api and web

A layer imports its own layer and those listed for it in ``ALLOWED``, nothing else: the model
nothing above it, decisions the model only, renderings no face, the app no face, no face
another face, and no face the store (saved scenarios, revisions, keys, sessions, the catalog
and curves held in the database, and the database itself are the app's use cases: a face is
handed the app's ``Services`` and calls them). And no import circle anywhere in
``costmodel/``.

The import graph is read from the source with ``ast``: every ``import`` and ``from ... import``
anywhere in a module (inside functions too), relative ones resolved, ``from . import x`` an
edge to the module ``x`` when ``x`` is one, else to the package. Imports under
``if TYPE_CHECKING:`` never run, so they are no edge of the circle check (an annotation may
name a type of a module that imports this one); they still count for the layer rules (a type
from above is a dependency on above). Importing ``a.b`` runs ``a/__init__.py`` first; that
implicit edge is not counted, since a package's ``__init__`` that imports its own modules
which import it back is then a circle of named edges (caught: see ``web/site.py``). Alembic's
migration scripts (``store/migrations``) are scripts Alembic loads, not modules of the package.

The faces (CLI, API, web pages) also orchestrate nothing themselves: every use case is the
application layer's (costmodel.app), so a third face cannot become a third copy. A face may
parse (quantities, quote and curve files, the sensitivity mini-language) and render (tables,
JSON); it may not price, compare, read curves, rank quotes, run analyses or build workbooks
by calling the core or the scenario loader directly.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "costmodel"

# layer -> the layers it may import besides its own
BELOW_APP = {"root", "model", "decisions", "sources", "store", "render"}
FACE_BELOW = BELOW_APP - {"store"}  # the faces reach the database through the app alone
ALLOWED: dict[str, set[str]] = {
    "root": set(),
    "model": {"root"},
    "decisions": {"root", "model"},
    "sources": {"root", "model", "decisions"},
    "store": {"root", "model", "decisions", "sources"},
    "render": {"root", "model", "decisions", "sources"},
    "app": BELOW_APP,
    "http": BELOW_APP | {"app"},
    "cli": FACE_BELOW | {"app", "server", "mcp"},  # `serve` runs the server, `mcp` the MCP
    "api": FACE_BELOW | {"app", "http"},
    "web": FACE_BELOW | {"app", "http"},
    "server": BELOW_APP | {"app", "http", "api", "web"},
    # the MCP face reads the API's request contract (schemas, the parse step), no route
    "mcp": FACE_BELOW | {"app", "http", "api"},
}
FACES = ("cli", "api", "web", "mcp")
# a face another face may import, and what of it: the MCP face's tools are the API's
# requests (their models, their parse step, their errors); the command line runs the MCP
# server as it runs the service
FACE_IMPORTS = {("mcp", "api"): {"costmodel.api.schemas", "costmodel.api.requests",
                                 "costmodel.api.openapi"},
                ("cli", "mcp"): {"costmodel.mcp.server"}}


def layer_of(module: str) -> str:
    """The layer of a dotted module name of the package."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "resources":
        return "root"
    return parts[1]


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (source file, is a package) for every module under package ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if "migrations" in parts:
            continue
        package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if package else parts)] = (path, package)
    return out


def _type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, typing_only: bool = False):
    """(node, under ``if TYPE_CHECKING``) for every node below ``node``."""
    for child in ast.iter_child_nodes(node):
        if _type_checking(child):
            for part in child.body:
                yield part, True
                yield from _walk(part, True)
            for part in child.orelse:
                yield part, typing_only
                yield from _walk(part, typing_only)
        else:
            yield child, typing_only
            yield from _walk(child, typing_only)


def imports(root: Path) -> dict[str, dict[str, bool]]:
    """module -> {imported module of the package: only under TYPE_CHECKING}."""
    found = modules(root)
    graph: dict[str, dict[str, bool]] = {}
    for name, (path, package) in found.items():
        here = name if package else name.rpartition(".")[0]
        edges: dict[str, bool] = {}

        def add(target: str, typing_only: bool, edges=edges, name=name) -> None:
            if target != name:
                edges[target] = edges.get(target, True) and typing_only

        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, typing_only in _walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                for alias in node.names:
                    if f"{module}.{alias.name}" in found:
                        add(f"{module}.{alias.name}", typing_only)
                    elif module in found:
                        add(module, typing_only)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in found:
                        add(alias.name, typing_only)
        graph[name] = edges
    return graph


def layer_violations(graph: dict[str, dict[str, bool]]) -> list[str]:
    """``a -> b`` for every import the layer rules forbid (TYPE_CHECKING imports too)."""
    bad = []
    for module, edges in sorted(graph.items()):
        mine = layer_of(module)
        allowed = ALLOWED.get(mine)
        for target in sorted(edges):
            theirs = layer_of(target)
            if allowed is None or (theirs != mine and theirs not in allowed):
                bad.append(f"{module} ({mine}) -> {target} ({theirs})")
    return bad


def circles(graph: dict[str, dict[str, bool]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm) over
    the imports that run (not those under TYPE_CHECKING)."""
    runs = {m: sorted(t for t, typing_only in e.items() if not typing_only and t in graph)
            for m, e in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a long chain of modules does not meet the recursion limit
        work = [(start, iter(runs[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(runs[child])))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for m in sorted(runs):
        if m not in index:
            visit(m)
    return sorted(found)


@pytest.fixture(scope="module")
def graph() -> dict[str, dict[str, bool]]:
    return imports(PACKAGE)


def test_every_module_has_a_layer(graph):
    assert {layer_of(m) for m in graph} - set(ALLOWED) == set(), \
        "place the new package in ALLOWED (tests/test_layering.py) and the architecture page"


def test_the_package_root_holds_the_layers():
    """``costmodel/`` shows the chain: its packages, and almost no loose modules."""
    loose = {p.stem for p in PACKAGE.glob("*.py")}
    assert loose == {"__init__", "resources", "server"}
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(ALLOWED) - {"root", "server"}


def test_the_layer_rules_hold(graph):
    assert layer_violations(graph) == []


def test_the_graph_sees_the_layers(graph):
    """Not vacuous: the edges the rules are about exist and are read."""
    assert "costmodel.model.steps" in graph["costmodel.model.results"]
    assert "costmodel.api.routes" in graph["costmodel.server"]
    assert "costmodel.web" in graph["costmodel.server"]
    assert "costmodel.server" in graph["costmodel.cli.service"]  # a function-level import


def test_the_inputs_and_the_profile_do_not_import_each_other(graph):
    """One idea, one module: the inputs hold the profile inputs (arrays of the tariff and the
    load shape), the profile evaluates them; the calendar both need is a third module's."""
    assert "costmodel.model.profile" not in graph["costmodel.model.inputs"]
    assert graph["costmodel.model.profile"]["costmodel.model.inputs"] is False  # it runs
    assert "costmodel.model.calendar" in graph["costmodel.model.inputs"]


def test_no_face_imports_another_face(graph):
    """The server is the one module that imports both the API and the web pages."""
    for face in FACES:
        users = {layer_of(m) for m, e in graph.items()
                 if any(layer_of(t) == face and t not in FACE_IMPORTS.get(
                     (layer_of(m), face), ()) for t in e)}
        assert users <= {face, "server"}, f"{face} is imported from {users - {face}}"
    # not vacuous: the MCP face does read the API's request models
    assert "costmodel.api.schemas" in graph["costmodel.mcp.tools"]


def test_no_import_circles(graph):
    assert circles(graph) == []


def test_no_face_imports_the_store(graph):
    """Saving, revisions, keys and sessions are the app's use cases: no face opens the store
    (the rule is in ALLOWED; this says it by name, and that the app does use the store)."""
    for face in FACES:
        assert "store" not in ALLOWED[face]
        reached = sorted(f"{m} -> {t}" for m, e in graph.items() if layer_of(m) == face
                         for t in e if layer_of(t) == "store")
        assert reached == [], f"{face} imports the store: {reached}"
    assert any(layer_of(t) == "store" for t in graph["costmodel.app.saved"])


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def drawn_layers(page: str) -> tuple[set[str], set[tuple[str, str]]]:
    """The layers and the ``a --> b`` arrows ("a may import b") of the architecture page's
    Mermaid drawing."""
    block = page.split("```mermaid\n", 1)[1].split("```", 1)[0]
    nodes = set(re.findall(r"^\s*(\w+)\[", block, re.M))
    arrows = set(re.findall(r"^\s*(\w+) --> (\w+)\s*$", block, re.M))
    return nodes, arrows


def test_the_architecture_page_draws_these_layers():
    """docs/architecture.md draws the layers this test holds: every layer, and no arrow the
    rules forbid (none from a face to the store)."""
    nodes, arrows = drawn_layers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert nodes == set(ALLOWED)
    assert len(arrows) > len(ALLOWED)  # not vacuous: the arrows were read
    assert sorted((a, b) for a, b in arrows if b not in ALLOWED[a]) == []
    # every layer is drawn with what it stands on (the root stands on nothing)
    assert {a for a, _ in arrows} == set(ALLOWED) - {"root"}
    # the check reads a forbidden arrow as one
    _, drawn = drawn_layers('```mermaid\nflowchart TB\n  web["pages"]\n  web --> store\n```')
    assert [(a, b) for a, b in drawn if b not in ALLOWED[a]] == [("web", "store")]


def _probe(tmp_path: Path, files: dict[str, str]) -> dict[str, dict[str, bool]]:
    root = tmp_path / "costmodel"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return imports(root)


def test_the_checks_catch_a_broken_rule(tmp_path):
    """The checks are not vacuous: on a tiny package with an upward import, a face importing
    a face and circles (relative, absolute, function-level, ``from . import x``), each is
    reported; a circle through TYPE_CHECKING alone is not."""
    graph = _probe(tmp_path, {
        "__init__.py": "",
        "model/__init__.py": "",
        "model/a.py": "from . import b\n",
        "model/b.py": "def f():\n    from costmodel.model.c import g\n",
        "model/c.py": "from .a import x\nfrom ..render.table import t\n",
        "model/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from .e import E\n",
        "model/e.py": "from .d import D\n",
        "render/__init__.py": "",
        "render/table.py": "",
        "web/__init__.py": "from . import page\nblueprint = 1\n",
        "web/page.py": "from . import blueprint\nfrom ..api import routes\n",
        "api/__init__.py": "",
        "api/routes.py": "from ..store.repo import NotFound\n",
        "store/__init__.py": "",
        "store/repo.py": "",
    })
    assert circles(graph) == [
        ["costmodel.model.a", "costmodel.model.b", "costmodel.model.c"],
        ["costmodel.web", "costmodel.web.page"]]
    assert layer_violations(graph) == [
        "costmodel.api.routes (api) -> costmodel.store.repo (store)",
        "costmodel.model.c (model) -> costmodel.render.table (render)",
        "costmodel.web.page (web) -> costmodel.api.routes (api)"]
    assert graph["costmodel.model.d"] == {"costmodel.model.e": True}


# the faces leave orchestration to the application layer ------------------------------------

FACE_FILES = sorted([*(PACKAGE / "cli").glob("*.py"), *(PACKAGE / "api").glob("*.py"),
                     *(PACKAGE / "web").glob("*.py"), *(PACKAGE / "mcp").glob("*.py")])

# module -> names a face must not import from it ("*" = nothing at all)
ORCHESTRATION = {
    "costmodel.model.chain": "*",
    "costmodel.sources.scenario_file": "*",
    "costmodel.render.workbook.export": "*",
    "costmodel.model.curves": {"select", "matched_interactivity"},
    "costmodel.decisions.quotes": {"compare_quote", "rank", "term_table", "months_until",
                                   "quote_start", "quote_interactivity"},
    "costmodel.decisions.sensitivity": {"tornado", "grid", "monte_carlo", "sample_inputs"},
}


def _package(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1])


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
    names = {str(p.relative_to(PACKAGE)) for p in FACE_FILES}
    assert {"cli/__init__.py", "api/routes.py", "api/auth.py", "cli/sensitivity.py",
            "web/pages.py", "web/saved.py", "cli/saved.py"} <= names


def _orchestration(imports: list[tuple[str, str]]) -> list[str]:
    bad = []
    for module, name in imports:
        for forbidden, names in ORCHESTRATION.items():
            whole = module == forbidden or module.startswith(forbidden + ".")
            if whole and (names == "*" or name in names):
                bad.append(f"{module}.{name}")
            # `from costmodel.model import chain` names the module itself
            if module == forbidden.rpartition(".")[0] and name == forbidden.rpartition(".")[2]:
                bad.append(forbidden)
    return bad


@pytest.mark.parametrize("face", FACE_FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_faces_leave_orchestration_to_the_app_layer(face):
    bad = _orchestration(_imports(face))
    assert not bad, f"{face.name} orchestrates itself: {bad}"


def test_the_rule_catches_a_face_that_orchestrates(tmp_path):
    # the scan is not vacuous: relative, absolute and module imports are all caught
    fake = tmp_path / "probe.py"
    fake.write_text("from ..model.chain import price\nfrom costmodel.model.curves import select\n"
                    "from ..model import chain\nfrom ..model.curves import Curve\n")
    assert _orchestration(_imports(fake, "costmodel.api")) == [
        "costmodel.model.chain.price", "costmodel.model.curves.select", "costmodel.model.chain"]
