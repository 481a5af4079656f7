"""One label for one figure on every face: a quote's money over its term is said as both
figures, named ("nominal over the term", "present value at 10.0%"), in the terminal, on the
Quotes page and in the API's JSON, and a figure that is not there (no break-even, a capacity
quote's break-even, a per-token offer's accelerators) in the same words on each.

The figures by hand (fixtures/quotes/example-quotes.toml, vendor-a-tokens, against
deepseek-r1 gb300 matched, ISL 8,192 / OSL 1,024): a mixed token costs
(8192 x 0.55 + 1024 x 2.19) / 9216 = 0.73222 USD/Mtok, so 20,000 Mtok a month is
14,644.44 USD, nominally 175,733 USD over 12 months; at 10 % a year (monthly
1.1^(1/12) - 1 = 0.797 %) the twelve payments are worth 14,644.44 x 11.4006 = 166,954 USD.
"""
from __future__ import annotations

import html
import re
import tomllib

import pytest
from click.testing import CliRunner
from conftest import ROOT, auth

from costmodel.cli import main
from costmodel.render import display

QUOTES = str(ROOT / "fixtures" / "quotes" / "example-quotes.toml")
GB300 = str(ROOT / "fixtures" / "scenarios" / "published" / "deepseek-r1_gb300_matched.toml")
NOMINAL, PV = 175_733, 166_954  # vendor-a-tokens over its 12 months, by hand above
MONTHLY = (8192 * 0.55 + 1024 * 2.19) / 9216 * 20_000
ANNUITY = (1 - 1.1 ** -1) / (1.1 ** (1 / 12) - 1)


def test_the_hand_arithmetic():
    assert round(MONTHLY * 12) == NOMINAL
    assert round(MONTHLY * ANNUITY) == PV


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_the_terminal_names_both_figures():
    out = CliRunner().invoke(main, ["quotes", "compare", QUOTES, "--scenario", GB300]).stdout
    flat = " ".join(out.split())
    assert "totals in USD, nominal over the term (Nominal) and present value at 10.0% a year" \
        in flat
    lines = out.splitlines()
    at = next(i for i, x in enumerate(lines) if x.split()[:2] == ["Quote", "Form"])
    assert lines[at].split()[-3:] == ["Quote", "Quote", "Saving"]
    assert lines[at + 1].split()[-3:] == ["Nominal", "PV", "PV"]
    rows = {x.split()[1]: x for x in lines if x.strip()[:1].isdigit()}
    assert rows["vendor-a-tokens"].split()[-3:] == [f"{NOMINAL:,}", f"{PV:,}", "767,828"]
    assert display.CAPACITY_BREAK_EVEN in rows["vendor-b-reserved"]
    assert display.NO_BREAK_EVEN in rows["vendor-a-tokens"]


def test_the_page_names_both_figures(web):
    page = web.get("/quotes?quotes=example-quotes&demand=none&scenario=fixture%3Apublished%2F"
                   "deepseek-r1_gb300_matched").get_data(as_text=True)
    heads = [text_of(h) for h in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', page)]
    assert "Quote, nominal over the term" in heads
    assert "Quote, present value at 10.0%" in heads
    assert "Saving of buying, present value at 10.0%" in heads
    row = re.search(r'<tr class="quote-row" data-quote="vendor-a-tokens">(.*?)</tr>', page,
                    re.S).group(1)
    assert text_of(re.search(r'class="num term-nominal"[^>]*>(.*?)</td>', row, re.S)
                   .group(1)) == f"{NOMINAL:,} USD over 12 months"
    assert text_of(re.search(r'class="num term-pv"[^>]*>(.*?)</td>', row, re.S)
                   .group(1)) == f"{PV:,} USD"
    assert display.NO_BREAK_EVEN in text_of(row)
    row_b = re.search(r'data-quote="vendor-b-reserved">(.*?)</tr>', page, re.S).group(1)
    assert display.CAPACITY_BREAK_EVEN in text_of(row_b)


def test_the_api_names_both_figures(client, tokens):
    quotes = tomllib.loads((ROOT / "fixtures" / "quotes" / "example-quotes.toml")
                           .read_text())["quote"]
    scenario = {"scenario": {"accelerator": "gb300",
                             "operating_point": "deepseek-r1/gb300/matched"}}
    r = client.post("/api/v1/quotes/compare", headers=auth(tokens["viewer"]),
                    json={"quotes": quotes, "scenarios": [scenario]})
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    (a,) = [c for c in r.json["scenarios"][0]["ranked"] if c["quote"] == "vendor-a-tokens"]
    assert round(a["quote_total"]["value"]) == NOMINAL
    assert round(a["quote_pv"]["value"]) == PV
    assert a["discount_rate"] == pytest.approx(0.10)


def test_a_decision_names_both_figures_on_each_face(web):
    out = CliRunner().invoke(main, ["quotes", "decide", str(ROOT / "fixtures" / "quotes" /
                                                             "negotiation.toml"),
                                    "--scenario", str(ROOT / "fixtures" / "scenarios" /
                                                      "curve-gpt-oss-120b-b200.toml")]).stdout
    flat = " ".join(out.split())
    assert ("Ranked for this demand (cheapest first), money in USD; over each term: nominal "
            "over the term (Nominal) and its present value at 10.0% a year (PV)") in flat
    (own,) = [x.split() for x in out.splitlines() if x.strip().startswith("=> 1")]
    nominal, pv = (int(v.replace(",", "")) for v in own[-2:])
    monthly = int(own[own.index("build") + 1].replace(",", ""))
    assert nominal == pytest.approx(monthly * 12, abs=12)  # whole USD a month, rounded
    assert pv == pytest.approx(monthly * ANNUITY, abs=12)
    page = web.get("/quotes?scenario=fixture%3Acurve-gpt-oss-120b-b200").get_data(as_text=True)
    heads = [text_of(h) for h in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', page)]
    assert heads[-2:] == ["Nominal over the term", "Present value at 10.0%"]
    row = re.search(r'<tr class="quote-row recommended"[^>]*>(.*?)</tr>', page, re.S).group(1)
    assert text_of(re.search(r'term-nominal"[^>]*>(.*?)</td>', row, re.S).group(1)) == \
        f"{nominal:,} USD over 12 months"
    assert text_of(re.search(r'term-pv"[^>]*>(.*?)</td>', row, re.S).group(1)) == f"{pv:,} USD"
