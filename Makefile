# ncld: make demo | make test | make bench | make screenshot
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Two install stamps: the page needs the library and the app extra (streamlit, plotly; make demo answers sooner
# on a fresh clone); tests and benchmarks add the test and bench extras (playwright, dask, river, ...).
APP_STAMP := $(VENV)/.installed-app
STAMP     := $(VENV)/.installed
# The shared benchmark datasets sit beside the repository (override to point elsewhere);
# without them the dataset tests are skipped.
ifneq ($(wildcard ../shared/datasets/SHA256SUMS),)
NCLD_DATA_DIR ?= $(abspath ../shared/datasets)
endif
ifdef NCLD_DATA_DIR
export NCLD_DATA_DIR
endif
# Python may cache compiled modules (__pycache__/, git-ignored): a machine that sets PYTHONDONTWRITEBYTECODE
# (this one does) otherwise recompiles every module in every process: each pytest worker, each dashboard server
# the browser tests start, each child process (6 s of a 13 s test collection here).
unexport PYTHONDONTWRITEBYTECODE
# pytest workers: one per core (tests/conftest.py keeps the browser tests on one worker).
TEST_WORKERS ?= auto

.PHONY: demo test test-slow bench screenshot setup clean

# --no-compile: pip's byte-compiling of every installed file was most of the install's CPU time; Python
# compiles what the page imports when it first imports it (python -m benchmarks.fresh_demo times it).
$(APP_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile -e '.[app]'
	touch $(APP_STAMP)

$(STAMP): $(APP_STAMP) pyproject.toml
	$(PY) -m pip install --quiet --no-compile -e '.[app,test,bench]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(APP_STAMP)
	$(PY) -m dashboard.launch run dashboard/app.py --server.address 127.0.0.1 --server.port 8501

test: $(STAMP)
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

# The slow tier: the browser measurements make bench reads (per-chunk latency on every shared dataset, Stop
# inside a slow chunk, the growth preset's page), the ten-visitor test, the two-page queue and run-hub tests,
# browser tests among make test's longest (e.g. a dropped connection, a change point on a slow browser, Stop, a run
# that cannot start, an upload refused, a knob moved after a preset, a new run's graphs, every preset's and a lesson
# link's page; make test keeps the twins each test's comment names, for a new run's graphs only the carrier's check),
# the first screen at 1280 x 720, the 10^5-instance stream and the killed Dask grid's resume.
# .ci/run runs it after make test. A browser wait that times out (a lesson step's graph not yet drawn large at its
# width: in 2 of 3 slow-tier runs here, each time passing when tried again) is tried once more; a second time fails.
test-slow: $(STAMP)
	$(PY) -m pytest --slow -m slow --reruns 1 --only-rerun TimeoutError --only-rerun "not drawn"

bench: $(STAMP)
	$(PY) -m benchmarks

screenshot: $(STAMP)
	$(PY) -m benchmarks.screenshot

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
