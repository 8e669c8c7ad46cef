"""The portability matrix's cheap columns on tests/pymc's models: each model's log-density and
gradient, compiled once, run unchanged on onnxruntime-web (WebAssembly, under Node) and ONNX's
reference evaluator, give PyTensor's numbers within the model's tolerance (docs/portability.md's
PyMC rows; `tests/test_portability.py` does the twelve programs)."""

from __future__ import annotations

import os
import shutil
import warnings

import pytest

from portability.deviations import DEVIATIONS
from portability.matrix import run
from portability.programs import pymc_programs
from portability.runtimes import ROOT

pytest.importorskip("pymc")
COLUMNS = ("onnxruntime", "onnxruntime-web (Node)", "onnx.reference")


def test_every_model_gives_pytensors_numbers_or_its_departure_is_explained():
    """One test (not one per column): the table is built once, on one worker."""
    if not (ROOT / "web" / "node_modules" / "onnxruntime-web").is_dir() or not shutil.which("node"):
        if os.environ.get("CI"):
            pytest.fail("the onnxruntime-web column needs node and web/node_modules (make test installs them)")
        pytest.skip("the onnxruntime-web column needs node and web/node_modules (cd web && npm ci)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = run(pymc_programs(), COLUMNS)
    assert len(table) >= 17
    unexplained = {(name, runtime): cell for name, row in table.items() for runtime, cell in row.items()
                   if not cell.good and (name, runtime) not in DEVIATIONS}
    assert not unexplained, unexplained
