"""Writes that race: equal content posted at the same instant is one edit, not two; If-Match
with a stale ETag is a 412 and writes nothing; revisions record the id of the key that wrote
them. Real concurrent requests (threads, each its own test client) on each backend."""
from __future__ import annotations

import re
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from itertools import pairwise

import pytest
from conftest import auth
from sqlalchemy import select
from test_web_saved import _csrf, _key, _sign_in, _text

from costmodel.store.models import ScenarioRevision
from costmodel.web.scenario_form import DEFAULTS

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
PAIRS = 50


def _new(client, editor: str, name: str = "race") -> tuple[int, str]:
    r = client.post(f"{API}/scenarios", json={"name": name, "scenario": GB300},
                    headers=auth(editor))
    assert r.status_code == 201, r.text
    return r.get_json()["scenario_id"], r.headers["ETag"]


def _hashes(app, sid: int) -> list[str]:
    with app.extensions["costmodel"].sessions(write=False) as s:
        return list(s.scalars(select(ScenarioRevision.content_hash)
                              .where(ScenarioRevision.scenario_id == sid)
                              .order_by(ScenarioRevision.number)))


def _at_once(*posts) -> list:
    """Each of ``posts`` called from its own thread, the threads released together; their
    answers."""
    barrier = threading.Barrier(len(posts))

    def go(post):
        barrier.wait(timeout=60)
        return post()

    with ThreadPoolExecutor(len(posts)) as pool:
        return list(pool.map(go, posts))


def _no_equal_neighbours(hashes: list[str]) -> bool:
    return all(a != b for a, b in pairwise(hashes))


def test_equal_bodies_posted_at_once_are_one_revision(app, tokens):
    sid, _ = _new(app.test_client(), tokens["editor"])
    url, headers = f"{API}/scenarios/{sid}/revisions", auth(tokens["editor"])
    statuses = []
    for k in range(PAIRS):
        body = {"scenario": {**GB300, "utilisation": 0.2 + k / 100}}
        post = partial(app.test_client().post, url, json=body, headers=headers)
        answers = _at_once(post, partial(app.test_client().post, url, json=body,
                                         headers=headers))
        statuses.append(sorted(a.status_code for a in answers))
        assert answers[0].get_json()["number"] == answers[1].get_json()["number"] == k + 2
    assert statuses == [[200, 201]] * PAIRS  # one saved it, the other found it equal
    hashes = _hashes(app, sid)
    assert len(hashes) == PAIRS + 1
    assert _no_equal_neighbours(hashes)


def test_equal_saves_from_the_page_at_once_are_one_revision(app):
    _, editor = _key(app, "editor")
    sid, _ = _new(app.test_client(), editor, "race web")
    browsers = [app.test_client(), app.test_client()]
    for b in browsers:
        _sign_in(b, editor)
    tokens = [_csrf(b, "/saved") for b in browsers]
    for k in range(10):
        values = {**DEFAULTS, "utilisation": str(20 + k), "target": str(sid), "saved_name": ""}
        answers = _at_once(*(partial(b.post, "/saved/new", data={**values, "csrf_token": t})
                             for b, t in zip(browsers, tokens, strict=True)))
        where = sorted(a.headers["Location"] for a in answers)
        assert where == [f"/saved/{sid}/revisions/{k + 2}?saved=1",
                         f"/saved/{sid}/revisions/{k + 2}?saved=same"]
    hashes = _hashes(app, sid)
    assert len(hashes) == 11 and _no_equal_neighbours(hashes)


# ---- If-Match ----------------------------------------------------------------------------

def test_the_scenario_etag_is_its_latest_revisions_and_if_match_checks_it(app, tokens):
    client = app.test_client()
    editor, viewer = auth(tokens["editor"]), auth(tokens["viewer"])
    sid, created_tag = _new(client, tokens["editor"])
    got = client.get(f"{API}/scenarios/{sid}", headers=viewer)
    tag = got.headers["ETag"]
    assert tag == created_tag == client.get(f"{API}/scenarios/{sid}/revisions/1",
                                            headers=viewer).headers["ETag"]
    url = f"{API}/scenarios/{sid}/revisions"
    # the current tag: saved, and the answer's ETag is the scenario's new one
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.5}},
                    headers={**editor, "If-Match": tag})
    assert r.status_code == 201
    new_tag = r.headers["ETag"]
    assert new_tag != tag
    assert client.get(f"{API}/scenarios/{sid}", headers=viewer).headers["ETag"] == new_tag
    assert client.get(f"{API}/scenarios/{sid}/revisions/2",
                      headers=viewer).headers["ETag"] == new_tag
    # the old tag is stale: 412, as a problem, and nothing written
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.6}},
                    headers={**editor, "If-Match": tag})
    assert r.status_code == 412
    assert r.mimetype == "application/problem+json"
    problem = r.get_json()
    assert problem["status"] == 412 and "revision 2" in problem["detail"]
    assert r.headers["ETag"] == new_tag  # what it would have to be now
    # stale even when the content equals the latest: the precondition comes first
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.5}},
                    headers={**editor, "If-Match": tag})
    assert r.status_code == 412
    assert len(_hashes(app, sid)) == 2
    # one of several tags matching is enough; a weak tag never matches (strong comparison)
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.6}},
                    headers={**editor, "If-Match": f'"0000", {new_tag}'})
    assert r.status_code == 201
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.7}},
                    headers={**editor, "If-Match": "W/" + r.headers["ETag"]})
    assert r.status_code == 412
    # "*" matches any existing scenario, and none that does not exist
    r = client.post(url, json={"scenario": {**GB300, "utilisation": 0.7}},
                    headers={**editor, "If-Match": "*"})
    assert r.status_code == 201
    r = client.post(f"{API}/scenarios/2147483000/revisions", json={"scenario": GB300},
                    headers={**editor, "If-Match": "*"})
    assert r.status_code == 404


def test_if_match_is_atomic_with_the_write(app, tokens):
    # two editors holding the same tag post different edits at once: exactly one is saved
    client = app.test_client()
    sid, tag = _new(client, tokens["editor"])
    url = f"{API}/scenarios/{sid}/revisions"
    headers = {**auth(tokens["editor"]), "If-Match": tag}
    for k in range(20):
        answers = _at_once(*(partial(app.test_client().post, url, headers=dict(headers), json={
            "scenario": {**GB300, "utilisation": 0.2 + k / 100 + i / 1000}}) for i in (1, 2)))
        assert sorted(a.status_code for a in answers) == [201, 412]
        headers["If-Match"] = next(a for a in answers if a.status_code == 201).headers["ETag"]
    assert len(_hashes(app, sid)) == 21


def test_if_match_is_in_the_document(app):
    spec = app.test_client().get(f"{API}/openapi.json").get_json()
    post = spec["paths"][f"{API}/scenarios/{{scenario_id}}/revisions"]["post"]
    assert any(p["name"] == "If-Match" and p["in"] == "header" for p in post["parameters"])
    assert post["responses"]["412"]["content"]["application/problem+json"]
    schema = spec["components"]["schemas"]["RevisionOut"]
    assert "created_by_key_id" in schema["properties"]


def test_the_page_saves_nothing_when_the_scenario_moved_on(app):
    _, editor = _key(app, "editor")
    client = app.test_client()
    sid, _ = _new(client, editor, f"moved {uuid.uuid4().hex[:6]}")
    _sign_in(client, editor)
    values = {**DEFAULTS, "utilisation": "40", "target": str(sid), "saved_name": ""}
    page = client.get("/saved/new", query_string=values)
    based_on = re.search(r'name="based_on" value="([^"]*)"', page.text)[1]
    assert f"{sid}:1" in based_on.split()
    csrf = _csrf(client, "/saved")
    # someone else saves revision 2 meanwhile
    r = client.post(f"{API}/scenarios/{sid}/revisions", headers=auth(editor),
                    json={"scenario": {**GB300, "utilisation": 0.9}})
    assert r.status_code == 201
    r = client.post("/saved/new", data={**values, "based_on": based_on, "csrf_token": csrf})
    assert r.status_code == 409
    text = _text(r.text)
    assert f"Scenario #{sid} moved on to revision 2" in text and "Nothing was saved" in text
    assert len(_hashes(app, sid)) == 2
    # the page offers the new revision to save over: sent again, it is saved as revision 3
    based_on = re.search(r'name="based_on" value="([^"]*)"', r.text)[1]
    assert f"{sid}:2" in based_on.split()
    r = client.post("/saved/new", data={**values, "based_on": based_on, "csrf_token": csrf})
    assert r.status_code == 303
    assert r.headers["Location"] == f"/saved/{sid}/revisions/3?saved=1"


# ---- authorship --------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["api", "page"])
def test_revisions_record_the_key_id_of_their_author(app, how):
    name = f"same-name-{uuid.uuid4().hex[:6]}"
    from costmodel.store.repo import key_create
    with app.extensions["costmodel"].sessions() as s:  # two keys with one name
        (a, token_a), (b, token_b) = key_create(s, name, "editor"), key_create(s, name, "editor")
        ids = a.id, b.id
    client = app.test_client()
    sid, _ = _new(client, token_a)
    if how == "api":
        r = client.post(f"{API}/scenarios/{sid}/revisions", headers=auth(token_b),
                        json={"scenario": {**GB300, "utilisation": 0.5}})
        assert r.status_code == 201 and r.get_json()["created_by_key_id"] == ids[1]
    else:
        _sign_in(client, token_b)
        csrf = _csrf(client, "/saved")
        r = client.post("/saved/new", data={**DEFAULTS, "utilisation": "50",
                                            "target": str(sid), "csrf_token": csrf})
        assert r.status_code == 303, _text(r.text)
    one = client.get(f"{API}/scenarios/{sid}/revisions/1", headers=auth(token_a)).get_json()
    two = client.get(f"{API}/scenarios/{sid}/revisions/2", headers=auth(token_a)).get_json()
    assert one["created_by"] == two["created_by"] == name
    assert (one["created_by_key_id"], two["created_by_key_id"]) == ids
    if how == "page":  # the page names the author with the key's id
        page = _text(client.get(f"/saved/{sid}/revisions/2").text)
        assert f"by {name} (key {ids[1]})" in page
