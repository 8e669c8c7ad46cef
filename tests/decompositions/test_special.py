"""The special functions (family "special": IR ops with SciPy's semantics that `decompose`
rewrites into ops onnxruntime runs, decompositions/special/) as hand-built one-node graphs,
compiled as `ptonnx.compile` does and run at both onnxruntime levels against `interpret`
(SciPy) with `assert_same`'s tolerance, as tests/e2e/test_special.py compares with PyTensor:
a few representative points each, with the ends of the domain (±0, ±inf, NaN, subnormals,
poles, the edges between a decomposition's branches). Points where SciPy itself is wrong
(test_special's departures, tests/e2e/test_accuracy.py against mpmath) are not used here.
One float64 graph per op; a float32 and a float16 graph for the unary functions, which
`decompose` computes in float64 and rounds once."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.ir import TensorType as T
from ptonnx.testing import assert_same
from tests.lowering.harness import compiled, interpret, one_node

pytestmark = pytest.mark.one_environment  # hand-built IR: no PyTensor involved

NAN, INF = np.nan, np.inf
EDGES = (0.0, -0.0, 5e-324, -5e-324, 1e-300, INF, -INF, NAN)


def grid(*columns):
    """Every combination of the columns' values, as one array per argument."""
    mesh = np.meshgrid(*[np.asarray(c, dtype=np.float64) for c in columns], indexing="ij")
    return [m.ravel() for m in mesh]


#: Hyp2F1 at z = 1 with c - a - b <= 0 (a, b not non-positive integers): the limit z -> 1-, infinite with the
#: sign of Gamma(c) / (Gamma(a) Gamma(b)) (mpmath: test_hyp2f1_diverges_at_one_with_the_limits_sign); SciPy
#: says +inf for the last five (interpret's semantics are fixed there, ptonnx/ir/ops/special_fixes.py)
HYP2F1_DIVERGES = [(0.5, 1.5, -0.5, 1.0), (3.0, 1.5, -0.5, 1.0), (0.5, 1.5, 2.0, 1.0), (-1.5, -1.5, -3.0, 1.0),
                   (-0.5, 2.5, 1.75, 1.0), (-0.5, 2.5, 2.0, 1.0), (1.5, -0.375, 0.625, 1.0), (2.0, -3.5, -2.25, 1.0),
                   (-0.875, -3.5, -5.125, 1.0)]
#: op -> its arguments (one float64 array each, all of one length), where SciPy is right
POINTS: dict[str, list[np.ndarray]] = {
    "Erfc": grid([*EDGES, 0.5, -1.0, 8.0, 26.0, 27.3, -30.0, 1e300]),
    "Erfcx": grid([*EDGES, 1.0, 8.0, 50.0, 1e8, 1e300, -1.0, -26.0, -26.7]),
    "GammaLn": grid([0.0, -0.0, INF, -INF, NAN, 1e-300, 1.0, 2.0, 0.5, 13.0, 1e300, -0.5, -1.0, -2.5, -171.5]),
    "Gamma": grid([*EDGES, 1.0, 0.5, 13.0, 171.6, 171.7, -0.5, -1.0, -170.5, 1e-310]),
    "Psi": grid([*EDGES, 1.0, 1.4616321449683622, 10.0, -0.5, -1.0, -2.5, 1e300]),
    "TriGamma": grid([*EDGES, 1.0, 0.5, 10.0, -0.5, -1.0, -2.5, 1e300]),
    "Erfinv": grid([0.0, 5e-324, -5e-324, 1e-300, INF, -INF, NAN, 0.5, -0.9, 1.0, -1.0, 1 - 2**-53, 1.5, 1e-20]),
    "Erfcinv": grid([0.0, -0.0, -5e-324, 1e-300, INF, -INF, NAN, 0.5, 1.0, 1.5, 2.0, 2.5, 1e-20, 2 - 2**-52]),
    "I0": grid([0.0, -0.0, 5e-324, -5e-324, 1e-300, NAN, 0.5, -8.0, 20.0, 700.0, 709.0, 714.0, 1e300]),
    "I1": grid([0.0, 5e-324, 1e-300, NAN, 0.5, -8.0, 20.0, 700.0, 709.0, 714.0, 1e300, -1e300]),
    "J0": grid([0.0, -0.0, 5e-324, -5e-324, 1e-300, NAN, 0.5, -8.0, 2.404825557695773, 25.0, 1e8]),
    "J1": grid([0.0, -0.0, 5e-324, -5e-324, 1e-300, NAN, 0.5, -8.0, 3.8317059702075125, 25.0, 1e8]),
    "Ive": grid([0.0, 1.0, -1.0, 2.5, 25.0, 99.0, NAN], [0.0, 5e-324, 1e-300, NAN, 0.5, -3.0, 20.0, 700.0, 1e5]),
    "Iv": grid([0.0, 1.0, -1.0, 2.5, 25.0, 99.0, NAN], [0.0, NAN, 0.5, -3.0, 20.0, 700.0, 713.0]),
    "Jv": grid([0.0, 1.0, -1.0, 3.0, -7.0, 33.0, NAN], [0.0, 5e-324, 1e-300, NAN, 0.5, -3.0, 20.0, 50.0, 1e5]),
    "Kve": [np.concatenate(c) for c in zip(grid([0.0, 1.0, -1.5, 0.3, 25.0, 99.0], [0.0, -0.0, 1e-300, NAN, 0.5, 20.0, 700.0, 1e5]),
                                            grid([NAN], [0.5, 20.0, NAN]), strict=True)],
    "OwensT": grid([*EDGES, 0.5, 2.0, 9.0, 38.6, 1e300], [0.0, -0.0, 0.5, 1.0, 1 + 2**-52, -2.0, 1e300, INF, -INF, NAN]),
    "GammaInc": grid([0.0, 0.5, 1.0, 30.0, 1e4, INF, NAN, -1.0], [0.0, -0.0, 1e-300, INF, -INF, NAN, 0.5, 1.0, 31.0, 1e4]),
    "GammaIncC": grid([0.0, 5e-324, 0.5, 1.0, 30.0, 1e4, INF, NAN, -1.0], [*EDGES, 0.5, 1.0, 31.0, 1e4]),
    "GammaU": grid([0.5, 1.0, 3.0, 30.0, 171.0, 200.0, NAN, -1.0], [*EDGES, 0.5, 1.0, 31.0]),
    "GammaL": grid([0.5, 1.0, 3.0, 30.0, NAN, -1.0], [0.0, -0.0, 1e-300, INF, -INF, NAN, 0.5, 1.0, 31.0]),
    "GammaIncInv": grid([0.5, 1.0, 3.0, 100.0, INF, NAN, -1.0], [0.0, -0.0, 1.0, 0.5, 1e-20, 0.999, 1 - 2**-53, -0.5, 1.5, NAN]),
    "GammaIncCInv": grid([0.5, 1.0, 3.0, 100.0, INF, NAN, -1.0], [0.0, -0.0, 1.0, 0.5, 1e-20, 0.999, 1 - 2**-53, -0.5, 1.5, NAN]),
    "BetaInc": grid([0.5, 2.0, 30.0, NAN, -1.0], [0.5, 3.0, 1e3], [0.0, 1.0, 0.5, 1e-300, 0.999, 1e-3, -0.5, 1.5, NAN]),
    # (few parameters: its Newton iterations run until the slowest element converges)
    "BetaIncInv": grid([0.5, 2.0, NAN], [3.0, 1e3], [0.0, 1.0, 0.5, 1e-20, 0.3, 0.999, -0.5, 1.5, NAN]),
    "Hyp2F1": [np.concatenate(c) for c in zip(
        grid([0.5, -2.0, 3.0], [1.5, -1.0], [2.5, 4.0], [0.0, -0.0, 0.5, -0.5, 0.95, -19.0, 1e-300, 0.3, -5.0, 1.0, NAN]),
        np.array(HYP2F1_DIVERGES).T, strict=True)],
    "PolyGamma": [np.concatenate(c) for c in zip(grid([0, 1, 2, 3, 7, 20, -1], [*EDGES, 0.5, 2.5, 1e3]),
                                                  grid([0, 1], [-2.5, -0.3]), strict=True)],
}
#: where SciPy (interpret's reference) is wrong, test_special's departures: op -> ((args, the exact value), ...),
#: each by mpmath (a value the model gives, checked by the forward function where it is an inverse) or by
#: symmetry (odd functions keep the sign of a zero, and limits at infinity); checked against the model alone
EXACT: dict[str, tuple] = {
    "Erfinv": (((-0.0,), -0.0),),
    "Erfcinv": (((5e-324,), 27.21329321081295),),  # SciPy: inf
    "I0": (((INF,), INF), ((-INF,), INF), ((713.98,), 1.785325134768229e+308)),  # SciPy 1.17: NaN; inf
    "I1": (((-0.0,), -0.0), ((INF,), INF), ((-INF,), -INF), ((713.98,), 1.7840744336676367e+308)),
    "J0": (((INF,), 0.0), ((-INF,), 0.0)),
    "J1": (((INF,), 0.0), ((-INF,), -0.0)),
    "Ive": (((1.0, INF), 0.0), ((1.0, -INF), -0.0), ((-1.0, -0.0), -0.0), ((25.0, -5e-324), -0.0), ((0.0, INF), 0.0)),
    "Iv": (((0.0, 5e-324), 1.0), ((1.0, 1e-300), 5e-301), ((1.0, -0.0), -0.0), ((1.0, INF), INF), ((1.0, -INF), -INF),
           ((NAN, INF), NAN), ((NAN, -INF), NAN),
           ((0.0, -INF), INF), ((2.5, INF), INF), ((-1.0, -5e-324), -0.0)),
    "Jv": (((1.0, -0.0), -0.0), ((-1.0, -0.0), 0.0), ((3.0, INF), 0.0), ((-7.0, -0.0), 0.0), ((0.0, -INF), 0.0)),
    "Kve": (((0.3, INF), 0.0), ((99.0, INF), 0.0), ((0.0, 5e-324), 744.5560034370396), ((0.3, 5e-324), 1.8073515188303354e+97)),
    "GammaInc": (((5e-324, 0.5), 1.0), ((5e-324, 5e-324), 1.0), ((1.0, 5e-324), 5e-324)),
    "GammaL": (((1.0, 5e-324), 5e-324), ((171.0, 0.5), 1.188479489858891e-54), ((200.0, 1.0), 0.0018485939631227091),
               ((200.0, 0.5), 1.8919310189102707e-63)),  # SciPy's P(a, x) Gamma(a): 0 and NaN
    "BetaIncInv": (((2.0, 1000.0, 1e-300), 1.4135069854803842e-153),),  # SciPy: NaN
    "PolyGamma": (((20, -2.5), -9182070.204945628),),  # SciPy's sum cancels for x < 0, n >= 2
}
COVERS = frozenset(POINTS)
UNARY = sorted(op for op, args in POINTS.items() if len(args) == 1)


def _types(op: str, dtype: str, n: int):
    return [T("int64" if op == "PolyGamma" and k == 0 else dtype, (None,)) for k in range(n)]


def _arrays(op: str, dtype: str) -> list[np.ndarray]:
    """POINTS in `dtype`; for a narrow float, those it keeps finite and nonzero (a value it makes
    0, -0 or inf, the ends it has, is its own point in POINTS or EXACT)."""
    with np.errstate(over="ignore", under="ignore"):
        arrays = [a.astype("int64" if op == "PolyGamma" and k == 0 else dtype) for k, a in enumerate(POINTS[op])]
    with np.errstate(invalid="ignore"):
        kept = np.logical_and.reduce([(np.isfinite(a) == np.isfinite(p)) & ((a == 0) == (p == 0)) for a, p in zip(arrays, POINTS[op], strict=True)])
    return [a[kept] for a in arrays]


def test_every_special_op_has_points():
    assert {n for n, s in ir.all_schemas().items() if s.family == "special"} == COVERS


def _exact(op: str, dtype: str):
    """EXACT's arguments of `op` (one array each) and the exact values, in `dtype` (the arguments
    `dtype` keeps: a value it makes 0 or inf is another point)."""
    cases = [(args, value) for args, value in EXACT.get(op, ()) if all(
        np.isfinite(np.asarray(a, dtype)) == np.isfinite(a) and (np.asarray(a, dtype) == 0) == (a == 0) for a in args)]
    n = len(POINTS[op])
    with np.errstate(over="ignore", under="ignore"):
        args = [np.array([c[0][k] for c in cases], dtype="int64" if op == "PolyGamma" and k == 0 else dtype) for k in range(n)]
        return args, np.array([c[1] for c in cases], dtype=dtype)


def _check(op: str, dtype: str) -> None:
    """One model of `op` in `dtype`, run once per level on POINTS (against interpret), EXACT (against
    the exact values), then on size-0 inputs."""
    case = compiled(one_node(op, _types(op, dtype, len(POINTS[op]))))
    points, (exact_args, exact) = _arrays(op, dtype), _exact(op, dtype)
    arrays = [np.concatenate(parts) for parts in zip(points, exact_args, strict=True)]
    (expected,) = interpret(case.reference, *arrays)
    n = points[0].size
    for level, run in case.runs.items():
        (got,) = run(*arrays)
        context = f"{op} at {level} on {[a.tolist() for a in arrays]}"
        assert_same(got[:n], expected[:n], context)
        assert_same(got[n:], exact, f"exact values: {context}")
    case.check(*[a[:0] for a in arrays])


def test_hyp2f1_diverges_at_one_with_the_limits_sign():
    """interpret (and so the model, test_float64_points) against mpmath's 2F1 at 1 - 1e-40."""
    import mpmath

    with mpmath.workdps(60):
        limits = [float(mpmath.hyp2f1(a, b, c, 1 - mpmath.mpf(10) ** -40)) for a, b, c, _ in HYP2F1_DIVERGES]
    (got,) = interpret(one_node("Hyp2F1", _types("Hyp2F1", "float64", 4))(), *np.array(HYP2F1_DIVERGES).T)
    np.testing.assert_array_equal(got, np.copysign(INF, limits))


@pytest.mark.parametrize("op", sorted(POINTS))
def test_float64_points(op):
    _check(op, "float64")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("op", UNARY)
def test_narrow_floats_are_float64_rounded_once(op, dtype):
    _check(op, dtype)
