"""Max and min over a short static axis (`lowering/reduction.py` `_pieces_max_min`): a Split and
one variadic Max/Min, with NumPy's (so PyTensor's) result for every order of NaN, ±0 and ±inf,
at both onnxruntime levels, where onnxruntime's ReduceMax needs a NaN mask and picks the other
zero of a tie (docs/limits.md)."""

from __future__ import annotations

import itertools

import numpy as np
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.testing import assert_matches_pytensor
from tests.conftest import check_like_pytensor

SPECIAL = [np.nan, -0.0, 0.0, -np.inf, np.inf, 1.0, -5e-324]


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("reduce", ["max", "min", "max keepdims", "min over axis 0"])
def test_every_order_of_special_values(k, reduce):
    rows = np.array(list(itertools.product(SPECIAL, repeat=k)))
    if "axis 0" in reduce:
        x = pt.tensor("x", shape=(k, None), dtype="float64")
        out, rows = x.min(axis=0), rows.T.copy()
    else:
        x = pt.tensor("x", shape=(None, k), dtype="float64")
        out = getattr(x, reduce.split()[0])(axis=1, keepdims="keepdims" in reduce)
    empty = np.zeros((0, k)) if "axis 0" not in reduce else np.zeros((k, 0))
    check_like_pytensor([x], [out], [rows], more_values=[[empty]])
    ops = [n.op_type for n in ptonnx.compile_function([x], [out]).model.graph.node]
    assert "Split" in ops and "IsNaN" not in ops and not any(op.startswith("Reduce") for op in ops)


def test_the_longest_short_axis_and_one_past_it():
    """Eight pieces still split; nine reduce with the NaN mask. Both give NumPy's numbers."""
    rng = np.random.default_rng(0)
    for k, split in ((8, True), (9, False)):
        x = pt.tensor("x", shape=(None, k), dtype="float64")
        values = rng.choice(np.array(SPECIAL), size=(400, k))
        check_like_pytensor([x], [x.max(axis=1)], [values])
        ops = [n.op_type for n in ptonnx.compile_function([x], [x.max(axis=1)]).model.graph.node]
        assert ("Split" in ops) == split


def test_onnxruntimes_reduce_max_is_why():
    """The kernel facts the lowering rests on, so an onnxruntime upgrade that changes them shows:
    its ReduceMax disagrees with NumPy on NaN and on a tie of zeros; its variadic Max does not."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from ptonnx.testing import session_options

    rows = np.array(list(itertools.product(SPECIAL, repeat=2)))
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2), helper.make_node("Max", ["a", "b"], ["m"]),
             helper.make_node("ReduceMax", ["x", "axes"], ["r"], keepdims=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [None, 2])],
                              [helper.make_tensor_value_info(n, TensorProto.DOUBLE, None) for n in "mr"],
                              [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]).SerializeToString()
    expected = np.maximum.reduce(rows, axis=1, keepdims=True)
    bits = lambda a: np.where(np.isnan(a), np.nan, a).tobytes()  # noqa: E731  (any NaN the same)
    for level in ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL"):
        session = ort.InferenceSession(model, session_options(level), providers=["CPUExecutionProvider"])
        elementwise, reduced = session.run(None, {"x": rows})
        assert bits(elementwise) == bits(expected)
        assert bits(reduced) != bits(expected)


def test_no_passes_give_the_same_numbers():
    x = pt.tensor("x", shape=(None, 3), dtype="float64")
    rows = np.array(list(itertools.product(SPECIAL, repeat=3)))
    assert_matches_pytensor([x], [x.max(axis=1), x.min(axis=1)], [rows], passes=[])
