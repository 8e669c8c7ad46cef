"""The portability matrix's cheap columns, as CI runs them: every program of `portability.programs`
compiled once and run unchanged on onnxruntime (both levels), onnxruntime-web (WebAssembly, under
Node) and ONNX's reference evaluator; each cell keeps the file's promise (PyTensor's numbers
within the program's tolerance, or the raise a failed check must give) or is a departure
`portability/deviations.py` explains. `python -m portability --write` writes the whole table."""

from __future__ import annotations

import pytest

from portability.deviations import DEVIATIONS
from portability.programs import PROGRAMS
from portability.runtimes import CI_RUNTIMES
from tests.conftest import portability_table

pytestmark = pytest.mark.one_environment  # the files and the runtimes, not the PyTensor line


@pytest.fixture(scope="module")
def table():
    return portability_table(PROGRAMS, CI_RUNTIMES)


@pytest.mark.parametrize("runtime", CI_RUNTIMES)
def test_every_program_keeps_its_promise_or_its_departure_is_explained(table, runtime):
    unexplained = {name: row[runtime] for name, row in table.items()
                   if not row[runtime].good and (name, runtime) not in DEVIATIONS}
    assert not unexplained, unexplained


def test_onnxruntime_is_the_reference_and_right_everywhere(table):
    """onnxruntime's own column is PyTensor's numbers on every program (no departure listed)."""
    for name, row in table.items():
        assert row["onnxruntime"].verdict in ("identical", "raises"), (name, row["onnxruntime"])


def test_an_explained_departure_is_still_there(table):
    """A departure listed for a CI column that no longer departs is stale: remove it."""
    stale = [key for key in DEVIATIONS if key[1] in CI_RUNTIMES and table[key[0]][key[1]].good]
    assert not stale, stale


def test_the_failed_check_raises_on_every_runtime(table):
    assert all(cell.verdict == "raises" for cell in table["index_out_of_range"].values())
