"""Clients generated from the served OpenAPI document, as a pricing tool builds them: a Python
client by openapi-python-client (default configuration) and TypeScript types by
openapi-typescript, compiled by tsc --strict. The document passes when the generator warns of
nothing, every operation is generated with each of its 2xx answers read, and every request
example the document lists type-checks against the generated types. The operations are then
called through the generated Python client against a live server (conftest's live_server),
their typed answers checked against the engine priced in process.

The tools are pinned in tests/api/client_generators/ and installed by `make test` (the Python
generator in .venv/gen, the npm packages in that folder's node_modules/). Where they are not
installed the module is skipped, unless COSTMODEL_REQUIRE_CLIENTS is set (.ci/run sets it):
then it fails."""
from __future__ import annotations

import ast
import bisect
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import typing
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import price_data

ROOT = Path(__file__).resolve().parents[2]
GENERATORS = ROOT / "tests" / "api" / "client_generators"
GEN_BIN = ROOT / ".venv" / "gen" / "bin"  # the generator's own venv (Makefile: GEN_VENV)
PYTHON_GENERATOR = GEN_BIN / "openapi-python-client"
NODE_BIN = GENERATORS / "node_modules" / ".bin"
OPENAPI_TYPESCRIPT = NODE_BIN / "openapi-typescript"
TSC = NODE_BIN / "tsc"

# the package the client is generated as (the name the generator gives it from the document's
# title); its folder goes on sys.path for the live calls
PACKAGE = "costmodel_pricing_api_client"
# the generator's configuration (--config): the default. A key set here is a tweak a pricing
# tool would have to know about; the contract is a document that needs none.
GENERATOR_CONFIG: dict[str, Any] = {}
# what the generator prints when it leaves something out (openapi_python_client/cli.py,
# parser/openapi.py, parser/properties/, parser/responses.py) or fails
WARNINGS = ("Warning", "WARNING", "Unable to process", "Could not", "will not be generated",
            "omitted", "Failure to process", "Skipping", "Error", "Traceback")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
JSON = "application/json"
API = "/api/v1"
GB300 = {"accelerator": "gb300", "operating_point": "deepseek-r1/gb300/peak"}
TIMEOUT = 300  # seconds, for each tool run


def require_clients() -> None:
    """Skip the module where the client generators are not installed, unless
    COSTMODEL_REQUIRE_CLIENTS is set (.ci/run sets it): then a missing tool fails the run
    instead of hiding the check."""
    missing = [str(p.relative_to(ROOT)) for p in (PYTHON_GENERATOR, OPENAPI_TYPESCRIPT, TSC)
               if not p.exists()]
    if shutil.which("node") is None:
        missing.append("node")
    if not missing:
        return
    why = f"the client generators are not installed ({', '.join(missing)}; make test " \
          f"installs them)"
    if os.environ.get("COSTMODEL_REQUIRE_CLIENTS"):
        raise RuntimeError(f"COSTMODEL_REQUIRE_CLIENTS is set but {why}")
    pytest.skip(why, allow_module_level=True)


require_clients()


def run(args: list, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """A tool's run, its stdout and stderr together, bounded."""
    return subprocess.run([str(a) for a in args], cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT,
                          env={**os.environ, "NO_COLOR": "1", "COLUMNS": "120",
                               # a failing generator's traceback as Python prints it (typer)
                               "_TYPER_STANDARD_TRACEBACK": "1", **env})


# ---- the document, and what each tool makes of it -------------------------------------------

@dataclass(frozen=True)
class Document:
    path: Path  # openapi.json, as served, in a folder of its own
    spec: dict

    def operations(self):
        """(method, path, operation) of every operation."""
        for path, item in self.spec["paths"].items():
            for method in METHODS:
                if method in item:
                    yield method, path, item[method]


@pytest.fixture(scope="module")
def document(db, tmp_path_factory) -> Document:
    """The OpenAPI document as GET /api/v1/openapi.json serves it, byte for byte."""
    from costmodel.server import create_app
    app = create_app({"DATABASE_URL": db, "OPEN_READS": False, "TESTING": True})
    try:
        served = app.test_client().get(f"{API}/openapi.json")
    finally:
        app.extensions["costmodel"].dispose()
    assert served.status_code == 200
    path = tmp_path_factory.mktemp("clients") / "openapi.json"
    path.write_bytes(served.get_data())
    return Document(path, json.loads(served.get_data()))


@dataclass(frozen=True)
class Generated:
    returncode: int
    output: str  # stdout and stderr
    package: Path  # the generated package's folder

    def report(self) -> str:
        return f"openapi-python-client (exit {self.returncode}) said:\n{self.output}"


@pytest.fixture(scope="module")
def python_client(document) -> Generated:
    """`openapi-python-client generate --meta none`: a plain package (no pyproject.toml around
    it), importable from its parent folder once generated."""
    folder = document.path.parent
    args = [PYTHON_GENERATOR, "generate", "--path", document.path,
            "--output-path", folder / PACKAGE, "--meta", "none"]
    if GENERATOR_CONFIG:
        config = folder / "openapi-python-client.json"  # (JSON is YAML)
        config.write_text(json.dumps(GENERATOR_CONFIG))
        args += ["--config", config]
    # the generator's post hooks run ruff on what it wrote: its own pinned ruff, from its venv
    out = run(args, folder, PATH=f"{GEN_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return Generated(out.returncode, out.stdout, folder / PACKAGE)


# the generator's own names for an operation's module, computed by the generator's code (in its
# venv): api/<tag>/<operation>.py, from the first tag and the operationId
# (openapi_python_client/parser/openapi.py: EndpointCollection.from_data, Endpoint.from_data;
# __init__.py: Project._build_api)
NAMES = """
import json, sys
from openapi_python_client.parser.openapi import generate_operation_id
from openapi_python_client.schema.untrusted_string import UntrustedString
from openapi_python_client.strings import PythonIdentifier

spec = json.load(open(sys.argv[1], encoding="utf-8"))
prefix, methods = sys.argv[2], json.loads(sys.argv[3])
out = []
for path, item in spec["paths"].items():
    for method in methods:
        op = item.get(method)
        if op is None:
            continue
        tag = PythonIdentifier((op.get("tags") or ["default"])[0], prefix="tag")
        name = PythonIdentifier(op["operationId"], prefix=prefix) if op.get("operationId") \\
            else generate_operation_id(path=UntrustedString(path), method=method, prefix=prefix)
        out.append([method, path, f"api.{tag}.{PythonIdentifier(name, prefix=prefix)}"])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def modules(document) -> dict[tuple[str, str], str]:
    """(method, path) -> the operation's module in the generated package, dotted from it."""
    prefix = GENERATOR_CONFIG.get("field_prefix", "field_")
    out = run([GEN_BIN / "python", "-c", NAMES, document.path, prefix, json.dumps(METHODS)],
              document.path.parent)
    assert out.returncode == 0, out.stdout
    return {(method, path): module for method, path, module in json.loads(out.stdout)}


@dataclass(frozen=True)
class Typed:
    returncode: int
    output: str
    schema: Path  # schema.d.ts


@pytest.fixture(scope="module")
def typescript_types(document) -> Typed:
    """`openapi-typescript openapi.json -o schema.d.ts`."""
    folder = document.path.parent
    out = run([OPENAPI_TYPESCRIPT, document.path.name, "-o", "schema.d.ts"], folder)
    return Typed(out.returncode, out.stdout, folder / "schema.d.ts")


# ---- 1. the Python generator warns of nothing -------------------------------------------------

def test_the_python_client_is_generated_without_a_warning(python_client):
    said = [w for w in WARNINGS if w in python_client.output]
    if python_client.returncode != 0 or said:
        pytest.fail(f"the generator warned ({', '.join(said)}); {python_client.report()}",
                    pytrace=False)


# ---- 2. every operation is generated, each 2xx answer read ----------------------------------

def _reads(module: Path) -> dict[int, str]:
    """Status code -> the source of ``_parse_response``'s branch for it."""
    text = module.read_text(encoding="utf-8")
    parse = [f for f in ast.parse(text).body
             if isinstance(f, ast.FunctionDef) and f.name == "_parse_response"]
    out = {}
    for node in (n for f in parse for n in ast.walk(f)):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) \
                and ast.unparse(node.test.left) == "response.status_code" \
                and isinstance(node.test.comparators[0], ast.Constant):
            out[node.test.comparators[0].value] = "\n".join(ast.unparse(s) for s in node.body)
    return out


def _wanted_read(content: dict) -> str:
    """What a 2xx answer's branch reads: the JSON when one of its media types is JSON (the
    others are alternatives chosen by Accept: CSV, PDF), else its bytes (a workbook) or
    text."""
    if any(t == JSON or t.endswith("+json") for t in content):
        return "response.json()"
    if any(m.get("schema", {}).get("format") == "binary" for m in content.values()):
        return "response.content"
    return "response.text"


def test_every_operation_is_generated_with_its_answers(document, python_client, modules):
    missing, unread = [], []
    for method, path, op in document.operations():
        module = python_client.package.joinpath(*modules[method, path].split(".")) \
            .with_suffix(".py")
        if not module.exists():
            missing.append(f"{method.upper()} {path} (no {module.relative_to(module.parents[2])})")
            continue
        reads = _reads(module)
        for status, answer in op["responses"].items():
            if not (status.isdigit() and 200 <= int(status) < 300 and answer.get("content")):
                continue
            want = _wanted_read(answer["content"])
            if want not in reads.get(int(status), ""):
                unread.append(f"{method.upper()} {path} {status} "
                              f"({', '.join(answer['content'])}): not read as {want}")
    if missing or unread:
        pytest.fail("operations left out:\n  " + "\n  ".join(missing or ["none"])
                    + "\nanswers not read:\n  " + "\n  ".join(unread or ["none"])
                    + f"\n{python_client.report()}", pytrace=False)


# ---- 3. the TypeScript types: every request example checks, the price answer is typed -------

def _examples(document: Document):
    """(method, path, where, example) of every request example the document lists: the
    referenced schema's ``examples``, the media type's ``example`` and ``examples``."""
    schemas = document.spec.get("components", {}).get("schemas", {})
    for method, path, op in document.operations():
        media = op.get("requestBody", {}).get("content", {}).get(JSON)
        if media is None:
            continue
        schema = media.get("schema", {})
        name = schema["$ref"].rsplit("/", 1)[1] if "$ref" in schema else "inline schema"
        if "$ref" in schema:
            schema = schemas[name]
        for i, example in enumerate(schema.get("examples", [])):
            yield method, path, f"{name} examples[{i}]", example
        if "example" in media:
            yield method, path, "media type example", media["example"]
        for key, example in media.get("examples", {}).items():
            if "value" in example:
                yield method, path, f"media type examples.{key}", example["value"]


PRICE_ANSWER = """
// the /api/v1/price answer as a pricing tool reads it: a typed answer, not any
type IsAny<T> = 0 extends 1 & T ? true : false;
type PriceAnswer =
    paths["/api/v1/price"]["post"]["responses"][200]["content"]["application/json"];
export const priceAnswerIsTyped: IsAny<PriceAnswer> extends true ? never : true = true;
export function costPerMtokTotal(answer: PriceAnswer): string {
    const total = answer.cost_per_mtok?.["total"];
    if (total === undefined) {
        return "no total";
    }
    const value: number | null = total.value;
    const unit: string = total.unit;
    return `${value} ${unit}`;
}
"""


def test_typescript_types_check_every_request_example(document, typescript_types):
    if typescript_types.returncode != 0 or "warn" in typescript_types.output.lower():
        pytest.fail(f"openapi-typescript (exit {typescript_types.returncode}) said:\n"
                    f"{typescript_types.output}", pytrace=False)
    text = 'import type { paths } from "./schema";\n'
    where: list[tuple[int, str]] = []  # (its first line, what the example is)
    for i, (method, path, what, example) in enumerate(_examples(document)):
        label = f"{method.upper()} {path}: {what}"
        body = f'NonNullable<paths[{json.dumps(path)}]["{method}"]["requestBody"]>' \
               f'["content"]["{JSON}"]'
        text += f"\n// {label}\n"
        where.append((text.count("\n") + 1, label))
        text += f"export const example{i}: {body} = {json.dumps(example, indent=4)};\n"
    assert where, "the document lists no request example"
    where.append((text.count("\n") + 1, "the price answer function"))
    source = document.path.parent / "examples.ts"
    source.write_text(text + PRICE_ANSWER, encoding="utf-8")
    out = run([TSC, "--strict", "--noEmit", "--target", "es2020", "--module", "esnext",
               "--moduleResolution", "bundler", source.name],
              source.parent)
    if out.returncode != 0:
        firsts = [first for first, _ in where]
        failed = sorted({where[bisect.bisect_right(firsts, int(line)) - 1][1]
                         for line in re.findall(r"^examples\.ts\((\d+),", out.stdout, re.M)})
        pytest.fail(f"tsc --strict (exit {out.returncode}) refused {len(failed)} of "
                    f"{len(where)} (examples, and the price answer function):\n  "
                    + "\n  ".join(failed or ["none"])
                    + f"\n{out.stdout}", pytrace=False)


# ---- the generated client, called against a live server -------------------------------------

@pytest.fixture(scope="module")
def generated(python_client) -> ModuleType:
    """The generated package, imported (its folder on sys.path while the module runs)."""
    if not (python_client.package / "__init__.py").exists():
        pytest.fail(f"no client was generated; {python_client.report()}", pytrace=False)
    folder = str(python_client.package.parent)
    sys.path.insert(0, folder)
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(folder)
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def api(generated, live_server):
    """The generated AuthenticatedClient on the live server with an editor key: it sends
    ``Authorization: Bearer <key>``, the document's ``bearer`` scheme."""
    import httpx
    url, key = live_server
    client = importlib.import_module(f"{PACKAGE}.client")
    with client.AuthenticatedClient(base_url=url, token=key, timeout=httpx.Timeout(60),
                                    raise_on_unexpected_status=True) as c:
        yield c


@pytest.fixture(scope="module")
def operation(generated, modules):
    """``operation(method, path)``: the operation's generated module (sync, sync_detailed)."""
    def _module(method: str, path: str) -> ModuleType:
        name = f"{PACKAGE}.{modules[method, path]}"
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            pytest.fail(f"{method.upper()} {path} was not generated ({name})", pytrace=False)
    return _module


def body_of(module: ModuleType, data: dict):
    """The operation's body built from JSON, as a tool holding JSON builds it: the first type
    of the body (a class, or each class of a union) whose from_dict gives the same JSON back."""
    hint = typing.get_type_hints(module.sync_detailed)["body"]
    for kind in typing.get_args(hint) or (hint,):
        if not hasattr(kind, "from_dict"):
            continue
        try:
            body = kind.from_dict(data)
        except (TypeError, ValueError, KeyError, AttributeError):
            continue
        if body.to_dict() == data:
            return body
    pytest.fail(f"no type of {hint} reads {data} back as it is", pytrace=False)


def served_json(live_server, path: str) -> Any:
    """The server's JSON for a GET, read without the generated client."""
    url, key = live_server
    ask = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(ask, timeout=60) as answer:
        return json.loads(answer.read())


ROWS = [{"electricity.price": "0.05 USD/kWh"},
        {"electricity.price": "0.10 USD/kWh", "utilisation": 0.6},
        {"power.boundary": "facility"}]
OUTPUTS = ["cost_per_mtok_total", "cost_per_mtok_energy", "tokens_per_kwh"]


def test_a_batch_through_the_generated_client(operation, api):
    batch = operation("post", f"{API}/price/batch")
    answer = batch.sync_detailed(client=api, body=body_of(batch, {
        "scenario": GB300, "overrides": ROWS, "outputs": OUTPUTS}))
    assert answer.status_code == 200, answer.content
    out = answer.parsed  # the typed answer (BatchOut), not a dict
    assert not isinstance(out, dict)
    assert (out.rows, out.priced, out.outputs, out.errors) == (3, 3, OUTPUTS, [])
    for name in OUTPUTS:
        column = out.columns[name]
        for i, row in enumerate(ROWS):
            want = price_data(GB300, row.items()).value(name)
            assert column.values[i] == pytest.approx(want, rel=1e-12, abs=0), (name, row)
    assert out.columns["cost_per_mtok_total"].unit == "USD/Mtok"
    assert out.columns["tokens_per_kwh"].unit == "token/kWh"
    # a failed row's words are under message, as in every problem's errors[]
    failed = batch.sync_detailed(client=api, body=body_of(batch, {
        "scenario": GB300, "overrides": [*ROWS, {"utilisation": 1.5}], "outputs": OUTPUTS}))
    assert failed.status_code == 200, failed.content
    (error,) = failed.parsed.errors
    assert (error.row, error.path, error.message) == (3, "overrides[3].utilisation",
                                                      "must be at most 1, got 1.5")
    assert error.detail == error.message  # the deprecated alias, for a release


def test_a_columnar_batch_through_the_generated_client(operation, api):
    """The columnar form (ColumnsRequest) through the same generated operation: the body's
    union takes it, the typed answer is BatchOut with sources in place of provenance."""
    batch = operation("post", f"{API}/price/batch")
    prices, util = [0.05, 0.08, 0.12], [60, 75, 90]
    answer = batch.sync_detailed(client=api, body=body_of(batch, {
        "scenario": GB300, "outputs": OUTPUTS,
        "columns": {"electricity.price": {"unit": "USD/kWh", "values": prices},
                    "utilisation": {"unit": "%", "values": util}}}))
    assert answer.status_code == 200, answer.content
    out = answer.parsed
    assert not isinstance(out, dict)
    assert (out.rows, out.priced, out.outputs, out.errors) == (3, 3, OUTPUTS, [])
    for name in OUTPUTS:
        for i, (p, u) in enumerate(zip(prices, util, strict=True)):
            want = price_data(GB300, [("electricity.price", {"value": p, "unit": "USD/kWh"}),
                                      ("utilisation", {"value": u, "unit": "%"})]).value(name)
            assert out.columns[name].values[i] == pytest.approx(want, rel=1e-12, abs=0)
    assert out.sources["utilisation"] == "columns.utilisation [%]"


def test_the_catalog_through_the_generated_client(operation, api, live_server):
    from costmodel.sources.catalog import Catalog
    listing = operation("get", f"{API}/accelerators")
    page = listing.sync(client=api, limit=200)
    assert not isinstance(page, dict)
    catalog = Catalog.load()
    keys = catalog.keys("accelerator")
    assert (page.total, page.limit, page.offset) == (len(keys), 200, 0)
    assert [item.key for item in page.items] == keys
    for item in page.items:
        assert item.data.to_dict() == catalog.get("accelerator", item.key, "").data, item.key
    # read back as served: the typed page loses nothing of the JSON
    assert page.to_dict() == served_json(live_server, f"{API}/accelerators?limit=200")
    found = listing.sync(client=api, q="gb300")
    assert "gb300" in [item.key for item in found.items]


def test_saved_scenarios_through_the_generated_client(operation, api, live_server):
    create = operation("post", f"{API}/scenarios")
    saved = create.sync_detailed(client=api, body=body_of(create, {
        "name": "generated client GB300", "scenario": GB300}))
    assert saved.status_code == 201, saved.content
    revision = saved.parsed
    assert revision.number == 1
    want = price_data(GB300)
    for name in ("total", "energy", "capex"):
        got = getattr(revision.result.cost_per_mtok, name)
        assert got.value == pytest.approx(want.value(f"cost_per_mtok_{name}"), rel=1e-12,
                                          abs=0), name
        assert got.unit == "USD/Mtok"
    page = operation("get", f"{API}/scenarios").sync(client=api, q="generated client")
    assert [(s.id, s.name, s.latest_revision) for s in page.items] == \
        [(revision.scenario_id, "generated client GB300", 1)]
    latest = operation("get", f"{API}/scenarios/{{scenario_id}}").sync(
        client=api, scenario_id=revision.scenario_id)
    assert latest.to_dict() == revision.to_dict()
    assert latest.to_dict() == served_json(live_server,
                                           f"{API}/scenarios/{revision.scenario_id}")


def served(live_server, method: str, path: str, body: dict | None = None) -> Any:
    """The server's JSON answer, asked without the generated client."""
    url, key = live_server
    ask = urllib.request.Request(f"{url}{path}", method=method.upper(),
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {key}",
                                          "Content-Type": JSON})
    with urllib.request.urlopen(ask, timeout=60) as answer:
        return json.loads(answer.read())


JALAPENO = {"accelerator": "jalapeno", "operating_point": "deepseek-r1/jalapeno/peak"}
CHEAPER_POWER = {"electricity.price": "0.05 USD/kWh"}


def test_a_price_inline_and_saved_through_the_generated_client(operation, api, live_server):
    """An inline scenario and a saved one plus overrides: one request type for both (the
    saved one by its id), typed answers equal to the engine's figures."""
    price = operation("post", f"{API}/price")
    inline = price.sync(client=api, body=body_of(price, {"scenario": GB300}))
    assert not isinstance(inline, dict)
    want = price_data(GB300)
    # GB300 at peak, chip boundary: 11,781 token/s/kW x 1.4 kW = 16,493.4 token/s
    assert inline.throughput.value == pytest.approx(11_781 * 1.4, rel=1e-12)
    for name in ("total", "energy", "capex", "opex"):
        assert getattr(inline.cost_per_mtok, name).value == pytest.approx(
            want.value(f"cost_per_mtok_{name}"), rel=1e-12, abs=0), name
    assert inline.price_per_mtok.total.value == pytest.approx(
        want.value("price_per_mtok_total"), rel=1e-12, abs=0)

    create = operation("post", f"{API}/scenarios")
    saved = create.sync(client=api, body=body_of(create, {"name": "generated client saved",
                                                          "scenario": GB300}))
    again = price.sync(client=api, body=body_of(price, {
        "scenario_id": saved.scenario_id, "overrides": CHEAPER_POWER}))
    cheaper = price_data(GB300, CHEAPER_POWER.items())
    assert again.cost_per_mtok.total.value == pytest.approx(
        cheaper.value("cost_per_mtok_total"), rel=1e-12, abs=0)
    # energy at 0.05 USD/kWh: 1.4 kW x 0.05 / (16,493.4 x 3,600 / 1e6) Mtok an hour
    assert again.cost_per_mtok.energy.value == pytest.approx(
        1.4 * 0.05 / (11_781 * 1.4 * 3600 / 1e6), rel=1e-9)
    assert again.to_dict() == served(live_server, "post", f"{API}/price", {
        "scenario_id": saved.scenario_id, "overrides": CHEAPER_POWER})


def test_a_comparison_through_the_generated_client(operation, api, live_server):
    compare = operation("post", f"{API}/compare")
    body = {"scenarios": [{"scenario": GB300}, {"scenario": JALAPENO}]}
    out = compare.sync(client=api, body=body_of(compare, body))
    assert not isinstance(out, dict)
    totals = [s.cost_per_mtok.total.value for s in out.scenarios]
    assert totals == pytest.approx([price_data(GB300).value("cost_per_mtok_total"),
                                    price_data(JALAPENO).value("cost_per_mtok_total")],
                                   rel=1e-12, abs=0)
    assert [s.throughput_per_kw.value for s in out.scenarios] == pytest.approx(
        [11_781, price_data(JALAPENO).value("throughput_per_kw")], rel=1e-12)
    assert out.to_dict() == served(live_server, "post", f"{API}/compare", body)


def test_a_plan_through_the_generated_client(operation, api, live_server):
    plan = operation("post", f"{API}/plan")
    body = {"scenario": GB300, "demand": "2.5e6 token/s", "availability": 0.99}
    out = plan.sync(client=api, body=body_of(plan, body))
    assert not isinstance(out, dict)
    # 2.5e6 / (16,493.4 x 0.99) = 153.1 -> 154 accelerators; 8 a node -> 20; 4 a rack -> 5
    assert (out.accelerators, out.nodes, out.racks) == (154, 20, 5)
    assert out.throughput.value == pytest.approx(154 * 16_493.4, rel=1e-12)
    assert out.power.value == pytest.approx(154 * 1400, rel=1e-12)  # [W], chip boundary
    assert out.to_dict() == served(live_server, "post", f"{API}/plan", body)


def test_a_decision_through_the_generated_client(operation, api, live_server):
    """The document's own example: a capacity offer, a per-Mtok offer and our H100 build for
    50,000 Mtok a month at 100 token/s/user."""
    from costmodel.api.schemas import QuotesDecideRequest
    body = QuotesDecideRequest.model_config["json_schema_extra"]["examples"][0]
    decide = operation("post", f"{API}/quotes/decide")
    out = decide.sync(client=api, body=body_of(decide, body))
    assert not isinstance(out, dict)
    pick = out.recommendation
    # the example names no build: it is called after its accelerator and curve
    assert (pick.offer, pick.next_) == (
        "NVIDIA H100 SXM5 80GB, curve h100/gpt-oss-120b/vllm/fp8/8192x1024/none/agg", "api-tokens")
    # the next offer, per Mtok at 0.60 USD in and out: 50,000 x 0.60 = 30,000 USD a month
    assert pick.monthly_cost.value + pick.margin.value == pytest.approx(30_000, rel=1e-12)
    assert out.to_dict() == served(live_server, "post", f"{API}/quotes/decide", body)


def test_workbooks_download_through_the_generated_client(operation, api):
    """A workbook (POST /workbook, and a saved scenario's) comes back as bytes whose formulas,
    read back by the engine (reprice), give the engine's figures."""
    from costmodel import app as engine
    workbook = operation("post", f"{API}/workbook")
    answer = workbook.sync_detailed(client=api, body=body_of(workbook, {
        "scenarios": [{"scenario": GB300}, {"scenario": JALAPENO}]}))
    assert answer.status_code == 200, answer.content
    content = answer.parsed.payload.read()
    assert content[:2] == b"PK" and answer.headers["content-type"].startswith(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    read = engine.reprice(content, name="generated")
    assert [r.value("cost_per_mtok_total") for r in read.results] == pytest.approx(
        [price_data(GB300).value("cost_per_mtok_total"),
         price_data(JALAPENO).value("cost_per_mtok_total")], rel=1e-9)

    create = operation("post", f"{API}/scenarios")
    saved = create.sync(client=api, body=body_of(create, {"name": "generated client book",
                                                          "scenario": JALAPENO}))
    book = operation("get", f"{API}/scenarios/{{scenario_id}}/workbook").sync_detailed(
        client=api, scenario_id=saved.scenario_id)
    assert book.status_code == 200
    read = engine.reprice(book.parsed.payload.read(), name="saved")
    assert read.results[0].value("cost_per_mtok_total") == pytest.approx(
        price_data(JALAPENO).value("cost_per_mtok_total"), rel=1e-9)


# ---- the docs' blocks (docs/pricing-tools.md, "Generated clients") ---------------------------

def test_profit_through_the_generated_client(operation, api, live_server):
    """Two systems at one market, typed answers: the hand figures (tests/profit_support.py)."""
    from profit_support import MARKET, OWNED, PROFIT, PROFIT_GW_YEAR, RENTED
    profit = operation("post", f"{API}/profit")
    body = {"scenarios": [{"scenario": OWNED}, {"scenario": RENTED}], "market": MARKET}
    out = profit.sync(client=api, body=body_of(profit, body))
    assert not isinstance(out, dict)
    for s in out.systems:
        assert s.profit_per_hour.value == pytest.approx(PROFIT[s.scenario], rel=1e-12)
        assert s.profit_per_gw_year.value == pytest.approx(PROFIT_GW_YEAR[s.scenario],
                                                           rel=1e-12)
        assert s.break_even.factor == pytest.approx(
            s.cost_per_hour.value / s.net_revenue_per_hour.value, rel=1e-12)
    assert out.most_profitable == "owned"
    assert out.to_dict() == served(live_server, "post", f"{API}/profit", body)


def docs_block(language: str) -> str:
    """The first ``language`` code block after the heading "Generated clients"."""
    text = (ROOT / "docs" / "pricing-tools.md").read_text(encoding="utf-8")
    section = text[text.index("## Generated clients"):]
    return re.search(rf"```{language}\n(.*?)```", section, re.S).group(1)


def test_the_docs_python_block_runs_on_the_generated_client(python_client, live_server):
    assert (python_client.package / "__init__.py").exists(), python_client.report()
    url, key = live_server
    out = subprocess.run([sys.executable, "-c", docs_block("python")], capture_output=True,
                         text=True, timeout=120,
                         env={**os.environ, "COSTMODEL_URL": url, "COSTMODEL_KEY": key,
                              "PYTHONPATH": str(python_client.package.parent)})
    assert out.returncode == 0, out.stderr
    value, unit, boundary = re.fullmatch(r"([\d.]+) (\S+), (\w+) boundary\n",
                                         out.stdout).groups()
    want = price_data(GB300, CHEAPER_POWER.items()).value("cost_per_mtok_total")
    assert float(value) == pytest.approx(want, abs=5e-7)  # printed to 6 decimals
    assert (unit, boundary) == ("USD/Mtok", "chip")


def test_the_docs_typescript_block_compiles_under_strict(typescript_types):
    assert typescript_types.returncode == 0, typescript_types.output
    source = typescript_types.schema.with_name("docs_block.ts")
    source.write_text(docs_block("typescript"), encoding="utf-8")
    out = run([TSC, "--strict", "--noEmit", "--target", "es2020", "--module", "esnext",
               "--moduleResolution", "bundler", source.name], source.parent)
    assert out.returncode == 0, out.stdout
