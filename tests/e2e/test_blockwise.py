"""`Blockwise` of a core op ptonnx lifts (here basic indexing, as `pt.vectorize` and
pymc-extras' marginalisation build them), batched by a Loop: batch dims broadcast only
where known to be 1 (as PyTensor), zero-size batches, several batch dims, several
outputs, out-of-bounds indices, against PyTensor at both onnxruntime levels."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from tests.conftest import check_like_pytensor

X = np.arange(12.0).reshape(3, 4) - 5.5
X[0, 1], X[2, 3] = np.nan, -0.0


def _pick():
    return pt.vectorize(lambda v, k: v[k], signature="(n),()->()")


def _tail_and_head():
    return pt.vectorize(lambda v, k: (v[k:] * 2, v[:k].sum()), signature="(n),()->(m),()")


@pytest.mark.parametrize(("x", "i"), [
    (X, np.array([0, 3, -1])),
    (X, np.array([5, 0, 0])),            # out of bounds: IndexError, as PyTensor
    (np.zeros((0, 4)), np.zeros(0, np.int64)),
])
def test_a_batched_index(x, i):
    xs, idx = pt.dmatrix("x"), pt.lvector("i")
    check_like_pytensor([xs, idx], [_pick()(xs, idx)], [x, idx.type.filter(i)])


def test_unknown_batch_sizes_must_match_as_in_pytensor():
    xs, idx = pt.dmatrix("x"), pt.lvector("i")
    check_like_pytensor([xs, idx], [_pick()(xs, idx)], [X, np.array([2])])  # ValueError: runtime broadcasting


def test_a_batch_dim_known_to_be_1_broadcasts():
    row, idx = pt.tensor("row", dtype="float64", shape=(1, 4)), pt.lvector("i")
    check_like_pytensor([row, idx], [_pick()(row, idx)], [X[:1], np.array([0, 1, 3, -4])])


def test_several_batch_dims_and_outputs():
    cube, idx = pt.tensor3("cube"), pt.lmatrix("i")
    tail, head = _tail_and_head()(cube, idx)
    values = np.resize(X, (2, 3, 4))
    check_like_pytensor([cube, idx], [tail, head], [values, np.array([[1, 1, 1], [1, 1, 1]])])


def test_a_blockwise_copy_is_a_copy_not_a_loop():
    """PyTensor vectorises a Deterministic's ViewOp into a Blockwise (PyMC's predictive over rows):
    it lifts as the copy it is, no Loop over the batch."""
    import ptonnx
    from pytensor.compile.ops import ViewOp
    from pytensor.tensor.blockwise import Blockwise

    x = pt.dmatrix("x")
    y = Blockwise(ViewOp(), signature="(i)->(i)")(x) * 2
    check_like_pytensor([x], [y], [np.array([[1.0, -0.0, np.inf], [np.nan, 5e-324, -1e308]])], more_values=[[np.zeros((0, 3))]])
    assert "Loop" not in ptonnx.lift(ptonnx.api.function_graph([x], [y])).op_counts()
