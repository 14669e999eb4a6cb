# Everything a user or CI needs starts here; every target sets itself up first.
#   make tour   the headless walk-through of the Module API, then every course notebook
#               (both editions) executed into runs/course/ with an HTML copy of each
#   make test   the test suite
#   make test-fast  the tests not marked slow (kernels, browsers, subprocesses, notebooks): under 3 minutes
#   make lab    JupyterLab on notebooks/
#   make site HUB=... REPO=...  the course as a website (both editions, the student edition
#               executed, readable offline) in runs/site/; HUB and REPO make each page's hub link
# MXNET=gpu installs the GPU wheel (mxnet-cu112) instead of the CPU wheel.

PYTHON ?= python3.11
MXNET ?= cpu
# Python 3.11 is the main one; 3.12 works too (NumPy 1.26.4): `make test PYTHON=python3.12`
# (all the tests) or `make test-py312` (the fast ones, as CI runs them), each version in its
# own venv.
PYVER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
VENV := $(if $(filter 3.11,$(PYVER)),.venv,.venv-$(PYVER))
# A working python3.12: on PATH, else the newest pyenv one (its shim fails when not selected).
PYTHON312 ?= $(firstword $(foreach p,$(shell command -v python3.12) $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) /usr/bin/python3.12,$(if $(shell $(p) -c 'print(1)' 2>/dev/null),$(p))))
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(MXNET)

# The UCI data set beside a checkout of this project (tests and CI have it there); users without
# it get it downloaded by mxlearn.datasets on first use.
SHARED_DATA := $(wildcard ../shared/data/letter-recognition)
ifneq ($(SHARED_DATA),)
export MXLEARN_DATA ?= $(abspath $(SHARED_DATA))
endif

.PHONY: setup tour test test-fast test-py312 lab bench doctor student site wheel lint lock translations clean print-python312

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] in ((3, 11), (3, 12)) else "mxlearn needs Python 3.11 or 3.12 (MXNet 1.9.1 needs NumPy < 2, which has no wheels for newer Pythons); set PYTHON=/path/to/python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# The two MXNet wheels overwrite each other's files: remove the one not chosen.
	$(BIN)/python -m pip uninstall --quiet --yes $(if $(filter gpu,$(MXNET)),mxnet,mxnet-cu112) 2>/dev/null || true
	$(BIN)/python -m pip install --quiet --upgrade-strategy only-if-needed -c requirements/lock.txt -e '.[$(MXNET),dev]'
	rm -f $(VENV)/.installed-*
	touch $@

tour: setup
	$(BIN)/python -m mxlearn tour
	$(BIN)/python -m mxlearn course --notebooks notebooks --out runs/course

test: setup
	$(BIN)/python -m pytest

test-fast: setup
	$(BIN)/python -m pytest -m "not slow"

test-py312:
	@test -n "$(PYTHON312)" || { echo "make test-py312: no working python3.12 found (set PYTHON312=/path/to/python3.12)"; exit 1; }
	$(MAKE) test-fast PYTHON=$(PYTHON312)

lab: setup
	$(BIN)/jupyter lab notebooks/

doctor: setup
	$(BIN)/python -m mxlearn doctor

# The course as students get it (both languages): each answer replaced by nbgrader's stub.
student: setup
	$(BIN)/python -m mxlearn course --notebooks notebooks --student runs/student

# The course as a website: docs/site/build.py (what it publishes and why), docs/site/conf.py.
# HUB= the class hub's address, REPO= the student edition's git repository (nbgitpuller's link
# on each page); without them each page says how to set them. Environment variables work too.
site: setup
	$(BIN)/python docs/site/build.py --notebooks notebooks --out runs/site \
	    $(if $(HUB),--hub '$(HUB)') $(if $(REPO),--repo '$(REPO)')

# What students install: mxlearn itself, without this repository (whose notebooks hold the
# answers). dist/mxlearn-*.whl; see notebooks/TEACHING.md.
wheel: setup
	$(BIN)/python -m pip wheel --no-deps --quiet --wheel-dir dist .

bench: setup
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/notebook_case.py
	$(BIN)/python benchmarks/shape_memory.py

# Rewrites the lock file from the current environment (after a deliberate upgrade).
lock: setup
	{ sed -n '1,3p' requirements/lock.txt; { $(BIN)/pip freeze --exclude-editable; echo 'mxnet-cu112==1.9.1'; echo 'mxnet==1.9.1'; } | sort -fu; } > requirements/lock.new
	mv requirements/lock.new requirements/lock.txt

# After changing a message in the code: the Chinese catalogue follows (new texts left empty for
# a translator, which tests/test_language.py reports), and mxlearn.mo is compiled from it.
#  1. pybabel extract: every template in mxlearn/ into a template catalogue, mxlearn.pot. It is
#     git-ignored: it is made from the code on every run (with a new date each time) and holds
#     nothing the .po does not. Locations name the file without a line number and entries are
#     sorted by file and line, so a .po diff shows only texts that changed, where they are used.
#     Written under a name of this run first: two runs at once never read each other's half.
#     Babel's "Skipping f-string" warnings are not shown: each names an f-string given as a
#     field's value (scale=f"{s:g}"), the template itself is extracted; a template that is an
#     f-string, or a say() Babel cannot see, tests/test_language.py names.
#  2. pybabel update: the .po follows it. A text whose msgid is unchanged keeps its Chinese; a
#     new or reworded one is left empty, never guessed (--no-fuzzy-matching: a fuzzy match is a
#     wrong translation that looks done); a text no code says any more is dropped, not kept as
#     #~ (its Chinese is beside the new empty entry in the diff, and in git).
#  3. pybabel compile: mxlearn.mo, what Python's gettext reads at run time; empty and fuzzy
#     entries are left out (English shows). Written whole, then moved into place.
# The keywords: the functions of mxlearn/language.py that take a template (GNU xgettext's form:
# name:argument numbers, two for a singular and its plural). tests/test_language.py reads this
# line, so the tests check what this target extracts.
BABEL_KEYWORDS := say say_drawn say_n:1,2 say_in:2 N_ Nn_:1,2
LOCALE := mxlearn/locale
POT := $(LOCALE)/mxlearn.pot
PO := $(LOCALE)/zh/LC_MESSAGES/mxlearn.po
MO := $(PO:.po=.mo)

translations: setup
	@set -e; t=$$$$; trap "rm -f $(POT).$$t $(POT).$$t.log $(MO).$$t" EXIT; \
	$(BIN)/python -m babel.messages.frontend --quiet extract --mapping-file=babel.cfg \
	    --no-default-keywords $(addprefix -k ,$(BABEL_KEYWORDS)) \
	    --add-location=file --sort-by-file --width=100 --project=mxlearn \
	    --output-file=$(POT).$$t mxlearn 2>$(POT).$$t.log || { cat $(POT).$$t.log >&2; exit 1; }; \
	grep -v 'Skipping f-string with substitutions' $(POT).$$t.log >&2 || true; \
	$(BIN)/pybabel --quiet update --locale=zh --domain=mxlearn --input-file=$(POT).$$t \
	    --output-dir=$(LOCALE) --no-fuzzy-matching --ignore-obsolete --ignore-pot-creation-date \
	    --width=100; \
	mv -f $(POT).$$t $(POT); \
	$(BIN)/pybabel compile --domain=mxlearn --locale=zh --input-file=$(PO) \
	    --output-file=$(MO).$$t --statistics; \
	mv -f $(MO).$$t $(MO)

clean:
	rm -rf .venv .venv-* runs .pytest_cache

lint: setup
	$(BIN)/ruff check mxlearn tests benchmarks
	$(BIN)/ruff format --check mxlearn tests benchmarks

print-python312:
	@echo $(PYTHON312)
