"""The exp/log family with NumPy's accuracy at the ends of the range.

ONNX has no Log1p or Expm1 and its Softplus overflows. These are written for
every float dtype and computed in the one the dtype table gives the node (float32
Log1p, Expm1 and Softplus in float64; float16 in float32), with no intermediate that
overflows where the result is finite. Sigmoid is decomposed here too; the Conv+BatchNorm+SiLU
fusion (a pass after decomposition) recognises `x * sigmoid(x)` in this decomposed form
(`passes/decomposed.py`).
"""

from __future__ import annotations

import math

from ptonnx.decompositions.expr import Ex, exp, expm1, log, log1p, where
from ptonnx.decompositions.registry import decomposes, unary

#: 1 / log(2) and 1 / log(10)
INV_LN2, INV_LN10 = 1.4426950408889634, 0.4342944819032518


def _nonzero(v: Ex) -> Ex:
    """|v| > 0: false for 0 and NaN. (Not(Equal) would do, but onnxruntime's optimiser turns
    Where(Not(c), a, b) into Where(c, b, a), and `b`'s zero sign would be lost.)"""
    return abs(v) > 0.0


@decomposes("Log1p", any_float=True)
@unary
def kahan_log1p(x: Ex) -> Ex:
    """Kahan's log1p: log(u) * (x / (u - 1)) with u = 1 + x; x where u rounds to 1.

    The quotient x / (u - 1) is close to 1, so nothing overflows for huge x
    (`log(u) * x` did: float32 log1p(1e37) was inf). Its operands are clamped at 2**60 (past
    which u - 1 is x, and the quotient 1): then x = inf gives 1, not inf / inf, and log(inf)
    stands, with no second Where (onnxruntime's float64 Where costs ~6 ns an element, a Mul
    0.7: `benchmarks/results/elementwise_budget.md`). NaN stays NaN (onnxruntime's Min
    propagates it, as NumPy's)."""
    u = x + 1.0
    um1 = u - 1.0
    big = x.const(2.0**60)
    quotient = x.op("Min", big) / um1.op("Min", big)
    return where(_nonzero(um1), log(u) * quotient, x)  # x second: log1p(-0.0) is -0.0


@decomposes("Expm1", any_float=True)
@unary
def kahan_expm1(x: Ex) -> Ex:
    """Kahan's expm1: (u - 1) * (x / log(u)) with u = exp(x); x where u rounds to 1,
    -1 where u - 1 rounds to -1, u where u overflows. The quotient is close to 1
    (`(u - 1) * x` overflowed: float32 expm1(85) was inf)."""
    u = exp(x)
    um1 = u - 1.0
    result = where(u.eq(math.inf), u, um1 * (x / log(u)))
    result = where(um1.eq(-1.0), um1, result)
    return where(_nonzero(um1), result, x)  # x second: expm1(-0.0) is -0.0


@decomposes("Softplus", any_float=True)
@unary
def softplus(x: Ex) -> Ex:
    """max(x, 0) + log1p(t), t = exp(-|x|) in [0, 1]: no overflow (ONNX's Softplus, and
    onnxruntime's float64 function body log(exp(x) + 1), overflow from 710), and no Where. On
    [0, 1] log1p(t) is log(u) - ((u - 1) - t) / u with u = 1 + t: the correction is u's rounding
    error, exact, and gives t itself where u rounds to 1 (softplus(-745) is 5e-324)."""
    t = exp(-abs(x))
    u = t + 1.0
    return x.op("Max", x.const(0.0)) + (log(u) - ((u - 1.0) - t) / u)


@decomposes("Sigmoid", any_float=True)
@unary
def sigmoid(x: Ex) -> Ex:
    """exp(min(x, 0)) / (1 + exp(-|x|)): 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x))
    below, with no Where and no overflow, and no flushed tail (sigmoid(x) is exp(x) far left,
    down to the subnormals: sigmoid(-745) is 5e-324). onnxruntime's float64 Sigmoid is no
    help: 0 from -36.74 down and up to 1.7e-16 (absolute) off above (`docs/limits.md`), and
    slower than an Exp (`benchmarks/results/elementwise_budget.md`, its kernel rows); SiLU
    keeps it (`lowering/nn.py`). Computed in the node's dtype (float16 in float32): within 2 ulp."""
    return exp(x.op("Min", x.const(0.0))) / (exp(-abs(x)) + 1.0)


@decomposes("Exp2", any_float=True)
@unary
def exp2(x: Ex) -> Ex:
    """2 ** x by Pow: onnxruntime's float64 Pow is within an ulp (exp(x log 2) is not for large x)."""
    return x.const(2.0).op("Pow", x)


@decomposes("Log2", any_float=True)
@unary
def log2(x: Ex) -> Ex:
    """log(x) / log(2), as one multiplication: within 2 ulp (Log is within 1)."""
    return log(x) * INV_LN2


@decomposes("Log10", any_float=True)
@unary
def log10(x: Ex) -> Ex:
    """log(x) / log(10), as one multiplication."""
    return log(x) * INV_LN10


@decomposes("Log1mexp", any_float=True)
@unary
def log1mexp(x: Ex) -> Ex:
    """PyTensor's log(1 - exp(x)): log1p(-exp(x)) below log(1/2), log(-expm1(x)) from there
    (each exact where the other cancels); NaN above 0, -inf at 0, -0.0 at -inf."""
    return where(x >= math.log(0.5), log(-expm1(x)), log1p(-exp(x)))
