"""float64 CNN ops: onnxruntime lacks some float64 kernels, so lowering refuses them
unless the user opts in to float32 compute with the `Float64ViaFloat32` pass."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
import ptonnx.nn as nn
from ptonnx import ir
from ptonnx.errors import LoweringError
from ptonnx.passes import Float64ViaFloat32
from ptonnx.runtime_support import NO_FLOAT64_KERNEL
from tests.nn.helpers import compare

rng = np.random.default_rng(11)
X64 = rng.standard_normal((1, 4, 6, 6))

#: op -> graph on a float64 (1, 4, 6, 6) input
NO_KERNEL = {
    "Conv": lambda x: nn.conv2d(x, rng.standard_normal((2, 4, 3, 3)), rng.standard_normal(2), padding=1),
    "FusedConv": lambda x: nn.silu(nn.conv2d(x, rng.standard_normal((2, 4, 3, 3)), padding=1)),
    "AveragePool": lambda x: nn.avg_pool2d(x, 2, ceil_mode=True),
    "GlobalAveragePool": nn.global_avg_pool2d,
    "GlobalMaxPool": nn.global_max_pool2d,
    "Resize": lambda x: nn.resize(x, scale_factor=1.5, mode="bilinear"),
}
OPT_IN = [*ptonnx.DEFAULT_PASSES, "float64_via_float32"]


def test_the_table_names_the_ops_onnxruntime_lacks():
    assert set(NO_KERNEL) == NO_FLOAT64_KERNEL


@pytest.mark.parametrize("op", sorted(NO_KERNEL))
def test_float64_op_without_kernel_is_a_clear_lowering_error(op):
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    with pytest.raises(LoweringError, match=f"no float64 {op} kernel.*float64_via_float32"):
        ptonnx.compile_function([x], NO_KERNEL[op](x))


@pytest.mark.parametrize("op", sorted(NO_KERNEL))
def test_opt_in_computes_the_op_in_float32_between_casts(op):
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    cm = compare([x], NO_KERNEL[op](x), [X64], passes=OPT_IN, tol_dtype="float32")
    types = [n.op_type for n in cm.model.graph.node]
    assert types.count("Cast") >= 2
    assert cm.report["float64_via_float32"].rewrites == 1
    (narrow,) = [n for n in cm.ir if n.op == op]
    assert narrow.outputs[0].dtype == "float32" and cm.ir.outputs[0].dtype == "float64"


def test_the_onnx_mode_user_sees_the_error_too():
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    with pytest.raises(LoweringError, match="no float64 FusedConv kernel"):
        pytensor.function([x], nn.silu(NO_KERNEL["Conv"](x)), mode="ONNX")


@pytest.mark.parametrize(
    "build",
    [
        lambda x: nn.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        lambda x: nn.batch_norm(x, np.ones(4), np.zeros(4), np.zeros(4), np.ones(4) * 2),
        nn.silu,
        lambda x: pt.special.softmax(x, axis=1),
        lambda x: x @ x,
        pt.erf,  # composed in float64 (decompositions/special/erf.py)
    ],
    ids=["MaxPool", "BatchNorm", "SiLU", "Softmax", "MatMul", "Erf"],
)
def test_ops_with_float64_kernels_stay_float64(build):
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    cm = compare([x], build(x), [X64], passes=OPT_IN)
    assert "Cast" not in [n.op_type for n in cm.model.graph.node]


def test_pass_on_a_hand_built_graph_keeps_the_ir_valid():
    g = ir.Graph("g")
    x = g.add_input(ir.TensorType("float64", (1, 2, 4, 4)), "x")
    b = ir.Builder(g)
    w = ir.Value.constant(rng.standard_normal((3, 2, 1, 1)))
    y = b.op("Conv", x, w, ir.Value.constant(np.zeros(3)), name="y")
    z = b.op("GlobalMaxPool", b.op("Add", y, y))
    g.set_outputs([z, y])
    result = Float64ViaFloat32().run(g)
    ir.verify(g, unified=True)
    assert result.rewrites == 2
    assert [n.op for n in g] == ["Cast", "Conv", "Cast", "Add", "Cast", "GlobalMaxPool", "Cast"]
    assert [v.dtype for v in g.outputs] == ["float64", "float64"]
    assert Float64ViaFloat32().run(g).rewrites == 0
