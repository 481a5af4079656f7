"""The MCP face through the SDK's own client: in memory, over stdio (``costmodel mcp``) and
over streamable HTTP (``costmodel mcp --http``, behind the API's keys). Every tool is called
with every example of its API request, and answers equal to the API's
(``POST /api/v1/<path>`` through the Flask test client), figure for figure; its errors are
the API's problems with the field paths; the catalog entries are resources."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from costmodel.mcp.server import KINDS, URI, build_server
from costmodel.mcp.tools import TOOLS, input_schema
from tests.conftest import PUBLISHED, ROOT, _free_port, auth

API = "/api/v1"
PEAK = tomllib.loads((PUBLISHED / "deepseek-r1_gb300_peak.toml").read_text())
TOOL_NAMES = ["price", "compare", "task", "quotes_decide", "plan", "profit"]


def _api(app, tokens, path: str, body: dict) -> tuple[int, dict]:
    r = app.test_client().post(f"{API}/{path}", json=body, headers=auth(tokens["viewer"]))
    return r.status_code, r.get_json()


def _examples() -> list[tuple[str, dict]]:
    return [(name, example) for name in TOOL_NAMES
            for example in input_schema(TOOLS[name].request)["examples"]]


def _session(services, go):
    async def main():
        async with Client(build_server(services)) as client:
            return await go(client)
    return anyio.run(main)


def test_the_tools_and_their_schemas(app):
    tools = _session(app.extensions["costmodel"], lambda c: c.list_tools())
    assert [t.name for t in tools.tools] == TOOL_NAMES
    for tool in tools.tools:
        schema = tool.input_schema
        assert schema["type"] == "object" and "$defs" in schema
        # the API request's own model, fields and rules
        request = TOOLS[tool.name].request
        assert set(schema["properties"]) == set(request.model_fields)
        assert "#/components/" not in str(schema)  # self-contained


@pytest.mark.parametrize("name,example", _examples(),
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_examples())])
def test_each_tool_answers_as_the_api(app, tokens, name, example):
    status, expected = _api(app, tokens, TOOLS[name].path, example)
    assert status == 200, expected
    result = _session(app.extensions["costmodel"], lambda c: c.call_tool(name, example))
    assert result.is_error is not True
    assert result.structured_content == expected


def test_errors_are_the_api_problems(app, tokens):
    bad = [("price", {"scenario": {**PEAK, "utilisation": 7}}),
           ("price", {"scenario": PEAK, "overides": {}}),
           ("compare", {"scenarios": [{"scenario": {**PEAK, "accelerator": "gb3000"}}]}),
           ("plan", {"scenario": PEAK, "demand": "5 W"}),
           ("price", {"scenario_id": 999_999})]
    for name, body in bad:
        status, expected = _api(app, tokens, TOOLS[name].path, body)
        result = _session(app.extensions["costmodel"],
                          lambda c, name=name, body=body: c.call_tool(name, body))
        assert result.is_error is True
        got = result.structured_content
        assert got["status"] == status and status in (404, 422)
        own = ("instance", "request_id")  # each answer's own
        assert {k: v for k, v in got.items() if k not in own} == \
            {k: v for k, v in expected.items() if k not in own}
        assert len(got["request_id"]) == 32
        assert got["instance"] == f"mcp:tools/{name}"
    # the field path of the first: scenario.utilisation, as the API says it
    assert any(e["path"] == "scenario.utilisation" for e in _session(
        app.extensions["costmodel"], lambda c: c.call_tool("price", bad[0][1]))
        .structured_content["errors"])


def test_the_catalog_is_resources(app, tokens):
    async def go(c):
        listed = await c.list_resources()
        read = await c.read_resource(f"{URI}operating-points/deepseek-r1/gb300/peak")
        return listed, read
    listed, read = _session(app.extensions["costmodel"], go)
    uris = {r.uri for r in listed.resources}
    assert f"{URI}accelerators/gb300" in uris and f"{URI}market-prices/" \
        "illustrative/reasoning-model-api@2026-11" in uris
    assert {u.removeprefix(URI).split("/")[0] for u in uris} == set(KINDS)
    expected = app.test_client().get(f"{API}/operating-points/deepseek-r1/gb300/peak",
                                     headers=auth(tokens["viewer"])).get_json()
    import json
    got = json.loads(read.contents[0].text)
    assert got["data"] == expected["data"] and got["provenance"] == expected["provenance"]
    assert got["data"]["throughput_per_kw"]["value"] == 11781  # as published (WA)


def _env(database: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": database,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def test_stdio_session(app, tokens, database):
    """``costmodel mcp`` started by the SDK's stdio client, on the same database."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "costmodel.cli", "mcp", "--no-seed"],
                                   env=_env(database), cwd=str(ROOT))

    async def main():
        async with Client(params) as client:
            tools = await client.list_tools()
            return tools, await client.call_tool("price", {"scenario": PEAK})
    tools, result = anyio.run(main)
    assert [t.name for t in tools.tools] == TOOL_NAMES
    assert result.structured_content == _api(app, tokens, "price", {"scenario": PEAK})[1]


@pytest.fixture(scope="module")
def mcp_http(database, tmp_path_factory):
    """``costmodel mcp --http`` on a loopback port: its URL."""
    port = _free_port()
    log = (tmp_path_factory.mktemp("mcp") / "mcp.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "costmodel.cli", "mcp", "--http", "--port",
                             str(port), "--no-seed", "--allowed-host", "127.0.0.1"],
                            env=_env(database), cwd=ROOT,
                            stdout=log, stderr=log, start_new_session=True)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.time() + 60
    try:
        while True:
            try:
                urllib.request.urlopen(url, timeout=5)
            except urllib.error.HTTPError:  # answering (a 401 without a key)
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def test_http_session_behind_the_keys(app, tokens, mcp_http):
    # no key, a wrong key: the API's 401 problem, before MCP sees the request
    for headers in ({}, {"Authorization": "Bearer cm_wrong_key"}):
        req = urllib.request.Request(mcp_http, data=b"{}", method="POST", headers={
            "Content-Type": "application/json", **headers})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 401
        assert refused.value.headers["Content-Type"] == "application/problem+json"

    async def main():
        async with httpx2.AsyncClient(headers=auth(tokens["viewer"]), timeout=60) as http, \
                Client(streamable_http_client(mcp_http, http_client=http)) as client:
            tools = await client.list_tools()
            answers = {name: await client.call_tool(name, example)
                       for name, example in [(n, input_schema(TOOLS[n].request)["examples"][0])
                                             for n in TOOL_NAMES]}
            return tools, answers
    tools, answers = anyio.run(main)
    assert [t.name for t in tools.tools] == TOOL_NAMES
    for name, result in answers.items():
        example = input_schema(TOOLS[name].request)["examples"][0]
        assert result.structured_content == _api(app, tokens, TOOLS[name].path, example)[1]


def test_http_session_through_the_deployed_nginx(app, tokens, mcp_http, tmp_path):
    """deploy/nginx.conf passes /mcp to the MCP process (upstream costmodel_mcp): a session
    through it answers as the API, and a request without a key is the 401 problem."""
    from pathlib import Path

    from tests.conftest import bench_module
    if not Path("/usr/sbin/nginx").exists():
        if os.environ.get("COSTMODEL_REQUIRE_NGINX"):
            raise RuntimeError("COSTMODEL_REQUIRE_NGINX is set but nginx is not installed")
        pytest.skip("nginx is not installed")
    sc = bench_module("slowclients.py")
    cluster = bench_module("cluster.py")
    mcp_port = int(mcp_http.rsplit(":", 1)[1].split("/")[0])
    listen = _free_port()
    config = cluster.sub_line(sc.nginx_config(listen, _free_port()),
                              r"^(\s*)server 127\.0\.0\.1:8765(.*)$",
                              rf"\g<1>server 127.0.0.1:{mcp_port}\g<2>")
    proxy = sc.start_nginx(tmp_path / "nginx", config, listen)
    url = f"http://127.0.0.1:{listen}/mcp"
    try:
        req = urllib.request.Request(url, data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=10)
        assert refused.value.code == 401

        async def main():
            async with httpx2.AsyncClient(headers=auth(tokens["viewer"]), timeout=60) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                return await client.call_tool("price", {"scenario": PEAK})
        result = anyio.run(main)
    finally:
        sc.stop(proxy)
    assert result.structured_content == _api(app, tokens, "price", {"scenario": PEAK})[1]


def test_http_calls_count_against_the_keys_rate(app, tokens):
    """Over HTTP an MCP request is counted per key as an API request is (the same Limits, and
    with Redis the same count): the limit's requests pass with the RateLimit headers, the
    next is the API's 429 problem with Retry-After, and another key has its own count."""
    from costmodel.http.limits import Limits
    from costmodel.mcp.server import RequireKey

    seen = []

    async def inner(scope, receive, send):  # what the MCP server would answer
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    limits = Limits({"RATE_LIMIT": "3/minute"})
    guarded = RequireKey(inner, app.extensions["costmodel"], limits)

    async def main():
        transport = httpx2.ASGITransport(app=guarded)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            viewer = [await c.post("/mcp", json={}, headers=auth(tokens["viewer"]))
                      for _ in range(4)]
            editor = await c.post("/mcp", json={}, headers=auth(tokens["editor"]))
            return viewer, editor
    viewer, editor = anyio.run(main)
    assert [r.status_code for r in viewer] == [200, 200, 200, 429]
    assert [r.headers["RateLimit-Remaining"] for r in viewer] == ["2", "1", "0", "0"]
    assert viewer[0].headers["RateLimit-Policy"] == '"per-key";q=3;w=60'
    refused = viewer[3]
    assert refused.headers["Content-Type"] == "application/problem+json"
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert refused.json()["status"] == 429 and "more than 3 requests in 60 s for this key" \
        in refused.json()["detail"]
    assert len(seen) == 4  # three of the viewer's, one of the editor's: the 429 never reached it
    assert editor.status_code == 200 and editor.headers["RateLimit-Remaining"] == "2"


def test_heavy_tools_take_the_apis_heavy_slots(app, tokens):
    """A tool whose API twin is a heavy analysis (quotes_decide: POST /quotes/decide) takes a
    heavy slot over HTTP: with none free it is the API's 429 problem at once; a light tool
    (price) answers as ever; with the slot free again, the heavy tool answers as the API."""
    from costmodel.http.limits import Limits
    services = app.extensions["costmodel"]
    limits = Limits({"RATE_LIMIT": "off", "HEAVY_PER_WORKER": 1})
    body = input_schema(TOOLS["quotes_decide"].request)["examples"][0]

    def call(name, arguments):
        async def main():
            async with Client(build_server(services, limits)) as client:
                return await client.call_tool(name, arguments)
        return anyio.run(main)

    with limits.heavy():  # the one slot, taken by another analysis
        busy = call("quotes_decide", body)
        light = call("price", {"scenario": PEAK})
    assert busy.is_error is True
    assert busy.structured_content["status"] == 429
    assert "runs 1 heavy analysis already" in busy.structured_content["detail"]
    assert light.is_error is not True
    assert light.structured_content == _api(app, tokens, "price", {"scenario": PEAK})[1]
    free = call("quotes_decide", body)
    assert free.structured_content == _api(app, tokens, "quotes/decide", body)[1]


def test_docs_say_how_to_connect():
    text = (ROOT / "docs" / "mcp.md").read_text()
    for needed in ("costmodel mcp", "--http", "Authorization: Bearer", *TOOL_NAMES):
        assert needed in text, needed
    assert re.search(r"costmodel://catalog/", text)
