"""Guidance where people type: a misspelt key in a scenario file names the file and the line
it is written on and says which key was meant, as the API says it (one helper:
costmodel.app.hints); a misspelt ``--set`` key says ``--set KEY`` and the key meant among
every key. Each error is one line on stderr, exit status 2, nothing on stdout."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import auth

from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
QUOTES = ROOT / "fixtures" / "quotes" / "example-quotes.toml"


def error_line(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder of scenario files, named relative to the working directory."""
    (tmp_path / "scenarios").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path / "scenarios"


def misspelt(folder: Path, name: str, old: str, new: str) -> str:
    """The sample scenario with ``old`` (a whole line's start) spelt ``new``; its path."""
    text = SAMPLE.read_text(encoding="utf-8")
    assert text.count(f"\n{old}") == 1
    (folder / name).write_text(text.replace(f"\n{old}", f"\n{new}"), encoding="utf-8")
    return f"scenarios/{name}"


def test_a_misspelt_top_level_key_names_the_file_its_line_and_the_key_meant(folder):
    path = misspelt(folder, "x.toml", "utilisation = 0.7", "utilization = 0.7")
    assert SAMPLE.read_text().splitlines()[8].startswith("utilisation = 0.7")  # line 9
    for command in (["price", path], ["price", path, "--json"],
                    ["plan", path, "--demand", "1000 Mtok/month"],
                    ["compare", path, str(SAMPLE)],
                    ["quotes", "compare", str(QUOTES), "--scenario", path],
                    ["quotes", "compare", str(QUOTES), "--scenario", path,
                     "--demand", "20000 Mtok/month"]):
        assert error_line(*command) == (
            "costmodel: error: scenarios/x.toml line 9: utilization: unknown key; "
            "did you mean utilisation?"), command


def test_a_misspelt_key_in_a_table_names_its_line_and_its_siblings(folder):
    path = misspelt(folder, "y.toml", "psu_efficiency = 0.95", "psu_efficency = 0.95")
    assert SAMPLE.read_text().splitlines()[18].startswith("psu_efficiency")  # line 19, [node]
    assert error_line("price", path) == (
        "costmodel: error: scenarios/y.toml line 19: node.psu_efficency: unknown key; "
        "did you mean psu_efficiency?")


def test_inline_tables_and_dotted_keys_have_their_lines(folder):
    (folder / "z.toml").write_text(
        '# a scenario\n'
        'accelerator = { catalog = "gb300", prise = "30000 USD" }\n'
        'operating_point = "deepseek-r1/gb300/peak"\n'
        '\n'
        'facility.PUE = 1.2\n', encoding="utf-8")
    assert error_line("price", "scenarios/z.toml") == (
        "costmodel: error: scenarios/z.toml line 2: accelerator.prise: unknown key; "
        "did you mean price?; line 5: facility.PUE: unknown key; did you mean pue?")


def test_a_json_file_names_the_line_too(folder):
    data = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
            "node": {"accelerators": 8, "prise": "1 USD"}}
    (folder / "s.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert error_line("price", "scenarios/s.json") == (
        "costmodel: error: scenarios/s.json line 6: node.prise: unknown key; "
        "did you mean price?")


def test_a_key_the_file_does_not_write_names_the_file_alone(folder):
    (folder / "m.toml").write_text('operating_point = "deepseek-r1/gb300/peak"\n',
                                   encoding="utf-8")
    assert error_line("price", "scenarios/m.toml") == (
        "costmodel: error: scenarios/m.toml: accelerator: required")


def test_one_of_several_files(folder):
    path = misspelt(folder, "x.toml", "utilisation = 0.7", "utilization = 0.7")
    assert error_line("compare", str(SAMPLE), path) == (
        "costmodel: error: scenarios/x.toml line 9: utilization: unknown key; "
        "did you mean utilisation?")


def test_a_misspelt_set_key_says_the_key_meant_among_every_key():
    assert error_line("price", str(SAMPLE), "--set", "electricty.price=0.1") == (
        "costmodel: error: --set electricty.price: unknown key; "
        "did you mean electricity.price?")
    assert error_line("price", str(SAMPLE), "--set", "utilization=0.5",
                      "--set", "electricity.prize=0.1") == (
        "costmodel: error: --set utilization: unknown key; did you mean utilisation?; "
        "--set electricity.prize: unknown key; did you mean electricity.price?")


def test_a_value_set_by_set_is_no_line_of_the_file():
    # utilisation is written on line 9 of the file, but the value refused is --set's
    assert error_line("price", str(SAMPLE), "--set", "utilisation=2") == (
        "costmodel: error: --set utilisation: must be at most 1, got 2")


def test_the_cli_and_the_api_say_it_through_one_helper(folder, client, tokens,
                                                       monkeypatch):
    """The hint both faces give is costmodel.app.hints.with_hint's: changed there, it
    changes in both (no copy in either face)."""
    from costmodel.app import hints
    real = hints.with_hint
    monkeypatch.setattr(hints, "with_hint", lambda *a, **k: real(*a, **k) + " (shared)")
    path = misspelt(folder, "x.toml", "utilisation = 0.7", "utilization = 0.7")
    assert error_line("price", path).endswith("did you mean utilisation? (shared)")
    assert error_line("price", str(SAMPLE), "--set", "electricty.price=1").endswith(
        "did you mean electricity.price? (shared)")
    resp = client.post("/api/v1/price", headers=auth(tokens["viewer"]), json={
        "scenario": {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak",
                     "utilization": 0.5}})
    assert resp.status_code == 422
    assert resp.json["errors"] == [{"path": "scenario.utilization",
                                    "message": "unknown key; did you mean utilisation? "
                                               "(shared)"}]


def test_a_reading_the_command_asks_for_is_no_line_of_the_file(folder):
    """The file's own ``at`` is its line; a target the command gives (--at-interactivity,
    --matched) replaces it, and its error names the file alone."""
    h100 = ROOT / "fixtures" / "scenarios" / "curve-gpt-oss-120b-h100.toml"
    text = h100.read_text(encoding="utf-8").replace(
        '"../curves/', f'"{(ROOT / "fixtures" / "curves").as_posix()}/')
    assert text.splitlines()[13] == 'at = { interactivity = "100 token/s/user" }'  # line 14
    (folder / "h.toml").write_text(text.replace('"100 token/s/user"', '"300 token/s/user"'),
                                   encoding="utf-8")
    unreachable = ("operating_point.at.interactivity: 300 token/s/user is unreachable: the "
                   "frontier's best is 180 token/s/user on curve "
                   "h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg")
    assert error_line("price", "scenarios/h.toml") == \
        f"costmodel: error: scenarios/h.toml line 14: {unreachable}"
    (folder / "g.toml").write_text(text, encoding="utf-8")
    assert error_line("compare", "--at-interactivity", "300 token/s/user", "scenarios/g.toml",
                      str(SAMPLE.with_name("curve-gpt-oss-120b-b200.toml"))) == \
        f"costmodel: error: scenarios/g.toml: {unreachable}"
