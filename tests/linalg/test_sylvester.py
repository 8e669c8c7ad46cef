"""solve_sylvester, solve_continuous_lyapunov and solve_discrete_lyapunov (bilinear; the direct method
is a Solve: tests/linalg/test_linalg.py) from PyTensor graphs against PyTensor's own evaluation (Bartels-Stewart: Schur forms and LAPACK trsyl),
plain and rewritten graphs, at both onnxruntime levels: sizes 0 to 200 through one model (unknown
sizes), batches, float32, ill-conditioned equations (held to their residual), inf and NaN inputs,
singular equations (where ptonnx and LAPACK part ways: see test_singular_equations), gradients."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx.testing import ORT_LEVELS, session_options
from tests.conftest import REFERENCE_MODE, check_like_pytensor
from tests.lifting.helpers import lazy_reference, no_c_compiler
from tests.linalg.helpers import EPS, normwise, rng as _rng


@pytest.fixture(autouse=True)
def _inner_graphs_in_python():
    """PyTensor evaluates an OpFromGraph's inner graph in its default mode: in PyTensor 3 numba, whose
    JIT takes a minute over these graphs and whose Schur refuses the read-only arrays Blockwise
    passes; the Python implementations (SciPy's LAPACK) are the reference, as in tests/lifting."""
    with no_c_compiler(), pytensor.config.change_flags(mode=lazy_reference()):
        yield


REACHED_BY = {"SolveSylvester": ("test_solve_sylvester_sizes_and_non_finite_inputs", "test_lyapunov_equations",
                                 "test_batches_and_float32", "test_gradients", "test_large_equations")}

#: c in |ptonnx - PyTensor| <= c (mn) eps ||X||: windows of B's Schur form solved by LU against
#: Bartels-Stewart, both backward stable; the equations here are well conditioned
C = 8.0


def _problem(m, n, seed=0, batch=()):
    """A and -B with eigenvalues far apart (A near 3 I, B near 2 I): a well-conditioned equation."""
    rng = _rng(seed)
    a = rng.normal(size=batch + (m, m)) / np.sqrt(max(m, 1)) + 3 * np.eye(m)
    b = rng.normal(size=batch + (n, n)) / np.sqrt(max(n, 1)) + 2 * np.eye(n)
    return [a, b, rng.normal(size=batch + (m, n))]


def _stable(n, seed=0, radius=0.5):
    """A matrix of spectral radius `radius` (a stable discrete system; -(I - A) a stable continuous one)."""
    g = _rng(seed).normal(size=(n, n))
    largest = np.max(np.abs(np.linalg.eigvals(g)), initial=1.0) if n else 1.0
    return g * (radius / largest)


def _compare(values):
    """normwise, with n = m n (the number of unknowns)."""
    size = max(values[0].shape[-1] * values[-1].shape[-1], 4)
    return lambda actual, expected, context: normwise(actual, expected, context, n=size)


def test_solve_sylvester_sizes_and_non_finite_inputs():
    """One model for m x n = 0 x 0, 1 x 1, 2 x 2, 5 x 3, 3 x 5, 20 x 20 and 50 x 50 (200 x 200:
    test_large_equations); an inf or NaN in A or C gives NaN everywhere, as PyTensor."""
    a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    out = pt.linalg.solve_sylvester(a, b, c)
    lists = [_problem(m, n, seed=m + n) for m, n in ((2, 2), (5, 3), (3, 5), (20, 20), (50, 50))]
    for k, value in ((0, np.nan), (2, np.nan), (0, np.inf), (2, -np.inf)):
        lists.append(_problem(4, 3))
        lists[-1][k][1, 2] = value
    check_like_pytensor([a, b, c], [out], _problem(1, 1), more_values=lists, compare_for=_compare)
    # empty: PyTensor's TRSYL returns (not stores) its empty result, so its Python implementation
    # has no number there; X is empty
    cm = ptonnx.compile_function([a, b, c], [out])
    for m, n in ((0, 0), (0, 3), (2, 0)):
        (x,) = cm(*_problem(m, n))
        assert x.shape == (m, n) and x.dtype == np.float64
    # an inf in B: PyTensor 3's Schur form of it is finite nonsense (2.38's NaN); ptonnx gives NaN
    bad = _problem(4, 3)
    bad[1][1, 1] = -np.inf
    (x,) = ptonnx.compile_function([a, b, c], [out])(*bad)
    assert np.isnan(x).all()


def test_shapes_that_do_not_fit_raise():
    """A or B not square, C not of A's rows and B's columns: ValueError (PyTensor 3's class; 2.38's
    Schur raises scipy's flapack.error for a non-square A)."""
    a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    cm = ptonnx.compile_function([a, b, c], [pt.linalg.solve_sylvester(a, b, c)])
    good = _problem(3, 2)
    for bad in ([np.ones((3, 4)), good[1], good[2]], [good[0], good[1], np.ones((4, 2))], [good[0], good[1], np.ones((3, 3))]):
        with pytest.raises(ValueError):
            cm(*bad)


def test_lyapunov_equations():
    """solve_continuous_lyapunov (SolveSylvester of A and A^T) and solve_discrete_lyapunov's bilinear
    method (PyTensor's Cayley transform, inlined, around SolveSylvester; the direct method is a Solve
    of the n^2 x n^2 Kronecker system: test_linalg.py); the bilinear transform of a matrix with
    eigenvalue -1 is NaN, as PyTensor."""
    a, q = pt.dmatrix("a"), pt.dmatrix("q")
    outs = [pt.linalg.solve_continuous_lyapunov(a, q), pt.linalg.solve_discrete_lyapunov(a, q)]
    spd = lambda n, seed: (lambda g: g @ g.T + np.eye(n))(_rng(seed).normal(size=(n, n)))  # noqa: E731
    lists = [[_stable(n, n) - np.eye(n) * 0.2, spd(n, n + 1)] for n in (2, 5, 12)] + [[-np.eye(3), spd(3, 9)]]
    check_like_pytensor([a, q], outs, [_stable(1, 1), spd(1, 2)], more_values=lists,
                        compare_for=lambda values: lambda x, e, c: normwise(x, e, c, n=40 * max(values[0].shape[0], 1) ** 2))


def test_batches_and_float32():
    """Batch axes broadcast as Blockwise (a batch of A against one B and C); an empty batch (PyTensor
    cannot evaluate it: ptonnx gives an empty result); float32 (computed in float64, rounded once)."""
    a3, b, c = pt.dtensor3("a3"), pt.dmatrix("b"), pt.dmatrix("c")
    out = pt.linalg.solve_sylvester(a3, b, c)
    a, bb, cc = _problem(4, 3, batch=(3,))
    a[1, 0, 0] = np.nan  # only its own matrix is NaN
    check_like_pytensor([a3, b, c], [out], [a, bb[0], cc[0]], compare_for=_compare)
    (x,) = ptonnx.compile_function([a3, b, c], [out])(a[:0], bb[0], cc[0])
    assert x.shape == (0, 4, 3)
    f32 = [pt.fmatrix(n) for n in "abc"]
    check_like_pytensor(f32, [pt.linalg.solve_sylvester(*f32)], [v.astype("float32") for v in _problem(5, 4)],
                        more_values=[[v.astype("float32") for v in _problem(12, 9, seed=1)]], compare_for=_compare)


def test_ill_conditioned_equation_is_held_to_its_residual():
    """A and -B with eigenvalues 1e-9 apart: the solution is as close to LAPACK's as the condition
    allows; the residual ||A X + X B - C|| is small against ||A|| ||X|| (backward stability of LU)."""
    rng = _rng(30)
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    a = q @ np.diag([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]) @ q.T
    b = -np.diag([1.0 + 1e-9, 7.5, 9.0, 11.0])
    c = rng.normal(size=(6, 4))
    aa, bb, cc = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    (x,) = ptonnx.compile_function([aa, bb, cc], [pt.linalg.solve_sylvester(aa, bb, cc)])(a, b, c)
    residual = np.abs(a @ x + x @ b - c).max() / ((np.abs(a).max() + np.abs(b).max()) * np.abs(x).max())
    assert residual <= C * 24 * EPS, residual
    expected = pytensor.function([aa, bb, cc], pt.linalg.solve_sylvester(aa, bb, cc), mode=REFERENCE_MODE)(a, b, c)
    assert np.abs(x - expected).max() <= 1e9 * C * 24 * EPS * np.abs(expected).max()


def test_singular_equations():
    """A and -B sharing an eigenvalue: no solution, or many. LAPACK's trsyl perturbs the Schur forms
    and PyTensor returns a huge finite number; ptonnx gives NaN where LU meets an exactly zero pivot
    and a huge finite number where rounding leaves a tiny one: never a number of ordinary size."""
    a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    out = pt.linalg.solve_sylvester(a, b, c)
    cm = ptonnx.compile_function([a, b, c], [out])
    reference = pytensor.function([a, b, c], out, mode=REFERENCE_MODE)
    rhs = _rng(31).normal(size=(3, 2))
    for a_, b_ in ((np.diag([1.0, 2.0, 3.0]), np.diag([-1.0, 5.0])), (np.zeros((3, 3)), np.zeros((2, 2)))):
        (x,) = cm(a_, b_, rhs)
        assert np.isnan(x).all()
        assert np.isfinite(reference(a_, b_, rhs)).all()
    q, _ = np.linalg.qr(_rng(32).normal(size=(3, 3)))
    (x,) = cm(q @ np.diag([1.0, 2.0, 3.0]) @ q.T, np.diag([-2.0, 5.0]), rhs)  # a rounded zero pivot
    assert np.isnan(x).all() or np.abs(x).max() > 1e10


def test_gradients():
    """PyTensor's gradients: solve_sylvester of the transposed equation (Kao and Hennequin), and
    for the bilinear discrete Lyapunov the gradient of its inlined graph (an OpFromGraph)."""
    a, b, c, q = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c"), pt.dmatrix("q")
    weights = _rng(33).normal(size=(3, 3))
    sylvester = (pt.linalg.solve_sylvester(a, b, c) * weights[:, :2]).sum()
    lyapunov = (pt.linalg.solve_discrete_lyapunov(a, q) * weights).sum()
    outs = [sylvester, *pytensor.grad(sylvester, [a, b, c]), lyapunov, *pytensor.grad(lyapunov, [a, q])]
    stable = _stable(3, 4) - 0.2 * np.eye(3)
    _, b_, c_ = _problem(3, 2)
    check_like_pytensor([a, b, c, q], outs, [stable, b_ + 2 * np.eye(2), c_, np.eye(3) + 0.1 * np.ones((3, 3))],
                        compare_for=lambda values: lambda x, e, ctx: normwise(x, e, ctx, n=400))


@pytest.mark.one_environment  # the decomposition's numbers at sizes PyTensor's lifting does not change
def test_large_equations():
    """m = n = 200 (a random B: mostly complex pairs in its Schur form) at both onnxruntime levels,
    and continuous and discrete (bilinear) Lyapunov at n = 50 (both levels) and 200 (one level:
    some 20 s a call), through one model each with unknown sizes."""
    a, b, c, q = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c"), pt.dmatrix("q")
    cases = [([a, b, c], [pt.linalg.solve_sylvester(a, b, c)], [(_problem(200, 200, seed=40), ORT_LEVELS)])]
    spd = lambda n, seed: (lambda g: g @ g.T / n + np.eye(n))(_rng(seed).normal(size=(n, n)))  # noqa: E731
    # eigenvalues in the disc of radius 0.4 about -0.5: stable for both equations, well conditioned
    lyapunov = [([_stable(n, n, radius=0.4) - 0.5 * np.eye(n), spd(n, n + 1)], levels) for n, levels in ((50, ORT_LEVELS), (200, ORT_LEVELS[-1:]))]
    cases.append(([a, q], [pt.linalg.solve_continuous_lyapunov(a, q), pt.linalg.solve_discrete_lyapunov(a, q)], lyapunov))
    for variables, outs, runs in cases:
        cm = ptonnx.compile_function(variables, outs)
        reference = pytensor.function(variables, outs, mode=REFERENCE_MODE)
        for values, levels in runs:
            expected = reference(*values)
            for level in levels:
                actual = cm.with_session_options(session_options(level))(*values)
                for x, e in zip(actual, expected, strict=True):
                    normwise(x, e, f"{level} n = {values[0].shape[0]}", n=values[0].shape[0] ** 2)


def test_every_linalg_sylvester_op_is_reached_from_pytensor():
    a, b, c = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("c")
    programs = {"SolveSylvester": pt.linalg.solve_sylvester(a, b, c)}
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([a, b, c], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {n for n, s in ptonnx.ir.all_schemas().items() if s.family == "linalg_sylvester"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
