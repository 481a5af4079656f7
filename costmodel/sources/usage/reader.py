"""Which reader a usage file needs (its shape: given, or told from its content), and the
reading of several files into one set of records."""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .errors import UsageError
from .json_input import load_json
from .litellm_daily import is_daily_activity, read_litellm_daily
from .litellm_spend import is_spend_logs, read_litellm_spend
from .openai_usage import is_openai_usage, read_openai_usage
from .records import RecordBuilder, UsageRecords, concat

__all__ = ["SHAPES", "read_usage", "read_usage_bytes"]

SHAPES = ("openai-usage", "litellm-spend", "litellm-daily", "csv")
_JSON_READERS = {"openai-usage": read_openai_usage, "litellm-spend": read_litellm_spend,
                 "litellm-daily": read_litellm_daily}
_SNIFF = 4096  # [byte] read to tell JSON from CSV


def _looks_json(head: bytes) -> bool:
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text[:1] in (b"{", b"[")


def _json_shape(value, name: str) -> str:
    if is_openai_usage(value):
        return "openai-usage"
    if is_daily_activity(value):
        return "litellm-daily"
    if is_spend_logs(value):
        return "litellm-spend"
    raise UsageError(name, None, None,
                     "cannot tell the shape of this JSON (an OpenAI usage page has "
                     '"object": "page"; LiteLLM daily activity "results"; LiteLLM spend logs '
                     "rows with startTime and prompt_tokens): give the shape, one of "
                     + ", ".join(SHAPES))


def _check(shape: str | None, mapping: Mapping[str, str] | None, name: str) -> None:
    if shape is not None and shape not in SHAPES:
        raise UsageError(name, None, None, f"unknown usage shape {shape!r}; one of "
                                           + ", ".join(SHAPES))
    if mapping and shape not in (None, "csv"):
        raise UsageError(name, None, None, "a column mapping applies to a CSV only")


def _read_json(data: bytes, name: str, shape: str | None) -> UsageRecords:
    src = load_json(data, name)
    if shape is None:
        shape = _json_shape(src.units[0].value if src.units else None, name)
    builder = RecordBuilder()
    _JSON_READERS[shape](src, builder)
    if not len(builder):
        raise UsageError(name, None, None, "holds no usage records")
    return builder.build(f"{name} ({shape})")


def _read_one(source: Path | bytes, name: str, head: bytes, shape: str | None,
              mapping: Mapping[str, str] | None) -> UsageRecords:
    if shape is None and not _looks_json(head):
        shape = "csv"
    if shape == "csv":
        from .plain_csv import read_plain_csv  # pyarrow, loaded when a CSV is read

        return read_plain_csv(source, name, mapping)
    if mapping:
        raise UsageError(name, None, None, "a column mapping applies to a CSV only")
    data = source if isinstance(source, bytes) else source.read_bytes()
    return _read_json(data, name, shape)


def read_usage(paths: Sequence[str | Path], *, shape: str | None = None,
               mapping: Mapping[str, str] | None = None,
               max_bytes: int | None = None) -> UsageRecords:
    """Usage records read whole from ``paths`` (each file its own shape when ``shape`` is
    None: told from its content), or a :class:`UsageError` naming the file, line and column
    of the first thing that does not read. ``mapping``: for a CSV, canonical column -> the
    file's header name. ``max_bytes``: a larger file is refused before it is read. A CSV is
    streamed; a JSON file is read whole."""
    if not paths:
        raise UsageError("usage", None, None, "no usage files given")
    parts = []
    for p in paths:
        path, name = Path(p), str(p)
        _check(shape, mapping, name)
        try:
            size = os.path.getsize(path)
            if max_bytes is not None and size > max_bytes:
                raise UsageError(name, None, None, f"is {size:,} bytes, more than the "
                                                   f"{max_bytes:,} allowed")
            with open(path, "rb") as f:
                head = f.read(_SNIFF)
        except OSError as exc:
            raise UsageError(name, None, None,
                             f"cannot be read: {exc.strerror or exc}") from None
        if not head.strip():
            raise UsageError(name, None, None, "is empty")
        parts.append(_read_one(path, name, head, shape, mapping))
    return concat(parts)


def read_usage_bytes(data: bytes, name: str, *, shape: str | None = None,
                     mapping: Mapping[str, str] | None = None,
                     max_bytes: int | None = None) -> UsageRecords:
    """:func:`read_usage` of an upload (``name``: how errors name it); ``max_bytes``: the
    caller's limit, a larger upload refused before anything is parsed."""
    _check(shape, mapping, name)
    if max_bytes is not None and len(data) > max_bytes:
        raise UsageError(name, None, None, f"is {len(data):,} bytes, more than the "
                                           f"{max_bytes:,} allowed")
    if not data.strip():
        raise UsageError(name, None, None, "is empty")
    return _read_one(bytes(data), name, data[:_SNIFF], shape, mapping)
