"""LiteLLM's daily activity: ``GET /user/daily/activity`` (and ``/team/...``, ``/tag/...``,
``/organization/daily/activity``), the proxy's daily spend tables summed by day.

An answer is ``{"results": [days], "metadata": {..., "has_more": ...}}``; a day is
``{"date": "2026-11-01", "metrics": {...}, "breakdown": {...}}``, its metrics counting
``prompt_tokens``, ``completion_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens`` and ``api_requests``; the breakdown splits the day by
``models``, ``api_keys`` (with the key's ``key_alias`` and ``team_id``), ``entities`` (the
team, user, tag or organization the endpoint is about), providers... each entry
``{"metrics": {...}, "metadata": {...}}`` (older answers: the metrics alone), a model's entry
also by ``api_key_breakdown``. A file holds one answer, an array of answers or answers one
after another.

The dimensions are not crossed (a day's models and its keys each add up to the day), so one
is read, the finest there is: each model's keys (keys ``model``, ``key``, ``key_alias``,
``team``) when every model has its ``api_key_breakdown``; else the keys; else the entities
(key ``entity``); else the models; else the day as one record. What a breakdown leaves of the
day's metrics is a record of its own, unattributed (every key ``""``); a breakdown adding up
to more than the day is an error.

A day is the record's period: ``start`` its midnight UTC, ``end`` the next. ``prompt_tokens``
includes the cache reads (the daily tables sum the spend logs' ``prompt_tokens``, which
include them, and read the reads from the same rows' ``usage_object``), so new input is
``prompt_tokens - cache_read_input_tokens``.
"""
from __future__ import annotations

from datetime import UTC, datetime

from .json_input import JsonSource, JsonUnit, join
from .records import RecordBuilder

__all__ = ["read_litellm_daily", "is_daily_activity"]

_DAY = 86400  # [s]
_COUNTS = ("prompt_tokens", "cache_read_input_tokens", "completion_tokens", "api_requests")


def is_daily_activity(value) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("results"), list):
        return False
    first = value["results"][0] if value["results"] else None
    return first is None or (isinstance(first, dict) and "metrics" in first)


def read_litellm_daily(src: JsonSource, builder: RecordBuilder) -> None:
    last = None
    for unit in src.units:
        answer = unit.value
        if not is_daily_activity(answer):
            raise src.error(unit, "", 'expected a daily activity answer ({"results": '
                                      '[days], "metadata": {...}})')
        for i, day in enumerate(answer["results"]):
            _day(src, unit, day, join("results", i), builder)
        last = (unit, answer)
    meta = last[1].get("metadata") if last else None
    if isinstance(meta, dict) and meta.get("has_more") is True:
        raise src.error(last[0], "metadata.has_more",
                        f"the last answer says has_more: true (page {meta.get('page')} of "
                        f"{meta.get('total_pages')}), so the pages after it are missing; "
                        "fetch every page")


class _Day:
    def __init__(self, src: JsonSource, unit: JsonUnit, start: int, builder: RecordBuilder):
        self.src, self.unit, self.start, self.builder = src, unit, start, builder

    def metrics(self, entry, path: str) -> tuple[tuple[float, ...], str]:
        """The counts of a day or a breakdown entry (``{"metrics": ...}`` or the metrics)."""
        if not isinstance(entry, dict):
            raise self.src.error(self.unit, path, "expected metrics (an object)")
        if isinstance(entry.get("metrics"), dict):
            entry, path = entry["metrics"], join(path, "metrics")
        prompt, cached, completion, requests = (
            self.src.count(self.unit, entry, key, path,
                           required=key in ("prompt_tokens", "completion_tokens"))
            for key in _COUNTS)
        if cached > prompt:
            raise self.src.error(self.unit, join(path, "cache_read_input_tokens"),
                                 f"{cached:.0f} cache-read tokens are more than the "
                                 f"{prompt:.0f} prompt_tokens that include them")
        return (prompt, cached, completion, requests), path

    def add(self, counts: tuple[float, ...], keys: dict[str, str], path: str) -> None:
        prompt, cached, completion, requests = counts
        try:
            self.builder.add(self.start, self.start + _DAY, prompt - cached, cached,
                             completion, requests, keys)
        except ValueError as exc:
            raise self.src.error(self.unit, path, str(exc)) from None

    def split(self, whole: tuple[float, ...], whole_path: str,
              parts: list[tuple[dict[str, str], tuple[float, ...], str]],
              rest_keys: dict[str, str], *, recorded: bool = False) -> None:
        """Each part a record (unless ``recorded`` already), and what they leave of
        ``whole`` one more (``rest_keys``)."""
        rest = [w - sum(p[1][i] for p in parts) for i, w in enumerate(whole)]
        for i, left in enumerate(rest):
            if left < -0.5:  # counts are whole numbers: anything below is more than the day
                raise self.src.error(self.unit, join(whole_path, _COUNTS[i]),
                                     f"the breakdown's {_COUNTS[i]} add up to "
                                     f"{whole[i] - left:.0f}, more than the {whole[i]:.0f} here")
        if not recorded:
            for keys, counts, path in parts:
                self.add(counts, keys, path)
        rest = [max(left, 0.0) for left in rest]
        if rest[1] > rest[0] + 0.5:
            raise self.src.error(self.unit, join(whole_path, "cache_read_input_tokens"),
                                 "the breakdown leaves more cache reads than prompt tokens")
        rest[1] = min(rest[1], rest[0])
        if any(left > 0.5 for left in rest):
            self.add(tuple(rest), rest_keys, whole_path)


def _key_labels(src: JsonSource, entry) -> dict[str, str]:
    meta = entry.get("metadata") if isinstance(entry, dict) else None
    meta = meta if isinstance(meta, dict) else {}
    return {"key_alias": src.label(meta.get("key_alias")) or "",
            "team": src.label(meta.get("team_id")) or ""}


def _day(src: JsonSource, unit: JsonUnit, day, path: str, builder: RecordBuilder) -> None:
    if not isinstance(day, dict):
        raise src.error(unit, path, "expected a day ({\"date\": ..., \"metrics\": ...})")
    text = day.get("date")
    try:
        date = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        raise src.error(unit, join(path, "date"),
                        f"expected a date YYYY-MM-DD, got {text!r}") from None
    d = _Day(src, unit, int(date.timestamp()), builder)
    whole, whole_path = d.metrics(day, path)
    breakdown = day.get("breakdown") if isinstance(day.get("breakdown"), dict) else {}
    bpath = join(path, "breakdown")

    def entries(name: str) -> dict:
        value = breakdown.get(name)
        return value if isinstance(value, dict) else {}

    models, keys, entities = entries("models"), entries("api_keys"), entries("entities")
    blank = {"model": "", "key": "", "key_alias": "", "team": ""}
    if models and all(isinstance(e, dict) and isinstance(e.get("api_key_breakdown"), dict)
                      and e["api_key_breakdown"] for e in models.values()):
        model_sums = []
        for model, entry in models.items():
            mpath = join(join(bpath, "models"), model)
            counts, cpath = d.metrics(entry, mpath)
            parts = []
            for key, kentry in entry["api_key_breakdown"].items():
                kpath = join(join(mpath, "api_key_breakdown"), key)
                parts.append(({"model": model, "key": key, **_key_labels(src, kentry)},
                              d.metrics(kentry, kpath)[0], kpath))
            model_sums.append(({}, counts, mpath))
            d.split(counts, cpath, parts, {**blank, "model": model})
        d.split(whole, whole_path, model_sums, blank, recorded=True)
    elif keys:
        d.split(whole, whole_path,
                [({"key": key, **_key_labels(src, entry)},
                  d.metrics(entry, join(join(bpath, "api_keys"), key))[0],
                  join(join(bpath, "api_keys"), key)) for key, entry in keys.items()],
                {"key": "", "key_alias": "", "team": ""})
    elif entities:
        d.split(whole, whole_path,
                [({"entity": name}, d.metrics(entry, join(join(bpath, "entities"), name))[0],
                  join(join(bpath, "entities"), name)) for name, entry in entities.items()],
                {"entity": ""})
    elif models:
        d.split(whole, whole_path,
                [({"model": name}, d.metrics(entry, join(join(bpath, "models"), name))[0],
                  join(join(bpath, "models"), name)) for name, entry in models.items()],
                {"model": ""})
    else:
        d.add(whole, {}, whole_path)

