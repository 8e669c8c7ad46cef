# Two commands on a fresh machine: `make demo` (the main job) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench setup clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

setup: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/ptonnx

test: $(VENV)/.installed
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -e ".[test,bench]"
	$(PY) benchmarks/compile_speed.py
	$(PY) benchmarks/compile_general.py
	$(PY) benchmarks/fusion.py

clean:
	rm -rf $(VENV) out .hypothesis *.egg-info
