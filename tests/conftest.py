"""Shared helpers: price a scenario mapping or a fixture file through the whole chain."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

# ---- pytest-xdist (make test: -n 2; docs/operations.md, Tests and benchmarks) ---------------
# Each worker caches in a folder of its own (pint's parsed units, the parsed catalog, the unit
# check's marks: costmodel.resources.cached_build), for the run only, and so does every
# subprocess it starts (the variable is inherited): no worker reads what another is writing,
# and no run reads the user's cache. Set before costmodel is first imported (below).
WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1"...; None when not under xdist
if WORKER and "COSTMODEL_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile
    _cache = tempfile.mkdtemp(prefix=f"costmodel-cache-{WORKER}-")
    os.environ["COSTMODEL_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

from costmodel.app.build import build_scenario, load_scenario_file  # noqa: E402
from costmodel.model.chain import price  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "fixtures" / "scenarios" / "published"
DATA = ROOT / "tests" / "data"  # test inputs; upstream copies in inferencex/ (see its SOURCE.md)


def price_data(data: dict, overrides=()):
    """Price a scenario mapping (optionally with (key, value) overrides)."""
    loaded = build_scenario(data, list(overrides))
    return price(loaded.scenario, loaded.provenance)


def price_file(path, overrides=()):
    loaded = load_scenario_file(path, list(overrides))
    return price(loaded.scenario, loaded.provenance)


@pytest.fixture
def published():
    """``published("deepseek-r1", "gb300", "peak", *overrides)`` -> Result."""
    def _price(model: str, system: str, point: str, *overrides: str):
        return price_file(PUBLISHED / f"{model}_{system}_{point}.toml", overrides)
    return _price


SCENARIOS = ROOT / "fixtures" / "scenarios"
CURVE_SCENARIOS = [SCENARIOS / f"curve-gpt-oss-120b-{hw}.toml" for hw in ("h100", "b200", "mi300x")]


def require_libreoffice(*, module: bool = True) -> None:
    """Skip (the calling module, or with ``module=False`` the calling test) where LibreOffice
    is not installed, unless COSTMODEL_REQUIRE_LIBREOFFICE is set (.ci/run sets it): then a
    missing LibreOffice fails the run instead of hiding the check."""
    from costmodel.render.workbook.recalc import soffice
    if soffice() is not None:
        return
    if os.environ.get("COSTMODEL_REQUIRE_LIBREOFFICE"):
        if module:
            raise RuntimeError("COSTMODEL_REQUIRE_LIBREOFFICE is set but soffice is not "
                               "installed")
        pytest.fail("COSTMODEL_REQUIRE_LIBREOFFICE is set but soffice is not installed")
    pytest.skip("LibreOffice (soffice) is not installed", allow_module_level=module)


def workbook_systems(files, overrides=(), matched=False):
    """Price scenario files the way `costmodel workbook` does: (systems, loaded)."""
    from costmodel import app
    from costmodel.render.workbook.export import WorkbookSystem
    specs = [app.ScenarioSpec(app.FileScenario(Path(f)), app.overrides_from_text(overrides))
             for f in files]
    loaded = app.load_all(app.LocalContext(), specs, app.MATCHED if matched else app.OWN_POINT)
    return [WorkbookSystem(price(x.scenario, x.provenance), x.curve) for x in loaded], loaded


# ---- the service on SQLite, and on PostgreSQL when TEST_DATABASE_URL names a server ----------

# the PostgreSQL variants are always collected, and skipped with their reason without a server
BACKENDS = ["sqlite",
            pytest.param("postgresql", marks=pytest.mark.skipif(
                not os.environ.get("TEST_DATABASE_URL"), reason="no TEST_DATABASE_URL"))]


def _postgres_database():
    """A fresh database on the TEST_DATABASE_URL server; dropped afterwards."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from costmodel.store.db import database_url
    admin_url = make_url(database_url(os.environ["TEST_DATABASE_URL"]))
    name = f"costmodel_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def database(request, tmp_path_factory):
    """A migrated, seeded database URL (module-wide), on each backend."""
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare
    if request.param == "sqlite":
        gen = iter([f"sqlite:///{tmp_path_factory.mktemp('db') / 'costmodel.db'}"])
    else:
        gen = _postgres_database()
    url = next(gen)
    prepare(url, fixtures_dir())
    yield url
    for _ in gen:  # runs the generator's cleanup
        pass


@pytest.fixture(scope="module")
def app(database):
    from costmodel.server import create_app
    application = create_app({"DATABASE_URL": database, "OPEN_READS": False,
                              "TESTING": True})
    yield application
    application.extensions["costmodel"].dispose()


@pytest.fixture(scope="module")
def tokens(app):
    """API tokens for each role: {"viewer": ..., "editor": ..., "admin": ...}."""
    from costmodel.store.repo import key_create
    out = {}
    with app.extensions["costmodel"].sessions() as session:
        for role in ("viewer", "editor", "admin"):
            _, out[role] = key_create(session, f"test-{role}", role)
    return out


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture(scope="module")
def open_app(database):
    """The same database, with reads open to callers without a key (as on loopback)."""
    from costmodel.server import create_app
    application = create_app({"DATABASE_URL": database, "OPEN_READS": True,
                              "TESTING": True})
    yield application
    application.extensions["costmodel"].dispose()


@pytest.fixture
def web(open_app):
    """A test client of the pages with reads open."""
    return open_app.test_client()


def auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A migrated, seeded SQLite database of the module (for tests that do not depend on the
    backend: the limits)."""
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'costmodel.db'}"
    prepare(url, fixtures_dir())
    return url


@pytest.fixture
def make_app(db):
    """``make_app(**config)``: an app (a worker) on the module's database; disposed after."""
    from costmodel.server import create_app
    made = []

    def _make(**config):
        application = create_app({"DATABASE_URL": db, "OPEN_READS": False, "TESTING": True,
                                  **config})
        made.append(application)
        return application
    yield _make
    for a in made:
        a.extensions["costmodel"].dispose()


# ---- the service served by gunicorn on a loopback port, as a client meets it ----------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def live_server(tmp_path_factory):
    """(url, editor key) of gunicorn serving a migrated, seeded SQLite database (module-wide;
    reads need a key, no rate limit)."""
    folder = tmp_path_factory.mktemp("live")
    exe = Path(sys.executable).with_name("costmodel")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'c.db'}",
           "COSTMODEL_OPEN_READS": "0", "COSTMODEL_RATE_LIMIT": "off"}
    for args in (["db", "upgrade"], ["db", "seed"]):
        subprocess.run([str(exe), *args], env=env, check=True, capture_output=True, timeout=300)
    made = subprocess.run([str(exe), "keys", "create", "--name", "client", "--role", "editor"],
                          env=env, check=True, capture_output=True, text=True, timeout=120)
    key = re.search(r"(cm_\w+_\S+)", made.stdout).group(1)
    port = _free_port()
    log = (folder / "gunicorn.log").open("wb")
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen([str(gunicorn), "costmodel.server:create_app()", "-b",
                             f"127.0.0.1:{port}", "-w", "1", "-k", "gthread", "--threads", "2"],
                            env=env, cwd=ROOT, stdout=log, stderr=log, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=10):
                    break
            except OSError:  # not listening yet (URLError, reset, timed out)
                assert proc.poll() is None and time.time() < deadline, \
                    (folder / "gunicorn.log").read_text()
                time.sleep(0.3)
        yield url, key
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def bench_module(filename: str):
    """``bench/<filename>`` as a module (the tests start servers the way a benchmark does);
    registered in ``sys.modules`` as ``bench_<stem>``, where its dataclasses look it up."""
    import importlib.util
    root = Path(__file__).resolve().parents[1]
    if str(root / "bench") not in sys.path:  # its own imports of the others (as a script)
        sys.path.append(str(root / "bench"))
    name = "bench_" + Path(filename).stem
    spec = importlib.util.spec_from_file_location(name, root / "bench" / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# ---- which tests a worker runs together ------------------------------------------------------

# Modules run as one unit, on one worker after the other: each starts several service hosts
# with their PostgreSQL, Redis, nginx (and Prometheus); two such clusters at once on two cores
# would only slow each other.
GROUPS = {"tests/http/test_hosts.py": "clusters", "tests/http/test_metrics_hosts.py": "clusters"}
# Modules whose tests are shared out one by one: independent, each long, and their module-wide
# setup short (schemathesis's operations).
SPREAD = {"tests/api/test_api_schema.py"}


@pytest.hookimpl(optionalhook=True)  # (a hook of pytest-xdist's: none without it)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist (``make test``: ``-n 2``), the tests of a module run on one worker, in
    the module's order: its module-wide fixtures (a migrated database on each backend, a live
    server, a browser, a cluster, LibreOffice's prints) are made once, as in a serial run, not
    once a worker; :data:`GROUPS` joins modules into one unit, :data:`SPREAD` shares a
    module's tests out. (pytest-xdist's own ``--dist loadgroup`` marks cannot do this under
    pytest 9, where a test's id no longer carries its group.) The largest units go first."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in SPREAD else GROUPS.get(path, path)
    return ByModule(config, log)
