"""Schur (the real Schur form, scipy.linalg.schur / LAPACK gees) from PyTensor graphs, both PyTensor
lines (3's pytensor.tensor.linalg.Schur, 2.38's slinalg.Schur), at both onnxruntime levels.

The form is not unique (the order of the eigenvalues on T's diagonal, the signs of Z's columns), so
most results are held to their defining properties (`check_schur`): max|A - Z T Z^T| <=
RECONSTRUCTION n eps ||A||_2 and max|Z^T Z - I| <= ORTHOGONALITY n eps; T's structure
exactly (zeros below the subdiagonal, every 2 x 2 block standard: equal diagonal entries and
off-diagonal entries of opposite signs, no two consecutive nonzero subdiagonal entries); and the
eigenvalues of T's blocks against LAPACK's, each within EIGENVALUES n eps ||A||_2 times its condition
number (1 / |y^H x|, from scipy's left and right eigenvectors). Where the form is unique (triangular
and diagonal matrices: T = A, Z = I; n <= 1; NaN for a matrix holding inf or NaN) T and Z are
compared with PyTensor's evaluation itself. Covered: n = 0 to 200 through one model (unknown n),
batches (empty ones too), float32, symmetric, rotation-like, random, repeated eigenvalues, a Jordan
block, triangular, zeros, identity, magnitudes 1e150 to 1e-300, inf and NaN per batch element.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import scipy.linalg
from scipy.optimize import linear_sum_assignment

import ptonnx
from ptonnx.testing import ORT_LEVELS, session_options
from tests.conftest import check_like_pytensor
from tests.linalg.helpers import EPS, SIZES, normwise, rng

PT3 = not pytensor.__version__.startswith("2.")

#: c in max|A - Z T Z^T| <= c n eps ||A||_2 and max|Z^T Z - I| <= c n eps (measured over random,
#: symmetric, uniform, orthogonal, companion and graded matrices, n = 2 to 100: at most 2.1 and 2.0)
RECONSTRUCTION = ORTHOGONALITY = 4.0
#: c in |lambda - lambda_LAPACK| <= c n eps ||A||_2 cond(lambda) (LAPACK's own error included;
#: measured: at most 2.1)
EIGENVALUES = 4.0

REACHED_BY = {"Schur": ("test_sizes_through_one_model", "test_structured_matrices", "test_like_pytensor",
                        "test_batches_and_float32")}


def schur(x):
    return pt.linalg.schur(x)


def blocks(t: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The eigenvalues of T's diagonal blocks, and the blocks (start, size); asserts T's structure."""
    n = t.shape[-1]
    assert not np.tril(t, -2).any(), "nonzero entries below the subdiagonal"
    sub = np.diagonal(t, -1)
    assert not (sub[1:].astype(bool) & sub[:-1].astype(bool)).any(), "two consecutive nonzero subdiagonal entries"
    values, found, p = [], [], 0
    while p < n:
        if p + 1 < n and t[p + 1, p] != 0:
            a, b, c, d = t[p, p], t[p, p + 1], t[p + 1, p], t[p + 1, p + 1]
            assert a == d and np.sign(b) * np.sign(c) < 0, f"2 x 2 block at {p} not standard: {a, b, c, d}"
            im = np.sqrt(abs(b)) * np.sqrt(abs(c))
            values += [complex(a, im), complex(a, -im)]
            found.append((p, 2))
            p += 2
        else:
            values.append(complex(t[p, p]))
            found.append((p, 1))
            p += 1
    return np.asarray(values), found


def check_schur(a, t, z, context="", dtype_eps=EPS, eigenvalues=True):
    """T, Z of A (any batch): reconstruction, orthogonality, structure, eigenvalues (the max of
    |entries| against ||A||_2)."""
    assert t.shape == z.shape == a.shape, context
    n = a.shape[-1]
    if a.size == 0:
        return
    for k, (ak, tk, zk) in enumerate(zip(a.reshape(-1, n, n), t.reshape(-1, n, n), z.reshape(-1, n, n), strict=True)):
        where = f"{context} [{k}]"
        norm = np.linalg.norm(ak, 2)
        rec = np.abs(ak - zk @ tk @ zk.T).max()
        orth = np.abs(zk.T @ zk - np.eye(n)).max()
        assert rec <= RECONSTRUCTION * n * dtype_eps * norm, f"{where}: ||A - Z T Z^T|| = {rec / (n * dtype_eps * norm):.3g} n eps ||A||"
        assert orth <= ORTHOGONALITY * n * dtype_eps, f"{where}: ||Z^T Z - I|| = {orth / (n * dtype_eps):.3g} n eps"
        values, _ = blocks(tk)
        if eigenvalues:
            check_eigenvalues(ak, values, where, dtype_eps)


def check_eigenvalues(a, values, context, dtype_eps=EPS):
    """values against LAPACK's eigenvalues of a (computed with a's scale divided out), each within
    EIGENVALUES n eps ||A||_2 cond(lambda), matched one to one."""
    n = a.shape[-1]
    scale = np.linalg.norm(a, 2) or 1.0
    ref, left, right = scipy.linalg.eig(a / scale, left=True, right=True)
    cond = 1.0 / np.maximum(np.abs(np.sum(left.conj() * right, axis=0)), 1e-300)
    mine = values / scale
    rows, cols = linear_sum_assignment(np.abs(ref[:, None] - mine[None, :]))
    err = np.abs(ref[rows] - mine[cols]) / cond[rows]
    assert err.max() <= EIGENVALUES * n * dtype_eps, f"{context}: eigenvalue error {err.max() / (n * dtype_eps):.3g} n eps cond"


def general(n, batch=(), seed=0):
    return rng(seed).normal(size=batch + (n, n))


def symmetric(n, seed=0):
    g = general(n, seed=seed)
    return g + g.T


def with_spectrum(blocks_, seed=0):
    """Q B Q^T for a block-diagonal B (a list of numbers and 2 x 2 arrays), Q random orthogonal: normal
    when the 2 x 2 blocks are."""
    b = scipy.linalg.block_diag(*[np.atleast_2d(x) for x in blocks_])
    q, _ = np.linalg.qr(general(b.shape[0], seed=seed))
    return q @ b @ q.T


def rotation(theta, r=1.0):
    return r * np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])


@pytest.mark.one_environment  # the decomposition's numbers; its lifting in both lines: the other tests
def test_sizes_through_one_model():
    """n = 0 to 200 through one model (n unknown), random matrices; n = 200 once, at one level (some
    3 s: docs/limits.md)."""
    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], [*schur(x)])
    runs = [cm.with_session_options(session_options(level)) for level in ORT_LEVELS]
    for n in SIZES:
        a = general(n, seed=n)
        for run in runs[:1] if n == 200 else runs:
            t, z = run(a)
            check_schur(a, t, z, f"n={n}")


@pytest.mark.one_environment
def test_structured_matrices():
    """Symmetric (1 x 1 blocks only), rotation-like (2 x 2 only), normal with both, repeated
    eigenvalues (real and complex), a Jordan block and a non-normal triangular one in disguise,
    already triangular, zeros, identity, a companion matrix (eigenvalues on the unit circle),
    magnitudes 1e150 to 1e-300 (scaled by a power of two: no overflow or underflow)."""
    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], [*schur(x)])
    base = general(12, seed=3)
    cases = {
        "symmetric": symmetric(30, seed=1),
        "rotations": scipy.linalg.block_diag(*[rotation(0.3 * k + 0.1, 1 + k) for k in range(5)]),
        "rotation-like": with_spectrum([rotation(0.7), rotation(2.0, 3.0), rotation(1.2, 0.5)], seed=2),
        "normal": with_spectrum([1.0, rotation(0.4, 2.0), -3.0, rotation(2.5), 0.25], seed=4),
        "repeated": with_spectrum([2.0, 2.0, 2.0, -1.0, 5.0, 5.0], seed=5),
        "repeated complex": with_spectrum([rotation(1.0), rotation(1.0), 3.0], seed=6),
        "jordan": 2 * np.eye(6) + np.eye(6, k=1),
        "jordan in disguise": with_spectrum([3 * np.eye(5) + np.eye(5, k=1)], seed=8),
        "triangular": np.triu(general(7, seed=9)),
        "zeros": np.zeros((4, 4)),
        "identity": np.eye(5),
        "companion": np.eye(10, k=-1) + np.eye(10, k=9),
    }
    cases |= {f"scale {s}": base * s for s in (1e150, 1e-150, 1e-300)}
    # eigenvalues where they are well conditioned (a Jordan block's move by eps^(1/k))
    loose = {"jordan", "jordan in disguise", "repeated complex"}
    for name, a in cases.items():
        t, z = cm(a)
        check_schur(a, t, z, name, eigenvalues=name not in loose)
    t, _ = cm(cases["symmetric"])
    assert not np.diagonal(t, -1).any(), "a symmetric matrix has 1 x 1 blocks only"
    t, _ = cm(cases["rotations"])
    assert np.diagonal(t, -1)[::2].all(), "a rotation-like matrix has 2 x 2 blocks only"
    t, z = cm(cases["triangular"])
    assert np.array_equal(t, cases["triangular"]) and np.array_equal(z, np.eye(7)), "triangular: T = A, Z = I"


def test_like_pytensor():
    """Where the form is unique, T and Z are PyTensor's: n = 0 and 1, triangular and diagonal
    matrices (T = A, Z = I), NaN for a matrix holding inf or NaN (PyTensor's rule); for random
    matrices, Z T Z^T and Z^T Z against PyTensor's (within C n eps)."""
    x = pt.dmatrix("x")
    t, z = schur(x)
    nan = general(4)
    nan[1, 2] = np.nan
    inf = general(3)
    inf[0, 0] = -np.inf
    values = [[np.zeros((0, 0))], [np.array([[2.5]])], [np.triu(general(5, seed=1))], [np.diag([3.0, -1.0, 2.0])],
              [nan], [inf]]
    check_like_pytensor([x], [t, z], values[0], more_values=values[1:], compare=normwise)
    check_like_pytensor([x], [z @ t @ z.T, z.T @ z], [general(6, seed=2)], more_values=[[general(20, seed=3)]],
                        compare=lambda act, exp, ctx: normwise(act, exp, ctx, n=20))


def test_batches_and_float32():
    """Batches (an empty one, a batch of empty matrices), NaN and inf per batch element (only that
    matrix is NaN), float32 (computed in float64, rounded)."""
    x3 = pt.dtensor3("x3")
    t, z = schur(x3)
    bad = general(4, (3,), seed=4)
    bad[0, 1, 1] = np.nan
    bad[2, 3, 0] = np.inf
    check_like_pytensor([x3], [t, z], [general(0, (2,))], more_values=[[general(3, (0,))], [np.triu(general(4, (2,)))]],
                        compare=normwise)
    cm = ptonnx.compile_function([x3], [t, z])
    tb, zb = cm(bad)
    assert np.isnan(tb[[0, 2]]).all() and np.isnan(zb[[0, 2]]).all() and not np.isnan(tb[1]).any()
    check_schur(bad[1:2], tb[1:2], zb[1:2], "batch element 1")
    for a in (general(9, (4,), seed=5), general(3, (0,)), general(0, (2,))):
        check_schur(a, *cm(a), f"batch {a.shape}")
    xf = pt.fmatrix("xf")
    a = general(30, seed=6).astype("float32")
    tf, zf = ptonnx.compile_function([xf], [*schur(xf)])(a)
    assert tf.dtype == zf.dtype == np.float32
    blocks(tf)  # rounding keeps the structure (zeros stay zeros, equal diagonal entries stay equal)
    check_schur(a.astype(float), tf.astype(float), zf.astype(float), "float32", dtype_eps=float(np.finfo(np.float32).eps),
                eigenvalues=False)


def test_not_square_raises():
    """A matrix that is not square: ValueError (PyTensor's perform raises scipy's flapack.error)."""
    x = pt.dmatrix("x")
    cm = ptonnx.compile_function([x], [*schur(x)])
    with pytest.raises(ValueError, match="square"):
        cm(np.ones((3, 4)))


def test_every_schur_op_is_reached_from_pytensor():
    x = pt.dmatrix("x")
    programs = {"Schur": schur(x)[0]}
    for op, out in programs.items():
        assert op in ptonnx.lift(ptonnx.api.function_graph([x], [out])).op_counts(), op
    assert set(REACHED_BY) == set(programs) == {n for n, s in ptonnx.ir.all_schemas().items() if s.family == "linalg_schur"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
