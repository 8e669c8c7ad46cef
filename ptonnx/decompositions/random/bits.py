"""Random bits: Threefry-2x32 in uint32 integer ops, keys, counters and uniform floats.

A key is two uint32 words. A random op with constant `stream` s draws under its own
key threefry(key, (s, 0)); lane l of its draws (the uniforms one draw needs, a rejection
sampler's trips) takes element i (row-major over the draws) from the counter
(l << 24 | i >> 32, i & 0xFFFFFFFF): every (op, lane, element) has a counter of its own
(up to 256 lanes of 2**56 elements), so draws do not depend on evaluation order, and two
ops or two lanes are independent streams. One key derivation per op (a scalar Threefry),
not one per lane. The key an op passes on (PyTensor's next generator) is
threefry(key, (s, 2**32 - 1)), `NextKey`.

64 bits make a float64 in [0, 1) with 53 (`unit`, NumPy's `random()`), or in (0, 1)
with 52 and a half (`open_unit`: logarithms stay finite).
"""

from __future__ import annotations

from ptonnx.decompositions.expr import Ex
from ptonnx.decompositions.registry import decomposes
from ptonnx.ir.dims import contents
from ptonnx.ir.ops.bits import PARITY, ROTATIONS, ROUNDS
from ptonnx.ir.ops.random import NEXT

MASK32 = 0xFFFFFFFF


def _rotate_left(x: Ex, r: int) -> Ex:
    """x rotated left by r: x * 2**r (wrapping) + x >> (32 - r). The two parts share no bit, so
    Add is their Or; Mul and Add are onnxruntime's vectorised uint32 kernels, ShiftLeft and Or
    are not (a third of the time each, measured by `python -m benchmarks.random_draws --generator`)."""
    return x * (1 << r) + x.op("ShiftRight", 32 - r)


def threefry(k0: Ex, k1: Ex, x0: Ex, x1: Ex) -> tuple[Ex, Ex]:
    """Threefry-2x32-20, as `ptonnx.ir.ops.bits.threefry2x32`: 5 nodes a round (Add, the
    rotation's Mul, ShiftRight and Add, Xor), the key schedule on the key's (usually scalar) words."""
    keys = (k0, k1, k0.op("Xor", k1).op("Xor", PARITY))
    x0, x1 = x0 + keys[0], x1 + keys[1]
    for group in range(ROUNDS // 4):
        for r in ROTATIONS[4 * (group % 2): 4 * (group % 2) + 4]:
            x0 = x0 + x1
            x1 = _rotate_left(x1, r).op("Xor", x0)
        x0 = x0 + keys[(group + 1) % 3]
        x1 = x1 + (keys[(group + 2) % 3] + (group + 1))
    return x0, x1


@decomposes("Threefry2x32", own_dtype=True)
def threefry_op(node, inputs):
    return list(threefry(*inputs))


def words(key: Ex) -> tuple[Ex, Ex]:
    """A key's two words, as scalars."""
    scope = key.scope
    return tuple(key.op("Gather", Ex(scope, scope.scalar(i, "int64")), axis=0) for i in (0, 1))


def as_key(k0: Ex, k1: Ex) -> Ex:
    """Two scalar words as a key."""
    return k0.op("Unsqueeze", axes=(0,)).op("Concat", k1.op("Unsqueeze", axes=(0,)), axis=0)


def threefry_node(k0: Ex, k1: Ex, x0: Ex, x1: Ex) -> tuple[Ex, Ex]:
    """A `Threefry2x32` node (the op whose semantics is the NumPy twin; `decompose` expands it
    by `threefry` next)."""
    node = k0.scope.builder.node("Threefry2x32", [k0.value, k1.value, x0.value, x1.value])
    return Ex(k0.scope, node.outputs[0]), Ex(k0.scope, node.outputs[1])


def derive(key: tuple[Ex, Ex], a: int | Ex, b: int | Ex) -> tuple[Ex, Ex]:
    """The key threefry(key, (a, b))."""
    k0, k1 = key
    return threefry_node(k0, k1, k0.const(a), k0.const(b))


def count(shape: Ex) -> Ex:
    """The number of elements of `shape` (an int64 scalar)."""
    return shape.op("ReduceProd", axes=(0,))


def counters(n: Ex, lane: int | Ex) -> tuple[Ex, Ex]:
    """The counters of i = 0 .. n - 1 (`counters_at`), as uint32 vectors (the first a scalar
    where n is known to stay below 2**32)."""
    known = contents(n.value)
    return counters_at(n.const(0).op("Range", n, n.const(1)), lane, isinstance(known, int) and known <= MASK32)


def counters_at(index: Ex, lane: int | Ex, small: bool = False) -> tuple[Ex, Ex]:
    """The counters (lane << 24 | i >> 32, i & 0xFFFFFFFF) of the elements i of `index` (an int64
    vector): the bits element i draws whichever others are drawn with it. `small`: every i is
    known to stay below 2**32 (the first word is then a scalar)."""
    low = index.op("And", MASK32).cast("uint32")
    top = low.const(lane).op("ShiftLeft", 24)
    if small:
        return top, low
    return index.cast("uint64").op("ShiftRight", 32).cast("uint32") | top, low


def stream_key(key: Ex, stream: int) -> tuple[Ex, Ex]:
    """The key a random op of `stream` draws under: threefry(key, (stream, 0))."""
    return derive(words(key), stream, 0)


def lane_bits(key: tuple[Ex, Ex], lane: int | Ex, n: Ex) -> tuple[Ex, Ex]:
    """64 random bits for each of n elements (two uint32 vectors), lane `lane` of an op's key."""
    x0, x1 = counters(n, lane)
    return threefry_node(*key, x0, x1)


def unit(bits: tuple[Ex, Ex]) -> Ex:
    """A float64 in [0, 1) from 53 of the bits, NumPy's `random()`: k 2**-53, k < 2**53."""
    high, low = bits
    return (high.op("ShiftRight", 11).cast("float64") * 2.0**32 + low.cast("float64")) * 2.0**-53


def open_unit(bits: tuple[Ex, Ex]) -> Ex:
    """A float64 in (0, 1) from 52 of the bits: (k + 1/2) 2**-52, k < 2**52 (exact)."""
    high, low = bits
    return (high.op("ShiftRight", 12).cast("float64") * 2.0**32 + low.cast("float64") + 0.5) * 2.0**-52


@decomposes("NextKey", own_dtype=True)
def next_key(node, inputs):
    """The key a random op of `stream` passes on."""
    return as_key(*derive(words(inputs[0]), node.attrs["stream"], NEXT))


__all__ = ["as_key", "count", "counters", "counters_at", "derive", "lane_bits", "open_unit", "stream_key", "threefry", "unit", "words"]