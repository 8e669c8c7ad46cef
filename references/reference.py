"""NumPy/SciPy references for the ONNX ops ptonnx emits, computed exactly or wider.

Floats are computed in float64 (float16/float32 inputs) or the x87 long double
(float64 inputs), then rounded once to the output dtype; integers as Python
ints (exact), which the probe wraps like NumPy (and clips, to recognise
saturation). Inputs where NumPy defines no value (a negative integer power,
a float cast to an integer it does not fit) are marked undefined and not
compared. Integer division by 0 and INT_MIN / -1 are never sent at all: they
stop the process with SIGFPE.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
import numpy as np

#: ops whose result is correctly rounded (or exact): any difference from the reference counts
EXACT = "exact"
#: ops with a library-quality result: differences above ULP_THRESHOLD ulp count
APPROX = "approx"
#: the accuracy bound for APPROX ops, in units in the last place of the output dtype
ULP_THRESHOLD = 4


@attrs.frozen
class Ref:
    values: np.ndarray  # object ints, float64/long double, or values already in the output dtype
    undefined: np.ndarray | None = None  # True where NumPy defines no value
    alternative: np.ndarray | None = None  # another acceptable result, in the output dtype


def wide(x: np.ndarray) -> np.ndarray:
    """`x` in a dtype that holds it exactly and computes it (nearly) exactly."""
    if x.dtype.kind == "f":
        return x.astype(np.longdouble if x.dtype == np.float64 else np.float64)
    if x.dtype.kind in "iu":
        return x.astype(object)
    return x


def _computing(x: np.ndarray, accuracy: str) -> np.ndarray:
    """Where to compute a float reference: float64's correctly rounded +, -, *, /, sqrt
    stay in float64 (long double then float64 would round twice); the rest wider."""
    return x if accuracy == EXACT and x.dtype == np.float64 else wide(x)


def _ints(fn):
    """An integer reference from a function of Python ints (element by element)."""
    return lambda *xs: np.array([fn(*map(int, row)) for row in zip(*xs, strict=True)], dtype=object).reshape(xs[0].shape)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_pow(a: int, b: int):
    if b < 0:
        return None  # NumPy: "Integers to negative integer powers are not allowed"
    if abs(a) <= 1 or b <= 128:
        return a**b
    return (1 if a > 0 or b % 2 == 0 else -1) * (1 << 200)  # beyond every dtype: only its sign matters


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _erf(x):
    from scipy.special import erf

    return erf(x.astype(np.float64))


def _where_nonneg(fn):
    return lambda x: np.where(np.isnan(x) | (x >= 0), fn(x), np.nan)


FLOAT_UNARY: dict[str, tuple[Callable, str]] = {
    "Exp": (np.exp, APPROX), "Log": (np.log, APPROX), "Sqrt": (np.sqrt, EXACT),
    "Sin": (np.sin, APPROX), "Cos": (np.cos, APPROX), "Tan": (np.tan, APPROX), "Tanh": (np.tanh, APPROX),
    "Sinh": (np.sinh, APPROX), "Cosh": (np.cosh, APPROX), "Asin": (np.arcsin, APPROX), "Acos": (np.arccos, APPROX),
    "Atan": (np.arctan, APPROX), "Asinh": (np.arcsinh, APPROX), "Acosh": (np.arccosh, APPROX),
    "Atanh": (np.arctanh, APPROX), "Erf": (_erf, APPROX), "Sigmoid": (_sigmoid, APPROX),
    "Softplus": (lambda x: np.logaddexp(0, x), APPROX), "Reciprocal": (lambda x: 1 / x, EXACT),
    "Neg": (np.negative, EXACT), "Abs": (np.abs, EXACT), "Sign": (np.sign, EXACT), "Floor": (np.floor, EXACT),
    "Ceil": (np.ceil, EXACT), "Round": (np.rint, EXACT), "Identity": (lambda x: x, EXACT),
    "Relu": (lambda x: np.where(np.isnan(x) | (x > 0), x, 0), EXACT), "IsNaN": (np.isnan, EXACT),
}
INT_UNARY: dict[str, Callable] = {
    "Neg": _ints(lambda a: -a), "Abs": _ints(abs), "Sign": _ints(lambda a: (a > 0) - (a < 0)),
    "BitwiseNot": _ints(lambda a: ~a), "Identity": _ints(lambda a: a), "Relu": _ints(lambda a: max(a, 0)),
}
FLOAT_BINARY: dict[str, tuple[Callable, str]] = {
    "Add": (np.add, EXACT), "Sub": (np.subtract, EXACT), "Mul": (np.multiply, EXACT), "Div": (np.divide, EXACT),
    "Pow": (np.power, APPROX), "Max": (np.maximum, EXACT), "Min": (np.minimum, EXACT),
    "Mod": (np.fmod, EXACT),  # ONNX takes fmod=1 only for floats
}
INT_BINARY: dict[str, Callable] = {
    "Add": _ints(lambda a, b: a + b), "Sub": _ints(lambda a, b: a - b), "Mul": _ints(lambda a, b: a * b),
    "Div": _ints(_trunc_div), "Pow": _ints(_int_pow), "Max": _ints(max), "Min": _ints(min),
    "BitwiseAnd": _ints(lambda a, b: a & b), "BitwiseOr": _ints(lambda a, b: a | b),
    "BitwiseXor": _ints(lambda a, b: a ^ b),
}
COMPARISONS = {
    "Equal": np.equal, "Less": np.less, "Greater": np.greater, "LessOrEqual": np.less_equal,
    "GreaterOrEqual": np.greater_equal,
}
LOGICAL = {"And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}

UNARY_OPS = frozenset(FLOAT_UNARY) | frozenset(INT_UNARY) | {"Not", "IsInf"}
BINARY_OPS = frozenset(FLOAT_BINARY) | frozenset(INT_BINARY) | frozenset(COMPARISONS) | frozenset(LOGICAL) | {"BitShift"}


LAYOUT_OPS = frozenset({"Transpose", "Unsqueeze", "Squeeze", "Reshape", "Concat", "Split", "Identity"})


def accuracy_class(op_type: str) -> str:
    """EXACT or APPROX: how strictly an op's float results are compared. Ops the audit
    has no reference of its own for (compared with onnx.reference) count as APPROX."""
    if op_type in FLOAT_UNARY:
        return FLOAT_UNARY[op_type][1]
    if op_type in FLOAT_BINARY:
        return FLOAT_BINARY[op_type][1]
    if op_type in UNARY_OPS | BINARY_OPS | LAYOUT_OPS | {"Cast", "Where"}:
        return EXACT
    return APPROX


def in_domain(op_type: str, inputs: list[np.ndarray]) -> np.ndarray:
    """Inputs that may be sent to onnxruntime (False: it would stop the process)."""
    keep = np.ones(inputs[0].shape, dtype=bool)
    if op_type in ("Div", "Mod") and inputs[0].dtype.kind in "iu":
        a, b = inputs
        keep &= b != 0
        if a.dtype.kind == "i":
            keep &= ~((a == np.iinfo(a.dtype).min) & (b == -1))
    return keep


def unary(op_type: str, attributes: dict, x: np.ndarray) -> Ref:
    if op_type == "Not":
        return Ref(~x)
    if op_type == "IsInf":
        pos, neg = attributes.get("detect_positive", 1), attributes.get("detect_negative", 1)
        return Ref((np.isposinf(x) & bool(pos)) | (np.isneginf(x) & bool(neg)))
    if x.dtype.kind in "iu":
        return Ref(INT_UNARY[op_type](x))
    fn, accuracy = FLOAT_UNARY[op_type]
    with np.errstate(all="ignore"):
        return Ref(fn(_computing(x, accuracy)))


def binary(op_type: str, attributes: dict, a: np.ndarray, b: np.ndarray) -> Ref:
    if op_type in COMPARISONS:
        return Ref(COMPARISONS[op_type](a, b))
    if op_type in LOGICAL:
        return Ref(LOGICAL[op_type](a, b))
    if op_type == "BitShift":
        right = attributes.get("direction") == "RIGHT"
        return Ref(_ints(lambda x, s: x >> s if right else x << s)(a, b))
    if a.dtype.kind in "iu":
        if op_type == "Mod":
            fmod = attributes.get("fmod", 0)
            fn = _ints(lambda x, y: x - y * _trunc_div(x, y) if fmod else x % y)
            return Ref(fn(a, b))
        values = INT_BINARY[op_type](a, b)
        undefined = np.array([v is None for v in values.ravel()]).reshape(values.shape)
        return Ref(np.where(undefined, 0, values), undefined if undefined.any() else None)
    fn, accuracy = FLOAT_BINARY[op_type]
    with np.errstate(all="ignore"):
        return Ref(fn(_computing(a, accuracy), _computing(b, accuracy)))


def where(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> Ref:
    return Ref(np.where(cond, a, b))


def cast(x: np.ndarray, to: str) -> Ref:
    """NumPy's astype, except that a float which does not fit the integer dtype is undefined."""
    to = np.dtype(to)
    undefined = None
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f" and to.kind in "iu":
            t = np.trunc(x.astype(np.longdouble))
            ii = np.iinfo(to)
            undefined = ~np.isfinite(t) | (t < ii.min) | (t > ii.max)
            x = np.where(undefined, 0, x)
        return Ref(x.astype(to), undefined)


def softmax(x: np.ndarray, axis: int) -> Ref:
    w = wide(x)
    with np.errstate(all="ignore"):
        e = np.exp(w - np.max(w, axis=axis, keepdims=True))
        return Ref(e / np.sum(e, axis=axis, keepdims=True))


def matmul(a: np.ndarray, b: np.ndarray) -> Ref:
    """Exact integers (NumPy wraps them); floats wider, with NumPy's own float result also accepted
    (a product that overflows in the dtype makes NaN or inf where the wide sum is finite)."""
    if a.dtype.kind in "iu":
        rows = a.reshape(-1, a.shape[-1]).astype(object)
        return Ref(np.array(rows.dot(b.astype(object)), dtype=object).reshape(np.matmul(a, b).shape))
    with np.errstate(all="ignore"):
        return Ref(np.matmul(wide(a), wide(b)), alternative=np.matmul(a, b))
