# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# The second test environment: what `pip install pymc` gives on Python 3.11, pymc 5.28
# with the pytensor 2.38 it pins (the default install above gets pytensor 3.0).
PYMC_VENV ?= .venv-pymc
PYMC_PY := $(PYMC_VENV)/bin/python
PYTEST := -m pytest -q -p no:cacheprovider -n 2

.PHONY: demo test test-default test-pymc bench bench-pymc setup clean
# the two environments are built and tested one after the other, even under -j
.NOTPARALLEL:

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

# One resolution for ptonnx, its test extra and pymc: pymc pins pytensor <2.39, so pip
# picks pytensor 2.38 and nothing later upgrades it.
$(PYMC_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(PYMC_VENV)
	$(PYMC_PY) -m pip install --quiet --upgrade pip
	$(PYMC_PY) -m pip install --quiet -e ".[test,pymc]"
	touch $@

setup: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/ptonnx

# CI: the suite in both environments, each on two workers (pytest-xdist); -k runs the
# second even when the first fails, and make still fails if either did.
test:
	@$(MAKE) --no-print-directory -k test-default test-pymc

# tests/pymc needs pymc, which only the second environment has
test-default: $(VENV)/.installed
	@$(PY) -c "import pytensor, onnxruntime, numpy; print(f'== default environment ($(VENV)): pytensor {pytensor.__version__}, onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}')"
	$(PY) $(PYTEST) --ignore=tests/pymc

test-pymc: $(PYMC_VENV)/.installed
	@$(PYMC_PY) -c "import pymc, pytensor, onnxruntime, numpy; print(f'== pymc environment ($(PYMC_VENV)): pymc {pymc.__version__}, pytensor {pytensor.__version__}, onnxruntime {onnxruntime.__version__}, numpy {numpy.__version__}')"
	$(PYMC_PY) $(PYTEST)

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[test,bench]"
	$(PY) benchmarks/compile_speed.py
	$(PY) benchmarks/compile_general.py
	$(PY) benchmarks/fusion.py

# PyMC models: onnxruntime against PyTensor's C and Numba backends (pytensor 2.38)
bench-pymc: $(PYMC_VENV)/.installed
	$(PYMC_PY) benchmarks/pymc_models.py

clean:
	rm -rf $(VENV) $(PYMC_VENV) out .hypothesis *.egg-info
