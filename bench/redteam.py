"""Red-team replay of issue 38 ("no client can take the hosts down, every heavy answer holds a
slot, a silent database is a 503"): each of its nine items sent as the issue describes it,
through nginx (deploy/nginx.conf) and three hosts (deploy/gunicorn.conf.py on 127.0.0.2-4), one
PostgreSQL reached through a proxy that can stop forwarding (bench/freezer.py), one Redis;
one verdict a line, HOLDS or FAILS, with the evidence.

    python bench/redteam.py [--only 1,3]

bench/cluster.py starts the hosts, PostgreSQL and Redis of its own; every request has a
timeout, traffic stays on loopback, and the script stops by itself (a few minutes; item 2
sends 16 heavy tasks at once). The exit status is 0 when every item run holds.

What holds for each item is written from the issue's text (docs/operations.md, "Hardening":
the same nine rows). Thresholds in seconds are stated where an item is about time (2, 6):
this is a benchmark, run on a quiet machine; the load average is printed beside.
"""
from __future__ import annotations

import argparse
import base64
import io
import json
import os
import re
import sys
import tempfile
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from cluster import GB300, Cluster, wait_for
from pressure import Browser

ROOT = Path(__file__).resolve().parents[1]
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
TIMEOUT = 90.0  # [s] any one request: past nginx's 60 s, so a 504 is seen as one
# the illustrative curves of the task examples (docs/tasks.md)
CURVE = "{hw}/gpt-oss-120b/vllm/fp8/8192x1024/none/agg"


@dataclass
class Verdict:
    holds: bool
    evidence: str


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _page(browser: Browser, path: str, body: bytes | None = None,
          kind: str | None = None) -> tuple[int | str, float]:
    """(status, or the failure's name; seconds) of a page asked by a signed-in browser."""
    t = time.monotonic()
    try:
        status: int | str = browser.send(path, body, kind, timeout=TIMEOUT)[0]
    except OSError as exc:  # a timeout, a reset
        status = type(exc).__name__
    return status, time.monotonic() - t


def _counts(statuses) -> str:
    return ", ".join(f"{s} x{n}" for s, n in sorted(Counter(statuses).items(), key=str))


# a figure: a quantity's value where the answer names money, revenue, profit or a margin
_FIGURE = re.compile(r"(revenue|profit|margin|cost|price|total)[a-z_]*$")


def _null_figures(data, path: str = "") -> list[str]:
    """Paths of the figures answered as null (``{"value": null, "unit": ...}`` under a key
    naming money; a figure not shown, ``..._shown``, is not one)."""
    out: list[str] = []
    if isinstance(data, dict):
        key = path.rsplit(".", 1)[-1]
        if "unit" in data and data.get("value", 0) is None and _FIGURE.search(key) \
                and not key.endswith("_shown"):
            out.append(path.lstrip("."))
        for k, v in data.items():
            out += _null_figures(v, f"{path}.{k}")
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _null_figures(v, f"{path}[{i}]")
    return out


def _strict_json(text: str):
    """JSON as a strict parser reads it: Infinity and NaN refused."""
    def refuse(name: str):
        raise ValueError(f"non-JSON number {name}")
    return json.loads(text, parse_constant=refuse)


class Redteam:
    def __init__(self, cluster: Cluster):
        self.c = cluster
        self.admin = cluster.key("admin", "redteam-admin")
        self.viewer = cluster.key("viewer", "redteam-viewer")
        self.editor = cluster.key("editor", "redteam-editor")
        self.http = httpx.Client(base_url=cluster.front, timeout=TIMEOUT)

    def settle(self, seconds: float = 240) -> bool:
        """Whether the service answers a price within 5 s again (an item may leave the
        hosts busy with what nginx gave up on), waited for at most ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if httpx.post(self.c.front + "/api/v1/price?view=summary", json={
                        "scenario": GB300}, headers=_auth(self.admin),
                        timeout=5).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(1)
        return False

    def post(self, path: str, body=None, token: str | None = None, **headers):
        token = self.viewer if token is None else token
        return self.http.post(path, json=body, headers={**(_auth(token) if token else {}),
                                                        **headers})

    # ---- 1 --------------------------------------------------------------------------------
    def item1(self) -> Verdict:
        """30 posts of 1 to 3 MB to /api/v1/price without a key, another client's signed
        prices beside them: no 502 for anyone, no host marked down."""
        since = self.c.nginx_log.stat().st_size
        sizes = [2**20 + i * 2_000_000 // 29 for i in range(30)]
        anonymous: list[int] = []
        signed: list[int] = []
        done = threading.Event()

        def bodies() -> None:
            try:
                with httpx.Client(base_url=self.c.front, timeout=TIMEOUT) as http:
                    for size in sizes:
                        body = b'{"scenario": "' + b"x" * (size - 16) + b'"}'
                        anonymous.append(http.post("/api/v1/price", content=body, headers={
                            "Content-Type": "application/json"}).status_code)
            finally:
                done.set()

        def bystander() -> None:
            after = 0
            with httpx.Client(base_url=self.c.front, timeout=TIMEOUT,
                              headers=_auth(self.viewer)) as http:
                while after < 78:
                    price = 0.05 + len(signed) / 1e5
                    try:
                        signed.append(http.post("/api/v1/price?view=summary", json={
                            "scenario": {**GB300, "electricity": {
                                "price": f"{price:.5f} USD/kWh"}}}).status_code)
                    except httpx.HTTPError:
                        signed.append(0)
                    after += done.is_set()
        threads = [threading.Thread(target=f) for f in (bodies, bystander)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        down = [line for line in self.c.nginx_errors(since)
                if "buffered to a temporary file" not in line]
        holds = set(anonymous) <= {401, 413} and set(signed) == {200} and not down
        return Verdict(holds, f"without a key: {_counts(anonymous)}; the other client: "
                              f"{_counts(signed)}; nginx upstream errors: {len(down)}"
                              + (f" (first: {down[0][:120]})" if down else ""))

    # ---- 2 --------------------------------------------------------------------------------
    def _task_body(self, systems: int = 12, steps: int = 10_000) -> dict:
        hws = ("b200", "h100", "mi300x")
        return {"scenarios": [{"scenario": {
            "name": f"{hws[i % 3]}-{i}", "accelerator": {"rated_power": "1000 W",
                                                         "price": "30000 USD"},
            "operating_point": {"curve": CURVE.format(hw=hws[i % 3])}}}
            for i in range(systems)],
            "task": {"name": "long agent", "steps": steps, "context": "8000 token",
                     "growth": "10 token", "output": "300 token", "cached_share": 0.8,
                     "tool_time": "1.2 s", "target": "1000000 s"}}

    def item2(self) -> Verdict:
        """POST /api/v1/task for its workbook, 10,000 steps x 12 curve systems: alone, then
        16 at once from one viewer key with /healthz and a price asked meanwhile; the task's
        JSON; GET /task.xlsx likewise."""
        body = self._task_body()
        browser = Browser(self.c.front, self.viewer)  # signed in before the load
        t0 = time.monotonic()
        one = self.post("/api/v1/task", body, Accept=XLSX)
        alone = time.monotonic() - t0
        answers: list[tuple[int, float]] = []
        probes: list[tuple[str, int | str, float]] = []
        stop = threading.Event()

        def heavy() -> None:
            t = time.monotonic()
            try:
                status = self.post("/api/v1/task", body, Accept=XLSX).status_code
            except httpx.HTTPError:
                status = 0
            answers.append((status, time.monotonic() - t))

        def probe() -> None:
            with httpx.Client(base_url=self.c.front, timeout=10) as http:
                while not stop.is_set():
                    for what, call in (("healthz", lambda: http.get("/healthz")),
                                       ("price", lambda: http.post(
                                           "/api/v1/price?view=summary", json={"scenario": GB300},
                                           headers=_auth(self.admin)))):
                        t = time.monotonic()
                        try:
                            status: int | str = call().status_code
                        except httpx.HTTPError as exc:
                            status = type(exc).__name__
                        probes.append((what, status, time.monotonic() - t))
                    stop.wait(0.5)
        prober = threading.Thread(target=probe)
        prober.start()
        threads = [threading.Thread(target=heavy) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT + 30)
        stop.set()
        prober.join(30)
        self.settle()  # what nginx gave up on may still run: each part on its own
        as_json = self.post("/api/v1/task", body)
        self.settle()
        # the Task page's workbook: its three systems (the page takes at most six, each
        # once), 10,000 steps, 8 at once from one signed-in viewer
        systems = "&".join(f"sys=fixture:curve-gpt-oss-120b-{hw}"
                           for hw in ("b200", "h100", "mi300x"))
        pages: list[tuple[int | str, float]] = []
        threads = [threading.Thread(target=lambda: pages.append(_page(
            browser, f"/task.xlsx?t_steps=10000&t_target=1e6&{systems}"))) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT + 30)
        refused_or_done = {200, 413, 422, 429}
        slow_probes = [p for p in probes if p[1] != 200 or p[2] > 5.0]
        json_ok = as_json.status_code in (413, 422) or len(as_json.content) <= 2**20
        holds = (one.status_code in refused_or_done
                 and all(s in refused_or_done for s, _ in answers)
                 and max((t for _, t in answers), default=0) < 60 and not slow_probes
                 and json_ok and all(p in refused_or_done and t < 60 for p, t in pages))
        return Verdict(holds, (
            f"alone {one.status_code} in {alone:.1f} s ({len(one.content):,} B); 16 at once: "
            f"{_counts(s for s, _ in answers)}, slowest "
            f"{max((t for _, t in answers), default=0):.1f} s; "
            f"healthz/price probes slower than 5 s or failed: {len(slow_probes)} of "
            f"{len(probes)}; JSON {as_json.status_code} {len(as_json.content):,} B "
            f"(bounded: 413/422 or at most 1 MiB); /task.xlsx 8 at once: "
            f"{_counts(p for p, _ in pages)}, slowest {max(t for _, t in pages):.1f} s"))

    # ---- 3 --------------------------------------------------------------------------------
    def item3(self) -> Verdict:
        """PostgreSQL reachable but frozen: save, list and price (of a saved scenario) are a
        503 store-unreachable with Retry-After, in bounded time; back when it answers."""
        freezer = self.c.freezer
        saved = self.post("/api/v1/scenarios", {"name": "redteam-frozen", "scenario": GB300},
                          token=self.editor)
        sid = saved.json().get("scenario_id")
        calls = {
            "save": lambda h: h.post("/api/v1/scenarios", json={
                "name": f"redteam-frozen-{time.time_ns()}", "scenario": GB300}),
            "list": lambda h: h.get("/api/v1/scenarios"),
            "price": lambda h: h.post("/api/v1/price", json={"scenario_id": sid})}
        seen: dict[str, tuple[int | str, str, str, float]] = {}

        def ask(name: str) -> None:
            t = time.monotonic()
            with httpx.Client(base_url=self.c.front, timeout=TIMEOUT,
                              headers=_auth(self.editor)) as h:
                try:
                    r = calls[name](h)
                    kind = r.json().get("type", "").rsplit("/", 1)[-1] if r.headers.get(
                        "content-type", "").startswith("application/problem+json") else ""
                    seen[name] = (r.status_code, kind, r.headers.get("Retry-After", ""),
                                  time.monotonic() - t)
                except (httpx.HTTPError, ValueError) as exc:
                    seen[name] = (type(exc).__name__, "", "", time.monotonic() - t)
        freezer.freeze()
        try:
            threads = [threading.Thread(target=ask, args=(n,)) for n in calls]
            for t in threads:
                t.start()
            for t in threads:
                t.join(TIMEOUT + 10)
        finally:
            freezer.thaw()
        back = True
        try:
            wait_for("the service after PostgreSQL answers again", lambda: all(
                self.http.get("/api/v1/scenarios", headers=_auth(self.editor)).status_code
                == 200 for _ in range(6)), seconds=60)
        except RuntimeError:
            back = False
        holds = back and all(v[0] == 503 and v[1] == "store-unreachable" and v[2]
                             for v in seen.values()) and len(seen) == 3
        return Verdict(holds, "; ".join(
            f"{n} {v[0]} {v[1] or '-'} Retry-After={v[2] or '-'} in {v[3]:.1f} s"
            for n, v in seen.items()) + f"; answering again after: {back}")

    # ---- 4 --------------------------------------------------------------------------------
    def _decision_book(self) -> bytes | None:
        import tomllib
        quotes = tomllib.loads((ROOT / "fixtures" / "quotes" / "negotiation.toml")
                               .read_text())["quote"]
        body = {"quotes": quotes, "scenarios": [{"scenario": {
            "accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}}],
                "demand": {"volume": "20000 Mtok/month"}}
        r = self.post("/api/v1/quotes/decide", body, Accept=XLSX)
        return r.content if r.status_code == 200 else None

    @staticmethod
    def _with_record(book: bytes, change: Callable[[dict, object], None]) -> bytes:
        """The workbook with its Meta record (the request it answers) changed by
        ``change(record, workbook)``, written back as the export writes it (JSON in chunks
        after the label)."""
        import openpyxl
        wb = openpyxl.load_workbook(io.BytesIO(book))
        meta = wb["Meta"]
        row = next(r for r in meta.iter_rows() if r[0].value == "decision")
        record = json.loads("".join(str(c.value) for c in row[1:] if c.value is not None))
        change(record, wb)
        text = json.dumps(record)
        for c in row[1:]:
            c.value = None
        for j, k in enumerate(range(0, len(text), 30_000)):
            meta.cell(row=row[0].row, column=2 + j, value=text[k:k + 30_000])
        out = io.BytesIO()
        wb.save(out)
        return out.getvalue()

    def item4(self) -> Verdict:
        """Reprice of a decision workbook whose Meta record (the uploader's to edit) is
        crafted: eleven variants, each refused at its cell (422), none a 500."""
        book = self._decision_book()
        if book is None:
            return Verdict(False, "no decision workbook to craft (POST /quotes/decide refused)")

        def set_cell(wb, name: str, j: int, value) -> None:
            (sheet, ref), = wb.defined_names[name].destinations
            cells = wb[sheet][ref.replace("$", "")]
            flat = [c for row in (cells if isinstance(cells, tuple) else ((cells,),))
                    for c in (row if isinstance(row, tuple) else (row,))]
            flat[j].value = value

        def api_index(record: dict) -> int:
            return next((j for j, o in enumerate(record["options"])
                         if isinstance(o, dict) and o.get("quote") is not None
                         and "option_tier1_output" in record["inputs"]
                         and record["inputs"]["option_tier1_output"][j] is not None), 0)

        def deep(n: int):
            out: object = 1
            for _ in range(n):
                out = {"a": out}
            return out

        def quote_out_of_range(r, wb) -> None:
            j = api_index(r)
            r["options"][j]["quote"] = 99
            set_cell(wb, "option_tier1_output", j, 1.23)

        variants: dict[str, Callable[[dict, object], None]] = {
            "term list shorter than the offers": lambda r, wb: r["inputs"].__setitem__(
                "option_term", r["inputs"].get("option_term", [None])[:1]),
            "an offer that is not an object": lambda r, wb: r["options"].__setitem__(0, 5),
            "every offer a string": lambda r, wb: r.__setitem__(
                "options", ["x"] * len(r["options"])),
            "a quote index out of range after a price edit": quote_out_of_range,
            "a quote that is not an object": lambda r, wb: r["quotes"].__setitem__(0, "q"),
            "the volume missing": lambda r, wb: r["demand"].pop("volume", None),
            "a textual volume": lambda r, wb: r["demand"].__setitem__("volume", "lots"),
            "an exported input textual": lambda r, wb: r["inputs"].__setitem__(
                "decision_volume", "lots"),
            "an exported input list cut short": lambda r, wb: r["inputs"].__setitem__(
                "option_unit", r["inputs"].get("option_unit", [None])[:1]),
            "a field nested 900 deep": lambda r, wb: r["demand"].__setitem__(
                "interactivity", deep(900)),
            "the improvement a list 900 deep": lambda r, wb: r.__setitem__(
                "improvement", json.loads("[" * 900 + "]" * 900)),
        }
        unchanged = self.http.post("/api/v1/workbook/reprice", content=self._with_record(
            book, lambda r, wb: None), headers={**_auth(self.viewer), "Content-Type": XLSX})
        out = {}
        for what, change in variants.items():
            try:
                crafted = self._with_record(book, change)
            except Exception as exc:  # the crafting itself failed: say so
                out[what] = f"not crafted ({type(exc).__name__})"
                continue
            r = self.http.post("/api/v1/workbook/reprice", content=crafted,
                               headers={**_auth(self.viewer), "Content-Type": XLSX})
            out[what] = r.status_code
        holds = unchanged.status_code == 200 and all(v == 422 for v in out.values())
        return Verdict(holds, f"unchanged record re-saved: {unchanged.status_code}; "
                              + "; ".join(f"{k}: {v}" for k, v in out.items()))

    # ---- 5 --------------------------------------------------------------------------------
    def item5(self) -> Verdict:
        """A demand of 1e-6 token/s: the API (JSON and workbook), the Plan page, its workbook
        and its PDF: a fleet of at least one, or a clear answer; never a 500."""
        body = {"scenario": {"accelerator": "gb300", "operating_point":
                             "deepseek-r1/gb300/peak"}, "demand": "1e-6 token/s"}
        api = self.post("/api/v1/plan", body)
        book = self.post("/api/v1/plan", body, Accept=XLSX)
        browser = Browser(self.c.front, self.viewer)
        query = "accelerator=gb300&point=deepseek-r1/gb300/peak&pl_demand=1e-6"
        pages = {p: _page(browser, f"/{p}?{query}")[0] for p in ("plan", "plan.xlsx",
                                                                      "plan.pdf")}
        statuses = {"API": api.status_code, "API workbook": book.status_code, **pages}
        fleet = None
        if api.status_code == 200:
            fleet = re.findall(r'"accelerators":\s*\{?\s*"?value"?:?\s*([0-9.e+-]+)', api.text)
        holds = all(isinstance(s, int) and s < 500 for s in statuses.values())
        return Verdict(holds, "; ".join(f"{k} {v}" for k, v in statuses.items())
                       + (f"; accelerators {fleet[:1]}" if fleet else ""))

    # ---- 6 --------------------------------------------------------------------------------
    @staticmethod
    def _packed(n: int) -> str:
        quotes = [{"name": f"q{i}", "vendor": "V", "form": "per_mtok",
                   "price_input": "0.5 USD/Mtok", "price_output": "2 USD/Mtok"}
                  for i in range(n)]
        text = json.dumps({"quote": quotes}, separators=(",", ":"))
        return base64.urlsafe_b64encode(zlib.compress(text.encode(), 9)).decode().rstrip("=")

    def item6(self) -> Verdict:
        """The Quotes page's POST with a `qf` field of about 51 KB that inflates to 14,000
        quotes: counted before parsed (refused at once), alone and four at once."""
        packed = self._packed(14_000)
        browser = Browser(self.c.front, self.viewer)
        form = {"csrf_token": browser.csrf, "quotes": "file", "qn": "offers.json",
                "qf": packed, "scenario": "fixture:curve-gpt-oss-120b-b200",
                "d_volume": "50000", "d_interactivity": "100"}
        encoded = str(httpx.QueryParams(form)).encode()

        def send() -> tuple[int | str, float]:
            return _page(browser, "/quotes", encoded, "application/x-www-form-urlencoded")
        alone = send()
        four: list[tuple[int | str, float]] = []
        threads = [threading.Thread(target=lambda: four.append(send())) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIMEOUT + 10)
        slowest = max([alone[1], *(t for _, t in four)])
        holds = all(isinstance(s, int) and s < 500 for s, _ in [alone, *four]) \
            and slowest < 2.0
        return Verdict(holds, f"qf {len(packed):,} characters; alone {alone[0]} in "
                              f"{alone[1]:.2f} s; four at once {_counts(s for s, _ in four)}, "
                              f"slowest {slowest:.2f} s (holds below 2 s)")

    # ---- 7 --------------------------------------------------------------------------------
    def item7(self) -> Verdict:
        """1e308: a quote's term (a decision's term_total), a market price (in a profit and
        into the catalog), an exchange rate (a profit in that currency). Refused with the
        field (422), or answered with finite figures: never Infinity, never a null where a
        figure was asked."""
        out: dict[str, str] = {}

        def judge(what: str, r) -> None:
            if r.status_code == 422:
                out[what] = "422"
                return
            try:
                data = _strict_json(r.text)
            except ValueError as exc:
                out[what] = f"{r.status_code}, invalid JSON ({exc})"
                return
            bad = _null_figures(data)
            out[what] = f"{r.status_code}" + (f", null figures at {', '.join(bad[:3])}"
                                              if bad else "")
        quote = {"name": "long", "vendor": "V", "form": "per_mtok",
                 "price_input": "0.5 USD/Mtok", "price_output": "2 USD/Mtok",
                 "term": "1e308 month"}
        judge("a quote's term of 1e308 month (decide)", self.post("/api/v1/quotes/decide", {
            "quotes": [quote], "scenarios": [{"scenario": {
                "accelerator": "gb300", "operating_point": "deepseek-r1/gb300/matched"}}],
            "demand": {"volume": "20000 Mtok/month"}}))
        market = {"price_input": "1e308 USD/Mtok", "price_output": "1e308 USD/Mtok",
                  "provider": "X", "model": "M", "date": "2026-11",
                  "source": "red team", "revenue_share": 0.1}
        judge("profit at 1e308 USD/Mtok", self.post("/api/v1/profit", {
            "scenarios": [{"scenario": GB300}], "market": market}))
        entry = {"key": f"redteam/huge-{time.time_ns()}@2026-11", "data": {
            "provider": "Red team", "model": "M", "date": "2026-11",
            "price_output": {"value": 1e308, "unit": "USD/Mtok", "source": "red team"},
            "price_input": {"value": 1e308, "unit": "USD/Mtok", "source": "red team"},
            "source": "red team"}}
        r = self.post("/api/v1/market-prices", entry, token=self.editor)
        out["a market price of 1e308 USD/Mtok into the catalog"] = str(r.status_code)
        money = {"currency": "EUR", "fx": {"EUR": {"rate": "1e308 EUR/USD",
                                                   "date": "2026-11-30", "source": "red team"}}}
        judge("an exchange rate of 1e308 EUR/USD (profit)", self.post("/api/v1/profit", {
            "scenarios": [{"scenario": {**GB300, "money": money}}],
            "market": {"catalog": "illustrative/reasoning-model-api"}}))
        judge("an exchange rate of 1e308 EUR/USD (price)", self.post("/api/v1/price", {
            "scenario": {**GB300, "money": money}}))
        holds = all(v in ("200", "422") for v in out.values()) and \
            out["a market price of 1e308 USD/Mtok into the catalog"] == "422"
        return Verdict(holds, "; ".join(f"{k}: {v}" for k, v in out.items()))

    # ---- 8 --------------------------------------------------------------------------------
    def item8(self) -> Verdict:
        """The service's own 10,000-step task workbook read back by its own reprice; the
        API's percentages (headroom "10 %", availability "99 %") accepted."""
        book = self.post("/api/v1/task", self._task_body(), Accept=XLSX)
        if book.status_code == 200:
            back = self.http.post("/api/v1/workbook/reprice", content=book.content,
                                  headers={**_auth(self.viewer), "Content-Type": XLSX})
            reread = back.status_code
            detail = "" if reread == 200 else (back.json().get("detail", "")[:90]
                                              if back.headers.get("content-type", "")
                                              .startswith("application/problem") else "")
        else:
            reread, detail = None, ""
        scenario = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
        headroom = self.post("/api/v1/plan", {"scenario": scenario, "power_budget": "1 GW",
                                              "headroom": "10 %"}).status_code
        availability = self.post("/api/v1/plan", {"scenario": scenario,
                                                  "demand": "2.5e6 token/s",
                                                  "availability": "99 %"}).status_code
        # what it writes, it reads back, or it refuses to write it
        own = book.status_code in (413, 422) or reread == 200
        holds = own and headroom == 200 and availability == 200
        return Verdict(holds, f"task workbook {book.status_code} ({len(book.content):,} B), "
                              f"read back {reread} {detail}; headroom '10 %' {headroom}; "
                              f"availability '99 %' {availability}")

    # ---- 9 --------------------------------------------------------------------------------
    def item9(self) -> Verdict:
        """A money.fx rate in a currency the document allows and the handler may not know
        ("8.77e34 DVG/USD") on the grid and the Monte Carlo: a request the document allows
        is accepted; one it refuses may be refused."""
        import jsonschema
        spec = self.http.get("/api/v1/openapi.json").json()
        money = {"fx": {"DVG": {"rate": "8.77e34 DVG/USD", "date": "2026-11-30",
                                "source": "red team"}}}
        schema = {**spec, "$ref": "#/components/schemas/ScenarioInput/properties/money"}
        allowed = jsonschema.Draft202012Validator(schema).is_valid(money)
        scenario = {**GB300, "money": money}
        grid = self.post("/api/v1/sensitivity/grid", {
            "scenario": {"scenario": scenario},
            "x": "electricity.price=0.05..0.15 USD/kWh:3", "y": "utilisation=0.5,1"})
        mc = self.post("/api/v1/sensitivity/montecarlo", {
            "scenario": {"scenario": scenario}, "draws": 1000, "seed": 1,
            "distributions": {"electricity.price": "uniform(0.05 USD/kWh, 0.15 USD/kWh)"}})
        want = {200} if allowed else {422}
        holds = grid.status_code in want and mc.status_code in want
        return Verdict(holds, f"the document {'allows' if allowed else 'refuses'} it; grid "
                              f"{grid.status_code}, Monte Carlo {mc.status_code}")


ITEMS = {
    "1": ("a body without a key takes every host down (critical)", "item1"),
    "2": ("the task workbook holds no heavy slot", "item2"),
    "3": ("a database that accepts and never answers gives 500s", "item3"),
    "4": ("reprice of a crafted decision workbook gives 500s", "item4"),
    "5": ("a small planning demand gives 500", "item5"),
    "6": ("the Quotes page's POST validates before it caps", "item6"),
    "7": ("non-JSON numbers and silent nulls", "item7"),
    "8": ("own task workbook re-read; percentages in the API", "item8"),
    "9": ("the contract on PostgreSQL: a currency the document allows", "item9"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="items to run, e.g. 1,3 (default: all nine)")
    args = ap.parse_args()
    chosen = [i for i in ITEMS if not args.only or i in args.only.split(",")]
    load = os.getloadavg()
    ok = True
    with tempfile.TemporaryDirectory() as tmp, Cluster(
            Path(tmp) / "cluster", hosts_count=3, freezable=True,
            extra_env={"COSTMODEL_RATE_LIMIT": "100000/minute"}) as cluster:
        team = Redteam(cluster)
        print(f"issue 38 replayed through nginx and 3 hosts (127.0.0.2-4), PostgreSQL behind "
              f"a freezable proxy, Redis; {os.cpu_count()} cores; load average before "
              f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        for item in chosen:
            title, method = ITEMS[item]
            t0 = time.monotonic()
            try:
                verdict = getattr(team, method)()
            except Exception as exc:  # a replay that could not run is not a pass
                verdict = Verdict(False, f"the replay failed: {type(exc).__name__}: {exc}"[:300])
            ok &= verdict.holds
            print(f"{item}. {'HOLDS' if verdict.holds else 'FAILS'}  {title} "
                  f"({time.monotonic() - t0:.0f} s)\n     {verdict.evidence}", flush=True)
            t0 = time.monotonic()
            if not team.settle():  # the next item on a service that answers again
                print("     the service did not answer a price within 5 s for 240 s after it")
                ok = False
            elif time.monotonic() - t0 > 2:
                print(f"     (the service answered promptly again {time.monotonic() - t0:.0f} s "
                      f"after it)")
        print(f"load average after {os.getloadavg()[0]:.2f}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
