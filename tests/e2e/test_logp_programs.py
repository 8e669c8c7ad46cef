"""The PyMC-style log-densities of `logp_programs` and their gradients with respect to the
parameters, against PyTensor at every onnxruntime level: compiled from the plain graph, and
from the ONNX mode's rewritten graph. Runs without PyMC (tests/pymc covers PyMC's own graphs).

Both are compared with PyTensor's evaluation of the plain graph: its Python evaluation of
the rewritten graph rounds a Reciprocal inside a Composite to float32 (pytensor 3.0.7's
`Reciprocal.impl` is `np.float32(1.0) / x`; a float64 Composite of `reciprocal(a)` gives
1/0.30020749 as 3.33102941513, not 3.33102948231), 2e-8 off in the gradients of
`ordered_logistic` and `dirichlet_categorical`; PyTensor's C code and ptonnx agree with the
plain graph."""

from __future__ import annotations

import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from tests.conftest import REFERENCE_MODE, assert_matches, check_onnx_matches_pytensor
from tests.e2e.logp_programs import PROGRAMS
from tests.e2e.test_gradients import _close


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_logp_and_gradient_match_pytensor(name):
    program = PROGRAMS[name]
    inputs, logp = program.build()
    wrt = [v for v in inputs if v.name in program.wrt]
    assert [v.name for v in wrt] == list(program.wrt)
    outputs = [logp, *pt.grad(logp, wrt)]
    arrays = program.arrays(inputs)
    check_onnx_matches_pytensor(inputs, outputs, arrays)

    expected = pytensor.function(inputs, outputs, mode=REFERENCE_MODE)(*arrays)
    rewritten = pytensor.function(inputs, outputs, mode=ptonnx.mode.onnx_mode()).maker.fgraph
    assert_matches(ptonnx.compile(rewritten), arrays, expected, compare=_close)
