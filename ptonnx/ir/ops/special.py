"""Special functions as elementwise IR ops: the error and gamma families, Bessel
functions, incomplete gamma and beta. Their semantics (the IR interpreter's reference)
are SciPy's, which PyTensor's own implementations call. `ptonnx.compile` rewrites each
into ops onnxruntime runs in float64 before any pass (decompositions/special/), so
constant folding computes the formula the model runs.
"""

from __future__ import annotations

from ptonnx.ir.ops import special_fixes
from ptonnx.ir.ops.elementwise import (
    BINARY,
    UNARY,
    declare,
    elementwise_semantics,
    elementwise_type_rule,
)
from ptonnx.ir.schema import define
from ptonnx.ir.types import FLOAT_DTYPES, INT_DTYPES


def _scipy(name: str, *leading):
    def fn(*arrays):
        import scipy.special  # SciPy comes with PyTensor; only constant folding needs it

        return getattr(scipy.special, name)(*leading, *arrays)

    fn.__name__ = name
    return fn


# Each special function, as a keyword row: SciPy's function (the reference), the type variable of
# each input, the traits the passes read, and what it computes.
declare("Erfc", semantics=_scipy("erfc"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"), family="special",
        doc="1 - erf(a), accurate where erf(a) is near 1")
declare("Erfcx", semantics=_scipy("erfcx"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out", "never_negative_zero"), family="special",
        doc="exp(a**2) erfc(a), finite where exp(a**2) overflows")
declare("GammaLn", semantics=_scipy("gammaln"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="log|Gamma(a)| (inf at the poles 0, -1, -2, ...)")
declare("Gamma", semantics=_scipy("gamma"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="Gamma(a) (NaN at negative integers, ±inf at ±0)")
declare("Psi", semantics=_scipy("psi"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="digamma: d/da log Gamma(a)")
declare("TriGamma", semantics=_scipy("polygamma", 1), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="d**2/da**2 log Gamma(a)")
declare("Erfinv", semantics=_scipy("erfinv"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="the inverse of erf (±inf at ±1, NaN beyond)")
declare("Erfcinv", semantics=_scipy("erfcinv"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, traits=("nan_in_nan_out",), family="special",
        doc="the inverse of erfc (inf at 0, -inf at 2, NaN outside [0, 2])")
declare("OwensT", semantics=_scipy("owens_t"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="Owen's T function T(a, b): a bivariate normal probability")
declare("I0", semantics=_scipy("i0"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="modified Bessel function of the first kind, order 0 (even)")
declare("I1", semantics=_scipy("i1"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="modified Bessel function of the first kind, order 1 (odd)")
declare("J0", semantics=_scipy("j0"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="Bessel function of the first kind, order 0")
declare("J1", semantics=_scipy("j1"), inputs=UNARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="Bessel function of the first kind, order 1")
declare("Ive", semantics=special_fixes.ive, inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="exp(-|b|) I_a(b): the scaled modified Bessel function of the first kind of real order a")
declare("Iv", semantics=special_fixes.iv, inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="I_a(b): the modified Bessel function of the first kind of real order a (finite up to 713.98)")
declare("Jv", semantics=_scipy("jv"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="J_a(b): the Bessel function of the first kind of order a (lowered for integer orders |a| <= 100)")
declare("Kve", semantics=_scipy("kve"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="exp(b) K_a(b): the scaled modified Bessel function of the second kind of real order a")
declare("GammaInc", semantics=_scipy("gammainc"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="P(a, b): the regularized lower incomplete gamma function (a, b >= 0)")
declare("GammaIncC", semantics=_scipy("gammaincc"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="Q(a, b) = 1 - P(a, b): the regularized upper incomplete gamma function")
declare("GammaIncInv", semantics=_scipy("gammaincinv"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="the x with P(a, x) = b: the inverse of GammaInc in x (a > 0, 0 <= b <= 1)")
declare("GammaIncCInv", semantics=_scipy("gammainccinv"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="the x with Q(a, x) = b: the inverse of GammaIncC in x (a > 0, 0 <= b <= 1)")
declare("BetaInc", semantics=_scipy("betainc"), inputs=("T", "T", "T"), output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="I_c(a, b): the regularized incomplete beta function (a, b >= 0, 0 <= c <= 1)")
declare("BetaIncInv", semantics=_scipy("betaincinv"), inputs=("T", "T", "T"), output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="the x with I_x(a, b) = c: the inverse of BetaInc in x (a, b > 0, 0 <= c <= 1)")
declare("Hyp2F1", semantics=special_fixes.hyp2f1, inputs=("T", "T", "T", "T"), output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="2F1(a, b; c; d): the Gauss hypergeometric function")

#: polygamma's order is an integer (PyTensor requires a discrete dtype; bool counts as 0/1)
define(
    "PolyGamma",
    inputs=("a: I", "b: T"),
    outputs=("out: T",),
    dtypes={"I": INT_DTYPES | {"bool"}, "T": FLOAT_DTYPES},
    type_rule=elementwise_type_rule(("I", "T"), "T"),
    semantics=elementwise_semantics(_scipy("polygamma"), ("I", "T"), "T"),
    family="special",
    doc="psi^(a)(b): the a-th derivative of digamma, for integer order a (NaN for a < 0)",
)


def _times_gamma(name: str):
    def fn(a, b):
        import scipy.special

        return getattr(scipy.special, name)(a, b) * scipy.special.gamma(a)

    return fn


#: PyTensor's GammaU and GammaL are products of SciPy's (inf where Gamma(a) overflows)
declare("GammaU", semantics=_times_gamma("gammaincc"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="Gamma(a, b) = Q(a, b) Gamma(a): the upper incomplete gamma function")
declare("GammaL", semantics=_times_gamma("gammainc"), inputs=BINARY, output="T", dtypes=FLOAT_DTYPES, family="special",
        doc="gamma(a, b) = P(a, b) Gamma(a): the lower incomplete gamma function")
