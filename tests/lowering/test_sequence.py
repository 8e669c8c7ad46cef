"""CumSum, CumProd and Sort as hand-built graphs, lowered (lowering/sequence.py: ONNX CumSum,
CumProd as a log-depth scan of Muls, Sort as a stable TopK, uint64 by its flipped top bit) and
run at both onnxruntime levels against `interpret`: every dtype, the ends of the range
(wrapping integers, NaN last, ±inf, ±0 in their order, subnormals), either axis, lengths
known and unknown, size 0."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.ir import TensorType as T
from tests.lowering.harness import compiled, dtypes_of, ends, one_node, reordered_sums, same_inputs

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"CumSum", "CumProd", "Sort"})


def _arrays(op: str, dtype: str, rng: np.random.Generator, rows: int = 3) -> list[np.ndarray]:
    e = ends(dtype)
    if op == "CumProd" and dtype.startswith("float"):
        # where partial products overflow or underflow, the order decides (lowering/sequence.py), as it
        # does between PyTensor's own backends: the ends that cannot do that (±0, ±inf, NaN) stay
        with np.errstate(all="ignore"):
            e = e[~np.isfinite(e) | (e == 0) | ((np.abs(e) >= 0.5) & (np.abs(e) <= 3))]
    return [np.resize(rng.permutation(e), (rows, e.size)), rng.choice(e, (rows, 5))]


def _compare(op: str, dtype: str):
    # CumProd multiplies in a log-depth tree: float products in another order (CumSum is sequential)
    return reordered_sums if op == "CumProd" and dtype.startswith("float") else None


@pytest.mark.parametrize("op, dtype", [(op, d) for op in ("CumSum", "CumProd", "Sort") for d in dtypes_of(op)])
def test_along_either_axis_in_every_dtype(op, dtype):
    rng = np.random.default_rng(5)
    case = compiled(same_inputs(op, [T(dtype, (None, None))], [{"axis": 1}, {"axis": 0}]))
    for x in [*_arrays(op, dtype, rng), np.zeros((0, 3), dtype), np.zeros((3, 0), dtype), _arrays(op, dtype, rng, 1)[1]]:
        case.check(x, compare=_compare(op, dtype))


@pytest.mark.parametrize("op", ["CumSum", "CumProd", "Sort"])
def test_static_length(op):
    """A static length: CumProd's scan has ceil(log2 n) steps, not 63."""
    rng = np.random.default_rng(6)
    for n in (1, 2, 5):
        case = compiled(one_node(op, [T("int64", (2, n))], {"axis": 1}))
        case.check(rng.choice(ends("int64"), (2, n)))


def test_sort_is_stable_with_nan_last_and_zeros_in_their_order():
    x = np.array([3.0, np.nan, -0.0, 0.0, 1.0, 3.0, -np.inf, np.inf, np.nan, 5e-324, 0.0, -0.0, -5e-324])
    for dtype in ("float64", "float32", "float16"):
        compiled(one_node("Sort", [T(dtype, (None,))], {"axis": 0})).check(x.astype(dtype))
