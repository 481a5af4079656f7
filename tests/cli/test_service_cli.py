"""The service's commands: db upgrade/seed, keys, and serve answering on loopback."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from costmodel.cli import main


def test_db_and_keys_commands(tmp_path):
    url = f"sqlite:///{tmp_path / 'c.db'}"
    run = CliRunner().invoke
    r = run(main, ["db", "upgrade", "--url", url])
    assert r.exit_code == 0 and "up to date" in r.output
    r = run(main, ["db", "seed", "--url", url])
    # fixtures/: 14 accelerators, 12 published points, 18 electricity entries (13 prices in
    # USD, 2 in EUR, 3 tariffs), 3 systems, 80 reference rates (27 + 27 + 26 over three
    # versions), 4 market prices (one published, three illustrative), 17 grid factors (6
    # eGRID subregions, 7 Ember countries, 4 illustrative), 8 curves
    assert r.output.strip() == ("seeded: 14 accelerator, 12 operating_point, 18 electricity, "
                                "3 system, 80 rate, 4 market_price, 17 grid_factor, 8 curve")
    r = run(main, ["db", "seed", "--url", url])  # idempotent
    assert r.output.strip() == ("seeded: 0 accelerator, 0 operating_point, 0 electricity, "
                                "0 system, 0 rate, 0 market_price, 0 grid_factor, 0 curve")
    r = run(main, ["keys", "create", "--name", "bot", "--role", "editor", "--url", url])
    assert r.exit_code == 0
    token = re.search(r"(cm_\w+_\S+)", r.output).group(1)
    r = run(main, ["keys", "list", "--url", url])
    assert "editor" in r.output and "active" in r.output and token not in r.output
    r = run(main, ["keys", "revoke", "1", "--url", url])
    assert r.exit_code == 0
    assert "revoked" in run(main, ["keys", "list", "--url", url]).output
    r = run(main, ["keys", "revoke", "99", "--url", url])
    assert r.exit_code == 2 and "no key 99" in r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_on_loopback_answers_reads_without_a_key(tmp_path):
    port = _free_port()
    exe = Path(sys.executable).with_name("costmodel")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"}
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([str(exe), "serve", "--port", str(port)], env=env, stdout=log,
                            stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    assert r.status == 200
                    break
            except (urllib.error.URLError, ConnectionError):
                assert time.time() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.5)
        body = (b'{"scenario": {"accelerator": "gb300", '
                b'"operating_point": "deepseek-r1/gb300/peak"}}')
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/price", data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            assert b'"cost_per_mtok"' in r.read()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/scenarios",
                                     data=b'{"name": "x", "scenario": {}}',
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=10)
            raise AssertionError("a write without a key was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 401
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    out = (tmp_path / "serve.log").read_text()
    assert "reads (price, compare, catalog, scenarios) answer without a key" in out


@pytest.mark.parametrize("host,loopback", [
    ("127.0.0.1", True), ("127.3.2.1", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("::", False), ("::10", False),
    ("10.0.0.1", False), ("localhost.invalid", False), ("127.example.invalid", False),
])
def test_serve_opens_reads_only_on_addresses_that_are_loopback(host, loopback):
    # decided on the resolved address, never on how the name is spelled
    from costmodel.cli.service import _is_loopback
    assert _is_loopback(host) is loopback


def test_serve_on_a_taken_port_says_so_in_one_line_and_changes_nothing(tmp_path, monkeypatch):
    from costmodel.cli import service

    def no_server(*args, **kwargs):
        raise AssertionError("gunicorn was started on a taken port")

    monkeypatch.setattr(service, "_gunicorn", no_server)
    db = tmp_path / "s.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "--port", str(port), "--url", f"sqlite:///{db}"])
    assert r.exit_code == 2
    assert r.stdout == ""  # no "serving on ..."
    line, = r.stderr.splitlines()
    free = re.fullmatch(rf"costmodel: error: --port: 127\.0\.0\.1:{port} is taken by another "
                        rf"server; choose another port with --port (\d+) "
                        rf"\(make run PORT=\1\)", line)
    assert free is not None, line
    assert int(free.group(1)) > port
    with socket.socket() as s:  # the port suggested is one that can be listened on
        s.bind(("127.0.0.1", int(free.group(1))))
    assert not db.exists()  # nothing migrated


def test_make_run_serves_on_the_port_it_is_given():
    root = Path(__file__).resolve().parents[2]
    shown = subprocess.run(["make", "-n", "run", "PORT=8010"], cwd=root, capture_output=True,
                           text=True, timeout=60).stdout
    assert "costmodel serve --host 127.0.0.1 --port 8010" in shown
    assert "http://127.0.0.1:8010/" in shown
    default = subprocess.run(["make", "-n", "run"], cwd=root, capture_output=True, text=True,
                             timeout=60).stdout
    assert "costmodel serve --host 127.0.0.1 --port 8000" in default
