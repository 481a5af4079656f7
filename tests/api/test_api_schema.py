"""Property-based runs over the OpenAPI document (schemathesis).

- ``test_operation_conforms`` (``make test``): generated requests to every operation, in
  process, schema-valid and schema-violating, ``COSTMODEL_SCHEMATHESIS_EXAMPLES`` of each an
  operation (default 25, so the suite stays fast on two cores); every response must pass every
  check that applies to one response (no server error; documented status, content type,
  headers and schema; invalid data refused; valid data accepted). Each request generated is
  sent to the service on SQLite and, when TEST_DATABASE_URL names a server, on PostgreSQL
  (generating is most of the time: once for both).
- ``test_full_run`` (``make schemathesis``, ``COSTMODEL_SCHEMATHESIS_FULL=1``): the schemathesis
  command line with all its phases (examples, coverage, fuzzing, stateful) and all its checks,
  ``COSTMODEL_SCHEMATHESIS_EXAMPLES`` (default 200) an operation, against gunicorn serving the
  database (SQLite, and PostgreSQL when TEST_DATABASE_URL names a server) with an admin key
  (every operation but DELETE /keys/{id}, which would revoke that key).
  Its summary is written to ``out/schemathesis-<backend>.json`` (docs/operations.md, API
  contract).

Valid data refused is a failure unless the refusal names only rules JSON Schema cannot state
(a unit's dimension, a catalog key that does not exist...): ``INEXPRESSIBLE``, patterns of the
service's own "path: message", each listed in the docs. Those are counted by rule, not
failed.
"""
from __future__ import annotations

import base64
import collections
import functools
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import schemathesis
from conftest import _postgres_database
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)
from schemathesis.core.failures import Failure

from costmodel.api.openapi import build_spec, operation_id
from costmodel.server import create_app
from costmodel.store.repo import key_create

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("COSTMODEL_SCHEMATHESIS_FULL", "") == "1"
PATHS = os.environ.get("COSTMODEL_SCHEMATHESIS_PATHS")
EXAMPLES = int(os.environ.get("COSTMODEL_SCHEMATHESIS_EXAMPLES") or (200 if FULL else 25))
OPERATIONS = [(method.upper(), path) for path, ops in build_spec()["paths"].items()
              for method in ops]
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

# Rules a schema-valid request can still break, which JSON Schema cannot state: each a
# pattern of the service's own message (errors[].message) and the docs' words for it.
INEXPRESSIBLE = {
    "unit": (r"expected \(e\.g\.|expected units like|write it per|unknown unit|cannot read "
             r".* as a quantity|has no unit|empty quantity|a quantity is at most|got NaN|must "
             r"be finite", "a quantity's unit: its dimension, a unit the grammar knows"),
    # (a bare number out of its bounds is the document's to refuse: see _bare_number)
    "range": (r"must not be negative, got|must be greater than zero, got|must be (at least|at "
              r"most|below) [-+.e\d]+, got", "a quantity's bounds after converting its unit "
                                              "(\"150 %\" as a fraction)"),
    "catalog": (r"unknown catalog entry", "a catalog key that does not exist"),
    "curve": (r"known curve id|given by the curve|read from a curve|frontier|unreachable|"
              r"beyond|must be a file path or curve id|curve \S+ has no|ceiling",
              "a curve id that does not exist; reading a curve (a target beyond its frontier, a "
              "catalog point that already gives a throughput or names no curve)"),
    "cross": (r"implies|required when power\.basis|required \(or give|give exactly one of "
              r"operating_point|only applies to|(workload|node|rack): must be a table, got None|"
              r"operating_point\.(at|curve_id|ttft_max)\S*: unknown key|expected \"peak\" or "
              r"one of|applies to a|not this version's key|exchange rate|a rate for [A-Z]{3} is "
              r"in|not both: a tariff|differs from the mean of load|serves in no hour|"
              r"month \d+ is in seasons|months repeat|needs a tariff|"
              # an agent's task against the systems it runs on (docs/tasks.md)
              r"task\.target: no system meets|no latency to hold to the target|"
              r"a demand in tasks|leaves no time to decode|is more than the step's input|"
              # a demand's load shape, and a scenario against it (docs/negotiators.md)
              r"the busiest hour is|load shape implies|the scenario's load shape",
              "rules across a catalog entry or a saved scenario and the keys that override it, "
              "between overrides (operating_point.at and operating_point.at.tbt), and a rate's "
              "key against its data (<accelerator>/<kind>@<date>); an amount's currency "
              "against the stated exchange rates; a flat price or a tariff, not both; a "
              "utilisation against the load shape's mean; a month in one season only; a what-if "
              "(flexible_share) against the scenario's electricity (a tariff); a task's "
              "latency target against what the systems can reach, and a demand in tasks "
              "against a request shape or service level also given; a demand's load shape "
              "whose busiest hour is not 1, and a scenario's utilisation or load shape "
              "against it"),
    "count": (r"valid integer|must be a whole number, got [-+.e\d]+$",
              "a whole number written with a fraction (8.0)"),
    "grammar": (r"expected key=|expected LOW|distribution|not a date|is before|^available:",
                "the mini-languages: grid axes, ranges, distributions, a successor's time"),
    "file": (r"^(content|workbook)\b|^body: (not an Arrow|not a Parquet|the Arrow|the "
             r"Parquet|an Arrow)", "a file's content: a curve file's text, an .xlsx "
                                  "workbook, an Arrow stream or Parquet file"),
    # a columnar batch (docs/pricing-tools.md#columnar-batch)
    "columns": (r"^columns\.\S+: (has [\d,]+ values where|the scenario does not give|the "
                r"scenario reads its operating point|must hold whole numbers|a count takes no "
                r"unit|unit .*: needs a unit|row \d+ priced alone)|^columns: (row \d+|at "
                r"most [\d,]+ cells)",
                "a columnar batch's columns against each other (one length) and the scenario "
                "(an input it gives, not read off a curve, in agreement with its other "
                "inputs; a count's whole numbers; a unit for a quantity)"),
    "analysis": (r"does not affect|nothing to vary|has no value|is 0 in the base|must be "
                 r"different|more than one distribution|whole-number count|cells is more|"
                 r"is part of the unit|categorical|not a numeric input of the calculation",
                 "what an analysis can vary in this scenario (a grid axis names an input)"),
    "overflow": (r"overflow|not finite|infinite|USD/Mtok any result may be",
                 "inputs so extreme that a cost overflows, or is beyond 1e12 USD/Mtok"),
    "fields": (r"^fields: .* is not a field of this answer", "a ?fields= name the answer does "
                                                             "not hold"),
    "batch": (r"^overrides\[\d+\]", "a batch whose rows all fail (any table is a row: each "
                                      "row's own error is in the answer)"),
    "ledger": (r"no record has the tenant key|no usage record starts in|no pool serves the "
               r"model|served by two pools|reservations add up to|accelerators reserved, the "
               r"pool has|pool names must differ|the period ends before|^period: give the "
               r"period|not a time|the records name no model|^csv: |"
               # the usage reader's words for a record's values (costmodel.sources.usage)
               r"cannot read .* as a (time|number)|is empty; write 0|the header needs|"
               r"has a header but no records|holds no usage records|a value longer than|"
               r"named twice in the header|give a time or a period|a row is longer than",
               "a chargeback's records against its fleet and period: a tenant key no record "
               "has, a period no record starts in, a model no pool serves, reservations beyond "
               "a pool, pool names given twice; a usage file's text (csv); a record's time or "
               "count the usage reader cannot read"),
    "more": (r": and [\d,]+ more errors?$", "the errors past the first 20 of one answer, "
                                            "counted (costmodel.model.errors.MAX_ERRORS)"),
}
_INEXPRESSIBLE = {rule: re.compile(pattern) for rule, (pattern, _) in INEXPRESSIBLE.items()}


def _sent(request: object, path: str) -> object:
    """The value a request gave at an error's path (``scenarios[0].scenario.utilisation``),
    looking in the overrides beside a scenario too; None when it is not in the request (a
    default, a catalog entry's, a saved scenario's)."""
    tokens = [t for t in re.split(r"\.|\[(\d+)\]", path) if t]
    node, seen = request, []
    for i, token in enumerate(tokens):
        if isinstance(node, dict):
            seen.append(node)
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            rest = ".".join(tokens[i:])
            return next((d["overrides"][rest] for d in reversed(seen)
                         if isinstance(d.get("overrides"), dict) and rest in d["overrides"]),
                        None)
    return node


def _bare_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def inexpressible(status: int, body: bytes | str | None,
                  request: object = None) -> list[str] | None:
    """The rules a 422 names when each of its errors is one JSON Schema cannot state, else
    None. ``request``: the body sent, to tell a bound the document states (a plain number's)
    from one it cannot (a quantity's after converting its unit)."""
    if status == 412:  # If-Match held a tag the scenario has moved on from: state, not shape
        return ["precondition"]
    if status != 422 or not body:
        return None
    try:
        errors = json.loads(body)["errors"]
    except (ValueError, KeyError, TypeError):
        return None
    rules = []
    for e in errors or ():
        said = f"{e.get('path', '')}: {e['message']}"
        rule = next((r for r, p in _INEXPRESSIBLE.items() if p.search(said)), None)
        if rule is None or (rule == "range" and _bare_number(_sent(request, e["path"]))):
            return None
        rules.append(rule)
    return rules or None


def _unmatched(body: str) -> list[str]:
    """A problem's errors that no INEXPRESSIBLE rule names (what made a refusal a failure)."""
    try:
        errors = json.loads(body).get("errors") or []
    except (ValueError, AttributeError):
        return []
    said = [f"{e.get('path', '')}: {e.get('message', '')}" for e in errors]
    return [x[:300] for x in said if not any(p.search(x) for p in _INEXPRESSIBLE.values())]


REFUSED: collections.Counter[str] = collections.Counter()


@functools.cache
def _body_validator(method: str, path: str) -> Draft202012Validator | None:
    spec = build_spec()
    content = spec["paths"][path][method.lower()].get("requestBody", {}).get("content", {})
    if "application/json" not in content:
        return None
    registry = Registry().with_resource("urn:spec", Resource.from_contents(
        spec, default_specification=DRAFT202012))
    # (a $ref, or an anyOf of them: the row and the columnar forms of a batch)
    schema = json.loads(json.dumps(content["application/json"]["schema"]).replace(
        '"#/components/', '"urn:spec#/components/'))
    return Draft202012Validator(schema, registry=registry)


def _sent_valid_body(case) -> bool:
    """Whether the body sent is valid by the document: the examples phase fills a composed
    example from every branch of a oneOf, which can make it invalid though marked positive."""
    validator = _body_validator(case.method, case.operation.path)
    return validator is None or validator.is_valid(case.body)


@schemathesis.check
def positive_data_accepted_unless_inexpressible(ctx, response, case):
    """positive_data_acceptance, except a refusal naming only INEXPRESSIBLE rules, or of a
    body the document itself refuses."""
    try:
        return positive_data_acceptance(ctx, response, case)
    except Failure:
        rules = inexpressible(response.status_code, response.content, case.body)
        if rules is None and _sent_valid_body(case):
            raise
        REFUSED.update(set(rules or ["an invalid body sent as a valid one"]))
        return None


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance, response_headers_conformance, negative_data_rejection,
          positive_data_accepted_unless_inexpressible, missing_required_header,
          unsupported_method, ignored_auth]


@schemathesis.serializer(XLSX)
def _xlsx_bytes(ctx, value):
    # generated "binary" bodies arrive as bytes or text: send them as they are
    return value if isinstance(value, bytes) else str(value).encode()


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """The document as the service on SQLite serves it (the cases are drawn from it), and
    (backend, app, admin headers) of the service on each backend: SQLite, and PostgreSQL when
    TEST_DATABASE_URL names a server, each database migrated and seeded."""
    from costmodel.sources.catalog import fixtures_dir
    from costmodel.store.seed import prepare
    made, backends = [], []
    sqlite = f"sqlite:///{tmp_path_factory.mktemp('db') / 'costmodel.db'}"
    databases = [("sqlite", sqlite, iter(()))]
    if os.environ.get("TEST_DATABASE_URL"):
        postgres = _postgres_database()
        databases.append(("postgresql", next(postgres), postgres))
    try:
        for backend, url, _ in databases:
            prepare(url, fixtures_dir())
            app = create_app({"DATABASE_URL": url, "OPEN_READS": False, "TESTING": True})
            made.append(app)
            with app.extensions["costmodel"].sessions() as session:
                row, token = key_create(session, "schemathesis", "admin")
                row.id = PROTECTED_KEY_ID  # never generated: DELETE /keys/{id} cannot revoke it
            backends.append((backend, app, {"Authorization": f"Bearer {token}"}))
        yield schemathesis.openapi.from_wsgi("/api/v1/openapi.json", made[0]), backends
    finally:
        for app in made:
            app.extensions["costmodel"].dispose()
        for _, _, cleanup in databases:
            for _ in cleanup:  # runs the generator's cleanup (the database dropped)
                pass


PROTECTED_KEY_ID = 1_987_654_321


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                         ids=["valid", "invalid"])
@pytest.mark.parametrize("method,path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_operation_conforms(api, method, path, mode):
    schema, backends = api
    operation = schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def run(case):
        for backend, app, headers in backends:  # the same request to each backend
            try:
                case.call_and_validate(checks=CHECKS, headers=headers, app=app)
            except Exception as exc:
                exc.add_note(f"backend: {backend}")
                raise

    try:
        run()
    except Unsatisfiable:  # e.g. a binary body (an .xlsx upload): nothing it could violate
        pytest.skip("no schema-violating request to generate")


# ---- make schemathesis: the command line, every phase and check, against gunicorn ----------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(database: str, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database, "COSTMODEL_RATE_LIMIT": "off",
           "COSTMODEL_HEAVY_PER_WORKER": "0", "COSTMODEL_OPEN_READS": "0"}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "costmodel.server:create_app()", "-b",
         f"127.0.0.1:{port}", "-k", "gthread", "-w", "2", "--threads", "4", "--log-level",
         "warning"], env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"gunicorn did not start: {log.read_text()[-2000:]}")


def _decoded(blob) -> str:
    if isinstance(blob, dict) and "$base64" in blob:
        return base64.b64decode(blob["$base64"]).decode(errors="replace")
    return "" if blob is None else str(blob)


def summarize(ndjson: Path) -> dict:
    """Cases by phase; failures by check (each with examples), refusals by inexpressible
    rule; the command line's own errors."""
    cases: collections.Counter[str] = collections.Counter()
    failures: dict[str, list] = collections.defaultdict(list)
    refused: collections.Counter[str] = collections.Counter()
    errors = []
    with ndjson.open() as f:
        for line in f:
            event = json.loads(line)
            if "NonFatalError" in event:
                errors.append(event["NonFatalError"].get("info", {}).get("message", "")[:300])
            done = event.get("ScenarioFinished")
            if not done:
                continue
            recorder = done["recorder"]
            for case_id, checks in (recorder.get("checks") or {}).items():
                cases[done["phase"]] += 1
                exchange = (recorder.get("interactions") or {}).get(case_id) or {}
                response = exchange.get("response") or {}
                body = _decoded(response.get("content"))
                meta = ((recorder.get("cases") or {}).get(case_id) or {}).get("value", {}) \
                    .get("meta") or {}
                positive = (meta.get("generation") or {}).get("mode") == "positive"
                request = exchange.get("request") or {}
                try:
                    sent = json.loads(_decoded(request.get("body")) or "null")
                except ValueError:
                    sent = None
                rules = inexpressible(response.get("status_code"), body, sent) \
                    if positive else None
                refused.update(set(rules or ()))
                for check in checks:
                    if check["status"] != "failure" or (
                            rules and check["name"].startswith("positive_data_accept")):
                        continue
                    failures[check["name"]].append({
                        "operation": recorder["label"], "phase": done["phase"],
                        "status": response.get("status_code"),
                        "request": f"{request.get('method')} {request.get('uri')} "
                                   f"{_decoded(request.get('body'))[:20_000]}",
                        "response": body[:500], "unmatched": _unmatched(body)})
    return {"cases": sum(cases.values()), "cases_by_phase": dict(cases),
            "failures": {k: len(v) for k, v in failures.items()},
            "failed_operations": {k: sorted({f["operation"] for f in v})
                                  for k, v in failures.items()},
            "examples": {k: v[:5] for k, v in failures.items()},
            "refused_by_inexpressible_rule": dict(refused), "errors": errors}


@pytest.mark.skipif(not FULL, reason="make schemathesis (COSTMODEL_SCHEMATHESIS_FULL=1)")
def test_full_run(database, tmp_path):
    from costmodel.store.db import make_engine, make_sessions
    engine = make_engine(database)
    with make_sessions(engine).begin() as session:
        row, token = key_create(session, "schemathesis-full", "admin")
        row.id = PROTECTED_KEY_ID
    engine.dispose()
    port = _free_port()
    server = _serve(database, port, tmp_path / "gunicorn.log")
    backend = "postgresql" if database.startswith("postgresql") else "sqlite"
    try:
        # an invalid request refused by gunicorn (414, 431: as HTML) is refused all the same
        config = tmp_path / "schemathesis.toml"
        config.write_text('[checks.negative_data_rejection]\nexpected-statuses = ["400", "401", '
                          '"403", "404", "405", "406", "409", "412", "413", "414", "415", '
                          '"422", "428", "429", "431", "5xx"]\n')
        cli = Path(sys.executable).with_name("schemathesis")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                   [str(ROOT / "tests"), str(ROOT / "tests" / "api")]),
               # this module: positive_data_accepted_unless_inexpressible for the built-in
               # check, so that fuzzing goes on past a refusal JSON Schema cannot state
               "SCHEMATHESIS_HOOKS": "test_api_schema"}
        run = subprocess.run(
            [str(cli), "--config-file", str(config), "run",
             f"http://127.0.0.1:{port}/api/v1/openapi.json", "--checks", "all",
             "--exclude-checks", "positive_data_acceptance",
             "--max-examples", str(EXAMPLES), "--seed", "1",
             "-H", f"Authorization: Bearer {token}",
             # the run would revoke its own key (the stateful phase reads its id from GET
             # /keys): revoking is tested in process (test_operation_conforms) instead
             "--exclude-operation-id", operation_id("DELETE", "/api/v1/keys/{key_id}", "keys"),
             "--report", "ndjson", "--report-dir", str(tmp_path), "--no-color",
             # a subset while looking into a finding: COSTMODEL_SCHEMATHESIS_PATHS=<regex>
             *(["--include-path-regex", PATHS] if PATHS else [])],
            capture_output=True, text=True, timeout=3600, env=env)
    finally:
        server.terminate()
        server.wait(timeout=30)
    found = list(tmp_path.glob("*.ndjson"))
    assert found, f"schemathesis failed to run:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    (ndjson,) = found
    summary = summarize(ndjson)
    tail = run.stdout[run.stdout.rfind("SUMMARY"):]
    summary["command_line_summary"] = tail[:3000]
    out = ROOT / "out"
    out.mkdir(exist_ok=True)
    (out / f"schemathesis-{backend}.json").write_text(json.dumps(summary, indent=2))
    print(f"\n{backend}: {summary['cases']} cases; failures {summary['failures']}; refused by "
          f"inexpressible rule {summary['refused_by_inexpressible_rule']}\n{tail}")
    assert not summary["failures"], json.dumps(summary["examples"], indent=1)[:6000]
