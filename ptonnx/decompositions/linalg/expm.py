"""Expm: scaling and squaring with the [13/13] Padé approximant (Higham 2005).

With s = max(0, ceil(log2(||A||_1 / theta_13))), exp(A) = r(A / 2**s) ** (2**s), where
r = (V - U)^-1 (V + U) is the [13/13] Padé approximant (a `Solve` of general matrices, so
the LU with partial pivoting of `lu.py`), good to double precision for ||A / 2**s||_1 <=
theta_13. SciPy (Al-Mohy and Higham 2009) picks a lower degree for small norms and may
square fewer times; both are backward stable, so the results agree to the conditioning of
exp at A. Each matrix of a batch is squared its own number of times (a Loop of the largest
count, where each matrix stops at its own). A matrix holding inf or NaN gives NaN.
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, where
from ptonnx.decompositions.linalg.common import counted_loop, dim, eye_like, ints, solve
from ptonnx.decompositions.registry import decomposes

#: the [13/13] Padé coefficients b_0 .. b_13 of exp
PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
#: the largest ||A||_1 for which the [13/13] approximant is good to double precision
THETA_13 = 5.371920351148152
#: more squarings than any finite float64 norm needs (2**1100 > 1.8e308 / theta)
MAX_SQUARINGS = 1100


@decomposes("Expm")
def expm(node, inputs):
    (a,) = inputs
    r = a.value.type.ndim
    norm = abs(a).op("ReduceSum", axes=(r - 2,)).op("ReduceMax", axes=(r - 2,))  # ||A||_1 per matrix
    finite = (norm < float("inf"))
    exponent = (norm / THETA_13).op("Log") * (1.0 / math.log(2.0))
    squarings = where(finite, exponent.op("Ceil").op("Max", 0.0).op("Min", float(MAX_SQUARINGS)), 0.0)
    scale = squarings.const(2.0).op("Pow", -squarings)  # 2**-s: exact
    x = a * scale.op("Unsqueeze", axes=(r - 2, r - 1))
    eye = eye_like(x, dim(x, r - 1))
    x2 = x.op("MatMul", x)
    x4 = x2.op("MatMul", x2)
    x6 = x4.op("MatMul", x2)
    b = PADE_13
    u = x.op("MatMul", x6.op("MatMul", x6 * b[13] + x4 * b[11] + x2 * b[9]) + x6 * b[7] + x4 * b[5] + x2 * b[3] + eye * b[1])
    v = x6.op("MatMul", x6 * b[12] + x4 * b[10] + x2 * b[8]) + x6 * b[6] + x4 * b[4] + x2 * b[2] + eye * b[0]
    result = solve(v - u, v + u)
    steps = squarings.cast("int64")
    # the largest count (0 for an empty batch: a 0 joins the counts)
    most = steps.op("Reshape", ints(a.scope, -1)).op("Concat", ints(a.scope, 0), axis=0).op("ReduceMax", axes=(0,))

    def square(trip: Ex, carried, invariants):
        (m,), (counts,) = carried, invariants
        more = (trip < counts).op("Unsqueeze", axes=(r - 2, r - 1))
        return [where(more, m.op("MatMul", m), m)], []

    (result,), _ = counted_loop(most, [result], [steps], square)
    return where(finite.op("Unsqueeze", axes=(r - 2, r - 1)), result, float("nan"))
