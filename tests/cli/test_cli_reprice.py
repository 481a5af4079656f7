"""``costmodel reprice`` says what the edits did: the headline figures as exported and as
edited, with units (issue 37: it listed the edited inputs and nothing of their effect).

The sample's figures as exported are the engine's; the edited ones are hand arithmetic on
them: doubling the electricity price doubles the energy cost per million tokens and nothing
else of the cost, and the price is the cost over (1 - the 50 % gross margin), split so that an
output token costs 4 input tokens.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import price_file
from openpyxl import load_workbook

from costmodel.cli import main
from costmodel.render.display import format_number, format_percent

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "fixtures" / "scenarios" / "sample-tco.toml"
NEGOTIATION = ROOT / "fixtures" / "quotes" / "negotiation.toml"
BUILDS = [ROOT / "fixtures" / "scenarios" / f"curve-gpt-oss-120b-{hw}.toml"
          for hw in ("b200", "h100")]

MARGIN = 0.5  # sample-tco.toml: pricing.gross_margin
ISL, OSL, OUTPUT_WEIGHT = 8192, 1024, 4  # the sample's workload and pricing.output_weight
# a request's price over its tokens: (ISL + OSL) p = ISL x + OSL * 4 x
INPUT_OF_MIXED = (ISL + OSL) / (ISL + OUTPUT_WEIGHT * OSL)  # 0.75: an input token's price / p


def run(*args: str) -> str:
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert r.exit_code == 0, (r.stdout, r.stderr)
    return r.stdout


def edit(path: Path, out: Path, name: str, change) -> Path:
    """The workbook at ``path`` with the cells of defined name ``name`` changed."""
    wb = load_workbook(path)
    (sheet, ref), = wb.defined_names[name].destinations
    cells = wb[sheet][ref.replace("$", "")]
    cells = [c for row in cells for c in row] if isinstance(cells, tuple) else [cells]
    for c in cells:
        if c.value is not None:
            c.value = change(c.value)
    wb.save(out)
    return out


def row(text: str, words: str) -> list[str]:
    """The cells of the line of the "What the edits did" table that starts with ``words``."""
    table = text[text.index("What the edits did (as exported -> as edited)"):]
    line = next(x for x in table.splitlines() if x.strip().startswith(words))
    return line.replace(words, "").split()


def test_reprice_shows_the_headline_figures_before_and_after_the_edit(tmp_path):
    exported = tmp_path / "sample.xlsx"
    run("workbook", SAMPLE, "-o", exported)
    text = run("reprice", edit(exported, tmp_path / "edited.xlsx", "electricity_price",
                               lambda v: 2 * v))
    was = price_file(SAMPLE)
    energy, capex, opex = (was.value(f"cost_per_mtok_{k}") for k in ("energy", "capex", "opex"))
    cost = energy + capex + opex
    assert was.value("cost_per_mtok_total") == pytest.approx(cost, rel=1e-12)
    now_cost = 2 * energy + capex + opex
    now_price = now_cost / (1 - MARGIN)
    expected = {
        "Cost per million tokens": (cost, now_cost),
        "Price per million tokens": (cost / (1 - MARGIN), now_price),
        "Price per million input tokens": (cost / (1 - MARGIN) * INPUT_OF_MIXED,
                                           now_price * INPUT_OF_MIXED),
        "Price per million output tokens": (cost / (1 - MARGIN) * INPUT_OF_MIXED * OUTPUT_WEIGHT,
                                            now_price * INPUT_OF_MIXED * OUTPUT_WEIGHT),
        "Energy cost per million tokens": (energy, 2 * energy),
        "Capital cost per million tokens": (capex, capex),
        "Operating cost per million tokens": (opex, opex),
    }
    for words, (before, after) in expected.items():
        name = "cost_per_mtok_total"  # every one a money figure per Mtok, rounded alike
        change = [] if before == after else ["+" + format_percent(after / before - 1)]
        assert row(text, words) == [format_number(before, "USD/Mtok", name), "->",
                                    format_number(after, "USD/Mtok", name),
                                    "USD", "per", "million", "tokens", *change], words
    # the sample's own figures, as the docs show them: 0.0680 -> 0.0719 (+5.7 %)
    assert row(text, "Cost per million tokens")[:3] == ["0.0680", "->", "0.0719"]
    assert row(text, "Energy cost per million tokens")[-1] == "+100.0%"


def test_reprice_of_a_decision_shows_the_decision_before_and_after(tmp_path):
    exported = tmp_path / "decision.xlsx"
    scenarios = [a for b in BUILDS for a in ("--scenario", b)]
    run("quotes", "decide", NEGOTIATION, *scenarios, "--workbook", exported)
    text = run("reprice", edit(exported, tmp_path / "edited.xlsx", "decision_volume",
                               lambda v: 500))
    # the same decisions the command makes at the file's demand and at the edited one: the
    # volume edited on the Decision sheet keeps the demand's average over peak, so the file's
    # peak of 30,000 token/s for 50,000 Mtok/month becomes 300 token/s for 500
    before = json.loads(run("quotes", "decide", NEGOTIATION, *scenarios, "--json"))
    after = json.loads(run("quotes", "decide", NEGOTIATION, *scenarios, "--json",
                           "--demand", "500 Mtok/month", "--peak", "300 token/s"))

    def first(decided: dict) -> tuple[str, str]:
        """The cheapest option's cost a month and per Mtok, rounded as displayed."""
        top = decided["ranked"][0]
        return (format_number(top["monthly_cost"]["value"], "USD/month"),
                format_number(top["cost_per_mtok"]["value"], "USD/Mtok"))

    b, a = first(before), first(after)
    assert (before["ranked"][0]["offer"], after["ranked"][0]["offer"]) == \
        ("gpt-oss-120b b200 (illustrative curve)", "gpt-oss-120b h100 (illustrative curve)")
    assert "  gpt-oss-120b b200 (illustrative curve): headline figures unchanged" in text
    assert ("    Cheapest option: gpt-oss-120b b200 (illustrative curve) -> gpt-oss-120b h100 "
            "(illustrative curve)") in text
    month = row(text, "Its cost a month")
    assert month[:3] == [b[0], "->", a[0]] and month[3:6] == ["USD", "per", "month"]
    per_mtok = row(text, "Its cost per million tokens")
    assert per_mtok[:3] == [b[1], "->", a[1]]
