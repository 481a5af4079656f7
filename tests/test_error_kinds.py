"""No error is recognised by its words anywhere in ``costmodel/`` (issue 39): where behaviour
depends on the kind of an error, the error carries it (a class: ``UnknownKey``,
``MoreErrors``, ``ReadError``, ``UnknownReference``...; an attribute: a position, a type).

The scan reads every module with ``ast`` and reports a test of an error's text: ``"..." in
str(exc)``, ``str(exc).startswith(...)``, and ``in``, ``startswith``/``endswith`` or a regular
expression's ``match``/``search``/``fullmatch`` on a name that holds an error's words
(``message``, ``msg``, ``detail``, ``why``, ``e["message"]``...). Words built and shown are
not tests of them, and are not reported.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import costmodel
from costmodel.app.hints import with_hint, with_hints
from costmodel.model.errors import (
    MAX_ERRORS,
    UNKNOWN_KEY,
    InputError,
    MoreErrors,
    ReadError,
    UnknownKey,
)

PACKAGE = Path(costmodel.__file__).resolve().parent
WORDS = {"message", "msg", "detail", "why", "reason"}
TESTS = {"startswith", "endswith", "removeprefix", "removesuffix", "match", "search",
         "fullmatch"}
# (module, function): the one place left, with why (docs: the CHANGELOG's issue 39 lines)
LEFT = {
    # the web form restates a bound the engine gave in its own unit ("at most 1, got 1.7")
    # in the unit the field is typed in ("at most 100 %, got 170 %"): the bound and the
    # value are read from the words until bound errors carry them as numbers
    ("web/scenario_form.py", "restate_bounds"),
    # not a kind but a place: tomllib writes a fault's line and column only in its words
    # before Python 3.14 (lineno and colno from 3.14, read first)
    ("sources/scenario_file.py", "toml_position"),
}


def _holds_words(node: ast.AST) -> bool:
    """``message``, ``self.detail``, ``e["message"]``, ``str(exc)``, ``exc.args[0]``."""
    if isinstance(node, ast.Name):
        return node.id in WORDS
    if isinstance(node, ast.Attribute):
        return node.attr in WORDS
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and key.value in WORDS:
            return True
        return isinstance(node.value, ast.Attribute) and node.value.attr == "args"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id == "str" and len(node.args) == 1:
        arg = node.args[0]
        return isinstance(arg, ast.Name) and arg.id in {"exc", "e", "err", "error"}
    return False


def _tests_of_words(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, function) of each test of an error's words in a module."""
    found = []
    functions = {}
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                functions.setdefault(id(node), fn.name)
    for node in ast.walk(tree):
        hit = False
        if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn)
                                                 for op in node.ops):
            hit = any(_holds_words(c) for c in node.comparators) and \
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in TESTS:
            receiver = node.func.value
            # text.startswith(...), or a pattern's .search(text) / re.match(p, text)
            hit = _holds_words(receiver) or any(_holds_words(a) for a in node.args)
        if hit:
            found.append((node.lineno, functions.get(id(node), "")))
    return found


def scan(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for line, function in _tests_of_words(ast.parse(path.read_text(encoding="utf-8"))):
            if (rel, function) not in LEFT:
                out.append(f"{rel}:{line} ({function})")
    return out


def test_no_error_is_recognised_by_its_words():
    assert scan(PACKAGE) == []


def test_the_scan_finds_each_form(tmp_path):
    """Not vacuous: each form of a test of words is reported, words built are not."""
    (tmp_path / "probe.py").write_text(
        "def a(exc):\n    return 'unknown' in str(exc)\n"
        "def b(message):\n    return message.startswith('unknown key')\n"
        "def c(e):\n    return 'did you mean' in e['message']\n"
        "def d(exc):\n    return str(exc).startswith('depth limit exceeded')\n"
        "def e(pattern, why):\n    return pattern.search(why)\n"
        "def f(exc):\n    return 'Empty' in exc.args[0]\n"
        "def g(exc, path):\n    return f'{path}: {exc}', path.startswith('x')\n")
    assert scan(tmp_path) == ["probe.py:2 (a)", "probe.py:4 (b)", "probe.py:6 (c)",
                              "probe.py:8 (d)", "probe.py:10 (e)", "probe.py:12 (f)"]


# the kinds themselves ------------------------------------------------------------------------

def test_an_unknown_key_is_hinted_by_its_kind_not_its_words():
    assert with_hint("utilization", UNKNOWN_KEY) == "unknown key; did you mean utilisation?"
    # the same words of another kind are no unknown key: not hinted
    assert with_hint("utilization", "unknown key") == "unknown key"
    # the words of an unknown key say more than "unknown key": still hinted
    said = with_hint("electricty.price", UnknownKey("unknown key in --set"), dotted=True)
    assert said == "unknown key in --set; did you mean electricity.price?"
    assert with_hints([("utilization", UNKNOWN_KEY), ("pue", "must be at least 1")]) == [
        ("utilization", "unknown key; did you mean utilisation?"), ("pue", "must be at least 1")]


def test_the_count_of_problems_left_out_is_a_kind():
    exc = InputError([(f"k{i}", UNKNOWN_KEY) for i in range(MAX_ERRORS + 7)])
    assert exc.errors[-1] == ("", "and 7 more errors") and isinstance(exc.errors[-1][1],
                                                                       MoreErrors)
    again = InputError([(f"x.{p}", m) for p, m in exc.errors])
    assert again.errors[-1] == ("", "and 7 more errors")  # counted once, by its kind
    # words that only look like the count are a problem like any other
    plain = InputError([("a", "and 7 more errors")])
    assert plain.errors == [("a", "and 7 more errors")]


@pytest.mark.parametrize("name, text, line, column", [
    ("bad.toml", b'accelerator = "gb300"\nutilisation = \n', 2, 15),
    ("bad.json", b'{"accelerator": "gb300",\n "utilisation": }\n', 2, 17),
    ("bad.toml", b'name = "caf\xc3\xa9"\nnote = "\xff"\n', 2, 9),
    ("list.json", b"[1, 2]", 1, 1),
])
def test_a_scenario_file_that_cannot_be_read_names_its_file_line_and_column(
        tmp_path, name, text, line, column):
    from costmodel.sources.scenario_file import read_scenario_file
    path = tmp_path / name
    path.write_bytes(text)
    with pytest.raises(ReadError) as caught:
        read_scenario_file(path)
    e = caught.value
    assert (e.filename, e.line, e.column) == (str(path), line, column)
    assert e.errors[0][1].startswith(str(path))  # the words as they always were
    assert isinstance(e, InputError)


def test_an_uploaded_quote_file_that_cannot_be_read_names_its_line_and_column():
    from costmodel.sources.quote_file import read_quotes_text
    with pytest.raises(ReadError) as caught:
        read_quotes_text('[[quote]]\nname = "a"\nprice = \n', "offers.toml")
    e = caught.value
    assert (e.filename, e.line, e.column) == ("offers.toml", 3, 9)
    with pytest.raises(ReadError) as caught:
        read_quotes_text('{"quote": [}', "offers.json")
    assert (caught.value.line, caught.value.column) == (1, 12)
