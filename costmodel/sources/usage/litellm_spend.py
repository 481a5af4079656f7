"""LiteLLM's spend logs: one row a request, as the proxy's ``LiteLLM_SpendLogs`` table holds
them and ``GET /spend/logs`` answers them (a JSON array of rows; ``/spend/logs/v2`` pages
them as ``{"data": [rows], ...}``; JSON lines of rows read too).

Read from a row: ``startTime`` (the request's time: ``start == end``), ``prompt_tokens``,
``completion_tokens``, one request, and the grouping keys ``key`` (``api_key``, the hashed
key), ``key_alias``, ``team`` (``team_id``), ``team_alias``, ``user``, ``end_user``,
``organization``, ``model``, ``model_group``, and each request tag: ``"k:v"`` as
``tag:k`` = ``v``, a tag without a colon as ``tag`` (several joined by commas). Where a row
leaves a key empty, the key's metadata (``metadata.user_api_key_alias``,
``user_api_key_team_id``, ``user_api_key_team_alias``, ``user_api_key_user_id``,
``user_api_key_org_id``) fills it.

Cached tokens are the cache reads in ``metadata.usage_object``: ``cache_read_input_tokens``,
else ``prompt_tokens_details.cached_tokens`` (LiteLLM's daily tables read the same field).
``prompt_tokens`` INCLUDES them (LiteLLM's prompt caching doc: "prompt_tokens: These are all
prompt tokens including cache-miss and cache-hit input tokens"), so a record's new input is
``prompt_tokens - cached``, and cached above prompt_tokens is an error. ``metadata`` and
``request_tags`` may be JSON text (a database export) or JSON.
"""
from __future__ import annotations

import json
from typing import Any

from ...model.errors import InputError, check_nesting
from .json_input import JsonSource, JsonUnit, join
from .records import RecordBuilder

__all__ = ["read_litellm_spend", "is_spend_row", "is_spend_logs"]

_MAX_EMBEDDED = 1 << 20  # [characters] metadata or tags given as JSON text in one row

# key -> (the row's column, the metadata field that fills it when the column is empty)
_KEYS = {
    "key": ("api_key", "user_api_key"),
    "key_alias": (None, "user_api_key_alias"),
    "team": ("team_id", "user_api_key_team_id"),
    "team_alias": (None, "user_api_key_team_alias"),
    "user": ("user", "user_api_key_user_id"),
    "end_user": ("end_user", None),
    "organization": ("organization_id", "user_api_key_org_id"),
    "model": ("model", None),
    "model_group": ("model_group", None),
}


def is_spend_row(value) -> bool:
    return isinstance(value, dict) and "startTime" in value and "prompt_tokens" in value


def is_spend_logs(value) -> bool:
    """Whether a top-level JSON value looks like spend log rows (a row, or a page of rows)."""
    if is_spend_row(value):
        return True
    data = value.get("data") if isinstance(value, dict) else None
    return isinstance(data, list) and bool(data) and is_spend_row(data[0])


def read_litellm_spend(src: JsonSource, builder: RecordBuilder) -> None:
    for unit in src.units:
        value = unit.value
        if is_spend_row(value):
            _row(src, unit, value, "", builder)
        elif isinstance(value, dict) and isinstance(value.get("data"), list):
            for i, row in enumerate(value["data"]):
                _row(src, unit, row, join("data", i), builder)
        else:
            raise src.error(unit, "", "expected a spend log row (startTime, prompt_tokens, "
                                      "completion_tokens, ...) or {\"data\": [rows]}")


def _embedded(src: JsonSource, unit: JsonUnit, row: dict, key: str, path: str) -> Any:
    """A JSON column that an export may give as text."""
    value = row.get(key)
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        if len(value) > _MAX_EMBEDDED:
            raise src.error(unit, join(path, key), f"longer than {_MAX_EMBEDDED:,} characters")
        try:
            value = json.loads(value)
            check_nesting(value)
        except (ValueError, RecursionError, InputError):
            raise src.error(unit, join(path, key), "is not JSON, or nested too deep") from None
    return value


def _row(src: JsonSource, unit: JsonUnit, row, path: str, builder: RecordBuilder) -> None:
    if not is_spend_row(row):
        raise src.error(unit, path, "expected a spend log row (startTime, prompt_tokens, ...)")
    time = src.time(unit, row.get("startTime"), join(path, "startTime"))
    prompt = src.count(unit, row, "prompt_tokens", path)
    completion = src.count(unit, row, "completion_tokens", path)
    metadata = _embedded(src, unit, row, "metadata", path)
    metadata = metadata if isinstance(metadata, dict) else {}
    cached, cached_path = _cache_reads(src, unit, metadata, join(path, "metadata"))
    if cached > prompt:
        raise src.error(unit, cached_path, f"{cached:.0f} cache-read tokens are more than the "
                                           f"{prompt:.0f} prompt_tokens that include them")
    keys: dict[str, str] = {}
    for name, (column, meta) in _KEYS.items():
        label = src.label(row.get(column)) if column else None
        if not label and meta:
            label = src.label(metadata.get(meta))
        keys[name] = label or ""
    keys.update(_tags(src, _embedded(src, unit, row, "request_tags", path)))
    try:
        builder.add(time, time, prompt - cached, cached, completion, 1.0, keys)
    except ValueError as exc:
        raise src.error(unit, path, str(exc)) from None


def _cache_reads(src: JsonSource, unit: JsonUnit, metadata: dict,
                 path: str) -> tuple[float, str]:
    usage = metadata.get("usage_object")
    if not isinstance(usage, dict):
        return 0.0, path
    where = join(path, "usage_object")
    if usage.get("cache_read_input_tokens") is not None:
        return src.count(unit, usage, "cache_read_input_tokens", where), \
            join(where, "cache_read_input_tokens")
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        where = join(where, "prompt_tokens_details")
        return src.count(unit, details, "cached_tokens", where, required=False), \
            join(where, "cached_tokens")
    return 0.0, where


def _tags(src: JsonSource, tags) -> dict[str, str]:
    if not isinstance(tags, list):
        return {}
    out: dict[str, str] = {}
    plain: list[str] = []
    for tag in tags:
        if not isinstance(tag, str) or not tag.strip():
            continue
        name, sep, value = tag.partition(":")
        if sep and name.strip():
            out[f"tag:{name.strip()}"] = value.strip()
        else:
            plain.append(tag.strip())
    if plain:
        out["tag"] = ",".join(plain)
    return out
