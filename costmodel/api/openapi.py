"""Routes declared with their bodies and answers, and the OpenAPI 3.1 document built from
those declarations (so the spec cannot drift from what the handlers accept)."""
from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from functools import wraps
from typing import Annotated, Any

import orjson
from flask import Blueprint, Response, current_app, json, request
from pydantic import BaseModel, Field, ValidationError
from pydantic.json_schema import models_json_schema
from werkzeug.datastructures import Headers
from werkzeug.wsgi import get_content_length

from .. import __version__
from ..app.hints import UNKNOWN, hint, hinted, model_fields_at
from ..app.saved import MAX_ID
from ..app.services import etag_of
from ..http.errors import Problem, input_problem
from ..http.limits import GRID, HEAVY, current_limits
from ..model.errors import MAX_ERRORS, MAX_NESTING, more_errors, nested_message, nesting_error
from ..model.inputs import error_path, fewer_errors
from .auth import require
from .client_shape import for_generators
from .schemas import CATALOG_KEY, INPUT_SCHEMAS, MAX_CURVE_ID, ProblemOut

__all__ = ["route", "ROUTES", "build_spec", "ListQuery", "read_body", "body_bytes", "too_large",
           "etag_of", "Answer", "Forms", "json_body", "validated"]


@dataclass
class Route:
    blueprint: str
    rule: str
    method: str
    summary: str
    access: str  # read | write | admin | public
    body: type[BaseModel] | None
    response: type[BaseModel] | None
    status: int
    query: type[BaseModel] | None
    tags: list[str]
    errors: tuple[int, ...]
    content_type: str = "application/json"  # of the answer
    request_content_type: str = "application/json"
    view_statuses: tuple[int, ...] = ()  # other success codes the view may answer
    cache: str | None = None  # GET: "immutable" (never changes) or "revalidate" (may change)
    body_limit: int | None = None  # bytes; None: the app's MAX_CONTENT_LENGTH
    also_content: tuple[str, ...] = ()  # other media types of the answer (by Accept)
    etag: str | None = None  # what the ETag is, when not the hash of the answer's content
    if_match: bool = False  # a write that honours If-Match (412 when it does not hold)
    heavy_note: str | None = None  # which of its answers hold a heavy slot, and their bound
    forms: Forms | None = None  # other request bodies read beside ``body``


ROUTES: list[Route] = []


# a filter's characters: three filters of 100 characters, each percent-encoded (up to 12 bytes
# a character), still fit gunicorn's 4094-byte request line
MAX_FILTER = 100


class ListQuery(BaseModel):
    """Paging and a text filter for list endpoints."""
    q: Annotated[str, Field(max_length=MAX_FILTER, description="only keys containing this")] \
        | None = None
    limit: Annotated[int, Field(ge=1, le=200, description="items a page")] = 50
    offset: Annotated[int, Field(ge=0, le=MAX_ID, description="items skipped")] = 0


# the headers werkzeug rewrites on their way to the server (see Answer)
_REWRITTEN = frozenset({"location", "content-location"})


class Answer(Response):
    """Flask's Response, handing its headers to the server without checking them again.

    Werkzeug copies an answer's headers for the server through ``Headers.add``, checking
    each value for a newline once more (each was checked when set, or written by
    limits._append_headers): about 4 us for the nine headers of a price answer. An answer
    werkzeug would not change (a 2xx with a body, its Content-Length, no Location) has its
    list copied whole; any other goes werkzeug's own way."""

    def get_wsgi_headers(self, environ: dict[str, Any]) -> Headers:
        items = getattr(self.headers, "_list", None)
        status = self.status_code
        if type(self.headers) is Headers and type(items) is list \
                and 200 <= status < 300 and status != 204:
            names = {key.lower() for key, _ in items}
            if "content-length" in names and not names & _REWRITTEN:
                copy = Headers()
                copy._list = items[:]
                return copy
        return super().get_wsgi_headers(environ)


_RULE_PARAM = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


ORJSON_DEPTH = 1024  # levels of arrays and objects orjson parses
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # a string (skipped), or a bracket


def _deeper_than_orjson(raw: bytes, pos: int) -> bool:
    """Whether orjson stopped at ``pos`` because the document is nested deeper than it
    parses: the brackets open before ``pos`` (outside strings) are more than
    :data:`ORJSON_DEPTH`."""
    depth = 0
    for token in _JSON_TOKEN.finditer(raw, 0, pos):
        t = token.group()
        if t in (b"[", b"{"):
            depth += 1
            if depth > ORJSON_DEPTH:
                return True
        elif t in (b"]", b"}"):
            depth -= 1
    return False


def _body(model: type[BaseModel], limit: int | None = None) -> BaseModel:
    # (the common spelling compared as sent; anything else parsed. The request behind the
    # proxy: an attribute read through it costs 0.7 us more)
    if request._get_current_object().environ.get("CONTENT_TYPE") != "application/json" \
            and request.mimetype != "application/json":
        raise Problem(415, "Unsupported media type",
                      f"send application/json, not {request.mimetype or 'no content type'}")
    return validated(model, json_body(read_body(limit)))


def json_body(raw: bytes) -> Any:
    """A JSON body's data, refused as every body is: malformed (400), nested deeper than any
    input may be, or holding NUL (422)."""
    try:
        data = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError as exc:
        if _deeper_than_orjson(raw, exc.pos):  # orjson's own limit, at 1,024 levels
            raise input_problem([("body", nested_message())]) from None
        raise Problem(400, "Malformed JSON", f"the body is not valid JSON: {exc}") from None
    # nested deeper than any input may be: refused before anything walks it recursively
    # (a body with fewer brackets than the limit cannot be)
    if raw.count(b"{") + raw.count(b"[") > MAX_NESTING:
        deep = nesting_error(data)
        if deep is not None:
            raise input_problem([(deep, nested_message())])
    # a NUL in a JSON string is written \u0000: without that text there is none to look for
    nul = _nul_path(data) if b"\\u0000" in raw else None
    if nul is not None:  # PostgreSQL cannot store it; SQLite would: refused alike everywhere
        raise Problem(422, "Invalid input", f"{nul or 'body'}: must not contain NUL (U+0000)",
                      errors=[{"path": nul or "body", "message": "must not contain NUL"}])
    return data


def validated(model: type[BaseModel], data: Any) -> BaseModel:
    """``data`` as ``model``; its errors a 422 at their paths (see _invalid_body)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _invalid_body(model, data, exc) from None


def _invalid_body(model: type[BaseModel], data: Any, exc: ValidationError) -> Problem:
    """A body's errors, at most MAX_ERRORS of them and a count of the rest; an unknown field
    says so, the first MAX_HINTS with the closest known one."""
    exc, dropped = fewer_errors(exc, model, data)
    found = exc.errors(include_url=False)
    errors = [{"path": _loc(e["loc"]),
               "message": UNKNOWN if e["type"] == "extra_forbidden"
               else str(e["ctx"]["error"]) if e["type"] == "value_error"  # its own words
               else e["msg"]}
              for e in found[:MAX_ERRORS + 1]]
    hinted(errors, lambda e, i: UNKNOWN + hint(str(found[i]["loc"][-1]),
                                               model_fields_at(model, found[i]["loc"])))
    more = len(found) - len(errors) + dropped
    return input_problem([*((e["path"], e["message"]) for e in errors),
                          *([("", more_errors(more))] if more else [])])


def read_body(limit: int | None = None) -> bytes:
    """The request body, read up to ``limit`` bytes (default: the app's MAX_CONTENT_LENGTH);
    a longer body, declared or chunked, is a 413 that states the limit."""
    # (the objects behind the proxies: an attribute read through one costs 0.7 us more)
    limit = limit or current_app._get_current_object().config["MAX_CONTENT_LENGTH"]
    environ = request._get_current_object().environ
    declared = get_content_length(environ)  # request.content_length, without its headers
    if declared is not None and declared > limit:
        raise too_large(limit)
    if environ.get("costmodel.body") is None:
        # read the raw stream ourselves: a chunked body has no declared length to check
        stream = environ["wsgi.input"]
        raw = stream.read(limit + 1) if declared is None else stream.read(declared)
        if len(raw) > limit:
            raise too_large(limit)
        environ["costmodel.body"] = raw
    return environ["costmodel.body"]


def body_bytes() -> bytes | None:
    """The body :func:`read_body` read for this request (None if it read none)."""
    return request._get_current_object().environ.get("costmodel.body")  # (see read_body)


def too_large(limit: int) -> Problem:
    size = f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit // 1024} KiB"
    return Problem(413, "Payload too large", f"the request body is larger than {size}")


def _nul_path(data: Any, path: str = "") -> str | None:
    """The path of the first string (or key) holding NUL, or None."""
    if isinstance(data, str):
        return path if "\x00" in data else None
    if isinstance(data, dict):
        for k, v in data.items():
            sub = f"{path}.{k}" if path else str(k)
            if "\x00" in k:
                return sub
            found = _nul_path(v, sub)
            if found is not None:
                return found
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found = _nul_path(v, f"{path}[{i}]")
            if found is not None:
                return found
    return None


_DEFAULTS: dict[type[BaseModel], BaseModel] = {}
# parsed queries by their text (read only, as the defaults): a query is a pure function of
# its text; one that is refused is never kept
_QUERIES: dict[tuple[type[BaseModel], bytes], BaseModel] = {}
_QUERIES_SIZE = 1024
_QUERY_BYTES = 200  # longer queries are parsed every time


def _query(model: type[BaseModel]) -> BaseModel:
    text = request._get_current_object().query_string  # (see read_body)
    if not text and model in _DEFAULTS:  # every parameter at its default
        return _DEFAULTS[model]
    known = _QUERIES.get((model, text)) if len(text) <= _QUERY_BYTES else None
    if known is not None:
        return known
    parsed = _parse_query(model)
    if text and len(text) <= _QUERY_BYTES:
        if len(_QUERIES) >= _QUERIES_SIZE:
            _QUERIES.clear()
        _QUERIES[(model, text)] = parsed
    return parsed


def _parse_query(model: type[BaseModel]) -> BaseModel:
    # parameters are single-valued: a repeated one is refused, never read as its first
    repeated = [k for k in model.model_fields if len(request.args.getlist(k)) > 1]
    if repeated:
        raise Problem(422, "Invalid query", "; ".join(
            f"{k}: given more than once" for k in repeated),
            errors=[{"path": k, "message": "given more than once"} for k in repeated])
    nul = [k for k in model.model_fields if "\x00" in request.args.get(k, "")]
    if nul:  # PostgreSQL cannot compare with it; refused alike everywhere, as in bodies
        raise Problem(422, "Invalid query", "; ".join(f"{k}: must not contain NUL" for k in nul),
                      errors=[{"path": k, "message": "must not contain NUL (U+0000)"}
                              for k in nul])
    try:
        parsed = model.model_validate(request.args.to_dict())
        if not request.query_string:
            _DEFAULTS[model] = parsed  # read only: one instance serves every such request
        return parsed
    except ValidationError as exc:
        raise Problem(422, "Invalid query", "; ".join(
            f"{_loc(e['loc'])}: {e['msg']}" for e in exc.errors()),
            errors=[{"path": _loc(e["loc"]), "message": e["msg"]}
                    for e in exc.errors()]) from None


def _loc(loc: tuple) -> str:
    """A field path as every error writes it: ``scenarios[0].scenario.name``."""
    return error_path(loc) or "body"


@dataclass(frozen=True)
class Forms:
    """The request bodies an operation reads beside its JSON ``body`` model, and how.

    ``read(raw, mimetype, data, held)`` turns a body into the view's: ``data`` is a JSON
    body's parsed data (None for another media type), and the result None leaves a JSON body
    to ``body`` (within the route's own ``body_limit``). Every form is read up to ``limit``
    bytes; a body declared over the route's ``body_limit``, or sent without a length, holds
    a heavy slot before it is read (``held`` tells ``read`` so). ``media`` lists the
    other media types read, each with its schema in the document; ``model`` is the JSON
    alternative's schema; ``reads`` every other media type read (a generator knows
    ``application/octet-stream``, not a file format's own type: the document may list the
    one and the description name the others)."""
    model: type[BaseModel]
    media: dict[str, dict[str, Any]]
    limit: int
    read: Callable[..., Any]
    description: str
    reads: tuple[str, ...] = ()
    heavy_note: str = ""  # which of these bodies hold a heavy slot (the operation's words)


def _form_body(body: type[BaseModel], body_limit: int | None, forms: Forms,
               held: bool) -> Any:
    """A body read as ``forms`` says, else as ``body`` (see Forms)."""
    mimetype = request.mimetype
    if mimetype in forms.media or mimetype in forms.reads:
        return forms.read(read_body(forms.limit), mimetype, None, held)
    if mimetype != "application/json":
        kinds = ", ".join(dict.fromkeys(["application/json", *forms.media, *forms.reads]))
        raise Problem(415, "Unsupported media type",
                      f"send one of {kinds}, not {mimetype or 'no content type'}")
    raw = read_body(forms.limit)
    data = json_body(raw)
    out = forms.read(raw, mimetype, data, held)
    if out is not None:
        return out
    if body_limit is not None and len(raw) > body_limit:
        raise too_large(body_limit)
    return validated(body, data)


def _large_or_unknown(limit: int | None) -> bool:
    declared = get_content_length(request._get_current_object().environ)
    return declared is None or limit is None or declared > limit


def route(bp: Blueprint, rule: str, method: str, *, summary: str, access: str,
          body: type[BaseModel] | None = None, response: type[BaseModel] | None = None,
          status: int = 200, query: type[BaseModel] | None = None,
          errors: tuple[int, ...] = (), content_type: str = "application/json",
          request_content_type: str = "application/json",
          also: tuple[int, ...] = (), cache: str | None = None, body_limit: int | None = None,
          also_content: tuple[str, ...] = (), etag: str | None = None,
          if_match: bool = False,
          heavy_when: Callable[[Any, Any], bool] | None = None,
          heavy_note: str | None = None, forms: Forms | None = None) -> Callable:
    """Register a view and its contract. The view gets ``body``/``query`` models parsed and
    may return a pydantic model, a dict, or a Response.

    Answers carry an ``ETag`` (the hash of their content); a GET with ``cache`` answers a
    matching ``If-None-Match`` with 304 and says how long the answer holds: ``immutable``
    (catalog entries, revisions: never changed) or ``revalidate`` (lists, latest revisions:
    ask again, with the ETag). ``etag`` documents an ETag the view sets itself (a saved
    scenario's version); ``if_match``: the view checks If-Match (412 when stale).

    ``heavy_when(body, query)``: whether this request's answer (a workbook, a PDF, a large
    task) can take seconds, so holds a heavy slot as the operations of ``HEAVY`` do (429
    when none is free); it may refuse an answer over its size bound first (413), before
    anything is built. ``heavy_note`` says both in the document. ``forms``: other request
    bodies read beside ``body`` (:class:`Forms`)."""
    def decorate(view: Callable) -> Callable:
        operation = (method, _openapi_path((bp.url_prefix or "") + rule)[0])
        heavy = operation in HEAVY

        @wraps(view)
        def wrapper(**kwargs: Any):
            principal = require(access)
            limits = current_limits()
            if access != "public":
                limits.count(principal)  # 429 past the caller's rate
            if query is not None:  # before the body: a bad parameter costs no parsing
                kwargs["query"] = _query(query)
            if forms is not None and _large_or_unknown(body_limit):
                # a body no JSON form of ``body`` may be: read, and answered, in a heavy slot
                with limits.heavy():
                    kwargs["body"] = _form_body(body, body_limit, forms, True)
                    kwargs["principal"] = principal
                    return _cached(_as_response(view(**kwargs), status), cache)
            if body is not None:
                kwargs["body"] = _body(body, body_limit) if forms is None else \
                    _form_body(body, body_limit, forms, False)
            kwargs["principal"] = principal
            # a heavy analysis (or answer) holds its slot until it is serialised (429 when
            # none is free)
            heavy_now = heavy or (heavy_when is not None and heavy_when(
                kwargs.get("body"), kwargs.get("query")))
            with limits.heavy(kwargs.get("body"), grid=operation == GRID) if heavy_now \
                    else nullcontext():
                out = view(**kwargs)
                if not isinstance(out, Response):
                    out = _as_response(out, status)
                return _cached(out, cache)
        bp.add_url_rule(rule, endpoint=f"{view.__name__}", view_func=wrapper,
                        methods=[method])
        ROUTES.append(Route(bp.name, (bp.url_prefix or "") + rule, method, summary, access,
                            body, response, status, query, [bp.name], errors, content_type,
                            request_content_type, also, cache, body_limit, also_content,
                            etag, if_match, heavy_note, forms))
        return wrapper
    return decorate


def _as_response(out: Any, status: int) -> Response:
    """A view's answer as a Response (a model or data as JSON, with ``status`` unless the
    view answered (data, status))."""
    if isinstance(out, Response):
        return out
    code = status
    if isinstance(out, tuple):  # (body, status) where a view answers otherwise
        out, code = out
    if isinstance(out, BaseModel):
        out = out.model_dump(mode="json")
    return Answer(json.dumps(out), status=code, mimetype="application/json")


ETAG_HEADER = {"description": "the hash of this answer's content", "schema": {"type": "string"}}
IF_MATCH = {"name": "If-Match", "in": "header", "required": False,
            "description": "the ETag of the scenario the edit is based on (from GET "
                           "/api/v1/scenarios/{scenario_id}, its latest revision, or the "
                           "answer that saved it), or * for any existing scenario: when the "
                           "scenario moved on since, the answer is 412 and nothing is written. "
                           "Compared strongly (a weak W/ tag never matches), atomically with "
                           "the write.",
            "schema": {"type": "string"}}
CACHE_NOTE = {"immutable": "this never changes (catalog entries and revisions are never "
                           "overwritten): keep it",
              "revalidate": "this may change: ask again with If-None-Match (304 if not)"}
# a year: what RFC 9111 caches take as "never changes" (with immutable: not even on reload)
CACHE_CONTROL = {"immutable": "max-age=31536000, immutable", "revalidate": "no-cache"}


def _cached(resp: Response, cache: str | None) -> Response:
    """A successful answer with its ETag; for a cacheable GET, its Cache-Control, and 304
    when the client's If-None-Match holds that ETag already."""
    if not 200 <= resp.status_code < 300 or resp.direct_passthrough:
        return resp
    if "ETag" not in resp.headers:
        resp.headers["ETag"] = etag_of(resp.get_data())
    if cache is not None and request.method == "GET":
        resp.headers["Cache-Control"] = CACHE_CONTROL[cache]
        tag = resp.headers["ETag"]
        if request.if_none_match.contains(tag.strip('"')) or request.if_none_match.star_tag:
            not_modified = Response(status=304)
            for name in ("ETag", "Cache-Control"):
                not_modified.headers[name] = resp.headers[name]
            return not_modified
    return resp


_PATH_PARAMS = {  # a slash in either is part of the value (routed as a path)
    "key": {"type": "string", "pattern": CATALOG_KEY, "description": "a catalog key",
            "examples": ["gb300", "deepseek-r1/gb300/peak"]},
    "curve_id": {"type": "string", "minLength": 1, "maxLength": MAX_CURVE_ID,
                 "description": "a curve id",
                 "examples": ["b200/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"]},
}


def _openapi_path(rule: str) -> tuple[str, list[dict]]:
    params = []
    for conv, name in _RULE_PARAM.findall(rule):
        schema = {"type": "integer", "minimum": 1, "maximum": MAX_ID} if conv == "int" \
            else _PATH_PARAMS[name]
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    return _RULE_PARAM.sub(lambda m: "{" + m.group(2) + "}", rule), params


def _query_params(model: type[BaseModel]) -> list[dict]:
    """A query model's fields as parameters, each schema the field's own JSON schema (types,
    bounds) without the null of an optional field (absent is how a query omits it)."""
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    params = []
    for name, prop in schema["properties"].items():
        prop = {k: v for k, v in prop.items() if k != "title"}
        kinds = [b for b in prop.pop("anyOf", ()) if b != {"type": "null"}]
        if len(kinds) == 1:
            prop = {**kinds[0], **prop}
        elif kinds:
            prop["anyOf"] = kinds
        if prop.get("default", 0) is None:
            del prop["default"]
        description = prop.pop("description", None)
        params.append({"name": name, "in": "query", "required": name in required,
                       "schema": _without_nul(prop),
                       "description": f"{description or name}; given once (a repeated "
                                      f"parameter is a 422)"})
    return params


_INT = {"schema": {"type": "integer", "minimum": 0}}
RATE_HEADERS = {
    "Retry-After": {"description": "seconds to wait before trying again", **_INT},
    "RateLimit-Policy": {"description": 'the caller\'s quota, e.g. "per-key";q=600;w=60 '
                                        "(draft-ietf-httpapi-ratelimit-headers)",
                         "schema": {"type": "string"}},
    "RateLimit": {"description": 'what is left of it, e.g. "per-key";r=0;t=42',
                  "schema": {"type": "string"}},
    "RateLimit-Limit": {"description": "requests a window", **_INT},
    "RateLimit-Remaining": {"description": "requests left in this window", **_INT},
    "RateLimit-Reset": {"description": "seconds until this window closes", **_INT},
}
HEAVY_NOTE = ("A heavy analysis: each worker runs at most COSTMODEL_HEAVY_PER_WORKER (default 2) "
              "at once and, with Redis, the service at most COSTMODEL_HEAVY_TOTAL (default 4); "
              "past that the answer is 429 with Retry-After, at once.")
# an operation whose answer is heavy only in some forms (a workbook, a PDF, a large task)
HEAVY_ANSWER_NOTE = ("Such an answer holds a heavy slot while it is built, as the analyses "
                     "do: each worker runs at most COSTMODEL_HEAVY_PER_WORKER (default 2) "
                     "at once and, with Redis, the service at most COSTMODEL_HEAVY_TOTAL "
                     "(default 4); past that the answer is 429 with Retry-After, at once.")
# answered by the HTTP server in front of the application, before it sees the request: as
# HTML, not problem+json (gunicorn's limits: request line 4094 bytes, 100 header fields of at
# most 8190 bytes each; deploy/nginx.conf's are lower: docs/operations.md#behind-a-reverse-proxy)
FRONT = "answered by the server in front of the application (gunicorn, or nginx before it) " \
        "as HTML, not problem+json"
HTML = {"text/html": {"schema": {"type": "string"}}}
FRONT_RESPONSES = {
    "414": {"description": "URI too long: the request line (method, path and query) is over "
                           "4094 bytes (4 KB behind deploy/nginx.conf); " + FRONT,
            "content": HTML},
    "431": {"description": "request header fields too large: more than 100 header fields or "
                           "one over 8190 bytes (gunicorn; nginx answers 400 for a header line "
                           "over 4 KB); " + FRONT, "content": HTML},
}
GRID_NOTE = (" The grid has at most COSTMODEL_GRID_MAX_CELLS cells (default 1,000,000): a "
             "larger one is refused with 422.")


NUL_FREE = "^[^\\u0000]*$"


def _without_nul(schema: Any) -> Any:
    """A request schema whose strings refuse NUL, as every body does (see _body)."""
    if isinstance(schema, list):
        return [_without_nul(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    node = {k: _without_nul(v) for k, v in schema.items()}
    kind = node.get("type")
    text = kind == "string" or (isinstance(kind, list) and "string" in kind)
    if text and not {"pattern", "enum", "const", "format"} & set(node):
        if kind == "string":
            node["pattern"] = NUL_FREE
        else:  # a scalar read as text
            others = [k for k in kind if k != "string"]
            node = {k: v for k, v in node.items() if k != "type"}
            node["anyOf"] = [{"type": "string", "pattern": NUL_FREE}, {"type": others}]
    return node


def _defaults_described(schema: Any) -> Any:
    """A request schema whose defaults are said in words, not as ``default``: a generator
    reads a field with a default as one the answer always holds (openapi-typescript types it
    required), where in a request it is one that may be left out."""
    if isinstance(schema, list):
        return [_defaults_described(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    node = {k: v if k in ("examples", "example", "enum", "const")
            else _defaults_described(v) for k, v in schema.items()}
    if "properties" in node:
        props = {}
        for name, prop in node["properties"].items():
            if isinstance(prop, dict) and "default" in prop:
                prop = dict(prop)
                default = prop.pop("default")
                if default is not None and default != {} and "default" not in \
                        prop.get("description", ""):
                    said = orjson.dumps(default).decode()
                    prop["description"] = "; ".join(filter(None, (
                        prop.get("description"), f"default {said}")))
            props[name] = prop
        node["properties"] = props
    return node


def _request_components(schemas: dict[str, Any], roots: set[str]) -> set[str]:
    """The components a request body reaches through its $refs."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += re.findall(r'"#/components/schemas/([^"]+)"',
                           orjson.dumps(schemas[name]).decode())
    return seen


def operation_id(method: str, path: str, blueprint: str) -> str:
    """The operation's name, the one a generated client gives its function: what it does,
    in words (``price_batch``, ``list_accelerators``, ``get_scenario_revision``)."""
    segments = path.removeprefix("/api/v1/").split("/")
    words = [s.replace("-", "_").replace(".", "_") for s in segments if not s.startswith("{")]
    if blueprint == "pricing":  # an answer computed from the body
        return "_".join(words)
    one = "_".join(w.removesuffix("s") for w in words)
    if segments[-1].startswith("{"):  # an item
        return f"{method.lower()}_{one}"
    if len(words) == 1:  # a collection
        return f"list_{words[0]}" if method == "GET" else f"create_{one}"
    return f"{'get' if method == 'GET' else 'create'}_{one}"  # an item's part


def build_spec() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every declared route."""
    models = {r.body for r in ROUTES if r.body} | {r.response for r in ROUTES if r.response} \
        | {r.forms.model for r in ROUTES if r.forms}
    models.add(ProblemOut)
    keyed = [(m, "validation") for m in sorted(models, key=lambda m: m.__name__)]
    refs, defs = models_json_schema(keyed, ref_template="#/components/schemas/{model}")
    schemas = defs.get("$defs", {})
    schemas.update({name: build() for name, build in INPUT_SCHEMAS.items()})
    ref_of = {m: refs[(m, "validation")] for m in models}
    for name in _request_components(schemas, {ref_of[m]["$ref"].rsplit("/", 1)[1]
                                              for r in ROUTES if r.body
                                              for m in (r.body, *([r.forms.model]
                                                                  if r.forms else []))}):
        schemas[name] = _defaults_described(_without_nul(schemas[name]))
    problem = {"description": "a problem (RFC 9457)",
               "content": {"application/problem+json": {"schema": ref_of[ProblemOut]}}}
    unreachable = {**problem, "description": "the database is not answering (stopped, "
                                             "restarting, out of connections): nothing of the "
                                             "request was done; problem type "
                                             "store-unreachable, retry after Retry-After "
                                             "seconds",
                   "headers": {"Retry-After": RATE_HEADERS["Retry-After"]}}
    unwritable = {**unreachable, "description": "the store cannot write (disk full, read-only "
                                                "database; problem type store-unwritable) or "
                                                "is not answering (store-unreachable): "
                                                "nothing was saved; retry after Retry-After "
                                                "seconds"}
    too_many = {**problem, "description": "too many requests for the caller's rate limit, or "
                                          "no heavy-analysis slot free: retry after "
                                          "Retry-After seconds",
                "headers": RATE_HEADERS}
    paths: dict[str, Any] = {}
    named: set[str] = set()  # operationIds, each once
    for r in ROUTES:
        path, params = _openapi_path(r.rule)
        if r.query is not None:
            params += _query_params(r.query)
        op: dict[str, Any] = {"summary": r.summary, "tags": r.tags,
                              "operationId": operation_id(r.method, path, r.blueprint),
                              "responses": {}}
        if params:
            op["parameters"] = params
        if r.body is not None:
            media: dict[str, Any] = {"schema": ref_of[r.body]}
            examples = schemas[ref_of[r.body]["$ref"].rsplit("/", 1)[1]].get("examples")
            if examples:  # a valid request: Swagger UI's "Try it out" sends it as it is
                # (tests/api/test_api_docs.py); the schema's own examples list every one
                media["example"] = examples[0]
            op["requestBody"] = {"required": True, "content": {r.request_content_type: media}}
            if r.forms is not None:  # the JSON alternative beside it, and the other media
                media["schema"] = {"anyOf": [ref_of[r.body], ref_of[r.forms.model]]}
                op["requestBody"]["content"].update(r.forms.media)
                op["requestBody"]["description"] = r.forms.description
                if r.forms.heavy_note:
                    op["description"] = r.forms.heavy_note + " " + HEAVY_ANSWER_NOTE
        elif r.request_content_type != "application/json":
            op["requestBody"] = {"required": True, "content": {
                r.request_content_type: {"schema": {"type": "string", "format": "binary"}}},
                "description": "the file's bytes (a workbook is read under its own media "
                               "type too, application/vnd.openxmlformats-officedocument."
                               "spreadsheetml.sheet)"}
        ok: dict[str, Any] = {"description": "success", "headers": {
            "ETag": ETAG_HEADER if r.etag is None else {"description": r.etag,
                                                        "schema": {"type": "string"}}}}
        if r.response is not None:
            ok["content"] = {r.content_type: {"schema": ref_of[r.response]}}
        elif r.content_type != "application/json":  # (bytes, unless text: the feed's CSV)
            ok["content"] = {r.content_type: {"schema": {"type": "string", **(
                {} if r.content_type.startswith("text/") else {"format": "binary"})}}}
        for other in r.also_content:  # (bytes, unless text)
            ok["content"][other] = {"schema": {"type": "string", **(
                {} if other.startswith("text/") else {"format": "binary"})}}
        if r.cache is not None:
            ok["headers"]["Cache-Control"] = {
                "description": CACHE_NOTE[r.cache], "schema": {"type": "string",
                                                               "enum": [CACHE_CONTROL[r.cache]]}}
            op["responses"]["304"] = {"description": "not modified: the If-None-Match given "
                                                     "holds this answer's ETag",
                                      "headers": {"ETag": ETAG_HEADER}}
            op.setdefault("parameters", []).append({
                "name": "If-None-Match", "in": "header", "required": False,
                "description": "an ETag of this answer the client holds: 304 if it is current",
                "schema": {"type": "string"}})
        op["responses"][str(r.status)] = ok
        if r.view_statuses:
            for extra in r.view_statuses:
                op["responses"][str(extra)] = ok
        codes = set(r.errors) | {500}
        if r.body is not None:
            codes |= {400, 413, 415, 422}
        if r.query is not None or params:
            codes |= {422} if r.query is not None else set()
        if r.access != "public":
            codes |= {401, 403, 429}  # 429: the caller's rate (and heavy slots, below)
        if (r.method, path) in HEAVY:
            codes.add(429)
            op["description"] = HEAVY_NOTE + (GRID_NOTE if (r.method, path) == GRID else "") \
                + ("" if r.heavy_note is None else " " + r.heavy_note)
        elif r.heavy_note is not None:
            codes |= {413, 429}
            op["description"] = r.heavy_note + " " + HEAVY_ANSWER_NOTE
        codes.add(503)  # every operation reads the store (the catalog, a key, a revision)
        writes = r.access in ("write", "admin") and r.method != "GET"
        for code in sorted(codes | {400}):
            op["responses"][str(code)] = {429: too_many, 503: unwritable if writes
                                          else unreachable}.get(code, problem)
        # a malformed request (header syntax, request line) is refused by the server in front
        # as HTML; the application's own 400 (malformed JSON) is a problem
        op["responses"]["400"] = {"description": "a malformed request: the body is not JSON "
                                                 "(a problem), or the request line or a header "
                                                 "is not HTTP (" + FRONT + ")",
                                  "content": {**problem["content"], **HTML}}
        if "413" in op["responses"]:  # deploy/nginx.conf's own 413 is a problem too
            limit = (f"{r.body_limit:,} bytes" if r.body_limit is not None else
                     "COSTMODEL_MAX_BODY bytes (default 2 MiB; 20 MiB for a workbook upload)")
            if r.forms is not None:
                limit += f" ({r.forms.limit:,} bytes for a columnar body)"
            op["responses"]["413"] = {**problem, "description": f"the body is over the "
                                                                f"limit: {limit}" + (
                "; or the answer asked for is over its size bound (the operation's "
                "description)" if r.heavy_note is not None else "")}
        if r.if_match:
            op.setdefault("parameters", []).append(IF_MATCH)
            op["responses"]["412"] = {
                **problem, "description": "precondition failed: the If-Match given holds no "
                                          "current ETag of the scenario (it moved on); "
                                          "nothing was written",
                "headers": {"ETag": {"description": "the scenario's current ETag",
                                     "schema": {"type": "string"}}}}
        op["responses"].update(FRONT_RESPONSES)
        op["responses"] = dict(sorted(op["responses"].items()))
        if r.access in ("write", "admin"):
            op["security"] = [{"bearer": []}, {"apiKeyHeader": []}]
        elif r.access == "read":
            op["security"] = [{}, {"bearer": []}, {"apiKeyHeader": []}]
        assert op["operationId"] not in named, op["operationId"]
        named.add(op["operationId"])
        paths.setdefault(path, {})[r.method.lower()] = op
    return for_generators({
        "openapi": "3.1.0",
        "info": {"title": "costmodel pricing API", "version": __version__,
                 "description": "Cost and price per million tokens, with the denominator "
                                "of every figure disclosed. Quantities are accepted as "
                                "\"700 W\" or {\"value\": 700, \"unit\": \"W\"} and answered "
                                "as {\"value\", \"unit\"}. Query parameters are single-valued: "
                                "a repeated one is refused with 422. A 400 (malformed request), "
                                "414 or 431 may come from the HTTP server in front of the "
                                "application, as HTML. What this document cannot state (which "
                                "units have a field's dimension, whether a catalog key exists, "
                                "cross-field rules) is listed in "
                                "docs/operations.md#api-contract-schemathesis."},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "an API key: Authorization: Bearer cm_..."},
                "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key"}},
        },
    })
