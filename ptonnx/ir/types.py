"""Tensor types of the IR: a dtype name and a shape of static/symbolic/unknown dims."""

from __future__ import annotations

import functools
from typing import Union

import attrs
import numpy as np

from ptonnx.errors import TypeRuleError

#: A dimension: a static size, a named symbolic size, or unknown.
Dim = Union[int, str, None]

#: The dtypes the IR knows, with the short names the printer uses.
DTYPES: dict[str, str] = {
    "bool": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
}

FLOAT_DTYPES = frozenset({"float16", "float32", "float64"})
SIGNED_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64"})
UNSIGNED_INT_DTYPES = frozenset({"uint8", "uint16", "uint32", "uint64"})
INT_DTYPES = SIGNED_INT_DTYPES | UNSIGNED_INT_DTYPES
NUMERIC_DTYPES = FLOAT_DTYPES | INT_DTYPES
ALL_DTYPES = frozenset(DTYPES)


def _check_dtype(instance, attribute, value):
    if value not in DTYPES:
        raise TypeRuleError(f"unknown dtype {value!r}; the IR knows {sorted(DTYPES)}")


def _to_shape(shape) -> tuple:
    out = []
    for d in shape:
        if d is None or isinstance(d, str):
            out.append(d)
        else:
            out.append(int(d))
    return tuple(out)


@attrs.frozen
class TensorType:
    """The type of one IR value: dtype name plus shape (int, symbolic str or None per dim)."""

    dtype: str = attrs.field(validator=_check_dtype)
    shape: tuple[Dim, ...] = attrs.field(converter=_to_shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    def with_dtype(self, dtype: str) -> TensorType:
        return TensorType(dtype, self.shape)

    def with_shape(self, shape) -> TensorType:
        return TensorType(self.dtype, shape)

    def __str__(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{DTYPES[self.dtype]}[{dims}]"

    def admits(self, other: TensorType) -> bool:
        """`other` is this type or a more specific one (a size where this has an unknown or named dim)."""
        return self.dtype == other.dtype and self.ndim == other.ndim and all(
            not isinstance(d, int) or d == o for d, o in zip(self.shape, other.shape, strict=True))

    @classmethod
    def of(cls, array: np.ndarray) -> TensorType:
        return cls(np.dtype(array.dtype).name, array.shape)


def promote(*dtypes: str) -> str:
    """NumPy's (NEP 50) dtype promotion, which is also PyTensor's `upcast`."""
    if len(dtypes) == 1 or all(d == dtypes[0] for d in dtypes):
        return dtypes[0]
    return _promote(tuple(dtypes))


@functools.lru_cache(maxsize=None)
def _promote(dtypes: tuple[str, ...]) -> str:
    return np.result_type(*[np.dtype(d) for d in dtypes]).name


def broadcast_dims(dims: list[Dim]) -> Dim:
    """Broadcast one axis across operands; raises if two static sizes clash."""
    result: Dim = 1
    for d in dims:
        if d == 1:
            continue
        if result == 1:
            result = d
        elif d == result:
            continue
        elif isinstance(result, int) and isinstance(d, int):
            raise TypeRuleError(f"cannot broadcast dimensions {result} and {d}")
        elif isinstance(d, int):
            result = d  # a static size > 1 fixes an unknown/symbolic one
        elif isinstance(result, int):
            continue
        else:
            result = None  # two different unknowns: either may be 1
    return result


def broadcast_shapes(*shapes: tuple[Dim, ...]) -> tuple[Dim, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    return tuple(broadcast_dims([s[i] for s in padded]) for i in range(ndim))
