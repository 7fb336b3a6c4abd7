# Everything a fresh clone needs: `make run` to learn, `make test` to check.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: run test venv bench bench-quick clean

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

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $@

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/gradrepl

# pytest, then every benchmark at small sizes: a benchmark that no longer runs fails the build
# (its figures are printed, never asserted).
test: $(TEST_STAMP) $(BENCH_STAMP)
	$(PY) -m pytest -q
	$(PY) benchmarks/run_all.py --quick

bench: $(BENCH_STAMP)
	$(PY) benchmarks/run_all.py

bench-quick: $(BENCH_STAMP)
	$(PY) benchmarks/run_all.py --quick

clean:
	rm -rf $(VENV) build *.egg-info
