# ncld: make demo | make test | make bench
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The shared benchmark datasets sit beside the repository (override to point elsewhere);
# without them the dataset tests are skipped.
ifneq ($(wildcard ../shared/datasets/SHA256SUMS),)
NCLD_DATA_DIR ?= $(abspath ../shared/datasets)
endif
ifdef NCLD_DATA_DIR
export NCLD_DATA_DIR
endif

.PHONY: demo test bench screenshot setup clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(PY) -m streamlit run dashboard/app.py --server.address 127.0.0.1 --server.port 8501

test: $(STAMP)
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m benchmarks

screenshot: $(STAMP)
	$(PY) -m benchmarks.screenshot

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
