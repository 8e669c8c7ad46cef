"""`Range` (NumPy's arange) as a hand-built graph, lowered (lowering/creation.py, narrow
integers widened by legalise) and run at both onnxruntime levels against `interpret`: every
dtype, bounds at the ends of the range, backward and fractional steps, empty results, -0.0."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import LoweringError
from ptonnx.ir import TensorType as T
from tests.lowering.harness import check_node, compiled, dtypes_of, interpret, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

COVERS = frozenset({"Range"})
DTYPES = dtypes_of("Range")

#: what the compiled model cannot run: onnxruntime has no uint64 Range and int64 cannot hold its bounds
REFUSED = {"uint64"}


def _bounds(dtype: str) -> list[tuple]:
    """(start, limit, delta) lists: forward, backward, empty, and at the dtype's ends."""
    cases = [(0, 5, 1), (3, 3, 1), (0, 7, 3)]
    kind = np.dtype(dtype).kind
    if kind == "u":
        top = int(np.iinfo(dtype).max)
        return cases + [(top - 5, top, 2), (top - 1, top, top), (0, top, top // 2 + 1), (4, 1, 1)]
    cases += [(5, 0, -2), (4, 1, 1), (1, 4, -1)]
    if kind == "i":
        info = np.iinfo(dtype)
        return cases + [(int(info.max) - 5, int(info.max), 2), (int(info.min), int(info.min) + 7, 3),
                        (int(info.max), int(info.max) - 3, -1), (int(info.min) + 100, int(info.min), -30), (-3, 4, 2),
                        (int(info.max), int(info.min), int(info.min))]
    info = np.finfo(dtype)
    tiny, top = float(info.smallest_subnormal), float(info.max)
    return cases + [(0.5, 2.0, 0.25), (-0.0, 2.0, 1.0), (2.0, -1.0, -0.5), (-1.5, 1.5, 0.75), (tiny, 4 * tiny, tiny),
                    (-tiny, -0.0, tiny), (0.0, top, top / 2), (top, top / 4, -top / 2)] + ([(top, -top, -top)] if dtype != "float64" else [])


def _arrays(dtype: str, bounds: tuple) -> list[np.ndarray]:
    return [np.array(b, dtype=dtype) for b in bounds]


@pytest.mark.parametrize("dtype", sorted(set(DTYPES) - REFUSED))
def test_range_with_bounds_known_only_at_run_time(dtype):
    case = compiled(one_node("Range", [T(dtype, ())] * 3))
    for bounds in _bounds(dtype):
        case.check(*_arrays(dtype, bounds))


def test_range_of_constant_bounds():
    check_node("Range", [np.array(2, np.int64), np.array(-7, np.int64), np.array(-3, np.int64)], {}, [])
    check_node("Range", [np.array(0.25, np.float32), np.array(1.0, np.float32), np.array(0.25, np.float32)], {}, [])


@pytest.mark.parametrize("dtype", DTYPES)
def test_interpret_counts_like_pytensor(dtype):
    """`interpret` is NumPy's arange of the Python numbers (PyTensor's ARange.perform): an
    arange of 0-D arrays would count in their dtype (int8 (127, -128, -128) gave [], uint8
    (4, 1, 1) 253 elements, float16 (max, -max, -max) a ValueError)."""
    for bounds in _bounds(dtype):
        arrays = _arrays(dtype, bounds)
        (got,) = interpret(one_node("Range", [T(dtype, ())] * 3)(), *arrays)
        np.testing.assert_array_equal(got, np.arange(*(a.item() for a in arrays), dtype=dtype), err_msg=str(bounds))


def test_uint64_range_is_refused_not_wrapped():
    """Computed in int64, (2**64 - 2, 2**64 - 1, 2**64 - 1) gave [] (NumPy: [2**64 - 2])."""
    with pytest.raises(LoweringError, match="no uint64 Range kernel.*make the bounds int64"):
        compiled(one_node("Range", [T("uint64", ())] * 3))
