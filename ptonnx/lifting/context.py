"""State of one lifting: the IR graph being built and the PyTensor-variable -> Value map."""

from __future__ import annotations

import numpy as np

from ptonnx.errors import LiftingError
from ptonnx.ir import Builder, Graph, TensorType, Value


def ir_type(var) -> TensorType:
    """The IR type of a PyTensor tensor (or scalar) variable."""
    t = var.type
    dtype = getattr(t, "dtype", None)
    if dtype is None:
        raise LiftingError(f"variable {var} has type {t}, which ptonnx cannot represent (tensors only)")
    shape = getattr(t, "shape", ())
    try:
        return TensorType(str(dtype), shape)
    except Exception as exc:
        raise LiftingError(f"variable {var} has type {t}: {exc}") from None


class LiftContext:
    def __init__(self, name: str = "graph"):
        self.graph = Graph(name)
        self.builder = Builder(self.graph)
        self.values: dict = {}
        self._casts: dict[tuple[Value, str], Value] = {}

    def add_input(self, var) -> Value:
        value = self.graph.add_input(ir_type(var), var.name)
        self.values[var] = value
        return value

    def value(self, var) -> Value:
        """The IR value of a PyTensor variable; constants are made on first use."""
        try:
            return self.values[var]
        except KeyError:
            pass
        data = getattr(var, "data", None)
        if data is None:
            raise LiftingError(f"variable {var} is used before it is defined (not an input, constant or output of an earlier node)")
        arr = np.asarray(data)
        expected = ir_type(var)
        if arr.dtype.name != expected.dtype:
            arr = arr.astype(expected.dtype)
        # A 0-d (or all-ones) constant is how PyTensor stores a Python literal.
        value = Value.constant(arr, var.name, weak=arr.size == 1)
        self.values[var] = value
        return value

    def op(self, op: str, *inputs: Value, name: str | None = None, **attrs) -> Value:
        return self.builder.op(op, *inputs, name=name, **attrs)

    def cast(self, value: Value, dtype: str) -> Value:
        """`value` as `dtype`: constants converted now, others through one shared Cast."""
        if value.dtype == dtype:
            return value
        if value.const is not None:
            with np.errstate(all="ignore"):
                return Value.constant(value.const.astype(dtype), value.name, weak=value.weak)
        key = (value, dtype)
        if key not in self._casts:
            self._casts[key] = self.op("Cast", value, to=dtype)
        return self._casts[key]
