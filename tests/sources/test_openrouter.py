"""OpenRouter's model list read into dated, cited market prices: USD per token as USD per
million tokens exactly, the keys, what is left out and why, and hostile input refused with
the JSON path of what is wrong."""
from __future__ import annotations

import json

import pytest

from costmodel.model.errors import InputError
from costmodel.sources import openrouter
from costmodel.sources.openrouter import parse_openrouter, read_openrouter
from tests.conftest import ROOT

SAMPLE = ROOT / "fixtures" / "market" / "openrouter-models.json"


def _model(**pricing):
    return {"id": "acme/model-1", "name": "Acme: Model 1", "context_length": 8192,
            "pricing": {"prompt": "0.000001", "completion": "0.000003", **pricing}}


def test_the_sample_file():
    prices, skipped = read_openrouter(SAMPLE, date="2026-12-06")
    by_key = {p.key: p.data for p in prices}
    assert list(by_key) == ["openrouter/deepseek.deepseek-r1@2026-12-06",
                            "openrouter/deepseek.deepseek-r1+free@2026-12-06",
                            "openrouter/openai.gpt-oss-120b@2026-12-06",
                            "openrouter/moonshotai.kimi-k2.5@2026-12-06"]
    r1 = by_key["openrouter/deepseek.deepseek-r1@2026-12-06"]
    # "0.0000004" USD/token x 10^6 = 0.4 USD/Mtok, exactly (decimal arithmetic)
    assert (r1["price_input"]["value"], r1["price_cached_input"]["value"],
            r1["price_output"]["value"]) == (0.4, 0.1, 2.0)
    assert r1["date"] == "2026-12-06" and r1["provider"] == "OpenRouter"
    assert r1["price_input"]["source"].endswith(
        "fetched 2026-12-06: deepseek/deepseek-r1 pricing.prompt 0.0000004 USD/token")
    oss = by_key["openrouter/openai.gpt-oss-120b@2026-12-06"]
    assert (oss["price_input"]["value"], oss["price_output"]["value"]) == (0.05, 0.25)
    assert "price_cached_input" not in oss  # none published: the input price applies
    assert by_key["openrouter/deepseek.deepseek-r1+free@2026-12-06"]["price_output"][
        "value"] == 0.0
    # the router prices at -1: no price of its own, left out and said so
    assert [(s.path, s.model_id) for s in skipped] == [("data[4]", "openrouter/auto")]


def test_the_date_and_source_are_given():
    prices, _ = parse_openrouter({"data": [_model()]}, date="2026-11",
                                 source="saved by finance, 2026-11-30")
    assert prices[0].key == "openrouter/acme.model-1@2026-11"
    assert prices[0].data["source"] == "saved by finance, 2026-11-30"
    with pytest.raises(InputError) as bad:
        parse_openrouter({"data": []}, date="yesterday")
    assert bad.value.errors[0][0] == "date"


@pytest.mark.parametrize("doc,path,words", [
    ([], "data", "not OpenRouter's model list"),
    ({"data": {"id": 1}}, "data", "not OpenRouter's model list"),
    ({"data": [7]}, "data[0]", "an object"),
    ({"data": [{"pricing": {}}]}, "data[0].id", "required"),
    ({"data": [{"id": "a/b"}]}, "data[0].pricing", "required"),
    ({"data": [_model(prompt="abc")]}, "data[0].pricing.prompt", "not a price"),
    ({"data": [_model(prompt="NaN")]}, "data[0].pricing.prompt", "not a finite price"),
    ({"data": [_model(completion="-0.5")]}, "data[0].pricing.completion", "negative"),
    ({"data": [_model(prompt=True)]}, "data[0].pricing.prompt", "decimal string"),
    ({"data": [_model(prompt="1e9")]}, "data[0].pricing", "price_input"),  # past the bound
    ({"data": [_model(), _model()]}, "data[1].id", "listed twice"),
])
def test_hostile_input_names_the_json_path(doc, path, words):
    with pytest.raises(InputError) as bad:
        parse_openrouter(doc, date="2026-12-06")
    assert bad.value.errors[0][0] == path
    assert words in bad.value.errors[0][1]


def test_bounds(tmp_path, monkeypatch):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (openrouter.MAX_BYTES + 1))
    with pytest.raises(InputError, match="larger than"):
        read_openrouter(big, date="2026-12-06")
    deep = tmp_path / "deep.json"
    deep.write_text('{"data": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(InputError):
        read_openrouter(deep, date="2026-12-06")
    monkeypatch.setattr(openrouter, "MAX_MODELS", 3)
    with pytest.raises(InputError, match="at most 3"):
        parse_openrouter({"data": [_model()] * 4}, date="2026-12-06")
    notjson = tmp_path / "x.json"
    notjson.write_text("<html>rate limited</html>")
    with pytest.raises(InputError) as bad:
        read_openrouter(notjson, date="2026-12-06")
    assert bad.value.subject == str(notjson) or str(notjson) in str(bad.value)


def test_an_id_that_fits_no_key_is_left_out():
    long_id = "acme/" + "x" * 80
    prices, skipped = parse_openrouter({"data": [{**_model(), "id": long_id},
                                                 {**_model(), "id": "acme/a b"}]},
                                       date="2026-12-06")
    assert prices == [] and [s.path for s in skipped] == ["data[0]", "data[1]"]


def test_the_sample_is_the_documented_shape():
    doc = json.loads(SAMPLE.read_text())
    for model in doc["data"]:
        assert {"id", "name", "created", "context_length", "pricing", "architecture",
                "top_provider", "supported_parameters"} <= set(model)
        assert all(isinstance(v, str) for v in model["pricing"].values())
    assert "not downloaded" in (SAMPLE.parent / "ORIGIN.md").read_text()
