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

# The main job: price the sample TCO scenario and the published DeepSeek R1 comparisons.
run: $(STAMP)
	$(BIN)/costmodel price fixtures/scenarios/sample-tco.toml
	@echo
	$(BIN)/costmodel compare $(PUBLISHED)/deepseek-r1_gb300_peak.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_peak.toml \
	    $(PUBLISHED)/deepseek-r1_gb300_matched.toml \
	    $(PUBLISHED)/deepseek-r1_jalapeno_matched.toml

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/sweep.py
	$(BIN)/python bench/frontier.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
