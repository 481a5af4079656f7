"""The columns of a plain usage CSV costmodel reads, by their canonical names (a mapping
names the file's own); apart, so that knowing them does not load the CSV reader (pyarrow)."""
from __future__ import annotations

__all__ = ["TIMES", "COUNTS", "CANONICAL"]

TIMES = ("time", "period_start", "period_end")
COUNTS = ("input_tokens", "total_input_tokens", "cached_input_tokens", "output_tokens",
          "requests")
CANONICAL = (*TIMES, "tenant", "model", *COUNTS)
