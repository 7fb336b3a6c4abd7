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

# JupyterHub's proxy (configurable-http-proxy) is a node program: tests/serve/test_hub.py finds it in
# the venv's own folder. Without npm the hub test skips and says why.
CHP_PREFIX := $(VENV)/node

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	if command -v npm >/dev/null 2>&1; then \
	  npm install --silent --no-fund --no-audit --prefix $(CHP_PREFIX) configurable-http-proxy@5; \
	else echo "make: no npm, so no configurable-http-proxy: the JupyterHub test will skip" >&2; fi
	touch $@

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $@

venv: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/gradrepl

# pytest, then every benchmark at small sizes: a benchmark that no longer runs fails the build
# (its figures are printed, never asserted).
# pytest's status 5 means it collected no tests: that fails too, and says so.
test: $(TEST_STAMP) $(BENCH_STAMP)
	$(VENV)/bin/ruff check gradrepl tests benchmarks
	$(PY) -m pytest -q -n 2 || { status=$$?; [ $$status -ne 5 ] || echo "make test: pytest collected no tests" >&2; exit $$status; }
	$(PY) -m benchmarks.run_all --quick

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.run_all

bench-quick: $(BENCH_STAMP)
	$(PY) -m benchmarks.run_all --quick

clean:
	rm -rf $(VENV) build *.egg-info
