"""Special functions as elementwise IR ops: the error and gamma families, Bessel
functions, incomplete gamma and beta. Their semantics (the IR interpreter's reference)
are SciPy's, which PyTensor's own implementations call. `ptonnx.compile` rewrites each
into ops onnxruntime runs in float64 before any pass (decompositions/special/), so
constant folding computes the formula the model runs.
"""

from __future__ import annotations

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


#: IR op -> (scipy.special function, input type variables, doc)
SPECIAL: dict[str, tuple] = {
    "Erfc": ("erfc", UNARY, "1 - erf(a), accurate where erf(a) is near 1"),
    "Erfcx": ("erfcx", UNARY, "exp(a**2) erfc(a), finite where exp(a**2) overflows"),
    "GammaLn": ("gammaln", UNARY, "log|Gamma(a)| (inf at the poles 0, -1, -2, ...)"),
    "Gamma": ("gamma", UNARY, "Gamma(a) (NaN at negative integers, ±inf at ±0)"),
    "Psi": ("psi", UNARY, "digamma: d/da log Gamma(a)"),
    "TriGamma": (("polygamma", 1), UNARY, "d**2/da**2 log Gamma(a)"),
    "Erfinv": ("erfinv", UNARY, "the inverse of erf (±inf at ±1, NaN beyond)"),
    "Erfcinv": ("erfcinv", UNARY, "the inverse of erfc (inf at 0, -inf at 2, NaN outside [0, 2])"),
    "OwensT": ("owens_t", BINARY, "Owen's T function T(a, b): a bivariate normal probability"),
    "I0": ("i0", UNARY, "modified Bessel function of the first kind, order 0 (even)"),
    "I1": ("i1", UNARY, "modified Bessel function of the first kind, order 1 (odd)"),
    "J0": ("j0", UNARY, "Bessel function of the first kind, order 0"),
    "J1": ("j1", UNARY, "Bessel function of the first kind, order 1"),
    "Ive": ("ive", BINARY, "exp(-|b|) I_a(b): the scaled modified Bessel function of the first kind of real order a"),
    "Iv": ("iv", BINARY, "I_a(b): the modified Bessel function of the first kind of real order a (finite up to 713.98)"),
    "Jv": ("jv", BINARY, "J_a(b): the Bessel function of the first kind of order a (lowered for integer orders |a| <= 100)"),
    "Kve": ("kve", BINARY, "exp(b) K_a(b): the scaled modified Bessel function of the second kind of real order a"),
    "GammaInc": ("gammainc", BINARY, "P(a, b): the regularized lower incomplete gamma function (a, b >= 0)"),
    "GammaIncC": ("gammaincc", BINARY, "Q(a, b) = 1 - P(a, b): the regularized upper incomplete gamma function"),
    "GammaIncInv": ("gammaincinv", BINARY, "the x with P(a, x) = b: the inverse of GammaInc in x (a > 0, 0 <= b <= 1)"),
    "GammaIncCInv": ("gammainccinv", BINARY, "the x with Q(a, x) = b: the inverse of GammaIncC in x (a > 0, 0 <= b <= 1)"),
    "BetaInc": ("betainc", ("T", "T", "T"), "I_c(a, b): the regularized incomplete beta function (a, b >= 0, 0 <= c <= 1)"),
    "BetaIncInv": ("betaincinv", ("T", "T", "T"), "the x with I_x(a, b) = c: the inverse of BetaInc in x (a, b > 0, 0 <= c <= 1)"),
    "Hyp2F1": ("hyp2f1", ("T", "T", "T", "T"), "2F1(a, b; c; d): the Gauss hypergeometric function"),
}

for _name, (_fn, _inputs, _doc) in SPECIAL.items():
    _scipy_fn = _scipy(*_fn) if isinstance(_fn, tuple) else _scipy(_fn)
    declare(_name, _scipy_fn, _inputs, "T", FLOAT_DTYPES, _doc, family="special")

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
declare("GammaU", _times_gamma("gammaincc"), BINARY, "T", FLOAT_DTYPES,
        "Gamma(a, b) = Q(a, b) Gamma(a): the upper incomplete gamma function", family="special")
declare("GammaL", _times_gamma("gammainc"), BINARY, "T", FLOAT_DTYPES,
        "gamma(a, b) = P(a, b) Gamma(a): the lower incomplete gamma function", family="special")
