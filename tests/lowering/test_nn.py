"""The CNN ops (family "nn": Conv, BatchNorm, the pools, Resize, SiLU) and `FusedConv`
(family "fused") as hand-built graphs, lowered (lowering/nn.py, lowering/fused.py: pools'
ceil-mode overhang as explicit padding, SiLU as Sigmoid * x) and run at both onnxruntime
levels against `interpret` (the `nn_kernels` NumPy kernels): several attribute sets per
model (strides, pads, dilations, groups, ceil_mode, count_include_pad, every Resize mode),
NaN, ±inf and ±0 among the inputs, in every float dtype, float64 refused where onnxruntime
has no kernel (the documented refusal). Sums (convolutions, averages, batch norm) are
compared with REORDERED_SUMS; tests/nn/test_ir_ops.py has the type rules and every Resize
mode at the default level."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import PtonnxError
from ptonnx.ir import TensorType as T
from ptonnx.onnxruntime_kernels import NO_FLOAT64_KERNEL
from tests.lowering.harness import compiled, reordered_sums, same_inputs

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

X = (2, 4, 5, 6)
#: op -> (input shapes, attribute sets of the nodes of one model, whether its results are sums)
CASES = {
    "Conv": ([X, (6, 2, 3, 2), (6,)], [
        {"group": 2},
        {"group": 2, "strides": (2, 1), "pads": (1, 0, 1, 2), "dilations": (1, 2)},
        {"group": 2, "strides": (3, 3), "pads": (2, 2, 0, 1)},
    ], True),
    "FusedConv": ([X, (4, 4, 3, 3), (4,)], [
        {"activation": "none"},
        {"activation": "silu", "strides": (2, 2), "pads": (1, 1, 1, 1)},
        {"activation": "silu", "dilations": (2, 1), "pads": (0, 1, 2, 0)},
    ], True),
    "BatchNorm": ([X, (4,), (4,), (4,), (4,)], [{"epsilon": 1e-5}, {"epsilon": 0.1}], True),
    "MaxPool": ([X], [
        {"kernel_shape": (2, 2), "strides": (2, 2)},
        {"kernel_shape": (3, 2), "strides": (2, 2), "pads": (1, 1, 1, 0), "ceil_mode": 1},
        {"kernel_shape": (2, 3), "strides": (1, 2), "ceil_mode": 1},
    ], False),
    "AveragePool": ([X], [
        {"kernel_shape": (2, 2), "strides": (2, 2)},
        {"kernel_shape": (3, 3), "strides": (2, 2), "pads": (1, 1, 1, 1), "ceil_mode": 1, "count_include_pad": 1},
        {"kernel_shape": (3, 2), "strides": (2, 3), "pads": (1, 0, 0, 1), "ceil_mode": 1, "count_include_pad": 0},
        {"kernel_shape": (2, 2), "pads": (1, 1, 1, 1), "count_include_pad": 1},
    ], True),
    "GlobalAveragePool": ([X], [{}], True),
    "GlobalMaxPool": ([X], [{}], False),
    "Resize": ([X], [
        {"axes": (2, 3), "scales": (2.0, 2.0), "mode": "nearest", "coordinate_transformation_mode": "asymmetric"},
        {"axes": (2, 3), "scales": (1.5, 0.75), "mode": "linear", "coordinate_transformation_mode": "half_pixel"},
        {"axes": (2, 3), "sizes": (9, 2), "mode": "linear", "coordinate_transformation_mode": "align_corners"},
        {"axes": (2, 3), "sizes": (3, 7), "mode": "nearest", "coordinate_transformation_mode": "half_pixel"},
    ], True),
    "SiLU": ([X], [{}], False),
}
COVERS = frozenset(CASES)
#: the ends of the range among the inputs: NaN, ±inf, ±0, a subnormal
HARD = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40])

#: float16: the NumPy kernels round to float16 after every step (BatchNorm's four operations, SiLU's
#: three, a sum that cancels), onnxruntime computes in float32 and rounds once (legality: float16 as
#: float32): 4 float16 ulps, and an absolute 1e-2 where terms near 1 cancel
FLOAT16_STEPS = {"rtol": 4 * 2.0**-10, "atol": 1e-2}


def _float16_steps(actual, expected, context):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, context
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected), err_msg=f"NaN: {context}")
    np.testing.assert_allclose(actual, expected, err_msg=context, **FLOAT16_STEPS)


def _arrays(op: str, shapes, dtype: str, rng: np.random.Generator, hard: bool) -> list[np.ndarray]:
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    arrays[0].reshape(-1)[: arrays[0].size : 7][:: 3] = 0.0
    if hard:
        flat = arrays[0].reshape(-1)
        picks = rng.choice(flat.size, HARD.size, replace=False)
        with np.errstate(under="ignore"):
            flat[picks] = HARD.astype(dtype)
    if len(arrays) == 5:  # BatchNorm's variance: non-negative, one exactly 0
        arrays[4] = np.abs(arrays[4])
        arrays[4][0] = 0
    return arrays


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", sorted(CASES))
def test_every_attribute_set_and_the_ends_of_the_range(op, dtype):
    shapes, attribute_sets, sums = CASES[op]
    build = same_inputs(op, [T(dtype, s) for s in shapes], attribute_sets)
    if dtype == "float64" and op in NO_FLOAT64_KERNEL:
        with pytest.raises(PtonnxError, match="no float64"):
            compiled(build)
        return
    case = compiled(build)
    rng = np.random.default_rng(11)
    compare = _float16_steps if dtype == "float16" else reordered_sums if sums else None
    for hard in (False, True):
        case.check(*_arrays(op, shapes, dtype, rng, hard), compare=compare, context=f"hard values: {hard}")


@pytest.mark.parametrize("op, dtype", [(op, d) for op in ("MaxPool", "GlobalMaxPool") for d in ("float16", "float32", "float64")
                                       if not (d == "float64" and op in NO_FLOAT64_KERNEL)])
def test_max_pools_propagate_nan_from_every_window_position(op, dtype):
    """A NaN anywhere in a window (first, last, beside ±inf, in the padding's reach) gives NaN, as
    NumPy and PyTorch do (onnxruntime's kernels skip it); 5 nodes more than the pool (and a -inf Pad where
    it pads)."""
    attrs = [{"kernel_shape": (2, 2)}, {"kernel_shape": (3, 2), "strides": (2, 1), "pads": (1, 0, 1, 1), "ceil_mode": 1}]
    build = same_inputs(op, [T(dtype, (2, 1, 3, 3))], attrs if op == "MaxPool" else [{}])
    case = compiled(build)
    windows = np.array([[np.nan, 1, 2], [3, -np.inf, np.inf], [-0.0, 0.0, np.nan]]), np.full((3, 3), -np.inf)
    x = np.stack(windows)[:, None].astype(dtype)
    for k in range(9):
        y = x.copy()
        y[1, 0].reshape(-1)[k] = np.nan
        case.check(y)
    kinds = [node.op_type for node in case.model.graph.node]
    n = len(list(build()))
    assert [kinds.count(k) for k in (op, "IsNaN", "Where", "Greater")] == [2 * n, n, 2 * n, n]
