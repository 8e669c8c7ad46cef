"""The Sylvester equation A X + X B = C as an IR op (family `linalg_sylvester`).

PyTensor's continuous Lyapunov solver is this op with B = A^T, and its bilinear discrete one is
a Cayley transform (Solves) around it. The semantics, the interpreter's reference, are PyTensor's
SolveSylvester (Bartels-Stewart: real Schur forms of A and B, LAPACK trsyl); its decomposition
(`decompositions/linalg/sylvester.py`) takes B's real Schur form only and solves for two columns
at a time.
"""

from __future__ import annotations

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.ops.linalg import _batched, _square
from ptonnx.ir.ops.rules import need as _need
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES, broadcast_shapes


def _same(op: str, what: str, d1, d2):
    _need(not (isinstance(d1, int) and isinstance(d2, int) and d1 != d2), op, lambda: f"{what}: {d1} and {d2} differ")
    return d1 if isinstance(d1, int) or d1 == d2 or not isinstance(d2, int) else d2


def _sylvester_rule(types, a):
    x, y, c = types
    m, n = _square("SolveSylvester", x), _square("SolveSylvester", y)
    _need(c.ndim >= 2, "SolveSylvester", lambda: f"c must be a matrix (2 or more axes), got {c}")
    rows, cols = _same("SolveSylvester", "rows of a and c", m, c.shape[-2]), _same("SolveSylvester", "rows of b and columns of c", n, c.shape[-1])
    try:
        batch = broadcast_shapes(x.shape[:-2], y.shape[:-2], c.shape[:-2])
    except TypeRuleError as exc:
        raise TypeRuleError(f"SolveSylvester: batch axes of {x}, {y} and {c} do not broadcast: {exc}") from None
    return [c.with_shape(batch + (rows, cols))]


def _sylvester_one(a, b, c):
    """PyTensor's SolveSylvester: U^T C V in the real Schur bases of A and B, trsyl, back (the
    result times trsyl's scale, as PyTensor and SciPy take it); NaN where an input is not finite
    (PyTensor's Schur and trsyl give NaN there)."""
    import scipy.linalg

    if a.size == 0 or b.size == 0:
        return np.zeros(c.shape, c.dtype)
    if not (np.isfinite(a).all() and np.isfinite(b).all() and np.isfinite(c).all()):
        return np.full(c.shape, np.nan, c.dtype)
    r, u = scipy.linalg.schur(a, output="real")
    s, v = scipy.linalg.schur(b, output="real")
    (trsyl,) = scipy.linalg.get_lapack_funcs(("trsyl",), (r, s, c))
    y, scale, info = trsyl(r, s, u.T @ c @ v)
    if info < 0:
        return np.full(c.shape, np.nan, c.dtype)
    return u @ (y * scale) @ v.T


def _sylvester(a, b, c):
    dtype = np.result_type(a, b, c)
    a, b, c = (v.astype(dtype, copy=False) for v in (a, b, c))
    with np.errstate(all="ignore"):
        return _batched(_sylvester_one, a, b, c, core=(2, 2, 2)).astype(dtype, copy=False)


define("SolveSylvester", inputs=("a: T", "b: T", "c: T"), outputs=("x: T",), dtypes={"T": FLOAT_DTYPES},
       type_rule=_sylvester_rule, semantics=_sylvester, traits=("no_fold",), family="linalg_sylvester",
       doc="X with A X + X B = C (scipy.linalg.solve_sylvester, as PyTensor's SolveSylvester); NaN where an input is "
           "not finite; where A and -B share an eigenvalue LAPACK perturbs it and gives a finite number")
