"""One saved scenario, the same answer on every face: saved from the command line
(``costmodel save``, the application layer's use case the API and the Saved pages call), then
read back through the API (``GET /api/v1/scenarios/{id}/revisions/{n}``), the Saved page's JSON
download and ``costmodel saved ID``: the same JSON, with the figures ``costmodel price`` gives
for the same file. On SQLite and on PostgreSQL."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import auth

from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
API = "/api/v1"


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def cli_json(*args: str) -> dict:
    code, out, err = cli(*args)
    assert code == 0, err
    return json.loads(out)


def test_a_scenario_saved_from_the_command_line_reads_the_same_on_every_face(
        database, client, web, tokens):
    name = f"every face {id(client)}"
    saved = cli_json("save", str(SAMPLE), "--name", name, "--by", "ops", "--url", database,
                     "--json")
    sid, number = saved["scenario_id"], saved["number"]
    assert number == 1 and saved["created_by"] == "ops" and saved["created_by_key_id"] is None

    api = client.get(f"{API}/scenarios/{sid}/revisions/{number}",
                     headers=auth(tokens["viewer"]))
    assert api.status_code == 200, api.get_data(as_text=True)
    page = web.get(f"/saved/{sid}/revisions/{number}.json")
    assert page.status_code == 200
    shown = cli_json("saved", str(sid), "--revision", str(number), "--url", database)
    latest = cli_json("saved", str(sid), "--url", database)

    assert api.get_data() == page.get_data()  # the page's download is the API's answer
    assert api.get_json() == saved == shown == latest
    # the scenario as the file gives it, priced as the command line prices the file: the
    # published worked example (docs/getting-started.md), 0.0680 USD per million tokens
    assert saved["scenario"]["operating_point"] == "deepseek-r1/gb300/peak"
    priced = cli_json("price", str(SAMPLE), "--json")
    for key in ("total", "energy", "capex", "opex"):
        assert saved["result"]["cost_per_mtok"][key]["value"] == \
            priced["cost_per_mtok"][key]["value"]
    assert saved["result"]["cost_per_mtok"]["total"]["value"] == pytest.approx(0.0680,
                                                                                abs=5e-5)
    code, out, _ = cli("saved", "--url", database)
    assert code == 0 and f"{sid:4d}  revision 1    {name}" in out.splitlines()


def test_a_revision_from_the_command_line_checks_the_one_it_was_based_on(
        database, client, tokens, tmp_path):
    editor = auth(tokens["editor"])
    made = client.post(f"{API}/scenarios", headers=editor, json={
        "name": "based on", "scenario": {"accelerator": "gb300",
                                         "operating_point": "deepseek-r1/gb300/peak"}})
    assert made.status_code == 201
    sid = made.get_json()["scenario_id"]
    edit = tmp_path / "edit.json"
    edit.write_text(json.dumps({"accelerator": "gb300",
                                "operating_point": "deepseek-r1/gb300/peak",
                                "utilisation": 0.5}))
    # the API saved revision 2 since the edit was read at revision 1: nothing is written
    assert client.post(f"{API}/scenarios/{sid}/revisions", headers=editor, json={
        "scenario": {**made.get_json()["scenario"], "utilisation": 0.6}}).status_code == 201
    code, out, err = cli("save", str(edit), "--scenario", str(sid), "--based-on", "1",
                         "--url", database)
    assert code == 2 and out == ""
    assert err == (f"costmodel: error: --based-on: scenario {sid} moved on to revision 2 "
                   f"(by test-editor); nothing was written\n")
    assert client.get(f"{API}/scenarios/{sid}",
                      headers=editor).get_json()["number"] == 2
    # based on the latest: saved as revision 3, which the API answers as its latest
    rev = cli_json("save", str(edit), "--scenario", str(sid), "--based-on", "2", "--url",
                   database, "--json")
    assert rev["number"] == 3 and rev["scenario"]["utilisation"] == 0.5
    latest = client.get(f"{API}/scenarios/{sid}", headers=editor)
    assert latest.get_json() == rev
    assert latest.headers["ETag"] == client.get(
        f"{API}/scenarios/{sid}/revisions/3", headers=editor).headers["ETag"]
    # the same content again: no new revision
    code, out, _ = cli("save", str(edit), "--scenario", str(sid), "--url", database)
    assert code == 0 and out == f"equal to the latest: nothing saved; it is scenario {sid} " \
                                f"revision 3\n"


def test_the_command_line_refuses_bad_input_and_writes_nothing(database, tmp_path):
    before = cli("saved", "--url", database)[1]
    bad = tmp_path / "bad.toml"
    bad.write_text('accelerator = "gb300"\noperating_point = "deepseek-r1/gb300/peak"\n'
                   "utilisation = 1.5\n")
    code, out, err = cli("save", str(bad), "--name", "bad", "--url", database)
    assert code == 2 and out == ""
    assert err.startswith(f"costmodel: error: {bad}: utilisation: ") and err.count("\n") == 1
    code, _, err = cli("save", str(SAMPLE), "--url", database)
    assert code == 2 and "give --name (a new scenario) or --scenario ID" in err
    code, _, err = cli("save", str(SAMPLE), "--scenario", "2147483647", "--url", database)
    assert code == 2 and err == "costmodel: error: --scenario: no scenario 2147483647\n"
    code, _, err = cli("saved", "2147483647", "--url", database)
    assert code == 2 and err == "costmodel: error: no scenario 2147483647\n"
    assert cli("saved", "--url", database)[1] == before


def test_the_command_lines_largest_id_is_the_stores():
    from costmodel.app.saved import MAX_ID
    from costmodel.cli.saved import MAX_ID as CLI_MAX_ID
    assert CLI_MAX_ID == MAX_ID == 2**31 - 1
