"""OpenRouter's model list (``GET https://openrouter.ai/api/v1/models``) read into dated, cited
market prices (catalog ``market_price`` entries, :mod:`costmodel.decisions.market`).

The file's published shape: ``{"data": [{"id": "deepseek/deepseek-r1", "name": ...,
"created": <unix time>, "context_length": ..., "pricing": {"prompt": "0.00000055",
"completion": "0.00000219", "input_cache_read": "0.00000014", ...}, ...}, ...]}``: prices as
decimal strings of USD per token. Each model with a prompt and a completion price becomes an
entry ``openrouter/<author>.<model>[+<variant>]@<date>`` priced per million input, cached-input
(``input_cache_read``, when given) and output tokens, each citing the list, the model's id
and the day the list was fetched (``date``: the list carries none of its own). A price of
``-1`` (a router whose price depends on the model it picks) is no price: that model is left
out and said so.

Hostile input: at most :data:`MAX_BYTES` bytes and :data:`MAX_MODELS` models, nested no
deeper than any input may be; every error names its JSON path (``data[3].pricing.prompt``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..decisions.market import OFFER_PATTERN, MarketEntry
from ..model.errors import InputError, check_nesting
from ..model.inputs import error_path
from ..model.rates import RateError, parse_rate_date

__all__ = ["OpenRouterPrice", "Skipped", "read_openrouter", "parse_openrouter", "MAX_BYTES",
           "MAX_MODELS", "PROVIDER", "LIST_URL"]

MAX_BYTES = 32 * 2**20  # the whole list is about 1 MB for 400 models
MAX_MODELS = 20_000
PROVIDER = "openrouter"
LIST_URL = "https://openrouter.ai/api/v1/models"
# USD per token -> USD per million tokens, exactly (the list's decimal strings)
_PER_MTOK = Decimal(10) ** 6
_PRICES = (("prompt", "price_input"), ("completion", "price_output"),
           ("input_cache_read", "price_cached_input"))
_OFFER = re.compile(f"^{OFFER_PATTERN}$")


@dataclass(frozen=True)
class OpenRouterPrice:
    """One model's prices as a catalog ``market_price`` entry: its key, its data (quantities
    with their ``source``, as a catalog file writes them) and the model's id."""
    key: str
    data: dict[str, Any]
    model_id: str


@dataclass(frozen=True)
class Skipped:
    path: str  # data[i]
    model_id: str
    why: str


def _offer(model_id: str) -> str | None:
    """``deepseek/deepseek-r1:free`` -> ``deepseek.deepseek-r1+free`` (a key's offer), or None
    when it does not fit one (over 60 characters, or other characters)."""
    offer = model_id.replace("/", ".").replace(":", "+")
    return offer if _OFFER.match(offer) else None


def _per_mtok(raw: Any, where: str) -> float | None:
    """A price string [USD/token] as USD per million tokens; None for ``-1`` (no price)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise InputError([(where, f"a price is a decimal string of USD per token, not "
                                  f"{type(raw).__name__}")])
    try:
        value = Decimal(str(raw).strip())
    except InvalidOperation:
        raise InputError([(where, f"not a price: {str(raw)[:40]!r}")]) from None
    if not value.is_finite():
        raise InputError([(where, f"not a finite price: {str(raw)[:40]!r}")])
    if value == -1:
        return None
    if value < 0:
        raise InputError([(where, f"a negative price: {str(raw)[:40]!r}")])
    return float(value * _PER_MTOK)


def parse_openrouter(doc: Any, *, date: str, source: str | None = None,
                     name: str = "the file") -> tuple[list[OpenRouterPrice], list[Skipped]]:
    """The entries of a parsed model list fetched on ``date`` (YYYY-MM-DD or YYYY-MM), and
    the models left out with why. ``source``: how the list was obtained (default: fetched
    from :data:`LIST_URL` on ``date``)."""
    try:
        parse_rate_date(date)
    except RateError as exc:
        raise InputError([("date", str(exc))]) from None
    check_nesting(doc)
    models = doc.get("data") if isinstance(doc, dict) else None
    if not isinstance(models, list):
        raise InputError([("data", f"{name} is not OpenRouter's model list: an object with "
                                   f"'data', a list of models ({LIST_URL})")])
    if len(models) > MAX_MODELS:
        raise InputError([("data", f"{len(models):,} models: at most {MAX_MODELS:,}")])
    cited = source or f"OpenRouter model list ({LIST_URL}), fetched {date}"
    out: list[OpenRouterPrice] = []
    skipped: list[Skipped] = []
    errors: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, model in enumerate(models):
        where = f"data[{i}]"
        if not isinstance(model, dict):
            errors.append((where, "a model is an object"))
            continue
        model_id, pricing = model.get("id"), model.get("pricing")
        if not isinstance(model_id, str) or not model_id.strip():
            errors.append((f"{where}.id", "required: the model's id (text)"))
            continue
        if not isinstance(pricing, dict):
            errors.append((f"{where}.pricing", "required: an object of prices"))
            continue
        offer = _offer(model_id)
        if offer is None:
            skipped.append(Skipped(where, model_id[:100], "its id does not fit a catalog key "
                                                          "(at most 60 characters: letters, "
                                                          "digits, . _ + - / :)"))
            continue
        if offer in seen:
            errors.append((f"{where}.id", f"{model_id!r} is listed twice"))
            continue
        seen.add(offer)
        label = model.get("name") if isinstance(model.get("name"), str) else model_id
        data: dict[str, Any] = {"provider": "OpenRouter", "model": label[:200], "date": date,
                                "source": cited}
        missing = False
        try:
            for field, kind in _PRICES:
                if field not in pricing:
                    missing = missing or field != "input_cache_read"
                    continue
                value = _per_mtok(pricing[field], f"{where}.pricing.{field}")
                if value is None:
                    missing = True
                    continue
                data[kind] = {"value": value, "unit": "USD/Mtok",
                              "source": f"{cited}: {model_id} pricing.{field} "
                                        f"{pricing[field]} USD/token"}
        except InputError as exc:
            errors += exc.errors
            continue
        if missing:
            skipped.append(Skipped(where, model_id, "no prompt and completion price (a "
                                                    "variable price, -1, or none given)"))
            continue
        notes = [f"OpenRouter id {model_id}"]
        if isinstance(model.get("context_length"), int):
            notes.append(f"context {model['context_length']:,} tokens")
        data["note"] = "; ".join(notes)
        plain = {k: ({"value": v["value"], "unit": v["unit"]} if isinstance(v, dict) else v)
                 for k, v in data.items() if k not in ("source", "note")}
        try:
            MarketEntry.model_validate(plain)
        except ValidationError as exc:
            errors += [(f"{where}.pricing", f"{error_path(e['loc'])}: {e['msg']}")
                       for e in exc.errors(include_url=False)]
            continue
        out.append(OpenRouterPrice(f"{PROVIDER}/{offer}@{date}", data, model_id))
    if errors:
        raise InputError(errors)
    return out, skipped


def read_openrouter(path: str | Path, *, date: str, source: str | None = None
                    ) -> tuple[list[OpenRouterPrice], list[Skipped]]:
    """The entries of the model list in the file at ``path`` (see :func:`parse_openrouter`);
    an :class:`InputError` at the JSON path of what is wrong, the file named."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError([("", f"{path}: cannot read it: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_BYTES:
        raise InputError([("", f"{path}: larger than {MAX_BYTES // 2**20} MiB")])
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError([("", f"{path}: not JSON: {exc}")]) from None
    try:
        return parse_openrouter(doc, date=date, source=source, name=str(path))
    except InputError as exc:
        raise exc.about(str(path)) from None
