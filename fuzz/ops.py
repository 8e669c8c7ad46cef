"""The ops the generator draws: every PyTensor op ptonnx lifts, as the code a user writes.

Each op takes the `Builder`, draws operands, and emits a Python expression
that the builder evaluates (so the printed code is exactly what was built).
It returns the new terms, or None when it found nothing to apply to.

Excluded on purpose (undefined in NumPy, so there is no reference to judge by):
- float -> integer casts of NaN, ±inf and out-of-range values: every float
  cast to an integer dtype is guarded as `switch(x >= lo, minimum(x, hi), lo)`
  with `lo`/`hi` the integer range rounded into the float dtype (NaN -> lo; not
  `switch(eq(x, x), ...)`, which PyTensor's rewrites fold to `x`, NaN and all);
- integer ** negative integer (NumPy raises): an integer exponent of an integer
  base is `e % 8` (or a literal in 0..5). Integer ** that overflows stays:
  NumPy wraps, and that is the reference.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from fuzz.generate import Builder, Lit, Term, broadcast
from fuzz.values import FLOATS, random_literal

UNARY = {
    "neg": "-{0}", "abs": "abs({0})", "sign": "pt.sign({0})", "reciprocal": "pt.reciprocal({0})",
    "exp": "pt.exp({0})", "log": "pt.log({0})", "sqrt": "pt.sqrt({0})", "log1p": "pt.log1p({0})",
    "expm1": "pt.expm1({0})", "softplus": "pt.softplus({0})", "sin": "pt.sin({0})", "cos": "pt.cos({0})",
    "tanh": "pt.tanh({0})", "erf": "pt.erf({0})", "sigmoid": "pt.sigmoid({0})", "floor": "pt.floor({0})",
    "ceil": "pt.ceil({0})", "round_half_even": "pt.round({0}, mode='half_to_even')",
    "round_half_away": "pt.round({0}, mode='half_away_from_zero')", "identity": "pt.tensor_copy({0})",
    "sqr": "pt.sqr({0})", "invert": "~{0}",
}
BINARY = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "true_div": "{0} / {1}", "int_div": "{0} // {1}",
    "mod": "{0} % {1}", "pow": "{0} ** {1}", "maximum": "pt.maximum({0}, {1})", "minimum": "pt.minimum({0}, {1})",
    "lt": "pt.lt({0}, {1})", "gt": "{0} > {1}", "le": "pt.le({0}, {1})", "ge": "{0} >= {1}",
    "eq": "pt.eq({0}, {1})", "neq": "pt.neq({0}, {1})", "and": "{0} & {1}", "or": "{0} | {1}", "xor": "{0} ^ {1}",
}
NARY = {"add3": "pt.add({0}, {1}, {2})", "mul3": "pt.mul({0}, {1}, {2})"}


def emit(b: Builder, expr: str, operands, shapes) -> list[Term]:
    """Evaluate `expr` over the operands' names; one new term per run-time shape in `shapes`."""
    env = {"pt": pt, "np": np, **{o.name: o.var for o in operands if isinstance(o, Term)}}
    result = eval(expr, env)  # the expressions are built here, from fixed templates
    b.used.update(o.name for o in operands if isinstance(o, Term))
    if len(shapes) == 1:
        return [b.add(result, shapes[0], expr)]
    base = f"v{len(b.lines)}"
    names = [f"{base}_{i}" for i in range(len(shapes))]
    b.lines.append(f"{', '.join(names)} = {expr}")
    terms = []
    for var, shape, name in zip(result, shapes, names, strict=True):
        var.name = name
        terms.append(Term(var, tuple(shape), name))
    b.pool.extend(terms)
    return terms


def is_int(o) -> bool:
    if isinstance(o, Lit):
        return isinstance(o.value, int)
    return np.dtype(o.dtype).kind in "iub"


def elementwise(b: Builder, template: str, operands) -> list[Term]:
    return emit(b, template.format(*(o.name for o in operands)), operands, [broadcast(*operands).shape])


def unary(b: Builder):
    name = b.choice(list(UNARY))
    x = b.pick()
    return name, elementwise(b, UNARY[name], [x])


def binary(b: Builder):
    name = b.choice(list(BINARY))
    if name in ("and", "or", "xor"):  # PyTensor's bit ops take all ints or all bools
        x = b.pick(is_int)
        if x is None:
            return name, None
        ints = ("bool",) if x.dtype == "bool" else ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
        y = Lit(random_literal(b.rng, integer=True)) if x.dtype != "bool" and b.chance(0.3) else b.partner(x, b.choice(ints))
    else:
        x = b.pick()
        y = b.operand(x, literal=0.3, exponent=name == "pow" and is_int(x))
    operands = [x, y] if b.chance(0.5) else [y, x]
    if name == "pow" and is_int(operands[0]) and is_int(operands[1]):
        base, exponent = operands
        if isinstance(exponent, Lit):
            exponent = Lit(random_literal(b.rng, exponent=True))
        else:
            (exponent,) = elementwise(b, "{0} % 8", [exponent])
        operands = [base, exponent]
    return name, elementwise(b, BINARY[name], operands)


def nary(b: Builder):
    name = b.choice(list(NARY))
    x = b.pick()
    y = b.operand(x, literal=0.2)
    z = b.operand(broadcast(x, y), literal=0.2)
    return name, elementwise(b, NARY[name], [x, y, z])


def clip(b: Builder):
    x = b.pick()
    lo = b.operand(x, literal=0.5)
    hi = b.operand(broadcast(x, lo), literal=0.5)
    return "clip", elementwise(b, "pt.clip({0}, {1}, {2})", [x, lo, hi])


def switch(b: Builder):
    cond = b.pick(lambda t: t.dtype == "bool") if b.chance(0.7) else None
    cond = cond or b.pick()
    x = b.operand(cond, literal=0.3)
    y = b.operand(broadcast(cond, x), literal=0.3)
    return "switch", elementwise(b, "pt.switch({0}, {1}, {2})", [cond, x, y])


def int_range_in(fdtype: str, idtype: str) -> tuple[float, float]:
    """The integer dtype's range rounded inward into the float dtype (so clipping keeps a cast defined)."""
    t, info, finfo = np.dtype(fdtype).type, np.iinfo(idtype), np.finfo(fdtype)
    bounds = []
    for bound in (max(int(info.min), -int(finfo.max)), min(int(info.max), int(finfo.max))):
        f = t(bound)
        if abs(int(f)) > abs(bound):
            f = np.nextafter(f, t(0))
        bounds.append(float(f))
    return bounds[0], bounds[1]


def cast(b: Builder):
    x = b.pick()
    target = b.dtype()
    if np.dtype(x.dtype).kind == "f" and np.dtype(target).kind in "iu":
        lo, hi = int_range_in(x.dtype, target)
        t = x.dtype
        guard = f"pt.switch({{0}} >= np.{t}({lo!r}), pt.minimum({{0}}, np.{t}({hi!r})), np.{t}({lo!r}))"
        (x,) = elementwise(b, guard, [x])
    template = f"pt.cast({{0}}, {target!r})" if b.chance(0.6) else f"{{0}}.astype({target!r})"
    return "cast", elementwise(b, template, [x])


def transpose(b: Builder):
    x = b.pick(lambda t: t.ndim >= 2)
    if x is None:
        return "transpose", None
    perm = tuple(int(i) for i in b.rng.permutation(x.ndim))
    form = b.choice(("T", "transpose", "dimshuffle"))
    if form == "T":
        perm = tuple(reversed(range(x.ndim)))
        expr = f"{x.name}.T"
    else:
        expr = f"pt.transpose({x.name}, {perm})" if form == "transpose" else f"{x.name}.dimshuffle({perm})"
    return "transpose", emit(b, expr, [x], [tuple(x.shape[i] for i in perm)])


def expand_dims(b: Builder):
    x = b.pick(lambda t: t.ndim <= 2)
    if x is None:
        return "expand_dims", None
    axis = int(b.rng.integers(0, x.ndim + 1))
    shape = x.shape[:axis] + (1,) + x.shape[axis:]
    if b.chance(0.5):
        expr = f"pt.expand_dims({x.name}, {axis})"
    else:
        pattern = [*range(x.ndim)]
        pattern.insert(axis, "x")
        expr = f"{x.name}.dimshuffle({tuple(pattern)})"
    return "expand_dims", emit(b, expr, [x], [shape])


def squeeze(b: Builder):
    x = b.pick(lambda t: 1 in t.shape)
    if x is None:
        return "squeeze", None
    ones = [a for a, n in enumerate(x.shape) if n == 1]
    static_ones = [a for a in ones if x.static[a] == 1]
    if static_ones and b.chance(0.4):  # DimShuffle dropping broadcastable dims
        drop = [a for a in static_ones if b.chance(0.7)] or static_ones[:1]
        kept = tuple(a for a in range(x.ndim) if a not in drop)
        expr = f"{x.name}.dimshuffle({kept})"
    else:
        drop = [a for a in ones if b.chance(0.6)] or ones[:1]
        expr = f"pt.squeeze({x.name}, {tuple(drop) if len(drop) > 1 else drop[0]})"
    return "squeeze", emit(b, expr, [x], [tuple(n for a, n in enumerate(x.shape) if a not in drop)])


def join(b: Builder):
    x = b.pick(lambda t: t.ndim >= 1)
    if x is None:
        return "join", None
    axis = int(b.rng.integers(0, x.ndim))
    parts = [x]
    for _ in range(int(b.rng.integers(1, 3))):
        def same(t):
            return t.ndim == x.ndim and all(n == m for a, (n, m) in enumerate(zip(t.shape, x.shape, strict=True)) if a != axis)
        other = b.pick(same) if b.chance(0.4) else None
        if other is None:
            shape = list(x.shape)
            shape[axis] = b.choice((0, 1, 2, 3))
            other = b.fresh(b.dtype(like=x.dtype), tuple(shape))
        parts.append(other)
    b.rng.shuffle(parts)
    shape = list(x.shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    shown = axis - x.ndim if b.chance(0.3) else axis
    names = ", ".join(p.name for p in parts)
    expr = f"pt.join({shown}, {names})" if b.chance(0.5) else f"pt.concatenate([{names}], axis={shown})"
    return "join", emit(b, expr, parts, [tuple(shape)])


def split(b: Builder):
    x = b.pick(lambda t: t.ndim >= 1)
    if x is None:
        return "split", None
    axis = int(b.rng.integers(0, x.ndim))
    n = int(b.rng.integers(2, 4))
    cuts = sorted(int(c) for c in b.rng.integers(0, x.shape[axis] + 1, n - 1))
    sizes = [hi - lo for lo, hi in zip([0, *cuts], [*cuts, x.shape[axis]], strict=True)]
    shapes = [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
    return "split", emit(b, f"pt.split({x.name}, {sizes}, n_splits={n}, axis={axis})", [x], shapes)


def _factor(b: Builder, total: int, ndim: int) -> list[int] | None:
    if ndim == 0:
        return [] if total == 1 else None
    dims = [1] * ndim
    if total == 0:
        dims = [b.choice((1, 2, 3)) for _ in range(ndim)]
        dims[int(b.rng.integers(0, ndim))] = 0
        return dims
    p, rest = 2, total
    while rest > 1:
        while rest % p == 0:
            dims[int(b.rng.integers(0, ndim))] *= p
            rest //= p
        p += 1
    return dims


def reshape(b: Builder):
    x = b.pick()
    total = int(np.prod(x.shape, dtype=np.int64))
    dims = _factor(b, total, b.choice((0, 1, 2, 3)))
    if dims is None or tuple(dims) == x.shape:
        return "reshape", None
    shown = list(dims)
    if total > 0 and dims and b.chance(0.3):
        shown[int(b.rng.integers(0, len(dims)))] = -1
    expr = f"{x.name}.reshape({tuple(shown)})" if b.chance(0.5) else f"pt.reshape({x.name}, {tuple(shown)})"
    return "reshape", emit(b, expr, [x], [tuple(dims)])


def softmax(b: Builder):
    x = b.pick()
    axis = None if x.ndim == 0 or b.chance(0.25) else int(b.rng.integers(-x.ndim, x.ndim))
    return "softmax", emit(b, f"pt.special.softmax({x.name}, axis={axis})", [x], [x.shape])


#: matrix-product forms: (ndim of a, ndim of b)
DOT_FORMS = {"vv": (1, 1), "mv": (2, 1), "vm": (1, 2), "mm": (2, 2), "bmm": (3, 3), "bm": (3, 2), "mb": (2, 3), "outer": (1, 1)}


def _operand(b: Builder, shape: tuple[int, ...], transposed: bool, dtype: str | None) -> tuple[Term, str]:
    """A term of run-time `shape` (from the pool or fresh, of `dtype` if given), possibly built as a transpose."""
    want = tuple(reversed(shape)) if transposed else shape
    term = b.pick(lambda t: t.shape == want and dtype in (None, t.dtype)) if b.chance(0.4) else None
    if term is None:
        term = b.fresh(dtype or _dot_dtype(b), want)
    return term, f"{term.name}.T" if transposed else term.name


def _dot_dtype(b: Builder) -> str:
    return b.choice(FLOATS[1:]) if b.chance(0.6) else b.dtype()


def dot(b: Builder):
    """1-D, 2-D and batched products; half of them in one float dtype, as PyTensor's BLAS rewrites need."""
    form = b.choice(list(DOT_FORMS))
    nd_a, nd_b = DOT_FORMS[form]
    a = b.pick(lambda t: t.ndim == nd_a) if b.chance(0.6) else None
    if a is None:
        a = b.fresh(_dot_dtype(b), b.shape(nd_a))
    same = a.dtype if a.dtype in FLOATS[1:] and b.chance(0.6) else None
    a_expr = a.name
    a_shape = a.shape
    if nd_a == 2 and b.chance(0.3):
        a_expr, a_shape = f"{a.name}.T", a.shape[::-1]
    k, n = a_shape[-1], b.dim()
    if form == "outer":
        y, y_expr = _operand(b, (n,), False, same)
        (d,) = emit(b, f"pt.outer({a_expr}, {y.name})", [a, y], [(a_shape[0], n)])
    else:
        b_shape = {1: (k,), 2: (k, n), 3: (b.choice((1, a_shape[0])), k, n)}[nd_b]
        if nd_a == 2 and nd_b == 3:
            b_shape = (b.dim(), k, n)
        y, y_expr = _operand(b, b_shape, nd_b == 2 and b.chance(0.25), same)
        out = np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape
        fn = b.choice(("pt.dot({0}, {1})", "pt.matmul({0}, {1})", "{0} @ {1}")) if max(nd_a, nd_b) <= 2 else b.choice(("pt.matmul({0}, {1})", "{0} @ {1}"))
        (d,) = emit(b, fn.format(a_expr, y_expr), [a, y], [out])
    if b.chance(0.5) and np.dtype(d.dtype).kind == "f":  # what PyTensor's Gemv, Gemm, Ger rewrites look for
        z = b.fresh(d.dtype, d.shape) if same and b.chance(0.7) else b.partner(d)
        alpha = Lit(b.choice((0.5, 2.0, -1.0, 1.0)))
        if b.chance(0.2):  # Dot22Scalar
            return form + "+scale", elementwise(b, "{0} * {1}", [alpha, d])
        template = b.choice(("{0} + {1} * {2}", "{1} * {2} - {0}", "{0} + {2}", "{0} * {1} + {2}"))
        return form + "+gemm", elementwise(b, template, [z, alpha, d])
    return form, [d]


OPS = {
    "unary": unary, "binary": binary, "nary": nary, "clip": clip, "switch": switch, "cast": cast,
    "transpose": transpose, "expand_dims": expand_dims, "squeeze": squeeze, "join": join, "split": split,
    "reshape": reshape, "softmax": softmax, "dot": dot,
}
_WEIGHT = {"unary": 24, "binary": 30, "nary": 4, "clip": 4, "switch": 5, "cast": 8, "transpose": 4,
           "expand_dims": 3, "squeeze": 3, "join": 4, "split": 3, "reshape": 3, "softmax": 3, "dot": 6}
WEIGHTS = np.array([_WEIGHT[k] for k in OPS], dtype=float) / sum(_WEIGHT.values())
