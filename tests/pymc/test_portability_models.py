"""The portability matrix's cheap columns on tests/pymc's models: each model's log-density and
gradient, compiled once, run unchanged on onnxruntime-web (WebAssembly, under Node) and ONNX's
reference evaluator, give PyTensor's numbers within the model's tolerance (docs/portability.md's
PyMC rows; `tests/test_portability.py` does the twelve programs)."""

from __future__ import annotations

import pytest

from portability.deviations import DEVIATIONS
from portability.programs import pymc_programs
from tests.conftest import portability_table

pytest.importorskip("pymc")
COLUMNS = ("onnxruntime", "onnxruntime-web (Node)", "onnx.reference")


def test_every_model_gives_pytensors_numbers_or_its_departure_is_explained():
    """One test (not one per column): the table is built once, on one worker."""
    table = portability_table(pymc_programs(), COLUMNS)
    assert len(table) >= 17
    unexplained = {(name, runtime): cell for name, row in table.items() for runtime, cell in row.items()
                   if not cell.good and (name, runtime) not in DEVIATIONS}
    assert not unexplained, unexplained
