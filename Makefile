# Two commands, each doing its own set-up on a fresh machine:
#   make demo   creates .venv, installs ctxgauge with every extra, runs the main job on the bundled sample
#   make test   same venv, runs the default (offline, fast) test tiers
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow bench install clean

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

clean:
	rm -rf $(VENV) ctxgauge-runs
