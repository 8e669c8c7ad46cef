"""lifting/blockwise.py: a Blockwise of any core op ptonnx lifts (other than Dot, which batches as
MatMul: test_linalg.py) runs as a Loop over the flattened batch; batch dims broadcast only where
known to be 1 (PyTensor's runtime-broadcast ValueError otherwise), and a core op without a rule is
refused by name. (A batch of size 0 is left out: PyTensor's Python Blockwise raises
NotImplementedError there, so it has no number to compare with.)"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.extra_ops import UnravelIndex

from tests.no_rule_op import no_rule
from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting.matmul import BlockDiagonal
from tests.lifting.helpers import all_ops, check_lift, lifted, ops, raises_check

X = np.arange(12.0).reshape(3, 4) - 5.5
X[0, 1], X[2, 3] = np.nan, -0.0


def _pick():
    return pt.vectorize(lambda v, k: v[k], signature="(n),()->()")


def test_a_batched_index_is_a_loop():
    xs, idx = pt.dmatrix("x"), pt.lvector("i")
    y = _pick()(xs, idx)
    assert isinstance(y.owner.op, Blockwise)
    g = check_lift([xs, idx], [y], [X, np.array([0, 3, -1])], [X, np.array([5, 0, 0])], [X[:, :0], np.array([0, 0, 0])],
                   [X, np.array([2])])  # batch sizes 3 and 1, the 1 not known: ValueError
    assert "Loop" in ops(g) and {"Gather", "Check"} <= all_ops(g)
    raises_check(g, [X, np.array([2])], ValueError, "Runtime broadcasting not allowed")


def test_a_batch_dim_known_to_be_1_broadcasts():
    row, idx = pt.tensor("row", shape=(1, 4)), pt.lvector("i")
    check_lift([row, idx], [_pick()(row, idx)], [X[:1], np.array([0, 1, 3, -4])], [X[:1], np.array([4])])


def test_a_batch_dim_pytensor_types_as_1_broadcasts_where_the_ir_does_not_know_it():
    """`alloc(v, max([0, 1]), 4)`: PyTensor types it (1, 4), the IR (?, 4); PyTensor's type decides."""
    v, idx = pt.dvector("v"), pt.lvector("i")
    row = pt.alloc(v, pt.max(pt.as_tensor(np.array([0, 1]))), 4)
    assert row.type.shape == (1, 4)
    g = check_lift([v, idx], [_pick()(row, idx)], [X[0], np.array([0, 1, 3])])
    assert not [n for n in g if n.op == "Check" and "batch dimension" in n.attrs["message"]]


def test_several_batch_dims_and_outputs():
    cube, idx = pt.dtensor3("cube"), pt.lmatrix("i")
    tail, head = pt.vectorize(lambda v, k: (v[k:] * 2, v[:k].sum()), signature="(n),()->(m),()")(cube, idx)
    values = np.resize(X, (2, 3, 4))
    g = check_lift([cube, idx], [tail, head], [values, np.ones((2, 3), np.int64)], [values, np.array([[0, 4, 2], [-1, 9, 3]])])
    assert "Loop" in ops(g)


def test_a_core_op_of_two_outputs_is_one_loop():
    i, d = pt.lvector("i"), pt.tensor("d", dtype="int64", shape=(None, 2))
    outs = Blockwise(UnravelIndex(order="C"), signature="(),(k)->(),()")(i, d)
    dims = np.array([[3, 4], [1, 1], [4, 3]])
    g = check_lift([i, d], list(outs), [np.array([5, 0, 11]), dims], [np.array([5, 0, 12]), dims])  # 12: out of bounds
    assert ops(g).count("Loop") == 1 and {o.producer.op for o in g.outputs} == {"Reshape"}


def test_a_blockwise_of_no_batch_dims_is_its_core_op():
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    y = Blockwise(BlockDiagonal(2), signature="(m0,n0),(m1,n1)->(m,n)")(a, b)
    g = check_lift([a, b], [y], [X[:2, :2], X[1:, :3]])
    assert "Loop" not in ops(g)


def test_a_blockwise_of_a_core_op_with_no_rule_is_refused_by_name():
    x = pt.dtensor3("x")
    y = no_rule(x)
    y.name = "inverses"
    with pytest.raises(UnsupportedOpError, match=r"(?s)Blockwise\{NoRule.*producing inverses.*Blockwise of any of them"):
        lifted([x], [y])
