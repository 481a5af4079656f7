"""OpenAI's organization usage API answer, ``GET /v1/organization/usage/completions``.

A page (``{"object": "page", "data": [...], "has_more": ..., "next_page": ...}``) holds
time buckets (``{"object": "bucket", "start_time": ..., "end_time": ..., "results": [...]}``,
unix seconds, the end exclusive), each with results
(``"object": "organization.usage.completions.result"``) counting ``input_tokens``,
``input_cached_tokens``, ``output_tokens`` and ``num_model_requests``, grouped by the fields
named in the query's ``group_by`` (``project_id``, ``user_id``, ``api_key_id``, ``model``,
``batch``, ...; null where not grouped). A file holds one page, a JSON array of pages, or
pages one after another (JSON lines).

``input_tokens`` INCLUDES the cached tokens (OpenAI's reference: "The aggregated number of
text input tokens used, including cached tokens"; later "... including cached and
cache-write tokens"), so a record's new input is ``input_tokens - input_cached_tokens``, and
a cached count above the input count is an error. Other counts (``input_audio_tokens``,
``output_audio_tokens``, ...) are not read. Every text, true/false or null field of a result
other than ``object`` is a grouping key, named as the field.

The last page of a file must not say ``has_more: true``: the pages after it are missing, and
a month charged from part of its usage would be wrong without a word.
"""
from __future__ import annotations

from .json_input import JsonSource, JsonUnit, join
from .records import RecordBuilder

__all__ = ["read_openai_usage", "is_openai_usage", "RESULT_OBJECT"]

RESULT_OBJECT = "organization.usage.completions.result"
_COUNTS = {"input_tokens", "input_cached_tokens", "output_tokens", "num_model_requests"}


def is_openai_usage(value) -> bool:
    """Whether a top-level JSON value looks like a page of the usage API."""
    return isinstance(value, dict) and value.get("object") == "page" \
        and isinstance(value.get("data"), list)


def read_openai_usage(src: JsonSource, builder: RecordBuilder) -> None:
    """Every page of ``src`` into ``builder``."""
    last: tuple[JsonUnit, dict] | None = None
    for unit in src.units:
        page = unit.value
        if not is_openai_usage(page):
            raise src.error(unit, "", 'expected a usage page ({"object": "page", '
                                      '"data": [buckets]})')
        for i, bucket in enumerate(page["data"]):
            _bucket(src, unit, bucket, join("data", i), builder)
        last = (unit, page)
    if last is not None and last[1].get("has_more") is True:
        raise src.error(last[0], "has_more",
                        "the last page says has_more: true, so the pages after it are missing "
                        f"(next_page {last[1].get('next_page')!r}); fetch every page")


def _bucket(src: JsonSource, unit: JsonUnit, bucket, path: str, builder: RecordBuilder):
    if not isinstance(bucket, dict) or bucket.get("object", "bucket") != "bucket":
        raise src.error(unit, path, 'expected a bucket ({"object": "bucket", "start_time": '
                                    '..., "end_time": ..., "results": [...]})')
    start = _seconds(src, unit, bucket, "start_time", path)
    end = _seconds(src, unit, bucket, "end_time", path)
    if end < start:
        raise src.error(unit, join(path, "end_time"),
                        f"ends ({end}) before it starts ({start})")
    results = bucket.get("results")
    if not isinstance(results, list):
        raise src.error(unit, join(path, "results"), "expected a list of results")
    for j, result in enumerate(results):
        where = join(join(path, "results"), j)
        if not isinstance(result, dict):
            raise src.error(unit, where, "expected a usage result (an object)")
        kind = result.get("object", RESULT_OBJECT)
        if kind != RESULT_OBJECT:
            raise src.error(unit, join(where, "object"),
                            f"is {kind!r}, not completions usage ({RESULT_OBJECT!r}): "
                            "export /v1/organization/usage/completions")
        total_input = src.count(unit, result, "input_tokens", where)
        cached = src.count(unit, result, "input_cached_tokens", where, required=False)
        output = src.count(unit, result, "output_tokens", where)
        requests = src.count(unit, result, "num_model_requests", where, required=False)
        if cached > total_input:
            raise src.error(unit, join(where, "input_cached_tokens"),
                            f"{cached:.0f} cached tokens are more than the {total_input:.0f} "
                            "input tokens that include them")
        keys = {}
        for name, value in result.items():
            if name == "object" or name in _COUNTS:
                continue
            label = src.label(value)
            if label is not None:
                keys[name] = label
        try:
            builder.add(start, end, total_input - cached, cached, output, requests, keys)
        except ValueError as exc:
            raise src.error(unit, where, str(exc)) from None


def _seconds(src: JsonSource, unit: JsonUnit, bucket: dict, key: str, path: str) -> int:
    value = bucket.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise src.error(unit, join(path, key), f"expected unix seconds, got {value!r}")
    return src.time(unit, value, join(path, key))
