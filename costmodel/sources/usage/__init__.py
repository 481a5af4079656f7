"""Usage records in, in the shapes the tools that record them write: OpenAI's organization
usage API answer (``openai-usage``), LiteLLM's spend logs (``litellm-spend``) and daily
activity (``litellm-daily``), and a plain CSV (``csv``) with an optional column mapping.

Readers only read: a file becomes plain columns (:class:`UsageRecords`), or a
:class:`UsageError` with its file, line and column, and nothing of a file that does not read
whole is returned. No allocation, no catalog here.
"""
from __future__ import annotations

from .columns import CANONICAL
from .errors import UsageError
from .reader import SHAPES, read_usage, read_usage_bytes
from .records import UsageRecords

__all__ = ["UsageRecords", "UsageError", "read_usage", "read_usage_bytes", "SHAPES",
           "CANONICAL"]
