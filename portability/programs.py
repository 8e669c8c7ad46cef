"""The programs of the portability matrix: what a user exports, with inputs at the ends of the range.

Each `Program` is PyTensor inputs and outputs with input arrays, the tolerance its numbers
are held to against PyTensor's own evaluation, and whether a run must fail (a check).
`PROGRAMS` are the twelve kinds the issue names; `pymc_programs()` adds the log-density and
gradient of every `tests/pymc` model (the PyMC environment only).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

F64_ENDS = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e-17, 0.5, 1.0, 2.0, 1.4616321449683623, 171.6, 1e300,
                     np.inf, -np.inf, np.nan, -2.5])
F32_ENDS = np.array([0.0, -0.0, 1e-45, 1e-38, 1.0, -1.5, 1e38, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan], dtype=np.float32)
I64 = np.iinfo(np.int64)


@attrs.frozen
class Program:
    name: str
    what: str
    inputs: list
    outputs: list
    arrays: list
    rtol: float = 1e-12
    atol: float = 0.0
    raises: bool = False
    #: the whole program is float32 (OpenVINO's column runs only these)
    float32: bool = False


def affine_int8_literal() -> Program:
    import pytensor.tensor as pt

    x = pt.vector("x", dtype="float32")
    return Program("affine_int8_literal", "float32 ((x * 2) + 3) / 4 (the 2 an int8 constant)", [x], [((x * 2) + 3) / 4], [F32_ENDS],
                   rtol=1e-6, float32=True)


def special_functions() -> Program:
    import pytensor.tensor as pt

    x = pt.dvector("x")
    outs = [pt.gammaln(x), pt.psi(x), pt.erf(x), pt.erfc(x), pt.log1p(x), pt.expm1(x), pt.sigmoid(x)]
    # not subnormals: SciPy's gammaln, PyTensor's Python code, overflows there (tests/e2e/test_special.py
    # checks ptonnx's -log|x| at them)
    points = F64_ENDS[np.isfinite(F64_ENDS) & (np.abs(F64_ENDS) < 2.3e-308) & (F64_ENDS != 0)]
    return Program("special_functions", "gammaln, digamma, erf, erfc, log1p, expm1, sigmoid at hard points", [x], outs,
                   [np.setdiff1d(F64_ENDS, points)], rtol=1e-13, atol=1e-300)


def betainc() -> Program:
    import pytensor.tensor as pt

    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    arrays = [np.array([0.5, 1.0, 2.0, 30.0, 1e-3, 5.0]), np.array([0.5, 3.0, 2.0, 40.0, 2.0, 1e-3]),
              np.array([0.3, 0.0, 1.0, 0.45, 1e-10, 0.999])]
    return Program("betainc", "regularised incomplete beta (an ONNX Loop)", [a, b, x], [pt.betainc(a, b, x)], arrays, rtol=1e-12)


def reductions_indexing() -> Program:
    import pytensor.tensor as pt

    x, i = pt.dmatrix("x"), pt.lvector("i")
    rows = np.array([[3.0, -0.0, np.inf, 1.0], [np.nan, 2.0, -1.0, 0.0], [5e-324, -5e-324, 1e300, -1e300]])
    outs = [pt.sort(x, axis=1), pt.argmax(x, axis=0), x[i].sum(axis=0), pt.cumsum(x, axis=1), x.max(axis=1),
            pt.argsort(x[:, 1])]
    return Program("reductions_indexing", "sort, argmax, x[i].sum, cumsum, max (NaN), argsort", [x, i], outs,
                   [rows, np.array([2, 0, -1, 2])], rtol=1e-15)


def ar1_scan() -> Program:
    import pytensor
    import pytensor.tensor as pt

    phi, e, y0 = pt.dscalar("phi"), pt.dmatrix("e"), pt.dvector("y0")
    ys, _ = pytensor.scan(lambda et, y, p: p * y + et, sequences=[e], outputs_info=[y0], non_sequences=[phi])
    noise = np.random.default_rng(0).normal(size=(25, 3))
    noise[3] = [np.inf, 1e300, -0.0]
    return Program("ar1_scan", "AR(1) Scan over a sequence (an ONNX Loop with per-trip outputs)", [phi, e, y0], [ys],
                   [np.asarray(0.9), noise, np.array([1.0, -2.0, 5e-324])], rtol=1e-14)


def lazy_ifelse() -> Program:
    import pytensor.tensor as pt
    from pytensor.ifelse import ifelse

    c, x = pt.lscalar("c"), pt.dvector("x")
    out = ifelse(pt.gt(c, 0), pt.exp(x).sum(), pt.log(x).sum())
    return Program("lazy_ifelse", "a lazy ifelse (an ONNX If)", [c, x], [out], [np.asarray(1), np.array([0.5, -1.0, 700.0])],
                   rtol=1e-15)


def cholesky_solve() -> Program:
    import pytensor.tensor as pt
    from pytensor.tensor.slinalg import cholesky, solve_triangular

    a, b = pt.dmatrix("a"), pt.dvector("b")
    rng = np.random.default_rng(1)
    m = rng.normal(size=(30, 30))
    return Program("cholesky_solve", "Cholesky and a triangular solve at a run-time size (Loops over MatMul)", [a, b],
                   [solve_triangular(cholesky(a), b, lower=True)], [m @ m.T + 30 * np.eye(30), rng.normal(size=30)], rtol=1e-10)


def eigvalsh() -> Program:
    import pytensor.tensor as pt

    a = pt.dmatrix("a")
    m = np.random.default_rng(2).normal(size=(12, 12))
    return Program("eigvalsh", "symmetric eigenvalues (one-sided Jacobi Loops)", [a], [pt.linalg.eigh(a)[0]], [m + m.T],
                   rtol=1e-10, atol=1e-12)


def negbinom_logp_grad() -> Program:
    import pytensor.tensor as pt

    n, p, y = pt.dscalar("n"), pt.dscalar("p"), pt.dvector("y")
    logp = (pt.gammaln(y + n) - pt.gammaln(n) - pt.gammaln(y + 1) + n * pt.log(p) + y * pt.log1p(-p)).sum()
    return Program("negbinom_logp_grad", "a negative-binomial log-density and its gradient", [n, p, y],
                   [logp, *pt.grad(logp, [n, p])], [np.asarray(3.5), np.asarray(0.3), np.array([0.0, 1.0, 7.0, 1e6])],
                   rtol=1e-12)


def conv_bn_silu() -> Program:
    import pytensor.tensor as pt

    from ptonnx import nn

    rng = np.random.default_rng(3)
    x = pt.tensor4("x", dtype="float32")
    w = rng.normal(size=(8, 3, 3, 3)).astype(np.float32)
    stats = [rng.normal(size=8).astype(np.float32) for _ in range(3)] + [(rng.random(8) + 0.5).astype(np.float32)]
    y = nn.silu(nn.batch_norm(nn.conv2d(x, w, stride=2, padding=1), *stats, eps=1e-3))
    return Program("conv_bn_silu", "float32 Conv + BatchNorm + SiLU (fused)", [x], [y],
                   [rng.normal(size=(2, 3, 16, 16)).astype(np.float32)], rtol=1e-4, atol=1e-5, float32=True)


def int64_limits() -> Program:
    import pytensor.tensor as pt

    a, b = pt.lvector("a"), pt.lvector("b")
    arrays = [np.array([I64.max, I64.min, -7, 7, -1, 0, I64.min + 1]), np.array([1, -1, 2, -2, I64.max, 3, -1])]
    return Program("int64_limits", "int64 + * // % at the limits (wrapping, floor division)", [a, b],
                   [a + b, a * b, a // b, a % b], arrays, rtol=0.0)


def index_out_of_range() -> Program:
    import pytensor.tensor as pt

    x, i = pt.dvector("x"), pt.lscalar("i")
    return Program("index_out_of_range", "x[i] with i past the end: must raise", [x, i], [x[i] * 2.0],
                   [np.arange(5.0), np.asarray(7)], raises=True)


PROGRAMS: dict[str, Callable[[], Program]] = {f.__name__: f for f in (
    affine_int8_literal, special_functions, betainc, reductions_indexing, ar1_scan, lazy_ifelse, cholesky_solve,
    eigvalsh, negbinom_logp_grad, conv_bn_silu, int64_limits, index_out_of_range)}


def pymc_programs() -> dict[str, Callable[[], Program]]:
    """The log-density and gradient of every `tests/pymc` model at its initial point (needs pymc)."""
    from tests.pymc import models

    def build(name: str) -> Program:
        import ptonnx.pymc as pp

        model = models.MODELS[name]()
        fg = pp.logp_graph(model)
        point = model.initial_point()
        arrays = [np.asarray(point[v.name], dtype=v.dtype) for v in fg.inputs]
        return Program(f"pymc:{name}", f"tests/pymc's {name}: logp and gradient", list(fg.inputs), list(fg.outputs), arrays,
                       rtol=1e-10, atol=1e-12)

    return {f"pymc:{name}": (lambda name=name: build(name)) for name in models.MODELS}
