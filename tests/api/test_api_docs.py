"""The API as a client developer meets it: the OpenAPI document's request examples are sent
as they are and answered 2xx; errors share one path style and suggest the key meant; a 401
says how to get a key; lean answers (view=summary, fields=); HTTP caching (ETag, 304,
Cache-Control); workbooks named after their scenario; ratios nested like the results."""
from __future__ import annotations

import json
import re

import jsonschema
import pytest
from conftest import auth

API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
CURVE_ID = "b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"


@pytest.fixture(scope="module")
def spec(app) -> dict:
    return app.test_client().get(f"{API}/openapi.json").get_json()


def _json_bodies(spec: dict):
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            media = op.get("requestBody", {}).get("content", {}).get("application/json")
            if media is not None:
                yield method, path, media


def test_every_json_body_has_a_media_type_example(spec):
    bodies = list(_json_bodies(spec))
    assert len(bodies) >= 18
    assert [p for _, p, media in bodies if "example" not in media] == []


def test_every_media_type_example_is_answered_2xx(app, client, tokens, spec):
    """Each example exactly as Swagger UI's "Try it out" sends it, with an admin key."""
    admin = auth(tokens["admin"])
    saved = client.post(f"{API}/scenarios", json={"name": "for examples", "scenario": GB300},
                        headers=admin)
    assert saved.status_code == 201
    sid = saved.get_json()["scenario_id"]
    answered = {}
    for method, path, media in _json_bodies(spec):
        r = client.open(path.replace("{scenario_id}", str(sid)), method=method.upper(),
                        json=media["example"], headers=admin)
        answered[f"{method} {path}"] = r.status_code
        assert 200 <= r.status_code < 300, (path, r.get_data(as_text=True)[:400])
    assert answered[f"post {API}/price/batch"] == 200


def test_examples_validate_against_their_schemas(spec):
    """An example the document refuses would be a lie either way."""
    for _, _path, media in _json_bodies(spec):
        schema = {**media["schema"], "components": spec["components"]}
        jsonschema.Draft202012Validator(schema).validate(media["example"])


def _override_example(spec: dict, key: str):
    prop = spec["components"]["schemas"]["ScenarioOverrides"]["properties"][key]
    prop = next((b for b in prop.get("anyOf", [prop]) if "examples" in b), prop)
    return prop["examples"][0]


def test_field_examples_are_of_their_kind(spec):
    assert _override_example(spec, "utilisation") == 0.5
    assert _override_example(spec, "operating_point.throughput") == "5000 token/s"
    assert _override_example(spec, "accelerator.rated_power") == "700 W"
    assert _override_example(spec, "operating_point.interactivity") == "169 token/s/user"
    assert _override_example(spec, "electricity.price") == "0.08 USD/kWh"


def test_curve_id_accepted_where_a_scenario_file_accepts_it(client, tokens, spec):
    viewer = auth(tokens["viewer"])
    scenario = {"accelerator": "b200", "operating_point": {"curve": CURVE_ID,
                                                            "curve_id": CURVE_ID}}
    schema = {"$ref": "#/components/schemas/ScenarioInput", "components": spec["components"]}
    jsonschema.Draft202012Validator(schema).validate(scenario)
    r = client.post(f"{API}/price", json={"scenario": scenario}, headers=viewer)
    assert r.status_code == 200, r.get_data(as_text=True)
    assert r.get_json()["disclosure"]["operating_point"]["chosen"].startswith("peak")
    r = client.post(f"{API}/price", json={"scenario": {
        "accelerator": "b200", "operating_point": {"curve": CURVE_ID}},
        "overrides": {"operating_point.curve_id": CURVE_ID}}, headers=viewer)
    assert r.status_code == 200, r.get_data(as_text=True)


def test_compare_item_shape_is_documented(spec):
    compare = spec["components"]["schemas"]["CompareRequest"]["properties"]["scenarios"]
    assert '{"scenario": {...}}' in compare["description"]
    assert compare["items"] == {"$ref": "#/components/schemas/PriceRequest"}


@pytest.mark.parametrize("path,body,want", [
    ("/compare", {"scenarios": [{"scenario": GB300}, {"name": "x"}]},
     ("scenarios[1].name", "unknown key")),
    ("/compare", {"scenarios": [{"scenario": GB300}, {"scenaro": GB300}]},
     ("scenarios[1].scenaro", "unknown key; did you mean scenario?")),
    ("/compare", {"scenarios": [{"scenario": GB300}, {"scenario": {**GB300, "utilization": 1}}]},
     ("scenarios[1].scenario.utilization", "unknown key; did you mean utilisation?")),
    ("/price", {"scenario": {**GB300, "utilization": 0.5}},
     ("scenario.utilization", "unknown key; did you mean utilisation?")),
    ("/price", {"scenario": {**GB300, "electricity": {"prize": "0.1 USD/kWh"}}},
     ("scenario.electricity.prize", "unknown key; did you mean price?")),
    ("/price", {"scenario": GB300, "overrides": {"utilization": 0.5}},
     ("overrides.utilization", "unknown key; did you mean utilisation?")),
    ("/price", {"scenario": GB300, "overides": {}},
     ("overides", "unknown key; did you mean overrides?")),
    ("/workbook", {"scenarios": [{"scenario_id": 2**40}]},
     ("scenarios[0].scenario_id", None)),
])
def test_one_path_style_and_did_you_mean(client, tokens, path, body, want):
    r = client.post(API + path, json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    error = r.get_json()["errors"][0]
    assert error["path"] == want[0]
    if want[1] is not None:
        assert error["message"] == want[1]
    assert not re.search(r"\.\d+(\.|$)", error["path"])  # never scenarios.0.name


def test_401_names_the_header_and_how_to_get_a_key(client):
    r = client.post(f"{API}/price", json={"scenario": GB300})
    assert r.status_code == 401
    detail = r.get_json()["detail"]
    assert "Authorization: Bearer <key>" in detail and "X-API-Key" in detail
    assert "costmodel keys create --name NAME --role" in detail
    bad = client.post(f"{API}/price", json={"scenario": GB300}, headers=auth("cm_nope"))
    assert "costmodel keys create" in bad.get_json()["detail"]


def test_the_401_command_is_the_cli_s(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from costmodel.cli import main
    url = f"sqlite:///{tmp_path / 'k.db'}"
    assert CliRunner().invoke(main, ["db", "upgrade", "--url", url]).exit_code == 0
    out = CliRunner().invoke(main, ["keys", "create", "--name", "NAME", "--role", "editor",
                                    "--url", url])
    assert out.exit_code == 0, out.output
    assert "cm_" in out.output


def test_workbook_download_named_after_the_scenario(client, tokens):
    admin = auth(tokens["admin"])
    saved = client.post(f"{API}/scenarios", json={"name": "GB300 at peak (Jalapeño)",
                                                  "scenario": GB300}, headers=admin).get_json()
    r = client.get(f"{API}/scenarios/{saved['scenario_id']}/workbook", headers=admin)
    assert r.status_code == 200
    assert r.headers["Content-Disposition"] == (
        'attachment; filename="GB300-at-peak-Jalape-o-r1.xlsx"; '
        "filename*=UTF-8''GB300%20at%20peak%20%28Jalape%C3%B1o%29%20r1.xlsx")
    r = client.post(f"{API}/workbook", json={"scenarios": [
        {"scenario": {**GB300, "name": "deepseek-r1 gb300"}}]}, headers=admin)
    assert 'filename="deepseek-r1-gb300.xlsx"' in r.headers["Content-Disposition"]


def test_ratios_nest_like_the_results(client, tokens):
    body = {"scenarios": [{"scenario": GB300},
                          {"scenario": GB300, "overrides": {"electricity.price":
                                                            "0.1742 USD/kWh"}}]}
    out = client.post(f"{API}/compare", json=body, headers=auth(tokens["viewer"])).get_json()
    ratios, results = out["ratios"], out["scenarios"]
    # every headline figure of a result has its ratios at the same dotted name
    assert set(ratios) == {k for k in results[0] if k not in
                           ("scenario", "engine", "steps", "disclosure")}
    for group in ("cost_per_mtok", "price_per_mtok"):
        assert set(ratios[group]) == set(results[0][group])
    assert "cost_per_mtok_energy" not in ratios
    # twice the electricity price (EIA 0.0871 USD/kWh), twice the energy cost a token
    assert ratios["cost_per_mtok"]["energy"] == pytest.approx([1.0, 2.0], rel=1e-12)
    want = results[1]["cost_per_mtok"]["total"]["value"] / \
        results[0]["cost_per_mtok"]["total"]["value"]
    assert ratios["cost_per_mtok"]["total"][1] == pytest.approx(want, rel=1e-12)


# ---- lean answers ------------------------------------------------------------------------

def test_price_summary_is_the_full_answer_less_steps_and_sources(client, tokens):
    viewer = auth(tokens["viewer"])
    full = client.post(f"{API}/price", json={"scenario": GB300}, headers=viewer).get_json()
    r = client.post(f"{API}/price?view=summary", json={"scenario": GB300}, headers=viewer)
    summary = r.get_json()
    want = {k: v for k, v in full.items() if k != "steps"}
    want["disclosure"] = {k: v for k, v in full["disclosure"].items() if k != "sources"}
    assert summary == want
    assert len(r.data) < len(json.dumps(full)) / 3


def test_compare_summary(client, tokens):
    body = {"scenarios": [{"scenario": GB300}, {"scenario": {**GB300, "utilisation": 0.5}}]}
    viewer = auth(tokens["viewer"])
    full = client.post(f"{API}/compare", json=body, headers=viewer).get_json()
    summary = client.post(f"{API}/compare?view=summary", json=body, headers=viewer).get_json()
    assert summary["ratios"] == full["ratios"] and summary["baseline"] == full["baseline"]
    for s, f in zip(summary["scenarios"], full["scenarios"], strict=True):
        assert "steps" not in s and "sources" not in s["disclosure"]
        assert s["cost_per_mtok"] == f["cost_per_mtok"]


def test_fields_select_exactly_what_they_name(client, tokens):
    viewer = auth(tokens["viewer"])
    full = client.post(f"{API}/price", json={"scenario": GB300}, headers=viewer).get_json()
    r = client.post(f"{API}/price?fields=cost_per_mtok.total,disclosure.boundary,"
                    "steps.throughput.value", json={"scenario": GB300}, headers=viewer)
    assert r.get_json() == {
        "cost_per_mtok": {"total": full["cost_per_mtok"]["total"]},
        "disclosure": {"boundary": "chip"},
        "steps": {"throughput": {"value": full["steps"]["throughput"]["value"]}}}
    body = {"scenarios": [{"scenario": GB300}, {"scenario": {**GB300, "utilisation": 0.5}}]}
    out = client.post(f"{API}/compare?fields=scenarios.cost_per_mtok.total,"
                      "ratios.cost_per_mtok.total", json=body, headers=viewer).get_json()
    assert set(out) == {"scenarios", "ratios"}
    assert out["ratios"] == {"cost_per_mtok": {"total": [1.0, pytest.approx(2.0, rel=0.5)]}}
    assert [list(s) for s in out["scenarios"]] == [["cost_per_mtok"], ["cost_per_mtok"]]


@pytest.mark.parametrize("query,bad", [
    ("fields=cost_per_mtok.totl", "cost_per_mtok.totl"),
    ("view=summary&fields=steps", "steps"),  # a summary has no steps
    ("fields=scenario.x", "scenario.x"),
])
def test_unknown_field_is_a_422_naming_it(client, tokens, query, bad):
    r = client.post(f"{API}/price?{query}", json={"scenario": GB300},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422
    assert r.get_json()["errors"] == [{"path": "fields",
                                       "message": f"{bad!r} is not a field of this answer"}]


def test_bad_view_is_a_422(client, tokens):
    r = client.post(f"{API}/price?view=tiny", json={"scenario": GB300},
                    headers=auth(tokens["viewer"]))
    assert r.status_code == 422 and r.get_json()["errors"][0]["path"] == "view"


# ---- HTTP caching ------------------------------------------------------------------------

def _get_twice(client, url, headers):
    first = client.get(url, headers=headers)
    assert first.status_code == 200
    tag = first.headers["ETag"]
    again = client.get(url, headers={**headers, "If-None-Match": tag})
    assert again.status_code == 304 and again.data == b""
    assert again.headers["ETag"] == tag
    return first


def test_immutable_gets_answer_304(client, tokens):
    viewer, editor = auth(tokens["viewer"]), auth(tokens["editor"])
    saved = client.post(f"{API}/scenarios", json={"name": "etag", "scenario": GB300},
                        headers=editor).get_json()
    for url in (f"{API}/accelerators/gb300", f"{API}/curves/{CURVE_ID}",
                f"{API}/scenarios/{saved['scenario_id']}/revisions/1"):
        first = _get_twice(client, url, viewer)
        assert first.headers["Cache-Control"] == "max-age=31536000, immutable"
        # another ETag is not a match
        other = client.get(url, headers={**viewer, "If-None-Match": '"0000"'})
        assert other.status_code == 200


def test_lists_and_latest_are_revalidated(client, tokens):
    viewer, editor = auth(tokens["viewer"]), auth(tokens["editor"])
    saved = client.post(f"{API}/scenarios", json={"name": "etag latest", "scenario": GB300},
                        headers=editor).get_json()
    url = f"{API}/scenarios/{saved['scenario_id']}"
    first = _get_twice(client, url, viewer)
    assert first.headers["Cache-Control"] == "no-cache"
    for listing in (f"{API}/accelerators", f"{API}/curves", f"{API}/scenarios"):
        assert _get_twice(client, listing, viewer).headers["Cache-Control"] == "no-cache"
    # a new revision: the old ETag no longer matches
    client.post(f"{url}/revisions", json={"scenario": {**GB300, "utilisation": 0.5}},
                headers=editor)
    changed = client.get(url, headers={**viewer, "If-None-Match": first.headers["ETag"]})
    assert changed.status_code == 200 and changed.get_json()["number"] == 2


def test_post_answers_carry_their_content_hash(client, tokens):
    viewer = auth(tokens["viewer"])
    a = client.post(f"{API}/price", json={"scenario": GB300}, headers=viewer)
    b = client.post(f"{API}/price", json={"scenario": dict(reversed(GB300.items()))},
                    headers=viewer)
    c = client.post(f"{API}/price", json={"scenario": {**GB300, "utilisation": 0.5}},
                    headers=viewer)
    import hashlib
    assert a.headers["ETag"] == '"' + hashlib.sha256(a.data).hexdigest()[:32] + '"'
    assert a.headers["ETag"] == b.headers["ETag"] != c.headers["ETag"]
    assert "Cache-Control" not in a.headers


def test_caching_is_in_the_document(spec):
    get = spec["paths"][f"{API}/accelerators/{{key}}"]["get"]
    assert "304" in get["responses"]
    assert get["responses"]["200"]["headers"]["Cache-Control"]["schema"]["enum"] == [
        "max-age=31536000, immutable"]
    assert any(p["name"] == "If-None-Match" and p["in"] == "header" for p in get["parameters"])
    price = spec["paths"][f"{API}/price"]["post"]
    assert "ETag" in price["responses"]["200"]["headers"]
    names = {p["name"] for p in price["parameters"]}
    assert {"view", "fields"} <= names
