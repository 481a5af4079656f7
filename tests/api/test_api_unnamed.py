"""A scenario given no name is called after what it runs (issue 37: an API body without a
``name`` was "scenario", so a decision said "Take scenario (own build)").

Why it was: ``Scenario.name`` defaulted to "scenario". Now an unnamed scenario takes its
operating point's label (a catalog point's: "DeepSeek R1 670B MXFP4, GB300, peak
throughput"), else its accelerator's name (with the curve it is read from), else
"Unnamed scenario".
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from conftest import auth

ROOT = Path(__file__).resolve().parents[2]
API = "/api/v1"
GB300_PEAK = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
QUOTES = tomllib.loads((ROOT / "fixtures" / "quotes" / "example-quotes.toml").read_text())


def test_an_unnamed_own_build_is_not_taken_as_scenario(client, tokens):
    body = {"quotes": QUOTES["quote"], "scenarios": [{"scenario": GB300_PEAK}],
            "demand": {"volume": "50 Mtok/month"}}
    r = client.post(f"{API}/quotes/decide", json=body, headers=auth(tokens["viewer"]))
    assert r.status_code == 200, r.get_json()
    pick = r.get_json()["recommendation"]
    assert pick["offer"] == "DeepSeek R1 670B MXFP4, GB300, peak throughput"
    assert pick["text"].startswith("Take DeepSeek R1 670B MXFP4, GB300, peak throughput "
                                   "(own build): ")
    assert "Take scenario" not in r.get_data(as_text=True)


def test_unnamed_scenarios_are_called_after_what_they_run(client, tokens):
    def name(scenario: dict) -> str:
        r = client.post(f"{API}/price", json={"scenario": scenario},
                        headers=auth(tokens["viewer"]))
        assert r.status_code == 200, r.get_json()
        return r.get_json()["scenario"]

    assert name(GB300_PEAK) == "DeepSeek R1 670B MXFP4, GB300, peak throughput"
    assert name({"accelerator": "h100", "operating_point": {"throughput": "1000 token/s"}}) \
        == "NVIDIA H100 SXM5 80GB"
    assert name({"accelerator": "h100", "operating_point": {
        "curve": "h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"}}) == \
        "NVIDIA H100 SXM5 80GB, curve h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"
    assert name({"accelerator": {"rated_power": "700 W", "price": "25000 USD"},
                 "operating_point": {"throughput": "1000 token/s"}}) == "Unnamed scenario"
    assert name({**GB300_PEAK, "name": "ours"}) == "ours"  # a name given is kept
