"""The words of the forms' labels, with Flask's test client: every field's label on every
page is :func:`costmodel.web.labels.label_of` its name, and every page's list of errors names
a field by that label ("Exchange rate", never "fx rate"); a currency chosen without its rate
says what to type in each blank field rather than "required"."""
from __future__ import annotations

import html
import re

import pytest

from costmodel.web.labels import LABELS, label_of

PAGES = ["/", "/sensitivity", "/plan", "/task", "/quotes", "/compare"]


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def labels_on(page: str) -> dict[str, str]:
    """field name -> its label's words (a unit shown beside the words left out)."""
    out = {}
    for m in re.finditer(r'<label for="f-([a-z_0-9]+)">(.*?)</label>', page, re.S):
        out[m.group(1)] = text_of(re.sub(r'<span class="unit">.*?</span>', "", m.group(2)))
    return out


def summary_of(page: str) -> list[tuple[str, str]]:
    """The list of errors above a page that computed nothing: (the field's words, message)."""
    block = re.search(r'<div class="not-priced" role="alert">(.*?)</div>', page, re.S)
    assert block, "no list of errors"
    return [(text_of(m.group(1)), text_of(m.group(2))) for m in re.finditer(
        r'<li><a href="[^"]*">(.*?)</a>:(.*?)</li>', block.group(1), re.S)]


def test_a_path_is_said_as_the_label_of_its_field():
    assert label_of("fx_rate") == "Exchange rate"
    assert label_of("money.fx.EUR.rate") == "Exchange rate"
    assert label_of("money.fx.GBP.date") == "Date of the rate"
    assert label_of("financing.cost_of_capital") == "Cost of capital"
    assert label_of("load.hourly[3]") == "Weekdays (or every day): 24 fractions"
    assert label_of("pl_budget") == "Power budget"


@pytest.mark.parametrize("path", PAGES)
def test_every_label_on_every_page_is_the_mapping(web, path):
    page = web.get(path).get_data(as_text=True)
    shown = labels_on(page)
    named = {k: v for k, v in shown.items() if k in LABELS}
    assert len(named) >= 4, shown  # every page has fields of its own and the currency's
    assert named == {k: LABELS[k] for k in named}
    assert shown["fx_rate"] == "Exchange rate"


MISSING = {
    "Exchange rate": "figures in EUR need the rate they are converted at: type how many EUR "
                     "one USD buys (a bare number is EUR/USD)",
    "Date of the rate": "type the date of the EUR rate (YYYY-MM-DD), so the figures say when "
                        "it held",
    "Source of the rate": "type where the EUR rate comes from (e.g. a central bank's "
                          "reference rate of the day)",
}


@pytest.mark.parametrize("path", PAGES)
def test_a_currency_without_its_rate_says_what_is_missing_by_label(web, path):
    resp = web.get(f"{path}?currency=EUR")
    assert resp.status_code == 422
    page = resp.get_data(as_text=True)
    listed = summary_of(page)
    assert listed == list(MISSING.items())
    assert "fx rate" not in page and "exchange date" not in page
    assert ">required<" not in page


def test_a_page_field_is_listed_by_its_label(web):
    page = web.get("/plan?pl_budget=ten").get_data(as_text=True)
    assert summary_of(page) == [("Power budget", "cannot read 'ten' as a quantity: expected "
                                                 "a number then a unit, e.g. \"700 W\"")]
    page = web.get("/?cost_of_capital=170").get_data(as_text=True)
    assert summary_of(page) == [("Cost of capital", "must be at most 100 %, got 170 %")]
