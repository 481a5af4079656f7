"""Each usage shape read from its fixture (fixtures/usage/, ORIGIN.md says where each comes
from): per-tenant totals of new input, cached input, output and requests checked by hand
against the files' numbers; the cached tokens taken out of the input where the shape counts
them in it; the shape told from the content."""
from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from conftest import ROOT

from costmodel.sources.usage import UsageError, UsageRecords, read_usage, read_usage_bytes

USAGE = ROOT / "fixtures" / "usage"


def totals(records: UsageRecords, key: str) -> dict[str, tuple[float, float, float, float]]:
    """label -> (new input, cached, output, requests) summed over the records."""
    out = {}
    for code, label in enumerate(records.labels[key]):
        rows = records.keys[key] == code
        out[label] = tuple(float(a[rows].sum()) for a in (
            records.input_tokens, records.cached_input_tokens, records.output_tokens,
            records.requests))
    return out


def at(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


def test_openai_usage_pages():
    records = read_usage([USAGE / "openai-usage.json"])
    assert len(records) == 5
    assert records.sources == (f"{USAGE / 'openai-usage.json'} (openai-usage)",)
    # grouped by project and model: the fields left null (user, key, batch) are no keys
    assert set(records.keys) == {"project_id", "model"}
    # proj_alpha: new input (1.2M-0.4M) + (0.5M-0.25M) + (1.0M-0.6M); cached 0.4+0.25+0.6 M;
    # output 0.3+0.1+0.25 M; requests 1500+400+1200. proj_beta: (0.8M-0) + (0.3M-0.1M) ...
    assert totals(records, "project_id") == {
        "proj_alpha": (1_450_000, 1_250_000, 650_000, 3100),
        "proj_beta": (1_000_000, 100_000, 250_000, 1200)}
    assert totals(records, "model")["llama-3.3-70b"] == (250_000, 250_000, 100_000, 400)
    # a bucket is a period: 2026-11-01 and 2026-11-02, the end exclusive
    assert records.start.tolist() == [at("2026-11-01")] * 3 + [at("2026-11-02")] * 2
    assert (records.end - records.start == 86400).all()
    assert records.start.dtype == np.int64 and records.input_tokens.dtype == np.float64
    assert all(codes.dtype == np.int32 for codes in records.keys.values())


def test_openai_input_includes_the_cached_tokens():
    """The reference's own example: 1000 input tokens of which 800 cached = 200 new."""
    page = json.loads((USAGE / "openai-usage-reference-page.json").read_text())
    page["has_more"] = False  # the example is one page of more; as a whole export:
    records = read_usage_bytes(json.dumps(page).encode(), "page.json")
    assert records.input_tokens.tolist() == [200.0]
    assert records.cached_input_tokens.tolist() == [800.0]
    assert records.output_tokens.tolist() == [500.0]
    assert records.requests.tolist() == [5.0]
    assert records.keys == {}  # nothing grouped: every record unattributed, no key at all


def test_openai_reference_page_is_refused_as_incomplete():
    """It says has_more: true, so an export ending there lacks pages."""
    path = USAGE / "openai-usage-reference-page.json"
    with pytest.raises(UsageError) as caught:
        read_usage([path])
    e = caught.value
    assert (e.file, e.line, e.column) == (str(path), 24, "has_more")
    assert "AAAAAGdGxdEiJdKOAAAAAGcqsYA=" in str(e)


def test_openai_pages_as_json_lines():
    pages = json.loads((USAGE / "openai-usage.json").read_text())
    text = "\n".join(json.dumps(p) for p in pages) + "\n"
    records = read_usage_bytes(text.encode(), "pages.jsonl")
    assert totals(records, "project_id")["proj_alpha"] == (1_450_000, 1_250_000, 650_000, 3100)


def test_litellm_spend_logs():
    records = read_usage([USAGE / "litellm-spend-logs.json"])
    assert len(records) == 5
    # team-search: rows 1, 2, 5: new (2000-1500) + (1000-0) + (4000-4000), cached 1500+0+4000,
    # output 500+200+1000, one request a row. team-support: rows 3 and 4 (row 4's team from
    # its key's metadata, given as JSON text): new (3000-1000) + 500, cached 1000.
    assert totals(records, "team") == {"team-search": (1500, 5500, 1700, 3),
                                       "team-support": (2500, 1000, 900, 2)}
    assert totals(records, "key_alias")["search-batch"] == (0, 4000, 1000, 1)
    assert set(records.labels["tag:env"]) == {"prod", "staging", ""}
    assert totals(records, "tag")["nightly"] == (2000, 1000, 800, 1)
    # a request is an instant: its startTime, rounded down to the second
    assert (records.start == records.end).all()
    assert records.start[0] == at("2026-11-01T08:00:00")


def test_litellm_daily_activity():
    records = read_usage([USAGE / "litellm-daily-activity.json"])
    # each model's keys: 2026-11-02 gpt-oss (k1, k2), llama (k2, and 1000 prompt, 200
    # completion, 4 requests no key covers), 2026-11-01 gpt-oss (k1)
    assert len(records) == 5
    assert totals(records, "team") == {
        "team-search": (2000 + 4500, 2000 + 500, 1000 + 1000, 12 + 10),
        "team-support": (1000 + 2000, 1000, 500 + 300, 8 + 6),
        "": (1000, 0, 200, 4)}
    # conserved: the days' prompt 9000+5000 less cache reads 3000+500; completion 2000+1000
    assert records.input_tokens.sum() == 10_500
    assert records.cached_input_tokens.sum() == 3500
    assert records.output_tokens.sum() == 3000
    assert records.requests.sum() == 40
    assert set(records.start.tolist()) == {at("2026-11-01"), at("2026-11-02")}
    assert (records.end - records.start == 86400).all()


def test_litellm_daily_without_key_breakdown_reads_the_keys():
    """An older answer: metrics bare, no api_key_breakdown under the models."""
    answer = {"results": [{"date": "2026-11-05",
                           "metrics": {"prompt_tokens": 100, "completion_tokens": 10,
                                       "cache_read_input_tokens": 40, "api_requests": 3},
                           "breakdown": {"models": {"m": {"prompt_tokens": 100,
                                                          "completion_tokens": 10}},
                                         "api_keys": {"k": {"metrics": {
                                             "prompt_tokens": 70, "completion_tokens": 10,
                                             "cache_read_input_tokens": 40,
                                             "api_requests": 2},
                                             "metadata": {"key_alias": "a",
                                                          "team_id": "t"}}}}}],
              "metadata": {"has_more": False}}
    records = read_usage_bytes(json.dumps(answer).encode(), "daily.json")
    assert totals(records, "team") == {"t": (30, 40, 10, 2), "": (30, 0, 0, 1)}


def test_plain_csv():
    records = read_usage([USAGE / "usage.csv"])
    assert totals(records, "tenant") == {"search": (1800, 3200, 550, 3),
                                         "support": (3700, 600, 1200, 5),
                                         "": (100, 0, 20, 1)}
    assert records.labels["project"] == ("web", "helpdesk", "")
    assert records.start[0] == at("2026-11-01T08:00:00")
    assert (records.start == records.end).all()


def test_csv_with_a_mapping():
    mapping = json.loads((USAGE / "gateway-usage.mapping.json").read_text())
    records = read_usage([USAGE / "gateway-usage.csv"], mapping=mapping)
    # total_input_tokens count the cached ones: search (5000-2000) + (4000-4000)
    assert totals(records, "tenant") == {"search": (3000, 6000, 1800, 18),
                                         "support": (3000, 0, 700, 6)}
    assert set(records.keys) == {"tenant", "model"}
    assert records.start.tolist() == [at("2026-11-01"), at("2026-11-01"), at("2026-11-02")]
    assert (records.end - records.start == 86400).all()


def test_several_files_of_several_shapes():
    records = read_usage([USAGE / "usage.csv", USAGE / "litellm-spend-logs.json"])
    assert len(records) == 10
    assert [s.rsplit(" ", 1)[1] for s in records.sources] == ["(csv)", "(litellm-spend)"]
    # a key only one file has: "" for the other's records
    assert totals(records, "tenant")[""] == (100 + 4000, 0 + 6500, 20 + 2600, 1 + 5)
    # the CSV's rows 1, 2, 4 and the spend log's rows 1 to 4
    assert totals(records, "model")["gpt-oss-120b"] == (
        1000 + 2500 + 100 + 500 + 1000 + 2000 + 500, 3000 + 1500 + 1000,
        400 + 900 + 20 + 500 + 200 + 800 + 100, 2 + 3 + 1 + 4)


@pytest.mark.parametrize("name, shape", [
    ("openai-usage.json", "openai-usage"), ("litellm-spend-logs.json", "litellm-spend"),
    ("litellm-daily-activity.json", "litellm-daily"), ("usage.csv", "csv")])
def test_the_shape_is_told_from_the_content(name, shape):
    data = (USAGE / name).read_bytes()
    records = read_usage_bytes(data, "upload")  # no suffix to go by
    assert records.sources == (f"upload ({shape})",)
    assert len(records) == len(read_usage_bytes(data, "upload", shape=shape))


def test_a_shape_given_that_the_content_is_not():
    with pytest.raises(UsageError, match="expected a usage page"):
        read_usage([USAGE / "litellm-spend-logs.json"], shape="openai-usage")
