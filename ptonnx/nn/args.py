"""Normalising the arguments of the `ptonnx.nn` functions: ints, pairs, paddings, dtypes."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Constant

from ptonnx.errors import PtonnxError

#: dtypes the ptonnx.nn Ops compute in
DTYPES = ("float32", "float64")


class NNArgumentError(PtonnxError, ValueError):
    """A ptonnx.nn function got parameters that do not describe a valid op."""


class NNInputTypeError(PtonnxError, TypeError):
    """A ptonnx.nn function got an input of the wrong dtype or rank."""


def pair(value, name: str, op: str) -> tuple[int, int]:
    """An int or a pair of ints as a pair of ints (height, width)."""
    values = (value, value) if np.ndim(value) == 0 else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int | np.integer) for v in values):
        raise NNArgumentError(f"{op}: {name} must be an int or a pair of ints, got {value!r}")
    return int(values[0]), int(values[1])


def pads4(padding, op: str) -> tuple[int, int, int, int]:
    """int p, pair (ph, pw) or explicit (top, left, bottom, right) -> (top, left, bottom, right)."""
    values = (padding,) * 4 if np.ndim(padding) == 0 else tuple(padding)
    if len(values) == 2:
        values = values * 2
    if len(values) != 4 or not all(isinstance(v, int | np.integer) and v >= 0 for v in values):
        raise NNArgumentError(
            f"{op}: padding must be an int, a pair (ph, pw) or (top, left, bottom, right) of ints >= 0, got {padding!r}"
        )
    return tuple(int(v) for v in values)


def positive(values: tuple[int, ...], name: str, op: str) -> tuple[int, ...]:
    if any(v < 1 for v in values):
        raise NNArgumentError(f"{op}: {name} must be >= 1, got {values}")
    return values


def float_input(x, op: str, ndims: tuple[int, ...] | None = None):
    """`x` as a float32/float64 tensor of one of the allowed ranks (None: any rank)."""
    x = pt.as_tensor_variable(x)
    if x.type.dtype not in DTYPES:
        raise NNInputTypeError(f"{op}: input {x} is {x.type.dtype}; cast it to one of {DTYPES} first")
    if ndims is not None and x.type.ndim not in ndims:
        raise NNInputTypeError(f"{op}: input {x} has {x.type.ndim} dims; expected {' or '.join(map(str, ndims))}")
    return x


def param(value, dtype: str, ndim: int, name: str, op: str):
    """A weight/statistic in the input's dtype (constants are converted, variables cast)."""
    value = pt.as_tensor_variable(value)
    if value.type.ndim != ndim:
        raise NNInputTypeError(f"{op}: {name} {value} has {value.type.ndim} dims, expected {ndim}")
    if value.type.dtype == dtype:
        return value
    if isinstance(value, Constant):
        return pt.constant(np.asarray(value.data, dtype=dtype), name=value.name)
    return pt.cast(value, dtype)


def static(dim) -> int | None:
    """A static size from a PyTensor type shape entry (None when unknown)."""
    return None if dim is None else int(dim)
