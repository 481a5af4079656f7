"""No recommendation over unequal volumes: ``quotes compare`` without a demand ranks offers by
unit price, each at its own volume and term, says so in its heading, marks none and points to
``quotes decide``, the decision at a demand, which still marks the offer it recommends. The
JSON answers (the CLI's and POST /api/v1/quotes/compare) say the basis in ``ranked_by``."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from conftest import auth

from costmodel.app.quotes import RANKED_BY
from costmodel.cli import main

ROOT = Path(__file__).resolve().parents[2]
QUOTES = str(ROOT / "fixtures" / "quotes" / "example-quotes.toml")
NEGOTIATION = str(ROOT / "fixtures" / "quotes" / "negotiation.toml")
GB300 = str(ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_matched.toml")
B200 = str(ROOT / "fixtures" / "scenarios" / "curve-gpt-oss-120b-b200.toml")


def run(*args: str, code: int = 0):
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert r.exit_code == code, (r.stdout, r.stderr)
    return r


def test_without_a_demand_nothing_is_marked_and_the_heading_says_the_basis():
    text = run("quotes", "compare", QUOTES, "--scenario", GB300).stdout
    lines = text.splitlines()
    assert "=>" not in text
    heading = " ".join(x.strip() for x in lines[:lines.index(next(
        x for x in lines if x.split()[:2] == ["Quote", "Form"]))])
    assert heading == (
        "Against deepseek-r1 gb300 matched: ranked by unit price at each offer's own volume "
        "and term; prices and our cost in USD per million mixed tokens; totals in USD, nominal "
        "over the term (Nominal) and present value at 10.0% a year, the scenario's cost of "
        "capital (PV) Not a recommendation: the decision at a demand prices every "
        "offer for the same volume and recommends one: "
        "costmodel quotes decide QUOTES_FILE --scenario FILE --demand VOLUME")
    ranks = [x.split()[:2] for x in lines if x[:6].strip().isdigit()]
    assert ranks == [["1", "vendor-a-tokens"], ["2", "vendor-b-reserved"],
                     ["3", "vendor-c-no-point"]]
    # what differs between the offers, as the issue found it
    assert ("the offers' volumes (3,473 to 20,000 million tokens per month) and terms (12 to "
            "36 months) differ: their present values are not of the same service") \
        in " ".join(x.strip() for x in lines)


def test_the_decision_at_a_demand_marks_its_recommendation():
    decide = run("quotes", "decide", QUOTES, "--scenario", GB300,
                 "--demand", "20000 Mtok/month").stdout
    assert "=> Take vendor-a-tokens" in decide
    assert any(x.split()[:3] == ["=>", "1", "vendor-a-tokens"] for x in decide.splitlines())
    assert "Ranked for this demand (cheapest first)" in decide
    # quotes compare with a demand is the same decision, as it was
    assert run("quotes", "compare", QUOTES, "--scenario", GB300,
               "--demand", "20000 Mtok/month").stdout == decide
    # the file's own [demand]
    file_demand = run("quotes", "decide", NEGOTIATION, "--scenario", B200).stdout
    assert file_demand.startswith("For 50,000 million tokens per month")
    assert "=> Take " in file_demand and "\n  => 1 " in file_demand
    assert run("quotes", "decide", NEGOTIATION, "--scenario", B200, "--json").stdout == \
        run("quotes", "compare", NEGOTIATION, "--scenario", B200, "--json").stdout


def test_a_decision_without_a_demand_says_what_it_needs():
    r = run("quotes", "decide", QUOTES, "--scenario", GB300, code=2)
    assert r.stdout == ""
    assert r.stderr == (
        'costmodel: error: --demand: a decision needs the demand it is for, e.g. --demand '
        f'"50000 Mtok/month" (or a [demand] table in {QUOTES})\n')


def test_the_json_says_the_basis():
    data = json.loads(run("quotes", "compare", QUOTES, "--scenario", GB300, "--json").stdout)
    assert data["ranked_by"] == RANKED_BY
    assert RANKED_BY.startswith("unit price (per million tokens) at each offer's own volume "
                                "and term, cheapest first; not a recommendation")
    assert "quotes decide" in RANKED_BY
    assert [c["quote"] for c in data["scenarios"][0]["ranked"]] == [
        "vendor-a-tokens", "vendor-b-reserved", "vendor-c-no-point"]


def test_the_api_says_the_basis_beside_the_same_ranking(client, tokens):
    import tomllib
    quotes = tomllib.loads(Path(QUOTES).read_text(encoding="utf-8"))["quote"]
    r = client.post("/api/v1/quotes/compare", headers=auth(tokens["viewer"]), json={
        "quotes": quotes, "scenarios": [{"scenario": {
            "accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}}]})
    assert r.status_code == 200, r.json
    assert set(r.json) == {"scenarios", "ranked_by"}  # one key added, none changed
    assert r.json["ranked_by"] == RANKED_BY
    assert [c["quote"] for c in r.json["scenarios"][0]["ranked"]] == [
        "vendor-a-tokens", "vendor-b-reserved", "vendor-c-no-point"]


def test_the_decision_writes_its_workbook(tmp_path):
    """``quotes decide --workbook``: the Decision sheet's bills are the JSON answer's."""
    import openpyxl
    out = tmp_path / "decision.xlsx"
    answer = json.loads(run("quotes", "decide", NEGOTIATION, "--scenario", B200,
                            "--json").stdout)
    text = run("quotes", "decide", NEGOTIATION, "--scenario", B200, "--workbook",
               str(out)).stdout
    assert f"workbook written to {out}" in text
    wb = openpyxl.load_workbook(out, data_only=True)
    (sheet, ref), = wb.defined_names["option_bill"].destinations
    bills = [c.value for row in wb[sheet][ref.replace("$", "")] for c in row]
    assert bills == [p["monthly_cost"]["value"] for p in answer["ranked"]]
    assert run("quotes", "decide", NEGOTIATION, "--scenario", B200, "--workbook",
               str(tmp_path / "d.csv"), code=2).stderr.strip() == \
        "costmodel: error: --workbook must end in .xlsx"
