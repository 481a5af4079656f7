"""The plain usage CSV read in blocks: times in every form (and a form changing from one
block to the next), keys interned across blocks, a row at fault placed past the first
block."""
from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from costmodel.sources.usage import UsageError, read_usage, read_usage_bytes
from costmodel.sources.usage.plain_csv import BLOCK

T0 = int(datetime(2026, 11, 1, tzinfo=UTC).timestamp())  # 1793491200


@pytest.mark.parametrize("text, seconds", [
    ("1793491200", T0), ("1793491200.9", T0), ("1.7934912e9", T0),
    ("2026-11-01T00:00:00Z", T0), ("2026-11-01T02:00:00+02:00", T0),
    ("2026-11-01T00:00:00.750Z", T0), ("2026-11-01 00:00:59", T0 + 59),
    ("2026-11-01", T0), ("2026-10-31T23:59:59.999-00:00", T0 - 1),
])
def test_time_forms(text, seconds):
    records = read_usage_bytes(
        f"time,input_tokens,output_tokens\n{text},1,1\n".encode(), "u.csv")
    assert records.start.tolist() == [seconds] and records.end.tolist() == [seconds]


def test_forms_mixed_in_one_column():
    data = (b"time,input_tokens,output_tokens\n1793491200,1,1\n2026-11-01T00:00:01Z,1,1\n"
            b"2026-11-01 00:00:02,1,1\n")
    assert read_usage_bytes(data, "u.csv").start.tolist() == [T0, T0 + 1, T0 + 2]


def big_csv(path, rows: int, *, form_change_at: int | None = None, bad_at: int | None = None):
    """``rows`` rows, several of pyarrow's blocks long; tenants t0..t9 cycling."""
    lines = ["time,tenant,input_tokens,cached_input_tokens,output_tokens,requests"]
    for k in range(rows):
        t = T0 + k
        stamp = (datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                 if form_change_at is not None and k >= form_change_at else str(t))
        lines.append(f"{stamp},t{k % 10},{-1 if k == bad_at else 100},{k % 3},7,1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_many_blocks(tmp_path):
    rows = 150_000  # about 4 MB: two blocks, the ISO times from row 100,000 (2.4 MB on)
    path = big_csv(tmp_path / "big.csv", rows, form_change_at=100_000)
    assert path.stat().st_size > BLOCK
    records = read_usage([path])
    assert len(records) == rows
    assert np.array_equal(records.start, T0 + np.arange(rows))
    assert records.labels["tenant"] == tuple(f"t{i}" for i in range(10))
    assert np.array_equal(records.keys["tenant"], np.arange(rows) % 10)
    assert records.input_tokens.sum() == 100 * rows
    # cached: 0, 1, 2 repeating: 50,000 each
    assert records.cached_input_tokens.sum() == 50_000 * (0 + 1 + 2)
    assert records.requests.sum() == rows


def test_a_bad_row_past_the_first_block_is_placed(tmp_path):
    path = big_csv(tmp_path / "big.csv", 150_000, bad_at=123_456)
    with pytest.raises(UsageError) as caught:
        read_usage([path])
    e = caught.value
    # the header is line 1, row k (0-based) line k + 2
    assert (e.line, e.column) == (123_456 + 2, "input_tokens")
