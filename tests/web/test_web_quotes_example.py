"""The Quotes page's DeepSeek R1 example decides, with Flask's test client: the example link
(example-quotes.toml for the buyer's demand of 20,000 Mtok a month at 169 token/s/user)
ranks every one of its three quotes beside DeepSeek R1 own builds (the model its quotes
serve: no "models differ", no "names no hardware") and recommends one; a link to the example
that names no own build gets the same builds; the fixture says where each value comes from.

vendor-a-tokens by hand: (8192 x 0.55 + 1024 x 2.19) / 9216 = 0.73222 USD a mixed Mtok, so
20,000 Mtok a month is 14,644 USD. The capacity offers are sized on GB300 throughput at the
service level (the GB300 matched point, 165 token/s an accelerator, as the page says):
7,610 token/s / 165 is 47 accelerators, 47 x 2.40 USD/h x 730 h = 82,344 USD a month for
vendor-c; vendor-b's 14,000 USD for 8 a month is 1,750 each, 47 x 1,750 = 82,250 USD.
"""
from __future__ import annotations

import html
import re
import tomllib

from conftest import ROOT


def text_of(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def ranked_rows(page: str) -> dict[str, str]:
    """offer -> its row's words, in rank order."""
    return {m.group(1): text_of(m.group(2)) for m in re.finditer(
        r'<tr class="quote-row[^"]*" data-quote="([^"]+)">(.*?)</tr>', page, re.S)}


def assert_decided(page: str) -> None:
    rows = ranked_rows(page)
    assert set(rows) == {"vendor-a-tokens", "vendor-b-reserved", "vendor-c-no-point",
                         "deepseek-r1 gb300 matched", "deepseek-r1 jalapeno matched"}
    assert "Not ranked" not in page and "names no hardware" not in page
    assert "models differ" not in page and "gpt-oss" not in text_of(
        page.split('id="change-h"')[0])
    monthly = re.search(r'data-quote="vendor-a-tokens">.*?class="num monthly"[^>]*>(.*?)</td>',
                        page, re.S).group(1)
    assert text_of(monthly) == "14,644 USD"
    assert "82,250 USD" in rows["vendor-b-reserved"]
    assert "82,344 USD" in rows["vendor-c-no-point"]
    assert "47" in rows["vendor-c-no-point"].split()
    assert re.search(r'<div class="answer recommendation" role="status"><p><strong>Take ', page)


def test_the_example_link_decides_every_quote(web):
    first = web.get("/quotes").get_data(as_text=True)
    link = html.unescape(re.search(r'<a href="([^"]+)" data-testid="example-deepseek">',
                                   first).group(1))
    resp = web.get(link)
    assert resp.status_code == 200
    assert_decided(resp.get_data(as_text=True))


def test_the_example_without_builds_gets_its_own(web):
    page = web.get("/quotes?quotes=example-quotes&d_volume=20000&d_interactivity=169")
    assert_decided(page.get_data(as_text=True))


def test_every_example_value_says_where_it_comes_from():
    path = ROOT / "fixtures" / "quotes" / "example-quotes.toml"
    text = path.read_text(encoding="utf-8")
    assert "ILLUSTRATIVE ASSUMPTIONS" in text and "hardware the capacity" in text
    for quote in tomllib.loads(text)["quote"]:
        assert quote["source"].startswith("illustrative assumption"), quote["name"]
        if quote["form"] != "per_mtok":
            assert quote["hardware"] == "gb300", quote["name"]
