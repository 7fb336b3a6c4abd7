# Everything a fresh clone needs: `make run` to learn, `make test` to check.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test venv bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: the CPU build that lies on this machine's disk.
	$(PY) -m pip install --quiet torch==2.13.0 numpy

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/gradrepl

test: $(TEST_STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
