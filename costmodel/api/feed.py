"""``GET /api/v1/feed.csv`` and ``/api/v1/feed.json``: the spreadsheet feed
(:mod:`costmodel.app.feed`), for Excel's *Get Data > From Web* (Power Query) and Google
Sheets' ``IMPORTDATA``. Reads like the rest of the API (a viewer key, or open reads); since
``IMPORTDATA`` cannot send a header, these two routes also take the key as ``?key=``
(docs/feed.md says what that costs). ETag of the content, 304 on If-None-Match,
``Cache-Control: no-cache`` (a refresh that changes nothing is a 304)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from flask import Response
from pydantic import BaseModel, Field

from ..app import feed as feed_use_case
from .auth import QUERY_KEY_ENDPOINTS
from .openapi import MAX_FILTER, Answer, route
from .routes import CSV, pricing, services
from .schemas import Out

__all__ = ["FeedQuery", "FeedOut"]

HEAVY_NOTE = (f"A table not already held by the worker (the first after a catalog change, a "
              f"new saved revision or a new day) is priced whole, up to "
              f"{feed_use_case.MAX_SAVED:,} saved scenarios a page: a heavy answer.")


class FeedQuery(BaseModel):
    include: Annotated[Literal["all", "published", "saved"], Field(
        description="which rows: the published operating points, the saved scenarios, or "
                    "both")] = "all"
    q: Annotated[str, Field(max_length=MAX_FILTER, description="only saved scenarios whose "
                                                               "name contains this")] \
        | None = None
    limit: Annotated[int, Field(ge=1, le=feed_use_case.MAX_SAVED,
                                description="saved scenarios a page")] = feed_use_case.MAX_SAVED
    offset: Annotated[int, Field(ge=0, le=10**9, description="saved scenarios skipped")] = 0
    key: Annotated[str, Field(max_length=200, description=(
        "the API key, for a client that cannot send a header (Google Sheets' IMPORTDATA): "
        "it is then written in logs, histories and the spreadsheet itself; use a viewer key "
        "made for the feed (docs/feed.md)"))] | None = None


class FeedColumn(Out):
    name: str
    unit: str
    description: str


class FeedOut(Out):
    """The feed as JSON: the columns (name, unit, meaning) and the rows by column name."""
    as_of: str
    columns: list[FeedColumn]
    rows: list[dict[str, Any]]
    saved_total: int
    offset: int
    limit: int
    truncated: bool


def _table(query: FeedQuery) -> feed_use_case.FeedAnswer:
    return feed_use_case.feed(services(), include=query.include, q=query.q,
                              limit=query.limit, offset=query.offset)


def _heavy(body: Any, query: FeedQuery) -> bool:
    return not feed_use_case.cached(services(), include=query.include, q=query.q,
                                    limit=query.limit, offset=query.offset)


def _headers(answer: Answer, table: feed_use_case.FeedAnswer) -> Answer:
    answer.headers["X-Total-Count"] = str(table.feed.saved_total)  # saved scenarios in all
    return answer


@route(pricing, "/feed.csv", "GET", summary="The spreadsheet feed as CSV: cost and price per "
                                            "million tokens of the published operating points "
                                            "and the saved scenarios", access="read",
       query=FeedQuery, content_type=CSV, cache="revalidate", heavy_when=_heavy,
       heavy_note=HEAVY_NOTE)
def feed_csv(query: FeedQuery, principal) -> Response:
    table = _table(query)
    answer = Answer(table.csv, mimetype=CSV, headers={
        "Content-Disposition": 'inline; filename="costmodel-feed.csv"'})
    answer.headers["ETag"] = table.csv_etag
    return _headers(answer, table)


@route(pricing, "/feed.json", "GET", summary="The spreadsheet feed as JSON: its columns and "
                                             "rows", access="read", query=FeedQuery,
       response=FeedOut, cache="revalidate", heavy_when=_heavy, heavy_note=HEAVY_NOTE)
def feed_json(query: FeedQuery, principal) -> Response:
    table = _table(query)
    answer = Answer(table.json, mimetype="application/json")
    answer.headers["ETag"] = table.json_etag
    return _headers(answer, table)


QUERY_KEY_ENDPOINTS.update({f"{pricing.name}.feed_csv", f"{pricing.name}.feed_json"})
