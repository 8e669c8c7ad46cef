"""Eigh and Eigvalsh: the matrix shifted to be positive definite, then one-sided Jacobi on its
rows (`svd.right_singular`, the SVD's own), twice.

The SVD of a positive definite matrix is its eigendecomposition, and one-sided Jacobi gives it
with the vectors for free (they are the orthogonalised rows, normalised: nothing is accumulated).
a (its read triangle mirrored, scaled by a power of two near its largest magnitude: exact, no
overflow at 1e300 nor underflow at 1e-300, so |a| < 2) is shifted by Gershgorin's bound,
b = a + sigma I, sigma = 1 - min(0, min_i (a_ii - sum_{j != i} |a_ij|)): b's eigenvalues are at
least 1, none negligible. That bound may be some sqrt(n) ||a|| (12 ||a|| for a random +-1
spectrum at n = 200), and the vectors' residual is eps ||b||; so the eigenvalues are taken as
Rayleigh quotients v^T a v (eps ||a||), and a second pass runs on the rows of v^T (a + sigma' I),
sigma' = 1 - min(0, the least eigenvalue just found) (||a + sigma' I|| <= 2 ||a|| + 1): those
rows are orthogonal but for the first pass's rounding, so one sweep (and the Gram test) brings
them to that matrix's own, residual eps ||a||. A batch of positive definite matrices (their
Cholesky factor's diagonal positive and finite: the test is one Cholesky factorisation, a
fraction of a sweep) has sigma' = 1 known at the start: one pass on a + I, as the second, from scratch (11
sweeps for the benchmark's matrices at n = 200, against 11 + 2: benchmarks/jacobi_sweeps.py). Measured (c in c n eps ||a||, 54 spectra to
n = 200: random, graded to 1e-8 of both signs, +-1, diagonal, spaced by 1): eigenvalues 0.64
against LAPACK, residual ||a V - V diag(w)|| 1.73, ||V^T V - I|| 1.22 (in n eps). Relative
accuracy for a graded matrix's tiny eigenvalues, which the two-sided Jacobi of before gave, is
gone: LAPACK's syevd (PyTensor's) does not give it either.

Why not two-sided Jacobi on a, as before: its round rotates rows and columns and accumulates the
rotations, some 17 passes over an n x n matrix, where one-sided Jacobi's round is some 6 (rows of
benchmarks/results/linalg.md: 0.44 ms against 0.14 ms a round at n = 200, sweeps alike), and
from n = 48 on it runs in blocks of rows with the flops in MatMul (`svd_block.py`). Why not Householder tridiagonalisation and QR or divide and
conquer (LAPACK): their tridiagonal stage is a sequence of n-step recurrences per eigenvalue
search, each step a Loop trip at some 0.5 us a node (benchmarks/loop_floor.py).

The eigenvalues are sorted ascending (ties in row order: the identity's vectors are the
identity). A matrix holding inf or NaN in its read triangle gives NaN (it is not iterated: zeros
stand in for it). The generalised problem a v = w b v is reduced with b's Cholesky factor L:
C = L^-1 a L^-T, v = L^-T y. Batch axes are flattened to one; all matrices of a batch sweep
until the last has converged.
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import (
    branch,
    cholesky_diagonal,
    common_batch,
    diagonal,
    dim,
    emit,
    fill_nan,
    flatten_batch,
    index_masks,
    int_scalar,
    mirror,
    mT,
    non_finite,
    power_of_two,
    restore_batch,
    take_rows,
    vec,
    zeros,
)
from ptonnx.decompositions.linalg.svd import right_singular
from ptonnx.decompositions.registry import decomposes


def _at_least_one(lowest: Ex) -> Ex:
    """1 - min(0, min_i lowest_i) (B, 1, 1) for lowest (B, n): a + it I has no eigenvalue below 1
    if no eigenvalue of a is below `lowest`'s least (a 0 appended: n may be 0)."""
    with_zero = lowest.op("Concat", zeros(lowest, vec(dim(lowest, 0), int_scalar(lowest.scope, 1))), axis=1)
    return (1.0 - with_zero.op("ReduceMin", axes=(1,), keepdims=True)).op("Unsqueeze", axes=(2,))


def _rayleigh(a: Ex, v: Ex) -> tuple[Ex, Ex]:
    """The Rayleigh quotients v_i^T a v_i (B, n), ascending, and v's columns in their order."""
    w = (v * a.op("MatMul", v)).op("ReduceSum", axes=(1,), keepdims=False)
    w, order = (Ex(a.scope, x) for x in a.scope.builder.node("Sort", [w.value], {"axis": 1}).outputs)
    return w, mT(take_rows(mT(v), order))


def eigh(a: Ex, lower: bool, vectors: bool) -> tuple[Ex, Ex | None]:
    """Eigenvalues (B, n) ascending and eigenvectors (B, n, n) (columns) of a (B, n, n), read in
    its lower (or upper) triangle; NaN for a matrix holding inf or NaN there."""
    a = mirror(a, lower)
    bad = non_finite(a)
    a = where(bad.op("Unsqueeze", axes=(1, 2)), 0.0, a)
    scale = power_of_two(abs(a).op("ReduceMax", axes=(1, 2), keepdims=True))
    a = a / scale
    _, definite = cholesky_diagonal(a)
    w, v = branch(definite, [a], _positive_definite, _two_passes)
    w = where(bad.op("Unsqueeze", axes=(1,)), float("nan"), w * scale.op("Squeeze", axes=(2,)))
    return w, (fill_nan(bad, v) if vectors else None)


def _positive_definite(args: list[Ex]) -> list[Ex]:
    """Every matrix of the batch positive definite: one pass on a + I (||a + I|| <= 2 ||a||, as
    the second of `_two_passes`, which for such a matrix it is, from scratch)."""
    (a,) = args
    n = dim(a, 2)
    _, v = right_singular(a + index_masks(n)[2].cast(a.dtype), n, True, complete=False, ascending=True)
    return list(_rayleigh(a, v))


def _two_passes(args: list[Ex]) -> list[Ex]:
    (a,) = args
    n = dim(a, 2)
    eye = index_masks(n)[2].cast(a.dtype)  # (n, n): broadcast over the batch
    # Gershgorin: a_ii - sum_{j != i} |a_ij| bounds the eigenvalues below
    d = diagonal(a)
    shift = _at_least_one(d + abs(d) - abs(a).op("ReduceSum", axes=(2,), keepdims=False))
    _, v = right_singular(a + shift * eye, n, True, complete=False, ascending=True)
    w, v = _rayleigh(a, v)
    # again, shifted by the least eigenvalue now known, from v: the rows of v^T (a + shift I) are
    # orthogonal but for b's rounding, so a sweep or two bring them to a + shift I's own
    shift = _at_least_one(w)
    _, v = right_singular(mT(v).op("MatMul", a + shift * eye), n, True, complete=False, ascending=True)
    return list(_rayleigh(a, v))


def generalised(a: Ex, b: Ex, lower: bool, vectors: bool) -> tuple[Ex, Ex | None]:
    """a v = w b v through b = L L^T (IR Cholesky and SolveTriangular, decomposed in turn):
    eig(L^-1 a L^-T) = (w, y), v = L^-T y. A b that is not positive definite (its factor NaN
    while b is finite) raises LinAlgError, as scipy's eigh."""
    scope = a.scope
    (factor,) = emit(scope, "Cholesky", [b], lower=lower)
    low = factor if lower else mT(factor)
    b_bad = non_finite(mirror(b, lower))
    failed = factor.op("IsNaN").op("ReduceAny", axes=(1, 2), keepdims=False) & b_bad.op("Not")
    ok = failed.op("ReduceAny", axes=(0,), keepdims=False).op("Not")
    low = low.op("Check", ok, message="the leading minor of B is not positive definite: no eigenvalues or eigenvectors "
                  "were computed", exception="numpy.linalg:LinAlgError")
    full = mirror(a, lower)
    (half,) = emit(scope, "SolveTriangular", [low, full], lower=True, unit_diagonal=False, b_ndim=2)
    (c,) = emit(scope, "SolveTriangular", [low, mT(half)], lower=True, unit_diagonal=False, b_ndim=2)
    a_bad = non_finite(full)
    w, y = eigh(fill_nan(a_bad | b_bad, c), True, vectors)
    if not vectors:
        return w, None
    (v,) = emit(scope, "SolveTriangular", [mT(low), y], lower=False, unit_diagonal=False, b_ndim=2)
    return w, v


def _eigen(node, inputs, vectors: bool):
    lower = node.attrs["lower"]
    if len(inputs) == 2:
        a, b = common_batch(*inputs)
        a, batch = flatten_batch(a, 2)
        b, _ = flatten_batch(b, 2)
        w, v = generalised(a, b, lower, vectors)
    else:
        a, batch = flatten_batch(inputs[0], 2)
        w, v = eigh(a, lower, vectors)
    w = restore_batch(w, batch, 1)
    return (w, restore_batch(v, batch, 2)) if vectors else w


@decomposes("Eigh")
def eigh_op(node, inputs):
    return _eigen(node, inputs, True)


@decomposes("Eigvalsh")
def eigvalsh_op(node, inputs):
    return _eigen(node, inputs, False)

