"""Replay of the hardening issue's table against a real service: gunicorn (2 workers x 4
threads) on a temporary SQLite database, every row sent as a hostile client would, each with
its answer, its time and the workers' peak memory (VmHWM, the high-water mark of resident
memory) after it.

    python bench/hostile.py

Slow clients (row 14) are measured by bench/slowclients.py; kill -9 mid-load by
bench/fault.py. Traffic stays on 127.0.0.1; every request has a timeout and the script stops
by itself.
"""
from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from load import free_port, start
from pressure import Browser, quote_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the hostile archives are built as the tests build them

COSTMODEL = str(Path(sys.executable).with_name("costmodel"))
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
RATE = 120  # requests a minute a key or address: row 22 goes past it


class Service:
    def __init__(self, port: int, proc: subprocess.Popen, tokens: dict[str, str]):
        self.port, self.proc, self.tokens = port, proc, tokens

    def call(self, method: str, path: str, body: bytes | dict | None = None, *,
             role: str = "viewer", content_type: str = "application/json",
             headers: dict | None = None, timeout: float = 60) -> tuple[int, str]:
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        h = {"Content-Type": content_type, **(headers or {})}
        if role:
            h["Authorization"] = f"Bearer {self.tokens[role]}"
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                     headers=h, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")

    def peak_mib(self) -> float:
        """The largest VmHWM among the workers [MiB]."""
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                             text=True).stdout.split()
        peak = 0
        for pid in out:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except OSError:
                pass
        return peak / 1024


def _detail(text: str) -> str:
    try:
        return json.loads(text).get("detail", "")[:70]
    except ValueError:
        return text.strip().splitlines()[0][:70] if text.strip() else ""


def _workbooks() -> dict[str, bytes]:
    """The hostile workbooks of tests/render/test_hostile_workbook.py, built the same way."""
    from conftest import SCENARIOS, workbook_systems
    from test_hostile_workbook import HOSTILE, members_of, pack

    from costmodel.render.workbook.export import build_workbook
    systems, _ = workbook_systems([SCENARIOS / "sample-tco.toml"])
    buf = io.BytesIO()
    build_workbook(systems).save(buf)
    parts = members_of(buf.getvalue())
    return {name: pack(build(parts)) for name, (build, _) in HOSTILE.items()}


def _chunked(service: Service, size: int) -> int:
    """A chunked JSON body of ``size`` bytes; the status answered."""
    with socket.create_connection(("127.0.0.1", service.port), timeout=30) as s:
        s.sendall(b"POST /api/v1/price HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                  b"\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer "
                  + service.tokens["viewer"].encode() + b"\r\n\r\n")
        chunk = b"x" * 65536
        try:
            for _ in range(size // len(chunk)):
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            s.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed before the end: read its answer
        answer = s.recv(4096)
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0


def rows(svc: Service) -> list[tuple[str, str, Callable[[], tuple[int, str]], set[int]]]:
    price = "/api/v1/price"
    wb = _workbooks()

    def scenario_with(**acc) -> dict:
        return {"scenario": {**GB300, "accelerator": {"catalog": "gb300", **acc}}}

    def curve(points: int) -> str:
        head = ("hardware,model,framework,precision,isl,osl,spec_decoding,disaggregated,"
                "concurrency,interactivity [token/s/user],throughput [token/s],source")
        return "\n".join([head, *(f"hostile{points},m,vllm,fp8,1,1,none,false,{i + 1},"
                                  f"{1000 / (i + 1):.4f},{i + 10},x" for i in range(points))])

    def grids_at_once() -> tuple[int, str]:
        out: list[tuple[int, str]] = []
        body = {"scenario": {"scenario": GB300}, "x": "electricity.price=0.01..0.2 USD/kWh:3162",
                "y": "utilisation=0.1..1:3162"}
        threads = [threading.Thread(target=lambda: out.append(
            svc.call("POST", "/api/v1/sensitivity/grid", body))) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return max(out)

    def quotes_upload() -> tuple[int, str]:
        browser = Browser(f"http://127.0.0.1:{svc.port}", svc.tokens["viewer"])
        status, page = browser.upload(quote_file(400))
        found = re.search(rb'class="field-error"[^>]*>([^<]*)<', page)
        return status, found.group(1).decode() if found else ""

    def sensitivity_past_the_rate() -> tuple[int, str]:
        # anonymous reads (the service's open reads): counted per address, as the API's
        browser, statuses = Browser(f"http://127.0.0.1:{svc.port}"), []
        for _ in range(2 * RATE + 10):  # each of the 2 workers counts alone (no Redis)
            statuses.append(browser.send("/sensitivity", timeout=30)[0])
            if statuses[-1] == 429:
                break
        return statuses[-1], (f"{statuses.count(200)} pages, then {statuses[-1]}; "
                              f"{len(statuses)} requests")

    def revoked_admin() -> tuple[int, str]:
        _, text = svc.call("POST", "/api/v1/keys", {"name": "victim", "role": "admin"},
                                role="admin")
        victim = json.loads(text)
        for _ in range(8):  # warm it on every worker
            svc.call("GET", "/api/v1/keys", headers={"Authorization":
                                                      f"Bearer {victim['token']}"}, role="")
        svc.call("DELETE", f"/api/v1/keys/{victim['id']}", role="admin")
        minted = [svc.call("POST", "/api/v1/keys", {"name": "m", "role": "admin"}, role="",
                           headers={"Authorization": f"Bearer {victim['token']}"})[0]
                  for _ in range(20)]
        return max(minted), f"{minted.count(201)} of 20 keys minted after the revocation"

    return [
        ("1", "quantity 9**9**9 W", lambda: svc.call("POST", price, scenario_with(
            rated_power="9**9**9 W")), {422}),
        ("2", "lying part size", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                                  wb["lying-size"], content_type=XLSX), {422}),
        ("3", "100 extra sheets", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                                   wb["100-extra-sheets"], content_type=XLSX),
         {422}),
        ("3", "100,000 rows", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                               wb["100000-rows"], content_type=XLSX), {422}),
        ("4", "34,000-point curve", lambda: svc.call("POST", "/api/v1/curves",
                                                     {"content": curve(34_000)}, role="editor"),
         {422}),
        ("4", "2-point curve, then a price", lambda: (
            svc.call("POST", "/api/v1/curves", {"content": curve(2)}, role="editor"),
            svc.call("POST", price, {"scenario": GB300}))[1], {200}),
        ("5", "revoked admin key mints keys", revoked_admin, {401}),
        ("6", "quantity 2**1100 W", lambda: svc.call("POST", price, scenario_with(
            rated_power="2**1100 W")), {422}),
        ("6", "quantity (700 W", lambda: svc.call("POST", price, scenario_with(
            rated_power="(700 W")), {422}),
        ("7", "name a\\u0001b", lambda: svc.call("POST", "/api/v1/scenarios", {
            "name": "a\u0001b", "scenario": GB300}, role="editor"), {422}),
        ("8", "bad deflate data", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                                   wb["bad-deflate-data"], content_type=XLSX),
         {422}),
        ("8", "encrypted flag", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                                 wb["encrypted-flag"], content_type=XLSX),
         {422}),
        ("8", "lying CRC", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                            wb["lying-crc"], content_type=XLSX), {422}),
        ("9", "name x\\u0000y", lambda: svc.call("POST", "/api/v1/scenarios", {
            "name": "x\u0000y", "scenario": GB300}, role="editor"), {422}),
        ("11", "workload isl nan", lambda: svc.call("POST", "/api/v1/operating-points", {
            "key": "hostile-op", "data": {"throughput": "1 token/s",
                                          "workload": {"isl": "nan", "foo": "x"}}},
            role="editor"), {422}),
        ("12", "throughput 1e-308 token/s", lambda: svc.call("POST", price, {"scenario": {
            "accelerator": "gb300", "operating_point": {"throughput": "1e-308 token/s"}}}),
         {422}),
        ("13", "4 grids of 3162 x 3162 at once", grids_at_once, {422, 429}),
        ("15", "chunked 10 MB JSON", lambda: (_chunked(svc, 10 * 2**20), ""), {413}),
        ("15", "UTF-16 DOCTYPE", lambda: svc.call("POST", "/api/v1/workbook/reprice",
                                                  wb["utf16-doctype"], content_type=XLSX),
         {422}),
        ("15", "1 MB scenario name", lambda: svc.call("POST", "/api/v1/scenarios", {
            "name": "x", "scenario": {**GB300, "name": "x" * 2**20}}, role="editor"), {422}),
        ("15", "request line of 5,000 bytes", lambda: svc.call(
            "GET", "/api/v1/curves?q=" + "x" * 5000), {414}),
        ("22", "400-quote upload to /quotes", quotes_upload, {422}),
        # issue 22: unknown keys (sizes of the answer in the answer column), nesting, bounds
        ("22", "150,000 unknown keys", lambda: _sized(svc.call("POST", price, {"scenario": {
            **GB300, "accelerator": {"catalog": "gb300", **{f"k{i}": 1 for i in range(
                150_000)}}}})), {422}),
        ("22", "1,000-deep nesting", lambda: svc.call("POST", price, (
            '{"scenario": {"accelerator": "gb300", "workload": ' + '{"a":' * 999 + '{"a":1'
            + "}" * 1000 + "}}").encode()), {422}),
        ("22", "utilisation 1e-300", lambda: svc.call("POST", price, {"scenario": {
            **GB300, "utilisation": 1e-300}}), {422}),
        ("22", f"/sensitivity past {RATE}/minute", sensitivity_past_the_rate, {429}),
    ]


def _sized(answer: tuple[int, str]) -> tuple[int, str]:
    """The answer, its detail led by its size."""
    status, text = answer
    try:
        detail = json.loads(text).get("detail", "")
    except ValueError:
        detail = text
    return status, json.dumps({"detail": f"{len(text):,} B: {detail[-40:]}"})


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # a rate every other row stays far below; reads open (anonymous pages, per address)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'hostile.db'}",
               "COSTMODEL_RATE_LIMIT": f"{RATE}/minute", "COSTMODEL_OPEN_READS": "1",
               "COSTMODEL_SECRET_KEY": "hostile-bench"}  # every worker reads the sessions
        for args in (["db", "upgrade"], ["db", "seed"]):
            subprocess.run([COSTMODEL, *args], env=env, check=True, capture_output=True)
        tokens = {}
        for role in ("viewer", "editor", "admin"):
            out = subprocess.run([COSTMODEL, "keys", "create", "--name", role, "--role", role],
                                 env=env, check=True, capture_output=True, text=True).stdout
            tokens[role] = out.strip().rsplit(" ", 1)[-1]
        port = free_port()
        proc = start("costmodel.server:create_app()", port, env, 2, 4, folder / "server.log")
        svc = Service(port, proc, tokens)
        ok = True
        try:
            print(f"{'row':>3}  {'what':32s} {'status':>6} {'want':>9} {'time':>8} "
                  f"{'peak MiB':>8}  answer")
            for row, what, send, want in rows(svc):
                t0 = time.perf_counter()
                status, text = send()
                took = time.perf_counter() - t0
                good = status in want
                ok &= good
                print(f"{row:>3}  {what:32s} {status:6d} {'/'.join(map(str, sorted(want))):>9} "
                      f"{took:7.2f}s {svc.peak_mib():8.0f}  {_detail(text)}"
                      f"{'' if good else '   <-- UNEXPECTED'}")
            alive = svc.call("GET", "/healthz", role="")[0] == 200
            print(f"workers alive after the replay: {alive}")
            ok &= alive
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
