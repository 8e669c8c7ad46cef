"""Bit ops and the counter-based generator random draws are built on.

`Threefry2x32` is Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers:
as easy as 1, 2, 3", SC 2011; Random123's `threefry2x32`, JAX's default generator): a
keyed bijection of 64-bit counters, elementwise over broadcast uint32 words. Its NumPy
twin below is the op's semantics and matches Random123's known-answer vectors
(`tests/random/test_generator.py`); `decompositions/random/bits.py` writes it in uint32
Add, shifts, Or and Xor, the ops every ONNX runtime has, so interpret, constant folding
and each runtime give the same bits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.ir.ops.elementwise import declare
from ptonnx.ir.schema import define
from ptonnx.ir.types import UNSIGNED_INT_DTYPES, TensorType, broadcast_shapes

#: Threefry-2x32's rotation constants, four per round group (Random123's R_32x2)
ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
#: the key-schedule parity constant (Random123's SKEIN_KS_PARITY32)
PARITY = 0x1BD11BDA
#: rounds, and a key injection after every fourth
ROUNDS = 20


def _shift_left(a, b):
    return np.left_shift(a, b).astype(a.dtype, copy=False)


def _shift_right(a, b):
    return np.right_shift(a, b).astype(a.dtype, copy=False)


declare("ShiftLeft", semantics=_shift_left, inputs=("T", "T"), output="T", dtypes=UNSIGNED_INT_DTYPES, family="bits",
        doc="a << b on unsigned integers, the high bits dropped (b below the bit width: ONNX leaves wider shifts undefined)")
declare("ShiftRight", semantics=_shift_right, inputs=("T", "T"), output="T", dtypes=UNSIGNED_INT_DTYPES, family="bits",
        doc="a >> b on unsigned integers (b below the bit width)")


def _trunc_div(a, b):
    with np.errstate(all="ignore"):
        q = np.floor_divide(a, b)
        toward_zero = (np.mod(a, b) != 0) & ((a < 0) != (b < 0))
        return np.where(toward_zero, q + 1, q).astype(q.dtype, copy=False)


declare("TruncDiv", semantics=_trunc_div, inputs=("T", "T"), output="T", dtypes=frozenset({"int32", "int64"}), family="bits",
        doc="a / b rounded toward zero (C's and ONNX's integer Div; x / 0 == 0, INT_MIN / -1 wraps): one ONNX Div "
            "where b is a constant other than 0 and -1 (a right shift of a number known non-negative, "
            "`passes/carry_dtypes.py`), where IntDiv's flooring costs eight nodes more")


def rotate_left(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def threefry2x32(k0, k1, x0, x1) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32-20 of the counters (x0, x1) under the key (k0, k1), broadcast; uint32 words."""
    k0, k1, x0, x1 = (np.asarray(a, dtype=np.uint32) for a in (k0, k1, x0, x1))
    keys = (k0, k1, k0 ^ k1 ^ np.uint32(PARITY))
    with np.errstate(over="ignore"):
        x0, x1 = x0 + keys[0], x1 + keys[1]
        for group in range(ROUNDS // 4):
            for r in ROTATIONS[4 * (group % 2): 4 * (group % 2) + 4]:
                x0 = x0 + x1
                x1 = rotate_left(x1, r) ^ x0
            x0 = x0 + keys[(group + 1) % 3]
            x1 = x1 + keys[(group + 2) % 3] + np.uint32(group + 1)
    shape = np.broadcast_shapes(k0.shape, k1.shape, x0.shape, x1.shape)
    return np.broadcast_to(x0, shape).copy(), np.broadcast_to(x1, shape).copy()


def _threefry_rule(types: Sequence[TensorType], attributes: Mapping[str, Any]) -> list[TensorType]:
    shape = broadcast_shapes(*(t.shape for t in types))
    return [TensorType("uint32", shape), TensorType("uint32", shape)]


define("Threefry2x32", inputs=("k0: uint32", "k1: uint32", "x0: uint32", "x1: uint32"), outputs=("y0: uint32", "y1: uint32"),
       dtypes={}, type_rule=_threefry_rule, semantics=threefry2x32, family="random",
       doc="Threefry-2x32-20 (Random123's, JAX's): the counters (x0, x1) enciphered under the key (k0, k1), broadcast")
