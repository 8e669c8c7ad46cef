# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The second test environment: what `pip install pymc` gives on Python 3.11, pymc 5.28
# with the pytensor 2.38 it pins (the default install above gets pytensor 3.0).
PYMC_VENV ?= .venv-pymc
PYMC_PY := $(PYMC_VENV)/bin/python
# --durations: each environment prints its 15 slowest tests, so what CI's time goes to shows;
# each also writes <venv>/junit.xml, which `python -m benchmarks.ci_time` sums by folder and module
PYTEST := -m pytest -q -p no:cacheprovider -n 2 --dist worksteal --durations=15

.PHONY: demo test lint test-default test-pymc bench bench-pymc bench-jax setup clean web
# the two environments are built and tested one after the other, even under -j
.NOTPARALLEL:

# uv installs what pip would (same resolution: checked on pymc 5.28.5/pytensor 2.38.3) in a
# quarter of the time; pip does it where uv cannot be had
INSTALL = $(1)/bin/python -m pip install --quiet uv && $(1)/bin/uv pip install --quiet --python $(1)/bin/python -e "$(2)" \
	|| $(1)/bin/python -m pip install --quiet -e "$(2)"

# the IREE runtime's tests run in both environments (ptonnx[iree])
DEFAULT_EXTRAS := .[test,iree]
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(call INSTALL,$(VENV),$(DEFAULT_EXTRAS))
	touch $@

# One resolution for ptonnx, its test extra and pymc: pymc pins pytensor <2.39, so pip
# picks pytensor 2.38 and nothing later upgrades it.
#: (a variable: a comma in $(call ...)'s arguments would split them)
PYMC_EXTRAS := .[test,pymc,iree]
$(PYMC_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(PYMC_VENV)
	$(call INSTALL,$(PYMC_VENV),$(PYMC_EXTRAS))
	touch $@

setup: $(VENV)/.installed

# the browser page (web/): onnxruntime-web and playwright-core, pinned by web/package-lock.json
web/node_modules/.package-lock.json: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error

# build the page's models (a fitted PyMC regression's predictive, YOLO11n) and serve it at
# http://127.0.0.1:8000 (WEB_ARGS: web/build.py's options, e.g. --weights yolo11n.npz)
web: $(PYMC_VENV)/.installed web/node_modules/.package-lock.json
	$(PYMC_PY) web/build.py $(WEB_ARGS)
	@echo "== open http://127.0.0.1:8000/ (Ctrl-C stops)"
	cd web && ../$(PYMC_PY) -m http.server 8000 --bind 127.0.0.1

demo: $(VENV)/.installed
	$(VENV)/bin/ptonnx

# CI: lint, then the suite in both environments, each on two workers (pytest-xdist; worksteal:
# a worker that runs out takes queued tests from the other, so no long test ends the run alone); -k
# runs the second even when the first fails, and make still fails if either did.
test:
	@$(MAKE) --no-print-directory -k lint test-default test-pymc

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

# tests/pymc needs pymc, which only the second environment has
test-default: $(VENV)/.installed web/node_modules/.package-lock.json
	@$(PY) -c "import pytensor, onnxruntime, numpy; print(f'== default environment ($(VENV)): pytensor {pytensor.__version__}, onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}')"
	$(PY) $(PYTEST) --junitxml=$(VENV)/junit.xml --ignore=tests/pymc

# what depends on the PyTensor line: everything but the `one_environment` tests (accuracy
# sweeps of ptonnx's own formulas, hand-built IR), which the default environment runs; the
# `ci` Hypothesis profile becomes `ci-second` there (10 examples a test, not 25)
test-pymc: $(PYMC_VENV)/.installed web/node_modules/.package-lock.json
	@$(PYMC_PY) -c "import pymc, pytensor, onnxruntime, numpy; print(f'== pymc environment ($(PYMC_VENV)): pymc {pymc.__version__}, pytensor {pytensor.__version__}, onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}')"
	PTONNX_SECOND_ENVIRONMENT=1 $(PYMC_PY) $(PYTEST) --junitxml=$(PYMC_VENV)/junit.xml -m "not one_environment"

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[test,bench]"
	$(PY) -m benchmarks.compile_speed
	$(PY) -m benchmarks.compile_general
	$(PY) -m benchmarks.fusion

# PyMC models: onnxruntime against PyTensor's C and Numba backends (pytensor 2.38)
bench-pymc: $(PYMC_VENV)/.installed
	$(PYMC_PY) -m benchmarks.pymc_models

# ptonnx against the other road to ONNX (PyTensor's JAX backend, then jax2onnx), in a third
# environment: jax and jax2onnx are not dependencies of ptonnx (benchmarks/jax2onnx_path.py)
JAX_VENV ?= .venv-jax
JAX_PINS := "jax==0.10.2" "jax2onnx==0.17.1"
$(JAX_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(JAX_VENV)
	$(call INSTALL,$(JAX_VENV),.[pymc])
	$(JAX_VENV)/bin/uv pip install --quiet --python $(JAX_VENV)/bin/python $(JAX_PINS) || $(JAX_VENV)/bin/python -m pip install --quiet $(JAX_PINS)
	touch $@

bench-jax: $(JAX_VENV)/.installed
	$(JAX_VENV)/bin/python -m benchmarks.jax2onnx_path

clean:
	rm -rf $(VENV) $(PYMC_VENV) $(JAX_VENV) out .hypothesis *.egg-info
