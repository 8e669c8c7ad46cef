"""Special functions as elementwise IR ops: the error and gamma families, Bessel
functions, incomplete gamma and beta. Their semantics (for constant folding and
the IR interpreter) are SciPy's, which PyTensor's own implementations call.
Lowering composes each from ops onnxruntime runs in float64 (lowering/special/).
"""

from __future__ import annotations

from ptonnx.ir.ops.elementwise import UNARY, declare
from ptonnx.ir.types import FLOAT_DTYPES


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
}

for _name, (_fn, _inputs, _doc) in SPECIAL.items():
    _scipy_fn = _scipy(*_fn) if isinstance(_fn, tuple) else _scipy(_fn)
    declare(_name, _scipy_fn, _inputs, "T", FLOAT_DTYPES, _doc, family="special")
