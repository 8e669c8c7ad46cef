"""Eigh and Eigvalsh from PyTensor graphs (both PyTensor lines: 3's Eigh and Eigvalsh, 2.38's NumPy
Eigh with its EighGrad and SciPy Eigvalsh with its EigvalshGrad), at both onnxruntime levels.

Eigenvalues are unique: compared with PyTensor's evaluation (`check_like_pytensor`, within
C n eps ||w||). Eigenvectors are not (signs, bases of repeated eigenvalues): held to their
defining properties, ||A V - V diag(w)|| <= RECONSTRUCTION n eps ||A|| and ||V^T V - I|| <=
ORTHOGONALITY n eps (max norms). Covered: sizes 0 to 200 through one model, batches (empty,
broadcast), float32, both triangles with the other full of NaN or junk, repeated eigenvalues,
condition 1e8, magnitudes 1e150 to 1e-300, NaN and inf (PyTensor's outcome), gradients, the
generalised problem a v = w b v.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.blockwise import Blockwise

import ptonnx
from ptonnx.errors import CheckFailedError
from ptonnx.testing import ORT_LEVELS, session_options
from tests.conftest import REFERENCE_MODE, check_like_pytensor
from tests.linalg.helpers import EPS, SIZES, normwise, rng, spd

PT3 = not pytensor.__version__.startswith("2.")
if PT3:
    from pytensor.tensor.linalg import Eigh
else:
    from pytensor.tensor.nlinalg import Eigh

#: c in ||A V - V diag(w)|| <= c n eps ||A|| and in ||V^T V - I|| <= c n eps (measured: below 1.8)
RECONSTRUCTION = ORTHOGONALITY = 4.0

REACHED_BY = {"Eigh": ("test_eigenvectors_sizes_through_one_model", "test_eigenvalues_like_pytensor",
                       "test_gradients", "test_generalised_problem"),
              "Eigvalsh": ("test_eigenvalues_like_pytensor", "test_batches_and_float32", "test_generalised_problem")}


def eigh(x, lower=True):
    return pt.linalg.eigh(x, lower=lower) if PT3 else pt.linalg.eigh(x, "L" if lower else "U")


def eigvalsh(x, b=None, lower=True):
    if PT3:
        return pt.linalg.eigvalsh(x, b, lower=lower)
    from pytensor.tensor.type_other import NoneConst

    return pt.linalg.eigvalsh(x, NoneConst if b is None else b, lower=lower)


def symmetric(n, batch=(), seed=0):
    g = rng(seed).normal(size=batch + (n, n))
    return g + np.swapaxes(g, -1, -2)


def with_spectrum(values, seed=0):
    """Q diag(values) Q^T, Q a random orthogonal matrix."""
    q, _ = np.linalg.qr(rng(seed).normal(size=(len(values), len(values))))
    a = (q * np.asarray(values, float)) @ q.T
    return (a + a.T) / 2


def check_properties(a, w, v, context="", dtype_eps=EPS, b=None):
    """w as LAPACK's within C n eps ||A||, A V = (B) V diag(w), V^T (B) V = I."""
    n = a.shape[-1]
    assert w.shape == a.shape[:-1] and v.shape == a.shape, context
    if n == 0 or a.size == 0:
        return
    norm = np.abs(np.linalg.eigvalsh(a) if b is None else w).max(initial=0) or 1.0
    bv = v if b is None else b @ v
    rec = np.abs(a @ v - bv * w[..., None, :]).max()
    orth = np.abs(np.swapaxes(v, -1, -2) @ bv - np.eye(n)).max()
    assert rec <= RECONSTRUCTION * n * dtype_eps * norm, f"{context}: ||AV - VW|| = {rec:.3g}"
    assert orth <= ORTHOGONALITY * n * dtype_eps, f"{context}: ||V^T V - I|| = {orth:.3g}"
    assert np.all(np.diff(w, axis=-1) >= 0), f"{context}: not ascending"


def test_eigenvectors_sizes_through_one_model():
    """n = 0 to 200 through one model (n unknown), both triangles, the other full of junk (a
    triangle is all LAPACK reads); n = 200 once, at one level (some 2 s)."""
    x = pt.dmatrix("x")
    for lower in (True, False):
        cm = ptonnx.compile_function([x], [*eigh(x, lower)])
        runs = [cm.with_session_options(session_options(level)) for level in ORT_LEVELS]
        for n in SIZES:
            a = symmetric(n, seed=n)
            junk = np.where(np.tri(n, k=-1, dtype=bool).T if lower else np.tri(n, k=-1, dtype=bool), 1e9, a)
            for run in runs[:1] if n == 200 or (not lower and n > 5) else runs:
                w, v = run(junk)
                check_properties(a, w, v, f"n={n} lower={lower}")


def test_eigenvalues_like_pytensor():
    """The eigenvalues, of Eigh and Eigvalsh, against PyTensor's; the unread triangle full of NaN
    (SciPy's check_finite raises ValueError there, NumPy's eigh reads one triangle); NaN and inf
    where LAPACK reads them (ValueError, or NumPy's LinAlgError)."""
    x = pt.dmatrix("x")
    nan_above = symmetric(6) + np.triu(np.full((6, 6), np.nan), 1)
    nan_below = symmetric(6) + np.tril(np.full((6, 6), np.nan), -1)
    nan_read = symmetric(5)
    nan_read[3, 1] = nan_read[1, 3] = np.nan
    nan_diagonal = symmetric(5)
    nan_diagonal[2, 2] = np.nan
    values = [[symmetric(n, seed=n)] for n in (1, 2, 5, 50)]
    values += [[np.eye(4)], [with_spectrum([2, 2, 2, -1, 5, 0.5, 5])], [np.zeros((3, 3))],
               [nan_above], [nan_below], [nan_read], [nan_diagonal]]
    for lower in (True, False):
        w, v = eigh(x, lower)
        check_like_pytensor([x], [w, eigvalsh(x, lower=lower)], [symmetric(0)], more_values=values, compare=normwise)


def test_hard_inputs():
    """Repeated eigenvalues, condition 1e8, magnitudes 1e150 to 1e-300 (scaled by a power of two:
    no overflow or underflow), and inf (SciPy: ValueError; NumPy's eigh gives NaN or raises
    LinAlgError, ptonnx raises LinAlgError for every matrix holding inf or NaN it reads)."""
    x = pt.dmatrix("x")
    outs = [*eigh(x)]
    cm = ptonnx.compile_function([x], outs)
    base = symmetric(12, seed=3)
    cases = {"identity": np.eye(6), "3-fold": with_spectrum([1, 2, 2, 2, 3, -1, 5, 5, 0.5]),
             "cond 1e8": spd(40, cond=1e8), "zeros": np.zeros((4, 4)),
             "negative diagonal": np.diag([-3.0, -1.0, 0.0, -1.0, 2.0, -5.0]),  # Gershgorin's bound is exact
             "+-1": with_spectrum([1.0, -1.0] * 20), "all negative": -spd(30)}
    cases |= {f"scale {s}": base * s for s in (1e150, 1e-150, 1e-300, 1e300)}
    cases |= {f"positive definite, scale {s}": spd(20, seed=11) * s for s in (1e300, 1e-300, 5e-324 * 2**60)}  # one pass
    for name, a in cases.items():
        w, v = cm(a)
        check_properties(a, w, v, name)
        normwise(w, np.linalg.eigvalsh(a), name)
    infinite = symmetric(5)
    infinite[1, 1] = np.inf
    with pytest.raises(CheckFailedError) as raised:
        cm(infinite)
    assert isinstance(raised.value, ValueError if PT3 else np.linalg.LinAlgError)


def test_batches_and_float32():
    """Batches (an empty one, a batch of empty matrices), float32 (computed in float64, rounded)."""
    x3 = pt.tensor3("x3", dtype="float64")
    vecs = (eigh(x3) if PT3 else Blockwise(Eigh("L"), signature="(m,m)->(m),(m,m)")(x3))
    outs = [eigvalsh(x3)] if PT3 else [vecs[0]]  # 2.38's Eigvalsh takes b under Blockwise
    values = [[symmetric(0, (2,))], [symmetric(3, (0,))]]
    check_like_pytensor([x3], outs, [symmetric(7, (3,))], more_values=values, compare=normwise)
    cm = ptonnx.compile_function([x3], [*vecs])
    for a in (symmetric(9, (4,)), symmetric(3, (0,)), symmetric(0, (2,))):
        check_properties(a, *cm(a), f"batch {a.shape}")
    xf = pt.fmatrix("xf")
    check_like_pytensor([xf], [eigvalsh(xf), eigh(xf)[0]], [symmetric(8).astype("float32")], compare=normwise)
    (w, v) = ptonnx.compile_function([xf], [*eigh(xf)])(symmetric(30).astype("float32"))
    assert w.dtype == v.dtype == np.float32
    check_properties(symmetric(30), w.astype(float), v.astype(float), "float32", dtype_eps=float(np.finfo(np.float32).eps))


def test_eigh_in_blocks_batched_and_static():
    """From n = 48 on, the Jacobi runs in blocks of rows (`svd_block.py`): a batch whose matrices
    differ (random, +-1, graded, negative definite: two passes), and one of positive definite
    matrices (condition 1e8, repeated values, diagonal: one pass, `eigh._positive_definite`),
    through a model of unknown sizes and one of sizes the graph fixes."""
    mixed = np.stack([symmetric(50, seed=4), with_spectrum([1.0, -1.0] * 25, seed=5),
                      with_spectrum(np.logspace(0, -8, 50) * np.resize([1.0, -1.0], 50), seed=6), -spd(50)])
    definite = np.stack([spd(50, seed=7), spd(50, cond=1e8, seed=8), with_spectrum(np.repeat([1.0, 3.0, 1e-6], 17)[:50], seed=9),
                         np.diag(np.linspace(1.0, 2.0, 50))])
    for batch in (mixed, definite):
        for x, context in ((pt.dtensor3("x3"), "unknown sizes"), (pt.tensor("fixed", dtype="float64", shape=batch.shape), "fixed sizes")):
            vecs = eigh(x) if PT3 else Blockwise(Eigh("L"), signature="(m,m)->(m),(m,m)")(x)
            cm = ptonnx.compile_function([x], [*vecs])
            for level in ORT_LEVELS:
                w, v = cm.with_session_options(session_options(level))(batch)
                check_properties(batch, w, v, f"{context}, {level}")
                normwise(w, np.linalg.eigvalsh(batch), f"{context}, {level}")


def test_gradients():
    """pytensor.grad through eigh (3: its pullback graph; 2.38: EighGrad) and eigvalsh, with costs
    blind to the eigenvectors' signs, on a well-separated spectrum."""
    x = pt.dmatrix("x")
    a = with_spectrum([1.0, 2.5, 4.0, 6.0, 9.0], seed=4)
    weights = np.arange(25.0).reshape(5, 5)
    for lower in (True, False):
        w, v = eigh(x, lower)
        cost = (v**2 * weights).sum() + (w * np.arange(1.0, 6.0)).sum()
        outs = [cost, pytensor.grad(cost, x)]
        if PT3:  # 2.38's Eigvalsh.grad needs b
            outs.append(pytensor.grad((eigvalsh(x, lower=lower) ** 2).sum(), x))
        check_like_pytensor([x], outs, [a], compare=lambda act, exp, ctx: normwise(act, exp, ctx, n=100))


def test_generalised_problem():
    """a v = w b v (b positive definite): eigvalsh(a, b) against PyTensor, and its gradient (2.38:
    EigvalshGrad), both triangles; b not positive definite raises LinAlgError (SciPy's); with
    PyTensor 3, eigh(a, b) too, with V^T b V = I; a batch broadcast against one b."""
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    am, bm = symmetric(6, seed=1), spd(6, seed=2)
    not_pd = bm.copy()
    not_pd[4, 4] = -3.0
    for lower in (True, False):
        e = eigvalsh(a, b, lower)
        cost = (e * np.arange(1.0, 7.0)).sum()
        outs = [e, *pytensor.grad(cost, [a, b])]
        check_like_pytensor([a, b], outs, [am, bm], more_values=[[am, not_pd]],
                            compare=lambda act, exp, ctx: normwise(act, exp, ctx, n=100))
        if lower:  # n = 0 (a cost that fits any size)
            check_like_pytensor([a, b], [e, *pytensor.grad((e**2).sum(), [a, b])], [symmetric(0), spd(0)], compare=normwise)
    if not PT3:
        return
    w, v = pt.linalg.eigh(a, b)
    cm = ptonnx.compile_function([a, b], [w, v])
    w_, v_ = cm(am, bm)
    check_properties(am, w_, v_, "generalised", b=bm)
    normwise(w_, np.asarray(pytensor.function([a, b], w, mode=REFERENCE_MODE)(am, bm)))
    a3 = pt.tensor3("a3", dtype="float64")
    check_like_pytensor([a3, b], [pt.linalg.eigvalsh(a3, b)], [symmetric(4, (3,)), spd(4)], compare=normwise)


def test_errors_like_pytensor():
    """A matrix that is not square: SciPy's ValueError, NumPy's LinAlgError (2.38's eigh); a and b
    of other sizes (ValueError)."""
    x, b = pt.dmatrix("x"), pt.dmatrix("b")
    for out in (eigh(x)[0], eigvalsh(x)):
        check_like_pytensor([x], [out], [np.ones((3, 4))], more_values=[[np.ones((0, 2))]])
    check_like_pytensor([x, b], [eigvalsh(x, b)], [symmetric(3), spd(4)])


def test_every_eigen_op_is_reached_from_pytensor():
    x = pt.dmatrix("x")
    programs = {"Eigh": eigh(x)[1], "Eigvalsh": eigvalsh(x)}
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([x], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {n for n, s in ptonnx.ir.all_schemas().items() if s.family == "linalg_eigen"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
