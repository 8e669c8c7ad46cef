"""float64 CNN ops: onnxruntime lacks some float64 kernels, so lowering refuses them
unless the user opts in to float32 compute (`float64_via_float32=True`, done by the
legalise stage, from the one table of compute dtypes)."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
import ptonnx.nn as nn
from ptonnx import ir
from ptonnx.errors import LoweringError
from ptonnx.errors import PassError
from ptonnx.lowering import check_lowerable
from ptonnx.passes.legalise import legalise
from ptonnx.onnxruntime_kernels import NO_FLOAT64_KERNEL
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
OPT_IN = {"float64_via_float32": True}


def test_the_table_names_the_ops_onnxruntime_lacks():
    assert set(NO_KERNEL) == NO_FLOAT64_KERNEL


@pytest.mark.parametrize("op", sorted(NO_KERNEL))
def test_float64_op_without_kernel_is_a_clear_lowering_error(op):
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    with pytest.raises(LoweringError, match=f"no float64 {op} kernel.*float64_via_float32=True"):
        ptonnx.compile_function([x], NO_KERNEL[op](x))


@pytest.mark.parametrize("op", sorted(NO_KERNEL))
def test_opt_in_computes_the_op_in_float32_between_casts(op):
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    cm = compare([x], NO_KERNEL[op](x), [X64], tol_dtype="float32", **OPT_IN)
    types = [n.op_type for n in cm.model.graph.node]
    assert types.count("Cast") >= 2
    assert cm.report.legalised == {f"{op}:float64->float32": 1}
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
    cm = compare([x], build(x), [X64], **OPT_IN)
    assert "Cast" not in [n.op_type for n in cm.model.graph.node]


def test_pass_on_a_hand_built_graph_keeps_the_ir_valid():
    g = ir.Graph("g")
    x = g.add_input(ir.TensorType("float64", (1, 2, 4, 4)), "x")
    b = ir.Builder(g)
    w = ir.Value.constant(rng.standard_normal((3, 2, 1, 1)))
    y = b.op("Conv", x, w, ir.Value.constant(np.zeros(3)), name="y")
    z = b.op("GlobalMaxPool", b.op("Add", y, y))
    g.set_outputs([z, y])
    assert legalise(g) == {}  # refused later, by check_lowerable
    done = legalise(g, float64_via_float32=True)
    ir.verify(g)
    check_lowerable(g)  # what the lower stage requires
    assert done == {"Conv:float64->float32": 1, "GlobalMaxPool:float64->float32": 1}
    assert [n.op for n in g] == ["Cast", "Conv", "Cast", "Add", "Cast", "GlobalMaxPool", "Cast"]
    assert [v.dtype for v in g.outputs] == ["float64", "float64"]
    assert legalise(g, float64_via_float32=True) == {}


def test_the_old_pass_name_says_what_to_do_instead():
    x = pt.tensor("x", shape=X64.shape, dtype="float64")
    with pytest.raises(PassError, match=r"float64_via_float32=True"):
        ptonnx.compile_function([x], NO_KERNEL["Conv"](x), [*ptonnx.DEFAULT_PASSES, "float64_via_float32"])
