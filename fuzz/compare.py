"""Judging one output: dtype, shape, values (floats within the dtype's tolerance, NaN == NaN, ints exact).

The tolerances, levels and sessions are `ptonnx.testing`'s, as the test suite's.
"""

from __future__ import annotations

import numpy as np

from ptonnx import testing
from ptonnx.testing import ORT_LEVELS, TOLERANCE, computation_dtype, narrowest, tolerance_dtype  # noqa: F401

def session_options(level: str):
    """`ptonnx.testing.session_options`, with onnxruntime's log kept off stderr (errors come back as exceptions)."""
    return testing.session_options(level, quiet=True)


def run_at_every_level(cm, *arrays) -> dict:
    """{level: outputs or the exception onnxruntime raised} of `cm` at each of `ORT_LEVELS`."""
    results = {}
    for level in ORT_LEVELS:
        try:
            results[level] = cm.with_session_options(session_options(level))(*arrays)
        except Exception as exc:  # judged by the caller: a ptonnx refusal or a crash
            results[level] = exc
    return results


def differences(actual, expected, computed_in: str | None = None, bound=None) -> str | None:
    """None when `actual` is `expected` (dtype, shape, values); else a short description of how not.

    `bound` (same shape as expected) widens the float tolerance elementwise, for
    results whose rounding depends on summation order (matrix products).
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != PyTensor's {expected.dtype}"
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != PyTensor's {expected.shape}"
    bad = wrong_elements(actual, expected, computed_in, bound)
    if not bad.any():
        return None
    index = np.argwhere(bad)
    shown = [tuple(int(i) for i in idx) for idx in index[:4]]
    pairs = ", ".join(f"{i}: {expected[i]!r} vs {actual[i]!r}" for i in shown)
    return f"{int(bad.sum())}/{bad.size} elements differ (index: PyTensor vs ONNX) {pairs}"


def wrong_elements(actual: np.ndarray, expected: np.ndarray, computed_in: str | None = None, bound=None) -> np.ndarray:
    """Boolean mask of the elements that differ beyond tolerance."""
    if expected.dtype.kind != "f":
        return actual != expected
    tol = TOLERANCE[tolerance_dtype(expected.dtype.name, computed_in)]
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    with np.errstate(all="ignore"):
        both_nan = np.isnan(a) & np.isnan(e)
        same_inf = np.isinf(e) & (a == e)
        allowed = tol["atol"] + tol["rtol"] * np.abs(e)
        if bound is not None:  # where the bound overflows, summation order decides even inf vs NaN
            allowed = allowed + np.broadcast_to(bound, e.shape)
            unbounded = ~np.isfinite(np.broadcast_to(bound, e.shape))
        else:
            unbounded = np.zeros(e.shape, bool)
        close = np.abs(a - e) <= allowed
    return ~(both_nan | same_inf | close | unbounded)


def dot_bound(a: np.ndarray, b: np.ndarray, dtype: str) -> np.ndarray:
    """The summation-order error bound of a matrix product: 2 k eps (|a| @ |b|); inf where it overflows.

    A NaN operand counts as 0: it makes the result NaN in any order.
    """
    a = np.nan_to_num(np.abs(np.asarray(a, dtype=np.float64)), nan=0.0, posinf=np.inf)
    b = np.nan_to_num(np.abs(np.asarray(b, dtype=np.float64)), nan=0.0, posinf=np.inf)
    k = a.shape[-1] if a.ndim else 1
    eps = np.finfo(dtype).eps if np.dtype(dtype).kind == "f" else 0.0
    with np.errstate(all="ignore"):
        product = np.matmul(a, b) if a.ndim and b.ndim else a * b
        return np.where(product > np.finfo(dtype).max / 4 if eps else False, np.inf, 2 * k * eps * product)


def reference_precision(nodes) -> str | None:
    """The narrowest float dtype PyTensor's Python implementations compute these Apply nodes in.

    NumPy picks a ufunc loop by its inputs: `cos` of a bool, int8 or uint8 runs in
    float16 (int16: float32), even where PyTensor declares a float32 or float64
    output. The reference is then only that precise, and is judged so.
    """
    found: set[str] = set()
    for node in nodes:
        scalar = getattr(node.op, "scalar_op", None)
        if scalar is not None:
            found |= _scalar_precisions(scalar, [i.type.dtype for i in node.inputs])
    return narrowest(found)


def _scalar_precisions(scalar_op, dtypes) -> set[str]:
    inner = getattr(scalar_op, "fgraph", None)
    if inner is not None:  # Composite: its scalar graph, node by node
        found: set[str] = set()
        for node in inner.toposort():
            found |= _scalar_precisions(node.op, [i.type.dtype for i in node.inputs])
        return found
    found = set()
    if dtypes and all(np.dtype(d).kind in "biu" and np.dtype(d).itemsize <= 2 for d in dtypes):
        # NumPy's loop for small ints and bools: float16 (1 byte) or float32 (2 bytes), whatever the output type
        found.add("float16" if max(np.dtype(d).itemsize for d in dtypes) == 1 else "float32")
        if not any(np.dtype(o).kind == "f" for o in _output_dtypes(scalar_op, dtypes)):
            found.clear()
    for sample in (lambda d: np.ones(1, d), lambda d: np.ones((), d)[()]):  # as Elemwise calls it, or per element
        try:
            with np.errstate(all="ignore"):
                out = scalar_op.impl(*[sample(d) for d in dtypes])
        except Exception:
            continue
        outs = out if isinstance(out, tuple | list) else [out]
        found |= {np.asarray(o).dtype.name for o in outs if np.asarray(o).dtype.kind == "f"}
    return found


def _output_dtypes(scalar_op, dtypes) -> list[str]:
    from pytensor.scalar.basic import ScalarType

    try:
        return [t.dtype for t in scalar_op.output_types([ScalarType(d) for d in dtypes])]
    except Exception:
        return []
