"""A usage file that does not read whole is refused with its file, line and column, and
nothing of it is returned; hostile files are bounded (nesting, sizes, row and value
lengths)."""
from __future__ import annotations

import json

import pytest
from conftest import ROOT

from costmodel.model.errors import InputError
from costmodel.sources.usage import UsageError, read_usage, read_usage_bytes
from costmodel.sources.usage.plain_csv import BLOCK, MAX_LABEL

USAGE = ROOT / "fixtures" / "usage"
HEAD = b"time,tenant,input_tokens,output_tokens\n"


def refused(data: bytes, name: str = "u.csv", **options) -> UsageError:
    with pytest.raises(UsageError) as caught:
        read_usage_bytes(data, name, **options)
    return caught.value


def place(e: UsageError) -> tuple:
    return e.file, e.line, e.column


@pytest.mark.parametrize("body, line, column, message", [
    # a blank line is skipped but counted
    (b"2026-11-01T00:00:00Z,a,5,1\n\n2026-11-01T00:00:01Z,b,x,2\n", 4, "input_tokens",
     "cannot read 'x' as a number"),
    (b"1793491200,a,5,1\n1793491200,b,5\n", 3, None, "expected 4 fields (as the header has), "
                                                      "found 3"),
    # the row starts on line 3 and runs on to line 4 (a quoted line break)
    (b'1793491200,a,5,1\n1793491200,"b\nc",-5,1\n', 3, "input_tokens",
     "-5 is negative; a count is >= 0"),
    (b"1793491200,a,5,1\n1793491200,b,,1\n", 3, "input_tokens", "is empty; write 0 for none"),
    (b"1793491200,a,nan,1\n", 2, "input_tokens", "nan is not a finite number"),
    (b"1793491200,a,5,inf\n", 2, "output_tokens", "inf is not a finite number"),
    (b"1793491200,a,5,1\nyesterday,a,5,1\n", 3, "time", "cannot read 'yesterday' as a time"),
    (b"1793491200000,a,5,1\n", 2, "time", "cannot read '1793491200000' as a time"),
    (b"1793491200,a,5,1\n1793491200,\xff,5,1\n", 3, None, "is not UTF-8 text"),
])
def test_a_bad_csv_row_is_placed(body, line, column, message):
    e = refused(HEAD + body)
    assert place(e) == ("u.csv", line, column)
    assert message in e.message
    where = f"u.csv line {line}" + (f", column {column}" if column else "")
    assert str(e) == f"{where}: {e.message}"
    assert isinstance(e, InputError)  # every face renders it as bad input


def test_a_period_ending_before_it_starts():
    e = refused(b"period_start,period_end,input_tokens,output_tokens\n"
                b"2026-11-01,2026-11-02,1,1\n2026-11-02,2026-11-01,5,1\n")
    assert place(e) == ("u.csv", 3, "period_end")


def test_more_cached_than_the_total_that_includes_them():
    e = refused(b"time,total_input_tokens,cached_input_tokens,output_tokens\n"
                b"1793491200,5,5,1\n1793491200,5,6,1\n")
    assert place(e) == ("u.csv", 3, "cached_input_tokens")
    # new input plus cached: more cached than new input is no error
    records = read_usage_bytes(b"time,input_tokens,cached_input_tokens,output_tokens\n"
                               b"1793491200,5,6,1\n", "u.csv")
    assert records.input_tokens.tolist() == [5.0]


@pytest.mark.parametrize("data, line, message", [
    (b"", None, "is empty"),
    (b"  \n\n", None, "is empty"),
    (HEAD, None, "has a header but no records"),
    (b"time,input_tokens\n1793491200,5\n", 1, "needs an output_tokens column"),
    (b"tenant,input_tokens,output_tokens\na,5,1\n", 1, "needs a time column"),
    (b"time,period_start,period_end,input_tokens,output_tokens\n1,1,1,1,1\n", 1,
     "a time or a period"),
    (b"time,input_tokens,total_input_tokens,output_tokens\n1,1,1,1\n", 1, "one of input_tokens"),
    (b"time,tenant,tenant,input_tokens,output_tokens\n1,a,a,1,1\n", 1, "named twice"),
    (b"time,,input_tokens,output_tokens\n1,a,1,1\n", 1, "a column without a name"),
    # a carriage return inside the header's first name (schemathesis: a 500 before)
    (b"ti\rme,input_tokens,output_tokens\n1,1,1\n", 1, "the header does not read as CSV"),
])
def test_a_csv_that_is_no_usage(data, line, message):
    e = refused(data)
    assert e.line == line
    assert message in e.message


def test_the_mapping_names_columns_that_exist():
    data = (USAGE / "gateway-usage.csv").read_bytes()
    mapping = json.loads((USAGE / "gateway-usage.mapping.json").read_text())
    e = refused(data, mapping={**mapping, "tenants": "team"})
    assert "the mapping names 'tenants', which is not a column costmodel reads" in e.message
    e = refused(data, mapping={**mapping, "tenant": "squad"})
    assert place(e) == ("u.csv", 1, None)
    assert "reads tenant from column 'squad', which the header does not have" in e.message
    e = refused(data, mapping={**mapping, "model": "team"})
    assert place(e) == ("u.csv", 1, "team")
    e = refused(b"time,tenant,team,input_tokens,output_tokens\n1,a,b,1,1\n",
                mapping={"tenant": "team"})
    assert place(e) == ("u.csv", 1, "tenant")
    e = refused((USAGE / "usage.csv").read_bytes(), "u.json", shape="openai-usage",
                mapping={"tenant": "team"})
    assert "a column mapping applies to a CSV only" in e.message


def test_bounded_sizes():
    e = refused(HEAD + b"1,a,1,1\n", max_bytes=len(HEAD))
    assert "more than the 39 allowed" in e.message
    with pytest.raises(UsageError, match="more than the 10 allowed"):
        read_usage([USAGE / "usage.csv"], max_bytes=10)
    e = refused(HEAD + b"1793491200," + b"a" * (MAX_LABEL + 1) + b",1,1\n")
    assert e.column == "tenant" and "longer than 1,024 characters" in e.message
    e = refused(HEAD + b"1793491200,a,1,1\n1793491200,\"" + b"a" * (BLOCK + 10) + b"\",1,1\n")
    assert "longer than" in e.message
    e = refused(b"time," + b"x" * 70000 + b"\n")
    assert e.line == 1 and "header line is longer than" in e.message


def json_refused(value, name: str = "u.json", **options) -> UsageError:
    data = value if isinstance(value, bytes) else json.dumps(value, indent=1).encode()
    return refused(data, name, **options)


def openai_page(**result) -> dict:
    row = {"object": "organization.usage.completions.result", "input_tokens": 10,
           "output_tokens": 2, "input_cached_tokens": 0, "num_model_requests": 1, **result}
    return {"object": "page", "has_more": False, "data": [
        {"object": "bucket", "start_time": 1793491200, "end_time": 1793577600,
         "results": [row]}]}


@pytest.mark.parametrize("result, column, message", [
    ({"input_tokens": -1}, "input_tokens", "-1 is negative"),
    ({"input_cached_tokens": 11}, "input_cached_tokens",
     "11 cached tokens are more than the 10 input tokens that include them"),
    ({"output_tokens": "2"}, "output_tokens", 'expected a number, got "2"'),
    ({"output_tokens": True}, "output_tokens", "expected a number, got true"),
    ({"input_tokens": None}, "input_tokens", "is null"),
    ({"input_tokens": 10 ** 400}, "input_tokens", "is not a finite number"),
    ({"object": "organization.costs.result"}, "object", "not completions usage"),
])
def test_a_bad_openai_value_is_placed_by_path_and_line(result, column, message):
    e = json_refused(openai_page(**result))
    assert e.column == f"data[0].results[0].{column}"
    # indent=1: the page's keys, data's bucket, its keys, results' item, then its keys
    text = json.dumps(openai_page(**result), indent=1).splitlines()
    assert text[e.line - 1].strip().startswith(f'"{column}"')
    assert message in e.message


def test_an_openai_bucket_that_ends_before_it_starts():
    page = openai_page()
    page["data"][0]["end_time"] = 1793491199
    e = json_refused(page)
    assert e.column == "data[0].end_time" and "ends (1793491199) before it starts" in e.message


def test_json_lines_are_placed_by_their_line():
    good = {"startTime": "2026-11-01T00:00:00Z", "prompt_tokens": 5, "completion_tokens": 1}
    lines = [good, good, {**good, "prompt_tokens": "x"}]
    e = json_refused("\n".join(json.dumps(x) for x in lines).encode())
    assert place(e) == ("u.json", 3, "prompt_tokens")
    lines = [good, {**good, "startTime": "tomorrow"}]
    e = json_refused("\n\n".join(json.dumps(x) for x in lines).encode())
    assert place(e) == ("u.json", 3, "startTime")
    e = json_refused(b'{"startTime": 1}\n{"startTime": x}\n')
    assert e.line == 2 and "is not JSON" in e.message


def test_litellm_cache_reads_above_the_prompt_that_includes_them():
    row = {"startTime": "2026-11-01T00:00:00Z", "prompt_tokens": 5, "completion_tokens": 1,
           "metadata": {"usage_object": {"cache_read_input_tokens": 6}}}
    e = json_refused([row])
    assert e.column == "[0].metadata.usage_object.cache_read_input_tokens"
    assert "6 cache-read tokens are more than the 5 prompt_tokens" in e.message


def test_litellm_daily_breakdown_above_the_day():
    day = {"date": "2026-11-01", "metrics": {"prompt_tokens": 10, "completion_tokens": 1},
           "breakdown": {"api_keys": {"k": {"metrics": {"prompt_tokens": 11,
                                                        "completion_tokens": 1}}}}}
    e = json_refused({"results": [day], "metadata": {"has_more": False}})
    assert e.column == "results[0].metrics.prompt_tokens"
    assert "add up to 11, more than the 10 here" in e.message
    e = json_refused({"results": [{**day, "date": "11/01/2026"}]})
    assert e.column == "results[0].date"
    e = json_refused({"results": [{**day, "breakdown": {}}],
                      "metadata": {"has_more": True, "page": 1, "total_pages": 3}})
    assert e.column == "metadata.has_more" and "page 1 of 3" in e.message


def test_json_that_is_no_usage():
    e = json_refused({"hello": "world"})
    assert "cannot tell the shape of this JSON" in e.message
    e = json_refused(b'{"object": "page",\n "data": [}')
    assert e.line == 2 and "is not JSON" in e.message
    e = json_refused({"object": "page", "data": [], "has_more": False})
    assert e.message == "holds no usage records"
    e = json_refused(b"[" * 100_000 + b"]" * 100_000)
    assert "nested more than 32 levels deep" in e.message
    e = json_refused(b'{"a": ' * 40 + b"1" + b"}" * 40)
    assert "nested more than 32 levels deep" in e.message
    e = refused(b"\xef\xbb\xbf[\n{\"startTime\": 1, \n\"x\": \"\xff\"}]", "u.json")
    assert e.line == 3 and e.message == "is not UTF-8 text"


def test_unknown_shape_and_no_files():
    assert "unknown usage shape 'csvs'" in refused(HEAD, shape="csvs").message
    with pytest.raises(UsageError, match="no usage files given"):
        read_usage([])


def test_one_bad_file_of_several_names_that_file(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_bytes(HEAD + b"1793491200,a,5,1\n1793491200,b,-1,1\n")
    with pytest.raises(UsageError) as caught:
        read_usage([USAGE / "usage.csv", bad])
    assert place(caught.value) == (str(bad), 3, "input_tokens")
    with pytest.raises(UsageError, match="cannot be read"):
        read_usage([tmp_path / "missing.csv"])
