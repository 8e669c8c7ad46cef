"""Known contents of small integer values: what type rules see of a shape computed in the graph.

A shape flows as an int64 value (`Shape(x)`, a Gather of it, a Concat with
literals). Its *contents* are what is known of its elements at compile time:
an int, a symbolic dim name (str) or None (unknown). For a 1-D value they are
a tuple (None when even the length is unknown), for a 0-D value one Dim.
`x.reshape((x.shape[0], -1))` so keeps `x`'s batch name on its output.

Contents come from constants and from each op's declared rule (`contents=` in its
declaration; the rules are here), applied recursively up the producers: shape graphs
are a handful of nodes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ptonnx.ir.schema import get_schema
from ptonnx.ir.types import INT_DTYPES, Dim

INT64 = np.iinfo(np.int64)
#: how far up the producers contents are followed
MAX_DEPTH = 32


def contents(value, depth: int = 0):
    """What is known of the elements of a 0-D or 1-D value (see module doc)."""
    ndim = value.type.ndim
    if value.const is not None and ndim <= 1 and value.const.dtype.kind in "iub":
        items = tuple(int(v) for v in value.const.ravel())
        return items[0] if ndim == 0 else items
    if value.const is not None and ndim <= 1 and value.const.dtype.kind == "f":
        items = tuple(float(v) for v in value.const.ravel())
        return items[0] if ndim == 0 else items
    unknown = _unknown(value)
    node = value.producer
    if node is None or ndim > 1 or depth >= MAX_DEPTH or value.dtype not in INT_DTYPES:
        return unknown

    rule = get_schema(node.op).contents
    if rule is None:
        return unknown
    found = rule(node, [contents(v, depth + 1) for v in node.inputs])
    if ndim == 1 and isinstance(found, tuple) and isinstance(value.shape[0], int) and len(found) != value.shape[0]:
        return unknown  # a rule that disagrees with the type: trust the type
    return unknown if found is None else found


def _unknown(value):
    if value.type.ndim == 0:
        return None
    length = value.shape[0] if value.type.ndim == 1 else None
    return (None,) * length if isinstance(length, int) else None


def is_known(c) -> bool:
    """All elements are static ints."""
    if isinstance(c, tuple):
        return all(isinstance(d, int) for d in c)
    return isinstance(c, int)


def _items(c) -> tuple | None:
    return c if isinstance(c, tuple) or c is None else (c,)


# -- rules ------------------------------------------------------------------------


def _shape(node, ins):
    dims = node.inputs[0].shape
    return tuple(dims[slice(node.attrs["start"], node.attrs["end"])])


def _same(node, ins):
    return ins[0]


def _concat(node, ins):
    if any(c is None for c in ins):
        return None
    return tuple(d for c in ins for d in c)


def _unsqueeze(node, ins):
    return (ins[0],) if node.inputs[0].type.ndim == 0 else None


def _squeeze(node, ins):
    c = ins[0]
    return c[0] if isinstance(c, tuple) and len(c) == 1 and node.outputs[0].type.ndim == 0 else None


def _reshape(node, ins):
    c = _items(ins[0])
    if c is None:
        return None
    return c[0] if node.outputs[0].type.ndim == 0 and len(c) == 1 else (c if node.outputs[0].type.ndim == 1 else None)


def _gather(node, ins):
    data, idx = ins
    if node.attrs.get("axis", 0) != 0 or not isinstance(data, tuple) or not is_known(idx):
        return None
    n = len(data)
    if any(not -n <= i < n for i in _items(idx)):
        return None
    picked = tuple(data[i] for i in _items(idx))
    return picked[0] if node.outputs[0].type.ndim == 0 else picked


def _slice(node, ins):
    data, starts, ends, steps = ins
    if node.attrs["axes"] != (0,) or not isinstance(data, tuple) or not all(is_known(c) for c in (starts, ends, steps)):
        return None
    (start,), (end,), (step,) = _items(starts), _items(ends), _items(steps)
    return data[slice(start, end, step)]


def _arith(fn: Callable[[int, int], int], identity: int | None = None, commutative: bool = False, unary: bool = False):
    """Elementwise integer arithmetic on known elements; a symbolic dim survives its identity
    (`n * 1`, `n + 0`; also `1 * n` when the op commutes)."""

    def one(a: Dim, b: Dim) -> Dim:
        if isinstance(a, int) and isinstance(b, int):
            r = fn(a, b)
            return r if INT64.min <= r <= INT64.max else None
        if identity is not None and b == identity and a is not None:
            return a
        if commutative and identity is not None and a == identity and b is not None:
            return b
        return None

    def rule(node, ins):
        if unary:
            (a,) = ins
            if isinstance(a, tuple):
                return tuple(one(0, d) for d in a)
            return one(0, a)
        a, b = ins
        if not isinstance(a, tuple) and not isinstance(b, tuple):
            return one(a, b)
        a, b = _items(a), _items(b)
        if a is None or b is None:
            return None
        if len(a) == 1:
            a = a * len(b)
        if len(b) == 1:
            b = b * len(a)
        return tuple(one(x, y) for x, y in zip(a, b, strict=True)) if len(a) == len(b) else None

    return rule


def _product(node, ins):
    """The product of a 1-D value's elements (`ReduceProd` over axis 0, the size of the axes a
    Reshape merges): known when the elements are, or when all but one are 1 (that one, named
    or not)."""
    (items,) = ins
    if not isinstance(items, tuple) or node.attrs["axes"] != (0,):
        return None
    rest = [d for d in items if d != 1]
    if not rest:
        total = 1
    elif len(rest) == 1:
        total = rest[0]
    elif all(isinstance(d, int) for d in rest):
        total = int(np.prod(rest, dtype=object))
        total = total if INT64.min <= total <= INT64.max else None
    else:
        total = None
    return (total,) if node.attrs["keepdims"] else total


def _cast(node, ins):
    return ins[0] if node.attrs["to"] in INT_DTYPES else None


def _sub(a, b):
    return a - b


def _floordiv(a, b):
    return a // b if b else 0


#: the rules the declarations name (`contents=`), for the ops that carry a shape's elements
same_contents = _same
shape_contents = _shape
cast_contents = _cast
concat_contents = _concat
unsqueeze_contents = _unsqueeze
squeeze_contents = _squeeze
reshape_contents = _reshape
gather_contents = _gather
slice_contents = _slice
add_contents = _arith(lambda a, b: a + b, identity=0, commutative=True)
sub_contents = _arith(_sub, identity=0)
mul_contents = _arith(lambda a, b: a * b, identity=1, commutative=True)
floordiv_contents = _arith(_floordiv, identity=1)
product_contents = _product
max_contents = _arith(max)
min_contents = _arith(min)
neg_contents = _arith(lambda _, b: -b, unary=True)
