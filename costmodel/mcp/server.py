"""The MCP server: the tools of :mod:`.tools` and the catalog as resources, over stdio (the
operator's own process, as the command line: no key) or streamable HTTP (every request with
an API key of the viewer role or above, as the API's reads: ``Authorization: Bearer <key>``
or ``X-API-Key``).

A tool's error is the API's problem (RFC 9457: type, title, status, detail and the field
paths in ``errors``), answered as the tool's result with ``isError`` set, its text the
problem's JSON and its structured content the problem itself.
"""
from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server import Server

from .. import __version__
from ..app import catalog as stored
from ..app.catalog import Conflict, NotFound
from ..app.keys import role_allows, verify
from ..app.services import Services, StoreUnreachable, StoreUnwritable
from ..http.errors import (
    PROBLEM_TYPES,
    Problem,
    unreachable_problem,
    unwritable_problem,
)
from ..http.limits import HEAVY, Limits, config_from_env
from ..model.errors import InputError
from .tools import TOOLS, input_schema, parse

__all__ = ["build_server", "serve_stdio", "http_app", "KINDS", "problem_of", "URI"]

log = logging.getLogger("costmodel.mcp")
_BASE = "https://costmodel.dev/problems/"
URI = "costmodel://catalog/"  # costmodel://catalog/<kind path>/<key>
# the API's catalog paths (GET /api/v1/<path>/<key>) and the kinds they hold
KINDS = {"accelerators": "accelerator", "operating-points": "operating_point",
         "electricity-prices": "electricity", "systems": "system", "rates": "rate",
         "market-prices": "market_price"}
PAGE = 200  # resources a page of resources/list


def problem_of(exc: BaseException) -> Problem:
    """The API's problem for an error of a tool (as costmodel.http.errors answers it)."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, InputError):
        return Problem.from_input(exc)
    if isinstance(exc, NotFound):
        return Problem(404, "Not found", str(exc))
    if isinstance(exc, Conflict):
        return Problem(409, "Conflict", str(exc))
    if isinstance(exc, StoreUnwritable):
        return unwritable_problem(exc)
    if isinstance(exc, StoreUnreachable):
        return unreachable_problem(exc)
    return Problem(500, "Internal error", "the server failed to answer; the failure is logged")


def problem_body(p: Problem, instance: str, request_id: str) -> dict[str, Any]:
    """The problem as the API's body, with the call's id (as the API's request id: to quote
    when reporting it; the log line of a failure carries it)."""
    body: dict[str, Any] = {"type": _BASE + p.kind, "title": p.title, "status": p.status,
                            "detail": p.detail or p.title, "instance": instance}
    if p.errors:
        body["errors"] = p.errors
    body["request_id"] = request_id
    return body


def _entry(row: stored.StoredEntry) -> dict[str, Any]:  # as GET /api/v1/<kind>/<key>
    return {"kind": row.kind, "key": row.key, "data": row.data, "provenance": row.provenance,
            "origin": row.origin, "created_at": row.created_at.isoformat()}


def _text(data: Any) -> str:
    return orjson.dumps(data).decode()


def build_server(services: Services, limits: Limits | None = None) -> Server:
    """The MCP server on ``services`` (one database, its catalog and caches); with ``limits``
    (over HTTP), a tool whose API twin takes a heavy slot takes one of ``limits`` while it
    runs, or answers the API's 429 problem."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description,
                       input_schema=input_schema(t.request)) for t in TOOLS.values()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = TOOLS.get(params.name)
        if tool is None:
            raise ValueError(f"no tool {params.name!r}: {', '.join(TOOLS)}")

        def run() -> dict[str, Any]:  # (blocking: the database, numpy) in a worker thread
            return tool.run(services, parse(tool, params.arguments))
        heavy = limits is not None and ("POST", f"/api/v1/{tool.path}") in HEAVY
        try:
            with limits.heavy() if heavy else contextlib.nullcontext():  # type: ignore[union-attr]
                out = await anyio.to_thread.run_sync(run)
        except Exception as exc:  # every failure is a problem, as the API answers it
            call = uuid.uuid4().hex
            problem = problem_of(exc)
            if problem.status >= 500:  # the trace: the log only, with the call's id
                log.error("MCP tool %s failed (request id %s)", tool.name, call, exc_info=exc)
            body = problem_body(problem, f"mcp:tools/{tool.name}", call)
            return types.CallToolResult(content=[types.TextContent(text=_text(body))],
                                        structured_content=body, is_error=True)
        return types.CallToolResult(content=[types.TextContent(text=_text(out))],
                                    structured_content=out)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        cursor = getattr(params, "cursor", None) if params is not None else None
        start = int(cursor) if cursor and cursor.isdigit() else 0

        def page() -> tuple[list[types.Resource], str | None]:
            out: list[types.Resource] = []
            skip = start
            for path, kind in KINDS.items():
                total = stored.entries(services, kind, limit=1)[1]
                if skip >= total:
                    skip -= total
                    continue
                rows, _ = stored.entries(services, kind, limit=PAGE - len(out), offset=skip)
                skip = 0
                out += [types.Resource(uri=f"{URI}{path}/{r.key}", name=f"{kind} {r.key}",
                                       mime_type="application/json",
                                       description=f"the catalog's {kind} {r.key!r}, with "
                                                   f"its sources")
                        for r in rows]
                if len(out) >= PAGE:
                    return out, str(start + len(out))
            return out, None
        resources, following = await anyio.to_thread.run_sync(page)
        return types.ListResourcesResult(resources=resources, next_cursor=following)

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams
                            ) -> types.ReadResourceResult:
        uri = str(params.uri)
        path, _, key = uri.removeprefix(URI).partition("/")
        if not uri.startswith(URI) or path not in KINDS or not key:
            raise ValueError(f"not a catalog resource: {uri[:200]!r} ({URI}<kind>/<key>, "
                             f"kind one of {', '.join(KINDS)})")
        try:
            row = await anyio.to_thread.run_sync(lambda: stored.entry(services, KINDS[path],
                                                                      key))
        except NotFound as exc:
            raise ValueError(str(exc)) from None
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="application/json", text=_text(_entry(row)))])

    return Server("costmodel", version=__version__, title="costmodel pricing",
                  instructions="Cost and price per million tokens, with the denominator of "
                               "every figure disclosed. The tools take the bodies of the "
                               "pricing API's POST /api/v1/... requests and answer as it "
                               "does; the catalog entries are resources.",
                  on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


async def serve_stdio(services: Services) -> None:
    """Serve MCP over this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server
    server = build_server(services)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _key_of(headers: dict[bytes, bytes]) -> str | None:
    auth = headers.get(b"authorization", b"").decode("latin-1")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return headers.get(b"x-api-key", b"").decode("latin-1") or None


class RequireKey:
    """ASGI middleware: every HTTP request carries an API key of the viewer role or above
    (checked as the API checks one: :func:`costmodel.app.keys.verify`), else a 401 or 403
    problem, before the MCP server sees it; and is counted against the key's rate as an API
    request is (``limits``: the same rule, and with Redis the same count as the API's), a 429
    problem past it. Every answer carries the RateLimit headers."""

    def __init__(self, app: Any, services: Services, limits: Limits | None = None):
        self.app, self.services, self.limits = app, services, limits

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        token = _key_of(dict(scope.get("headers") or []))
        holder = None
        if token is not None:
            try:
                holder = await anyio.to_thread.run_sync(lambda: verify(self.services, token))
            except (StoreUnreachable, StoreUnwritable) as exc:
                return await _problem(send, scope, problem_of(exc))
        if holder is None:
            detail = ("an API key is required: send 'Authorization: Bearer <key>' (or "
                      "'X-API-Key: <key>')" if token is None
                      else "the API key is not valid or was revoked")
            return await _problem(send, scope, Problem(401, "Unauthorized", detail, headers={
                "WWW-Authenticate": 'Bearer realm="costmodel"'}))
        if not role_allows(holder.role, "viewer"):
            return await _problem(send, scope, Problem(403, "Forbidden", f"this needs the "
                                                       f"viewer role; the key has "
                                                       f"{holder.role}"))
        rate: list[tuple[str, str]] = []
        if self.limits is not None:
            rate, refused = await anyio.to_thread.run_sync(
                lambda: self.limits.charge(f"key:{holder.key_id}"))  # type: ignore[union-attr]
            if refused is not None:
                return await _problem(send, scope, refused, rate)
        extra = [(k.lower().encode(), v.encode()) for k, v in rate]

        async def send_with_rate(message: dict) -> None:
            if extra and message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)
        await self.app(scope, receive, send_with_rate)


async def _problem(send: Any, scope: dict, p: Problem,
                   more: list[tuple[str, str]] = ()) -> None:  # type: ignore[assignment]
    body = orjson.dumps(problem_body(p, scope.get("path", ""), uuid.uuid4().hex))
    headers = [(b"content-type", b"application/problem+json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in [*p.headers.items(), *more]]
    await send({"type": "http.response.start", "status": p.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def http_app(services: Services, *, host: str = "127.0.0.1", path: str = "/mcp",
             limits: Limits | None = None, allowed_hosts: Sequence[str] = ()) -> Any:
    """The streamable HTTP app (ASGI) at ``path``, behind the API's keys and under the API's
    limits (``limits``; default: configured from the environment as ``costmodel serve`` is,
    ``COSTMODEL_RATE_LIMIT``, ``REDIS_URL``, ``COSTMODEL_HEAVY_*``).

    On a loopback ``host`` the SDK refuses a request whose Host or Origin is not loopback (DNS
    rebinding); ``allowed_hosts`` are the names a reverse proxy passes on (nginx's ``$host``,
    deploy/nginx.conf), allowed beside them, with their http and https origins."""
    limits = limits if limits is not None else Limits(config_from_env())
    security = None
    if allowed_hosts:
        from mcp.server.transport_security import TransportSecuritySettings
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[*LOOPBACK_HOSTS, *allowed_hosts],
            allowed_origins=[*(f"http://{h}" for h in LOOPBACK_HOSTS),
                             *(f"{scheme}://{h}" for h in allowed_hosts
                               for scheme in ("https", "http"))])
    server = build_server(services, limits)
    return RequireKey(server.streamable_http_app(streamable_http_path=path, host=host,
                                                 transport_security=security),
                      services, limits)


assert set(PROBLEM_TYPES) >= {401, 403, 404, 409, 422, 500, 503}
