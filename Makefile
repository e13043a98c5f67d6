# Two commands, each doing its own set-up on a fresh machine:
#   make demo   creates .venv, installs ctxgauge with every extra, runs the main job on the bundled sample
#   make test   same venv, runs the default (offline, fast) test tiers
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow bench install browser clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[all]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/ctxgauge demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

test-slow: $(STAMP)
	CTXGAUGE_SLOW=1 $(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python benchmarks/engines.py

# Debian's Chromium for the HTML report's browser test (root; the test skips with its reason without it).
browser:
	command -v chromium >/dev/null 2>&1 || { apt-get update && apt-get install -y chromium; }

clean:
	rm -rf $(VENV) ctxgauge-runs
