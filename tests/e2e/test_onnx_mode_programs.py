"""`pytensor.function(..., mode="ONNX")` on the programs whose rewrites bring in shape
ops, called several times with different input sizes (0 included), against
PyTensor's own (Python) evaluation of the graph the mode compiled."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from ptonnx.errors import CheckFailedError
from tests.conftest import REFERENCE_MODE, _outcome, assert_same

x, X, v, idx = pt.vector("x"), pt.matrix("X"), pt.vector("v"), pt.lvector("idx")

PROGRAMS = {
    "x - x": ([x], [x - x]),
    "reshape keeps the first dim": ([X], [X.reshape((X.shape[0], -1))]),
    "dot with unknown shapes": ([X, v], [pt.dot(X, v)]),
    "x[::-1]": ([x], [x[::-1]]),
    "x[1:-1:2]": ([x], [x[1:-1:2]]),
    "x[idx]": ([x, idx], [x[idx]]),
    "set_subtensor": ([x], [pt.set_subtensor(x[1:], 0)]),
    "inc_subtensor, repeated indices": ([x, idx], [pt.inc_subtensor(x[idx], 1)]),
    "mean over axis 0": ([X], [X.sum(axis=0) / X.shape[0]]),
    "max and argmax": ([X], [pt.max(X, axis=1), pt.argmax(X, axis=1)]),
    "argsort": ([x], [pt.argsort(x, kind="stable")]),
    "cumsum": ([x], [pt.cumsum(x)]),
    "logsumexp": ([X], [pt.logsumexp(X, axis=1)]),
    "x * arange": ([x], [x * pt.arange(x.shape[0])]),
    "all and any": ([x], [pt.all(x > 0), pt.any(x > 0)]),
    "X[X > 0]": ([X], [X[X > 0]]),
}


def _values(ins, n: int, rng):
    out = []
    for var in ins:
        if var is idx:
            out.append(np.array([0, n - 1, n - 1, -1]) if n else np.zeros(0, dtype=np.int64))
        elif var is v:
            out.append(rng.normal(size=3))
        elif var.ndim == 1:
            out.append(np.where(rng.random(n) < 0.2, -0.0, rng.normal(size=n)))
        else:
            out.append(rng.normal(size=(n, 3)))
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_onnx_mode_runs_at_several_sizes(name):
    ins, outs = PROGRAMS[name]
    f = pytensor.function(ins, outs, mode="ONNX")
    rewritten = f.maker.fgraph  # PyTensor's own evaluation of the graph the ONNX mode compiled
    ref = pytensor.function(rewritten.inputs, rewritten.outputs, mode=REFERENCE_MODE)
    rng = np.random.default_rng(0)
    for n in (4, 1, 7, 0):
        values = _values(ins, n, rng)
        expected, raised = _outcome(ref, values)
        actual, failed = _outcome(f, values)
        if raised is not None:
            assert isinstance(failed, CheckFailedError) and isinstance(failed, type(raised)), f"{name} at n={n}: {failed!r}"
            continue
        assert failed is None, f"{name} at n={n}: {failed!r}"
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e, f"{name} at n={n}")
