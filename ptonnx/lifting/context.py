"""State of one lifting: the IR graph being built and the PyTensor-variable -> Value map."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.random.type import RandomType

from ptonnx.errors import LiftingError, RandomVariableError
from ptonnx.ir import Builder, Graph, TensorType, Value


def ir_type(var) -> TensorType:
    """The IR type of a PyTensor tensor (or scalar) variable."""
    t = var.type
    if isinstance(t, RandomType):
        raise random_error(var)
    dtype = getattr(t, "dtype", None)
    if dtype is None:
        raise LiftingError(f"variable {var} has type {t}, which ptonnx cannot represent (tensors only)")
    shape = getattr(t, "shape", ())
    try:
        return TensorType(str(dtype), shape)
    except Exception as exc:
        raise LiftingError(f"variable {var} has type {t}: {exc}") from None


def is_random(var) -> bool:
    return isinstance(var.type, RandomType)


def random_error(rng, users=()) -> RandomVariableError:
    """The error for a graph that draws from the random generator `rng` (in the Apply nodes `users`)."""
    draws = [o for node in users for o in node.outputs if not is_random(o)]
    drawn = "".join(f"\n  {d} ({d.type}) is drawn by {d.owner.op}" for d in draws)
    example = draws[0] if draws else None
    shape = f"shape={tuple(example.type.shape)}, dtype={example.type.dtype!r}" if example is not None else "shape=..., dtype=..."
    return RandomVariableError(
        f"ptonnx cannot compile random draws: the graph uses the random generator {rng} ({rng.type}).{drawn}\n"
        "An ONNX model has no equivalent of PyTensor's NumPy generators. Draw the numbers outside the model and "
        "give them as an input: replace each draw by a new input variable, e.g.\n"
        f"  noise = pt.tensor('noise', {shape})\n"
        "  outputs = pytensor.graph.replace.graph_replace(outputs, {draw: noise})\n"
        "compile that graph with `noise` among the inputs, and feed it e.g. np.random.default_rng().normal(...)."
    )


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
