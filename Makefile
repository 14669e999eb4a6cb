# Everything a user or CI needs starts here; every target sets itself up first.
#   make tour   the headless walk-through of the Module API (python -m mxlearn tour)
#   make test   the test suite
#   make lab    JupyterLab on notebooks/
# MXNET=gpu installs the GPU wheel (mxnet-cu112) instead of the CPU wheel.

PYTHON ?= python3.11
MXNET ?= cpu
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(MXNET)

# The UCI data set beside a checkout of this project (tests and CI have it there); users without
# it get it downloaded by mxlearn.datasets on first use.
SHARED_DATA := $(wildcard ../shared/data/letter-recognition)
ifneq ($(SHARED_DATA),)
export MXLEARN_DATA ?= $(abspath $(SHARED_DATA))
endif

.PHONY: setup tour test lab bench doctor lint lock clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "mxlearn needs Python 3.11 (MXNet 1.9.1 has no wheels for newer ones); set PYTHON=/path/to/python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# The two MXNet wheels overwrite each other's files: remove the one not chosen.
	$(BIN)/python -m pip uninstall --quiet --yes $(if $(filter gpu,$(MXNET)),mxnet,mxnet-cu112) 2>/dev/null || true
	$(BIN)/python -m pip install --quiet --upgrade-strategy only-if-needed -c requirements/lock.txt -e '.[$(MXNET),dev]'
	rm -f $(VENV)/.installed-*
	touch $@

tour: setup
	$(BIN)/python -m mxlearn tour

test: setup
	$(BIN)/python -m pytest

lab: setup
	$(BIN)/jupyter lab notebooks/

doctor: setup
	$(BIN)/python -m mxlearn doctor

bench: setup
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/shape_memory.py

# Rewrites the lock file from the current environment (after a deliberate upgrade).
lock: setup
	{ sed -n '1,3p' requirements/lock.txt; { $(BIN)/pip freeze --exclude-editable; echo 'mxnet-cu112==1.9.1'; echo 'mxnet==1.9.1'; } | sort -fu; } > requirements/lock.new
	mv requirements/lock.new requirements/lock.txt

clean:
	rm -rf $(VENV) runs .pytest_cache

lint: setup
	$(BIN)/ruff check mxlearn tests benchmarks
	$(BIN)/ruff format --check mxlearn tests benchmarks
