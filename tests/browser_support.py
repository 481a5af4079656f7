"""What the browser tests share: the service on a live server thread and a Playwright page.

Bind the fixtures in a browser test module (tests/ is on sys.path; an assignment, not an
import, so that ruff does not take the test functions' arguments for redefinitions)::

    import browser_support
    from browser_support import at_widths, require_browser, shot

    require_browser()  # skip the module (or fail, in CI) without Chromium
    browser, live_server, page = (browser_support.browser, browser_support.live_server,
                                  browser_support.page)

- ``live_server`` (module-wide): the service (``create_app``) on a temp SQLite file migrated
  and seeded from ``fixtures/``, served by werkzeug on 127.0.0.1 at a random port, reads open
  (``OPEN_READS`` on, as ``costmodel serve`` on loopback). ``live_server.url`` is the base
  URL, ``live_server.keys`` a token per role ({"viewer", "editor", "admin"}),
  ``live_server.key(role)`` creates another.
- ``closed_live_server`` (module-wide): the same with reads closed (``OPEN_READS`` off): a
  viewer key is needed to read.
- ``open_live_server(open_reads=...)``: a context manager for other variants.
- ``browser`` (module-wide) and ``page`` (per test, 1280x900 unless the test sets another
  viewport): Playwright's Chromium, Debian's ``/usr/bin/chromium`` (``COSTMODEL_CHROMIUM``
  names another). ``page.goto`` takes a path relative to the server's URL when the test also
  asks for ``live_server`` (``page.base_url`` holds it).
- ``shot(page, name)``: a full-page screenshot in ``out/screenshots/`` (git-ignored) at the
  page's viewport; ``at_widths(page, name)`` saves it at 1280 px and at phone width (390 px).
- ``api(live, path, body=None, token=None)``: the live server's JSON answer (what a page's
  figures are checked against).

Without the ``playwright`` package or Chromium the browser tests skip with the reason; with
``COSTMODEL_REQUIRE_BROWSER=1`` (``.ci/run`` sets it) a missing browser is a failure instead.
"""
from __future__ import annotations

import json
import os
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "out" / "screenshots"
CHROMIUM = os.environ.get("COSTMODEL_CHROMIUM", "/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

__all__ = ["api", "require_browser", "LiveServer", "open_live_server", "live_server",
           "closed_live_server", "browser", "page", "shot", "at_widths", "SCREENSHOTS",
           "DESKTOP", "PHONE"]


def _missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    return None


def require_browser() -> None:
    """Skip the calling module without a browser; fail instead under
    COSTMODEL_REQUIRE_BROWSER=1 (CI)."""
    why = _missing_browser()
    if why is None:
        return
    if os.environ.get("COSTMODEL_REQUIRE_BROWSER"):
        raise RuntimeError(f"COSTMODEL_REQUIRE_BROWSER is set but {why}")
    pytest.skip(why, allow_module_level=True)


@dataclass
class LiveServer:
    """A running service: its base URL, its Flask app, and API keys by role."""
    url: str
    app: object
    keys: dict[str, str] = field(default_factory=dict)

    def key(self, role: str, name: str | None = None) -> str:
        """A new API key of ``role`` (viewer | editor | admin); its token."""
        from costmodel.store.repo import key_create
        with self.app.extensions["costmodel"].sessions() as session:
            _, token = key_create(session, name or f"browser-{role}-{len(self.keys)}", role)
        return token


@contextmanager
def open_live_server(tmp_dir: Path, *, open_reads: bool = True,
                     config: dict | None = None) -> Iterator[LiveServer]:
    """The service on a fresh seeded SQLite file in ``tmp_dir``, on a werkzeug server thread
    at 127.0.0.1:<random port>; shut down and disposed afterwards."""
    from werkzeug.serving import make_server

    from costmodel.server import create_app
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare

    url = f"sqlite:///{tmp_dir / 'costmodel.db'}"
    prepare(url, fixtures_dir())
    application = create_app({"DATABASE_URL": url, "OPEN_READS": open_reads,
                              "RATE_LIMIT": "off", "SECRET_KEY": "browser-tests",
                              **(config or {})})
    server = make_server("127.0.0.1", 0, application, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    live = LiveServer(f"http://127.0.0.1:{server.server_port}", application)
    for role in ("viewer", "editor", "admin"):
        live.keys[role] = live.key(role, f"browser-{role}")
    try:
        yield live
    finally:
        server.shutdown()
        thread.join(10)
        application.extensions["costmodel"].dispose()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory) -> Iterator[LiveServer]:
    """The service with reads open (as on loopback)."""
    with open_live_server(tmp_path_factory.mktemp("live"), open_reads=True) as live:
        yield live


@pytest.fixture(scope="module")
def closed_live_server(tmp_path_factory) -> Iterator[LiveServer]:
    """The service with reads closed: a viewer key (or a signed-in session) is needed."""
    with open_live_server(tmp_path_factory.mktemp("live-closed"), open_reads=False) as live:
        yield live


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (headless), for the module."""
    require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, request):
    """A fresh browser context (no cookies) and page at 1280x900; downloads accepted.
    Relative ``page.goto`` paths resolve against the live server the test uses."""
    base = None
    for name in ("live_server", "closed_live_server"):
        if name in request.fixturenames:
            base = request.getfixturevalue(name).url
            break
    context = browser.new_context(viewport=DESKTOP, accept_downloads=True,
                                  base_url=base, locale="en-US")
    context.set_default_timeout(15_000)
    pg = context.new_page()
    pg.base_url = base
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.js_errors = errors
    try:
        yield pg
    finally:
        context.close()


def shot(page, name: str) -> Path:
    """A full-page screenshot of ``page`` as out/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def at_widths(page, name: str) -> list[Path]:
    """Screenshots at 1280 px (``<name>-1280.png``) and phone width (``<name>-390.png``);
    the viewport is left as it was."""
    before = page.viewport_size or DESKTOP
    out = []
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        out.append(shot(page, f"{name}-{size['width']}"))
    page.set_viewport_size(before)
    return out


def api(live: LiveServer, path: str, body: dict | None = None,
        token: str | None = None) -> dict:
    """The live server's JSON answer to ``path``: a POST of ``body`` (a GET without one),
    with ``token`` as the bearer key when given."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(live.url + path, headers=headers,
                                 data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)
