# Two commands, each doing its own set-up on a fresh machine:
#   make demo   creates .venv, installs ctxgauge with every extra, runs the main job on the bundled sample
#   make test   same venv, runs the default (offline, fast) test tiers, one pytest-xdist worker per core
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow bench fuzz install browser clean docs

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[all]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/ctxgauge demo

# -n auto: a worker per core (pytest-xdist, in the test extra), at most 8 (a worker peaks near 1 GB with the
# embedding model loaded); PYTEST_WORKERS=0 runs in this one process.
PYTEST_WORKERS ?= auto

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --maxprocesses 8

test-slow: $(STAMP)
	CTXGAUGE_SLOW=1 $(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python benchmarks/engines.py

# Hostile inputs for the corpus reader, the fingerprint parser and every other loader, for FUZZ_SECONDS of
# wall clock; never part of `test` (README, Fuzzing). Failures are saved under fuzz/crashes/ for replay.
# FUZZ_ENGINE=atheris: coverage-guided by libFuzzer (installs the `fuzz` extra first).
FUZZ_SECONDS ?= 180
FUZZ_ENGINE ?= hypothesis
fuzz: $(STAMP)
	test "$(FUZZ_ENGINE)" != atheris || $(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[fuzz]'
	$(BIN)/python fuzz/run.py --engine $(FUZZ_ENGINE) --seconds $(FUZZ_SECONDS)

# Debian's Chromium for the HTML report's browser test (root; the test skips with its reason without it).
browser:
	command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y chromium; }

# docs/metrics.md from the metric registry (tests/metrics/test_metrics_doc.py checks it byte for byte).
docs: $(STAMP)
	$(BIN)/python -m ctxgauge.metrics.doc docs/metrics.md

clean:
	rm -rf $(VENV) ctxgauge-runs
