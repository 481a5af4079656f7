# Everything runs from a local virtualenv built on first use (needs only Python 3.11+).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CK     := $(shell cksum pyproject.toml | cut -d' ' -f1)
STAMP  := $(VENV)/.installed-test-$(CK)
RUN_STAMP := $(VENV)/.installed-run-$(CK)

# The client generators that tests/api/test_generated_clients.py runs on the served OpenAPI
# document, pinned in tests/api/client_generators/: openapi-python-client in a venv of its own
# (requirements.txt; its dependencies are not the project's), openapi-typescript and typescript
# from package-lock.json (npm ci, into that folder's node_modules/). Each stamp is named after
# the checksum of its pins, and lies inside what it stamps: a venv or node_modules removed by
# hand is installed again.
GENERATORS := tests/api/client_generators
GEN_VENV   := $(VENV)/gen
GEN_PINS   := $(GENERATORS)/requirements.txt
NPM_PINS   := $(GENERATORS)/package.json $(GENERATORS)/package-lock.json
GEN_STAMP  := $(GEN_VENV)/.installed-$(shell cat $(GEN_PINS) | cksum | cut -d' ' -f1)
NPM_STAMP  := $(GENERATORS)/node_modules/.installed-$(shell cat $(NPM_PINS) | cksum | cut -d' ' -f1)

PUBLISHED := fixtures/scenarios/published
# the port `make run` serves on: make run PORT=8010 when 8000 is taken
PORT ?= 8000
# the part of a report before its breakdown: the answer (the full reports go to out/)
ANSWER := awk '/^Cost breakdown/{exit} {print}'

.PHONY: run test bench clean

# An editable install compiles nothing, and where PYTHONDONTWRITEBYTECODE is set (as on the CI
# machines) every command would compile the package from source again, about 0.1 s of each
# start: compile it once, as a wheel install does (compileall skips what is up to date).
BYTECODE := $(BIN)/python -m compileall -q costmodel

# `make run` installs the package alone; `make test` adds the test extras (Playwright,
# schemathesis, hypothesis...)
$(RUN_STAMP): pyproject.toml
	rm -f $(VENV)/.installed-run-*
	@if [ ! -e $(STAMP) ]; then $(PYTHON) -m venv $(VENV) && $(BIN)/python -m pip install \
	    --quiet --disable-pip-version-check -e .; fi
	touch $(RUN_STAMP)

$(STAMP): pyproject.toml
	rm -f $(VENV)/.installed-test-*
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

$(GEN_STAMP): $(GEN_PINS)
	rm -rf $(GEN_VENV)
	$(PYTHON) -m venv $(GEN_VENV)
	$(GEN_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r $(GEN_PINS)
	touch $(GEN_STAMP)

$(NPM_STAMP): $(NPM_PINS)
	cd $(GENERATORS) && npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

# The main job: price the sample TCO scenario, a time-of-use tariff sample (with its what-if,
# in EUR), the published DeepSeek R1 comparisons, an agent's task on three curves (each answer printed, the full reports
# written to out/*.txt), write sample workbooks (live formulas) to out/, then serve the web
# pages and the pricing API on http://127.0.0.1:$(PORT) (default 8000; SQLite file costmodel.db,
# migrated and seeded from fixtures/).
run: $(RUN_STAMP)
	@$(BYTECODE)
	@mkdir -p out
	@$(BIN)/costmodel price fixtures/scenarios/sample-tco.toml > out/sample-tco.txt
	@$(ANSWER) out/sample-tco.txt
	@$(BIN)/costmodel price fixtures/scenarios/sample-tou.toml --flexible-share 0.3 \
	    > out/sample-tou.txt
	@$(ANSWER) out/sample-tou.txt; grep '^What if' out/sample-tou.txt
	@echo
	@$(BIN)/costmodel compare $(PUBLISHED)/deepseek-r1_gb300_peak.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_peak.toml \
	    $(PUBLISHED)/deepseek-r1_gb300_matched.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_matched.toml > out/deepseek-r1-comparison.txt
	@$(ANSWER) out/deepseek-r1-comparison.txt
	@echo
	@$(BIN)/costmodel task fixtures/scenarios/curve-gpt-oss-120b-h100.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-b200.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-mi300x.toml \
	    --task fixtures/tasks/coding-agent.toml > out/agent-task.txt
	@awk '/^=> Cheapest/{print; exit} {print}' out/agent-task.txt
	@$(BIN)/costmodel chargeback fixtures/chargeback/usage.csv --fleet fixtures/chargeback/fleet.toml \
	    --workbook out/chargeback.xlsx > out/chargeback.txt
	@awk '/^   Check:/{print; exit} {print}' out/chargeback.txt
	@echo
	@$(BIN)/costmodel workbook fixtures/scenarios/sample-tco.toml -o out/sample-tco.xlsx
	@$(BIN)/costmodel workbook fixtures/scenarios/sample-tou.toml -o out/sample-tou.xlsx
	@$(BIN)/costmodel workbook --matched fixtures/scenarios/curve-gpt-oss-120b-h100.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-b200.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-mi300x.toml -o out/matched-comparison.xlsx
	@echo
	@echo "Full reports: out/sample-tco.txt, out/sample-tou.txt, out/deepseek-r1-comparison.txt,"
	@echo "out/agent-task.txt (an agent's task on three systems), out/chargeback.txt (a month's"
	@echo "chargeback of the example fleet; its workbook out/chargeback.xlsx)."
	@echo "Open http://127.0.0.1:$(PORT)/ in a browser: Price, Compare, Task, Plan, Quotes,"
	@echo "Chargeback, Saved scenarios and Sensitivity pages (API docs at http://127.0.0.1:$(PORT)/api/v1/docs). Ctrl-C stops it."
	@$(BIN)/costmodel serve --host 127.0.0.1 --port $(PORT)

# The docs site (mkdocs.yml, docs/) is built with --strict first: a broken link or anchor fails.
# The tests run on two workers (pytest-xdist; each module's tests on one of them, in order:
# tests/conftest.py); `make test PYTEST_WORKERS=0` runs them in this one process.
PYTEST_WORKERS ?= 2
test: $(STAMP) $(GEN_STAMP) $(NPM_STAMP)
	$(BYTECODE)
	$(BIN)/ruff check costmodel tests bench docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(VENV)/site
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS)

bench: $(STAMP)
	$(BYTECODE)
	$(BIN)/python bench/cli.py
	$(BIN)/python bench/sweep.py
	$(BIN)/python bench/frontier.py
	$(BIN)/python bench/workbook.py
	$(BIN)/python bench/decision.py
	$(BIN)/python bench/workbooks.py
	$(BIN)/python bench/montecarlo.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/metrics.py
	$(BIN)/python bench/slowclients.py
	$(BIN)/python bench/hosts.py
	$(BIN)/python bench/pages.py
	$(BIN)/python bench/usage.py

# The full property-based run over the OpenAPI document (docs/operations.md, API contract): schemathesis's
# command line with every phase and check, 200 examples an operation (COSTMODEL_SCHEMATHESIS_
# EXAMPLES), against gunicorn on SQLite and, when TEST_DATABASE_URL names a server, PostgreSQL;
# each backend's summary in out/schemathesis-<backend>.json. About 70 minutes for both on two
# cores: outside CI.
.PHONY: schemathesis
schemathesis: $(STAMP)
	COSTMODEL_SCHEMATHESIS_FULL=1 \
	COSTMODEL_SCHEMATHESIS_EXAMPLES=$${COSTMODEL_SCHEMATHESIS_EXAMPLES:-200} \
	    $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/api/test_api_schema.py -k test_full_run

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache $(GENERATORS)/node_modules
