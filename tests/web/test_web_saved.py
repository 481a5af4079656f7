"""The Saved-scenarios pages, sign-in with an API key, CSRF and sign-out (Flask test client).

Each test makes its own keys and scenarios (the ``database`` fixture is module-wide); the
figures a page shows are the API's for the same revision, rounded by the display rules.
"""
from __future__ import annotations

import io
import re
import tomllib
import uuid
from html import unescape
from urllib.parse import parse_qsl, urlencode

import openpyxl
import pytest
from conftest import ROOT, auth

from costmodel.render import display
from costmodel.store.repo import key_create, key_revoke, scenario_list
from costmodel.web.scenario_form import DEFAULTS, scenario_form

API = "/api/v1"


def _key(app, role: str) -> tuple[int, str]:
    with app.extensions["costmodel"].sessions() as session:
        row, token = key_create(session, f"web-{role}-{uuid.uuid4().hex[:6]}", role)
        return row.id, token


def _csrf(client, path: str = "/signin") -> str:
    r = client.get(path)
    found = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
    assert found, f"no CSRF field on {path} ({r.status_code})"
    return found.group(1)


def _sign_in(client, token: str) -> None:
    r = client.post("/signin", data={"api_key": token, "csrf_token": _csrf(client),
                                     "next": "/saved"})
    assert r.status_code == 303, r.text
    assert r.headers["Location"] == "/saved"


def _text(html: str) -> str:
    """A page's visible text, one space between words."""
    html = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


# the Price form filled in as the sample TCO scenario is (a system, the facility meter, 70 %
# utilisation...): the form itself starts from the engine's defaults
SAMPLE = {**DEFAULTS, "system": "gb300-nvl72", "electricity": "eia-2026-05-us-industrial",
          "boundary": "facility", "basis": "rated", "utilisation": "70", "life": "5",
          "cost_of_capital": "10", "salvage": "10", "margin": "50"}


def _save(client, name: str, target: str = "new", **fields: str):
    """POST the Price form's fields (the sample's plus ``fields``) as a save; the response."""
    values = {**SAMPLE, **fields}
    token = _csrf(client, "/saved/new?" + urlencode(values))
    return client.post("/saved/new", data={**values, "target": target, "saved_name": name,
                                           "csrf_token": token})


def _count(app, name: str) -> tuple[int, int]:
    """(saved scenarios named ``name``, their revisions in all)."""
    with app.extensions["costmodel"].sessions(write=False) as session:
        rows, total = scenario_list(session, q=name)
        return total, sum(r.latest_revision for r in rows)


def _shown(q: dict, name: str) -> str:
    return display.format_quantity(q["value"], q["unit"], name)


def test_an_editor_saves_two_revisions_and_the_pages_show_the_api_figures(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"web save {uuid.uuid4().hex[:8]}"
    r = _save(client, name)
    assert r.status_code == 303, _text(r.text)
    sid = int(re.fullmatch(r"/saved/(\d+)/revisions/1\?saved=1", r.headers["Location"])[1])

    page = client.get(r.headers["Location"])
    assert page.status_code == 200
    text = _text(page.text)
    api = client.get(f"{API}/scenarios/{sid}/revisions/1", headers=auth(editor)).json
    res = api["result"]
    # the sample's form: GB300 at its published peak, facility boundary, 70 % utilisation
    assert res["cost_per_mtok"]["total"]["value"] == pytest.approx(0.06770, rel=1e-3)
    for q, figure in ((res["cost_per_mtok"]["total"], "cost_per_mtok_total"),
                      (res["price_per_mtok"]["total"], "price_per_mtok_total"),
                      (res["price_per_mtok"]["input"], "price_per_mtok_input"),
                      (res["price_per_mtok"]["output"], "price_per_mtok_output"),
                      (res["cost_per_mtok"]["energy"], "cost_per_mtok_energy"),
                      (res["cost_per_mtok"]["capex"], "cost_per_mtok_capex"),
                      (res["power_per_accelerator"], "power_per_accelerator"),
                      (res["tokens_per_kwh"], "tokens_per_kwh")):
        shown = _shown(q, figure)
        assert f'data-figure="{figure}">{shown}<' in page.text, figure
    assert "Cost per million tokens 0.0677 USD/Mtok" in text
    assert "Tokens per kWh 23,276,600 token/kWh" in text
    assert f"by {api['created_by']}" in text
    # the stored disclosure in the Price page's words: the boundary, power, electricity
    assert ("Power Rated power counted at the facility meter (rack power x PUE): 2,551 W per "
            "accelerator") in text
    assert "Electricity 0.0871 USD/kWh, from EIA" in text
    assert "Costs are per million mixed tokens" in text
    # "edit in Price" carries the form that reproduces the scenario
    link = re.search(r'href="/\?([^"]+)">Edit in Price', page.text)[1]
    edited = scenario_form(dict(parse_qsl(unescape(link), keep_blank_values=True)))
    assert edited.valid and edited.mapping == api["scenario"]

    # the next revision: only the utilisation changes, 70 % -> 50 %
    r = _save(client, "", target=str(sid), utilisation="50")
    assert r.status_code == 303, _text(r.text)
    assert r.headers["Location"] == f"/saved/{sid}/revisions/2?saved=1"
    api2 = client.get(f"{API}/scenarios/{sid}/revisions/2", headers=auth(editor)).json
    assert api2["scenario"]["utilisation"] == "50 %"
    assert api2["created_by"] == api["created_by"]
    # the same inputs again are no edit: nothing new, and the page says so
    r = _save(client, "", target=str(sid), utilisation="50")
    assert r.headers["Location"] == f"/saved/{sid}/revisions/2?saved=same"
    assert _count(app, name) == (1, 2)

    diff = client.get(f"/saved/{sid}/diff?a=1&b=2")
    assert diff.status_code == 200
    rows = re.findall(r'<tr><th scope="row"><code>([^<]+)</code></th><td class="old">([^<]*)'
                      r'</td><td class="new">([^<]*)</td></tr>', diff.text)
    assert rows == [("utilisation", "70 %", "50 %")]
    old = api["result"]["cost_per_mtok"]["total"]["value"]
    new = api2["result"]["cost_per_mtok"]["total"]["value"]
    # fewer hours busy: the hourly costs spread over fewer tokens (energy scales less)
    assert 1.3 < new / old < 70 / 50
    moved = _text(diff.text)
    unit = "USD/Mtok"
    f = "cost_per_mtok_total"
    assert (f"Cost per million tokens {display.format_quantity(old, unit, f)} "
            f"{display.format_quantity(new, unit, f)} "
            f"+{display.format_quantity(new - old, unit, f)} "
            f"{display.format_ratio(new / old)}") in moved

    # the list finds it by name, and the scenario page lists both revisions
    listed = _text(client.get("/saved?" + urlencode({"q": name})).text)
    assert f"1 saved scenario whose name contains “{name}”" in listed
    scen = _text(client.get(f"/saved/{sid}").text)
    assert re.search(rf"2 \(latest\) .* {re.escape(display.format_quantity(new, unit, f))}",
                     scen)
    # the workbook of a revision (priced today from its inputs) opens, with its inputs
    book = client.get(f"/saved/{sid}/revisions/2/workbook")
    assert book.status_code == 200
    wb = openpyxl.load_workbook(io.BytesIO(book.data))
    assert "Inputs" in wb.sheetnames
    # the JSON download is the API's revision
    js = client.get(f"/saved/{sid}/revisions/2.json")
    assert js.json["result"] == api2["result"] and js.json["scenario"] == api2["scenario"]


def test_a_viewer_is_refused_saving_and_nothing_is_saved(app, client):
    _, viewer = _key(app, "viewer")
    _sign_in(client, viewer)
    name = f"viewer save {uuid.uuid4().hex[:8]}"
    r = _save(client, name)
    assert r.status_code == 403
    text = _text(r.text)
    assert "This needs the editor role" in text and "has the viewer role" in text
    assert "Nothing was saved." in text
    assert "Traceback" not in r.text
    assert _count(app, name) == (0, 0)
    # the viewer reads (reads are closed in this app: the key is what lets it in)
    assert client.get("/saved").status_code == 200


def test_a_post_without_the_csrf_token_is_refused_and_nothing_is_saved(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"csrf {uuid.uuid4().hex[:8]}"
    body = {**DEFAULTS, "target": "new", "saved_name": name}
    r = client.post("/saved/new", data=body)
    assert r.status_code == 400
    assert "it carries no security token" in _text(r.text)
    r = client.post("/saved/new", data={**body, "csrf_token": "forged"})
    assert r.status_code == 400
    assert "does not match this browser's session" in _text(r.text)
    assert _count(app, name) == (0, 0)
    # signing out needs the token too (a page elsewhere cannot sign a user out)
    assert client.post("/signout").status_code == 400


def test_sign_out_clears_the_session(app, client):
    _, editor = _key(app, "editor")
    assert client.get("/saved").status_code == 401  # reads are closed here
    _sign_in(client, editor)
    page = client.get("/saved")
    assert page.status_code == 200
    assert re.search(r"Signed in: web-editor-\w+ \(editor\)", _text(page.text))
    token = _csrf(client, "/saved")
    r = client.post("/signout", data={"csrf_token": token})
    assert r.status_code == 303
    # the cookie is dropped (an empty session is deleted)
    assert "session=;" in r.headers["Set-Cookie"] and "Expires=Thu, 01 Jan 1970" in \
        r.headers["Set-Cookie"]
    assert client.get_cookie("session") is None
    r = client.get("/saved")
    assert r.status_code == 401
    assert "Sign in with an API key to see saved scenarios" in _text(r.text)


def test_a_revoked_key_stops_working_at_once(app, client):
    key_id, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"revoked {uuid.uuid4().hex[:8]}"
    values = {**DEFAULTS, "target": "new", "saved_name": name}
    token = _csrf(client, "/saved/new?" + urlencode(values))  # the page open before
    with app.extensions["costmodel"].sessions() as session:
        key_revoke(session, key_id)
    r = client.post("/saved/new", data={**values, "csrf_token": token})
    assert r.status_code == 401
    assert "Your key was revoked or removed since you signed in" in _text(r.text)
    assert _count(app, name) == (0, 0)
    assert client.get("/saved").status_code == 401  # reads too
    # and signing in with it again is refused in the API's words
    r = client.post("/signin", data={"api_key": editor, "csrf_token": _csrf(client)})
    assert r.status_code == 401
    assert "The API key is not valid or was revoked." in _text(r.text)


def test_a_bad_field_is_refused_with_the_api_message_and_nothing_is_saved(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"bad {uuid.uuid4().hex[:8]}"
    r = _save(client, name, utilisation="seventy")
    assert r.status_code == 422
    form = scenario_form({**DEFAULTS, "utilisation": "seventy"})
    api = client.post(f"{API}/scenarios", json={"name": name, "scenario": form.mapping},
                      headers=auth(editor))
    assert api.status_code == 422
    (message,) = [e["message"] for e in api.json["errors"] if e["path"] ==
                  "scenario.utilisation"]
    text = _text(r.text)
    assert f"Nothing was saved: fix the scenario first Utilisation: {message}" in text
    # an empty name is refused at the name field, with pydantic's words as the API gives
    r = _save(client, "")
    assert r.status_code == 422
    assert "String should have at least 1 character" in _text(r.text)
    assert _count(app, name) == (0, 0)


def test_sign_in_refuses_a_bad_key_and_never_redirects_off_site(app, client):
    r = client.post("/signin", data={"api_key": "cm_nothing_here", "csrf_token":
                                     _csrf(client)})
    assert r.status_code == 401
    assert "The API key is not valid or was revoked." in _text(r.text)
    _, viewer = _key(app, "viewer")
    r = client.post("/signin", data={"api_key": viewer, "csrf_token": _csrf(client),
                                     "next": "https://evil.example/x"})
    assert r.headers["Location"] == "/saved"
    for elsewhere in ("//evil.example/x", "/\\evil.example/x", "javascript:alert(1)"):
        r = client.post("/signin", data={"api_key": viewer, "csrf_token": _csrf(client),
                                         "next": elsewhere})
        assert r.headers["Location"] == "/saved", elsewhere
    # a page of this site (the referrer of a refused form) is where sign-in returns
    r = client.post("/signin", data={"api_key": viewer, "csrf_token": _csrf(client),
                                     "next": "http://localhost/quotes?scenario=x"})
    assert r.headers["Location"] == "/quotes?scenario=x"


def test_the_session_cookie_is_secure_except_on_plain_http_on_loopback(app):
    for base, remote, secure in (("http://127.0.0.1:8000", "127.0.0.1", False),
                                 ("http://localhost", "::1", False),
                                 ("https://costmodel.example", "10.0.0.9", True),
                                 ("http://costmodel.example", "10.0.0.9", True),
                                 ("http://127.0.0.1", "10.0.0.9", True)):
        client = app.test_client()
        env = {"REMOTE_ADDR": remote}
        page = client.get("/signin", base_url=base, environ_base=env)
        cookie = page.headers["Set-Cookie"]
        assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert ("Secure" in cookie) is secure, (base, remote, cookie)


def test_reads_are_open_on_loopback_but_saving_still_needs_a_key(database):
    from costmodel.server import create_app
    opened = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    try:
        client = opened.test_client()
        assert client.get("/saved").status_code == 200
        name = f"anonymous {uuid.uuid4().hex[:8]}"
        r = _save(client, name)
        assert r.status_code == 401
        assert "writing needs an editor key" in _text(r.text)
        assert _count(opened, name) == (0, 0)
    finally:
        opened.extensions["costmodel"].dispose()


def test_an_unknown_scenario_or_revision_is_a_404_in_words(app, client):
    _, viewer = _key(app, "viewer")
    _sign_in(client, viewer)
    r = client.get("/saved/999999/revisions/1")
    assert r.status_code == 404
    assert "no scenario 999999" in _text(r.text)
    assert "Traceback" not in r.text


def test_input_changes_are_key_by_key_with_added_and_removed_inputs():
    from costmodel.web.saved import InputChange, input_changes
    old = {"utilisation": 0.7, "financing": {"life": "5 year", "salvage": 0.1},
           "electricity": {"price": {"value": 0.08, "unit": "USD/kWh"}}}
    new = {"utilisation": 0.7, "financing": {"life": "4 year"},
           "electricity": {"price": {"value": 0.1, "unit": "USD/kWh"}}, "system": "hgx-8gpu"}
    assert input_changes(old, new) == [
        InputChange("electricity.price", "0.08 USD/kWh", "0.1 USD/kWh"),
        InputChange("financing.life", "5 year", "4 year"),
        InputChange("financing.salvage", "0.1", "-"),
        InputChange("system", "-", "hgx-8gpu")]
    assert input_changes(new, new) == []


def test_a_saved_mapping_becomes_the_price_pages_query_and_says_what_it_drops():
    from costmodel.web.saved import price_query
    sample = tomllib.loads((ROOT / "fixtures" / "scenarios" / "sample-tco.toml").read_text())
    query, dropped = price_query(sample)
    form = scenario_form(dict(parse_qsl(query, keep_blank_values=True)))
    assert form.valid, form.errors
    # fractions become percentages the form reads back: 0.7 -> "70 %", 0.10 -> "10 %"
    assert form.values["utilisation"] == "70 %" and form.values["cost_of_capital"] == "10 %"
    assert form.mapping["utilisation"] == "70 %"
    assert form.values["boundary"] == "facility" and form.values["life"] == "5 year"
    # the rack, node, facility and idle inputs are not on the Price form: said, not lost
    assert {"node.accelerators", "rack.price", "facility.pue", "idle_power",
            "electricity.carbon_intensity"} <= set(dropped)


def test_an_older_stored_disclosure_is_still_shown():
    from costmodel.web.saved import disclosure_of
    assert disclosure_of({"disclosure": {"boundary": "chip"}}) is None  # the fallback list
    assert disclosure_of({}) is None


# ---- saving from the Price page -------------------------------------------------------------

def _form_fields(page: str, testid: str) -> tuple[str, dict[str, str]]:
    """(action, {name: value}) of the form marked ``data-testid=testid``: its inputs as a
    browser sends them (those with a name; a radio button when checked; selects and text
    areas are not read)."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        inside, action, fields = False, "", {}

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "form" and a.get("data-testid") == testid:
                self.inside, self.action = True, a["action"]
            elif tag == "input" and self.inside and a.get("name") and (
                    a.get("type") not in ("radio", "checkbox") or "checked" in a):
                self.fields[a["name"]] = a.get("value") or ""

        def handle_endtag(self, tag):
            if tag == "form":
                self.inside = False

    reader = Reader()
    reader.fields = {}
    reader.feed(page)
    assert reader.action, f"no form {testid} on the page"
    return reader.action, reader.fields


def test_the_price_page_saves_the_scenario_on_screen_as_a_new_saved_scenario(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    shown = {"utilisation": "60", "margin": "40"}
    page = client.get("/?" + urlencode(shown))
    assert page.status_code == 200
    # beside the result: after the answer's figures, before the breakdown and the form
    assert page.text.index('data-figure="price_per_mtok_total"') < \
        page.text.index('data-testid="save-new"') < page.text.index("What the cost is")
    action, fields = _form_fields(page.text, "save-new")
    assert action == "/saved/new" and fields["target"] == "new" and fields["csrf_token"]
    name = f"from price {uuid.uuid4().hex[:8]}"
    r = client.post(action, data={**fields, "saved_name": name})
    assert r.status_code == 303, _text(r.text)
    sid = int(re.fullmatch(r"/saved/(\d+)/revisions/1\?saved=1", r.headers["Location"])[1])
    api = client.get(f"{API}/scenarios/{sid}/revisions/1", headers=auth(editor)).json
    assert api["scenario"] == scenario_form(shown).mapping  # the scenario on screen
    price = api["result"]["price_per_mtok"]["total"]
    assert f"{_shown(price, 'price_per_mtok_total')}<" in page.text  # the figure it showed
    assert _count(app, name) == (1, 1)
    # the name offered is the scenario's own
    assert fields["saved_name"] == scenario_form(shown).mapping["name"]


def test_the_price_page_opened_from_a_saved_scenario_saves_its_next_revision(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"revise from price {uuid.uuid4().hex[:8]}"
    r = _save(client, name)
    sid = int(re.search(r"/saved/(\d+)/", r.headers["Location"])[1])
    revision = client.get(f"/saved/{sid}/revisions/1").text
    link = unescape(re.search(r'href="(/\?[^"]+)">Edit in Price', revision)[1])
    assert f"from_saved={sid}&based_on=1" in link
    page = client.get(link)
    assert f"Opened from saved scenario #{sid} {name}" in _text(page.text)
    assert "Save as revision 2 of" in _text(page.text)
    # the Price form keeps where it came from as it is priced again (utilisation 70 -> 50)
    _, carried = _form_fields(page.text.replace('class="scenario-form"',
                                                'class="scenario-form" data-testid="p"'), "p")
    assert carried["from_saved"] == str(sid) and carried["based_on"] == "1"
    page = client.get("/?" + urlencode({**carried, "utilisation": "50"}))
    action, fields = _form_fields(page.text, "save-revision")
    assert fields["target"] == str(sid) and fields["based_on"] == f"{sid}:1"
    r = client.post(action, data=fields)
    assert r.status_code == 303, _text(r.text)
    assert r.headers["Location"] == f"/saved/{sid}/revisions/2?saved=1"
    api = client.get(f"{API}/scenarios/{sid}/revisions/2", headers=auth(editor)).json
    assert api["scenario"]["utilisation"] == "50 %"

    # someone saves revision 3 meanwhile: the page opened at revision 2 saves nothing (409)
    stale = client.get("/?" + urlencode({**carried, "based_on": "2", "utilisation": "40"}))
    _, stale_fields = _form_fields(stale.text, "save-revision")
    assert _save(client, "", target=str(sid), utilisation="45").status_code == 303
    r = client.post("/saved/new", data=stale_fields)
    assert r.status_code == 409
    assert f"Scenario #{sid} moved on to revision 3" in _text(r.text)
    assert _count(app, name) == (1, 3)
    # and reopened, the page says it was saved again since
    again = _text(client.get("/?" + urlencode({**carried, "based_on": "2"})).text)
    assert "which was saved again since (now at revision 3" in again
    assert "Save as revision 4 of" in again
    # a link to a scenario that is not there: said, and saving makes a new one
    gone = client.get("/?from_saved=999999&based_on=1").text
    assert "There is no saved scenario #999999" in _text(gone)
    assert 'data-testid="save-revision"' not in gone and 'data-testid="save-new"' in gone


def test_saving_from_the_price_page_needs_the_csrf_token(app, client):
    _, editor = _key(app, "editor")
    _sign_in(client, editor)
    name = f"price csrf {uuid.uuid4().hex[:8]}"
    _, fields = _form_fields(client.get("/").text, "save-new")
    fields["saved_name"] = name
    for token, why in ((None, "it carries no security token"),
                       ("forged", "does not match this browser's session")):
        body = {k: v for k, v in fields.items() if k != "csrf_token"}
        if token:
            body["csrf_token"] = token
        r = client.post("/saved/new", data=body)
        assert r.status_code == 400 and why in _text(r.text)
    # another browser's page (its own session's token) is refused in this one too
    other = app.test_client()
    _sign_in(other, editor)
    _, theirs = _form_fields(other.get("/").text, "save-new")
    r = client.post("/saved/new", data={**fields, "csrf_token": theirs["csrf_token"]})
    assert r.status_code == 400
    assert _count(app, name) == (0, 0)


def test_signed_out_or_read_only_the_price_page_says_what_saving_needs(app, client,
                                                                       database):
    from costmodel.server import create_app
    opened = create_app({"DATABASE_URL": database, "OPEN_READS": True, "TESTING": True})
    try:
        anonymous = opened.test_client()
        page = anonymous.get("/?utilisation=60")
        assert page.status_code == 200
        hint = _text(re.search(r'data-testid="save-hint">(.*?)</p>', page.text, re.S)[1])
        assert hint == ("To save this scenario, sign in with an API key that can write "
                        "(an editor's).")
        assert 'href="/signin?next=/?utilisation%3D60"' in page.text
        assert 'name="csrf_token"' not in page.text  # no form to save with
        assert "Set-Cookie" not in page.headers  # a reader without a key gets no session
    finally:
        opened.extensions["costmodel"].dispose()
    _, viewer = _key(app, "viewer")
    _sign_in(client, viewer)
    page = client.get("/")
    hint = _text(re.search(r'data-testid="save-hint">(.*?)</p>', page.text, re.S)[1])
    assert re.fullmatch(r"Saving needs a key that can write \(an editor's\); you are signed in "
                        r"with “web-viewer-\w+”, a viewer's key\. Sign in with an editor key "
                        r"to save this scenario\.", hint), hint
    assert 'data-testid="save-new"' not in page.text
