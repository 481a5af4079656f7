# Everything runs from a local virtualenv built on first use (needs only Python 3.11+).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)

PUBLISHED := fixtures/scenarios/published

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	rm -f $(VENV)/.installed-*
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

# The main job: price the sample TCO scenario, a time-of-use tariff sample (with its what-if,
# in EUR) and the published DeepSeek R1 comparisons,
# write sample workbooks (live formulas) to out/, then serve the web pages and the pricing API
# on http://127.0.0.1:8000 (SQLite file costmodel.db, migrated and seeded from fixtures/).
run: $(STAMP)
	$(BIN)/costmodel price fixtures/scenarios/sample-tco.toml
	@echo
	$(BIN)/costmodel price fixtures/scenarios/sample-tou.toml --flexible-share 0.3
	@echo
	$(BIN)/costmodel compare $(PUBLISHED)/deepseek-r1_gb300_peak.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_peak.toml \
	    $(PUBLISHED)/deepseek-r1_gb300_matched.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_matched.toml
	@mkdir -p out
	$(BIN)/costmodel workbook fixtures/scenarios/sample-tco.toml -o out/sample-tco.xlsx
	$(BIN)/costmodel workbook fixtures/scenarios/sample-tou.toml -o out/sample-tou.xlsx
	$(BIN)/costmodel workbook --matched fixtures/scenarios/curve-gpt-oss-120b-h100.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-b200.toml \
	    fixtures/scenarios/curve-gpt-oss-120b-mi300x.toml -o out/matched-comparison.xlsx
	@echo
	@echo "Open http://127.0.0.1:8000/ in a browser: Price, Compare, Quotes, Saved scenarios and"
	@echo "Sensitivity pages (API docs at http://127.0.0.1:8000/api/v1/docs). Ctrl-C stops it."
	$(BIN)/costmodel serve --host 127.0.0.1 --port 8000

# The docs site (mkdocs.yml, docs/) is built with --strict first: a broken link or anchor fails.
test: $(STAMP)
	$(BIN)/ruff check costmodel tests bench docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(VENV)/site
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/sweep.py
	$(BIN)/python bench/frontier.py
	$(BIN)/python bench/workbook.py
	$(BIN)/python bench/montecarlo.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/slowclients.py
	$(BIN)/python bench/pages.py

# The full property-based run over the OpenAPI document (docs/operations.md, API contract): schemathesis's
# command line with every phase and check, 200 examples an operation (COSTMODEL_SCHEMATHESIS_
# EXAMPLES), against gunicorn on SQLite and, when TEST_DATABASE_URL names a server, PostgreSQL;
# each backend's summary in out/schemathesis-<backend>.json. Several minutes a backend.
.PHONY: schemathesis
schemathesis: $(STAMP)
	COSTMODEL_SCHEMATHESIS_FULL=1 \
	COSTMODEL_SCHEMATHESIS_EXAMPLES=$${COSTMODEL_SCHEMATHESIS_EXAMPLES:-200} \
	    $(BIN)/python -m pytest -q -s -p no:cacheprovider tests/api/test_api_schema.py -k test_full_run

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
