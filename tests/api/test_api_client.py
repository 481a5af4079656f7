"""The docs' Python client (docs/pricing-tools.md, section "A client in Python"), run as
written against a live server (conftest's live_server: gunicorn serving the app on a loopback
port, a fresh SQLite database, an editor key). Its printed figures are checked against the
engine priced in process and hand arithmetic."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import price_data

ROOT = Path(__file__).resolve().parents[2]
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}


def readme_client() -> str:
    """The first ``python`` code block after the heading "A client in Python"."""
    text = (ROOT / "docs" / "pricing-tools.md").read_text(encoding="utf-8")
    section = text[text.index("## A client in Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_client_runs_against_a_live_server(live_server, tmp_path):
    url, key = live_server
    script = tmp_path / "client.py"
    script.write_text(readme_client())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "COSTMODEL_URL": url,
                                           "COSTMODEL_KEY": key})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    figures = [float(re.search(r": ([-\d.e]+) USD/Mtok", line).group(1)) for line in lines[:6]]
    price, *energy, saved = figures
    want = price_data(GB300, [("electricity.price", "0.05 USD/kWh")]).value(
        "cost_per_mtok_total")
    assert price == pytest.approx(want, abs=5e-7)  # printed to 6 decimals
    # GB300 at peak, chip boundary: energy = price / (11,781 token/s/kW x 3,600 s/h) x 1e6
    for cents, value in zip((1, 5, 10, 20), energy, strict=True):
        assert value == pytest.approx(cents / 100 / (11781 * 3600) * 1e6, abs=5e-7)
    want = price_data(GB300, [("utilisation", 0.6)]).value("cost_per_mtok_total")
    assert saved == pytest.approx(want, abs=5e-7)
    assert lines[6] == "error: overrides.utilization: unknown key; did you mean utilisation?"


def test_the_client_reads_a_401(live_server, tmp_path):
    """Without a key the saved scenario is refused: the client raises the problem's 401."""
    url, _ = live_server
    script = tmp_path / "client.py"
    script.write_text(readme_client())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "COSTMODEL_URL": url,
                                           "COSTMODEL_KEY": ""})
    assert out.returncode != 0
    assert "ApiError: 401: an API key is required" in out.stderr
