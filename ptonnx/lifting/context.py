"""State of one lifting: the IR graph being built and the PyTensor-variable -> Value map."""

from __future__ import annotations

import numpy as np
from pytensor.tensor.random.type import RandomType

from ptonnx.errors import LiftingError, RandomVariableError
from ptonnx.ir import Builder, Graph, TensorType, Value


def ir_type(var) -> TensorType:
    """The IR type of a PyTensor tensor (or scalar) variable."""
    t = var.type
    if isinstance(t, RandomType):  # a generator is a key (ptonnx.keys)
        return KEY_TYPE
    dtype = getattr(t, "dtype", None)
    if dtype is None:
        raise LiftingError(f"variable {var} has type {t}, which ptonnx cannot represent (tensors only)")
    shape = getattr(t, "shape", ())
    if str(dtype).startswith("complex"):
        from ptonnx.errors import UnsupportedOpError

        op = var.owner.op if var.owner is not None else "the graph's input"
        raise UnsupportedOpError(op, f"{var} ({dtype})", (), reason=(
            f"{var} is {dtype}: ptonnx does not compile complex numbers (ONNX has no complex arithmetic in "
            "onnxruntime's CPU kernels). Keep complex values out of the graph you compile, e.g. compute with "
            "real and imaginary parts as two real tensors."))
    try:
        return TensorType(str(dtype), shape)
    except Exception as exc:
        raise LiftingError(f"variable {var} has type {t}: {exc}") from None


def known(value: Value, nodes: int = 32, size: int = 64) -> np.ndarray | None:
    """`value`'s contents if lifting computed it from constants alone, through at most `nodes` small
    nodes (an axis given as ExpandDims or Casts of a literal, as a vectorised graph gives a Join's):
    evaluated by the IR's NumPy semantics, as constant folding will, so a lifter that needs an
    attribute sees it before the passes run. None if it reads an input or is not small."""
    from ptonnx.ir import evaluate, get_schema

    memo: dict = {}

    def of(v: Value):
        nonlocal nodes
        if v.const is not None:
            return v.const
        node = v.producer
        if node is None or not all(isinstance(d, int) for d in v.shape) or np.prod(v.shape) > size:
            return None
        if node not in memo:
            nodes -= 1
            memo[node] = None
            foldable = nodes >= 0 and node.inputs and not get_schema(node.op).has("no_fold") and not any(
                isinstance(a, Graph) for a in node.attrs.values())
            args = [of(a) for a in node.inputs] if foldable else [None]
            if all(a is not None for a in args):
                try:
                    memo[node] = evaluate(node.op, args, node.attrs)
                except Exception:  # noqa: BLE001 - e.g. a Check that fails: left to run time
                    pass
        results = memo[node]
        return None if results is None else np.asarray(results[v.index]).astype(v.dtype, copy=False)

    return of(value)


#: the IR type of a random generator: a key of two uint32 words
KEY_TYPE = TensorType("uint32", (2,))


def is_random(var) -> bool:
    return isinstance(var.type, RandomType)


def random_error(rng, users=()) -> RandomVariableError:
    """The error for a graph that draws from the random generator `rng` (in the Apply nodes `users`)."""
    draws = [o for node in users for o in node.outputs if not is_random(o)]
    drawn = "".join(f"\n  {d} ({d.type}) is drawn by {d.owner.op}" for d in draws)
    example = draws[0] if draws else None
    shape = f"shape={tuple(example.type.shape)}, dtype={example.type.dtype!r}" if example is not None else "shape=..., dtype=..."
    return RandomVariableError(
        f"ptonnx draws PyTensor's RandomVariables (docs/random.md), but the graph passes the random generator {rng} "
        f"({rng.type}) to another op:{drawn}\n"
        "Rewrite it with RandomVariables (a PyMC SymbolicRandomVariable: ptonnx.pymc_predictive inlines them), or draw "
        "those numbers outside the model and give them as an input: replace each draw by a new input variable, e.g.\n"
        f"  noise = pt.tensor('noise', {shape})\n"
        "  outputs = pytensor.graph.replace.graph_replace(outputs, {draw: noise})\n"
    )


class LiftContext:
    def __init__(self, name: str = "graph"):
        self.graph = Graph(name)
        self.builder = Builder(self.graph)
        self.values: dict = {}
        self._casts: dict[tuple[Value, str], Value] = {}
        self._dim_names: set[str] = set()
        #: the lifted FunctionGraph's clients (what reads each variable), where known
        self.clients: dict | None = None
        #: constant sparse matrices (SciPy) of sparse variables no IR value stands for (a sparse transpose)
        self.sparse: dict = {}
        self._streams = 0

    def next_stream(self) -> int:
        """A stream number for the next random node (its place among the graph's random nodes)."""
        self._streams += 1
        return self._streams - 1

    def add_input(self, var) -> Value:
        """A graph input; each unknown dim gets a name of its own (`x_dim0`), which
        the type rules carry to every value whose dim is the same."""
        t = ir_type(var)
        stem = var.name or f"input{len(self.graph.inputs)}"
        shape = tuple(self._dim_name(f"{stem}_dim{i}") if d is None else d for i, d in enumerate(t.shape))
        value = self.graph.add_input(t.with_shape(shape), var.name)
        self.values[var] = value
        return value

    def _dim_name(self, want: str) -> str:
        name, k = want, 1
        while name in self._dim_names:
            k += 1
            name = f"{want}_{k}"
        self._dim_names.add(name)
        return name

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
        value = Value.constant(arr, var.name, copy=False)  # the user's array, read-only: no second copy
        self.values[var] = value
        return value

    def op(self, op: str, *inputs: Value, name: str | None = None, **attrs) -> Value:
        return self.builder.op(op, *inputs, name=name, **attrs)

    def ints(self, values) -> Value:
        """An int64 constant (a shape, sizes, bounds)."""
        return Value.constant(np.asarray(values, dtype=np.int64))

    def shape_of(self, value: Value, start: int = 0, end: int | None = None) -> Value:
        """The sizes of axes start:end of `value`, as an int64 vector (static ones fold)."""
        dims = value.shape[start:end]
        if all(isinstance(d, int) for d in dims):
            return self.ints(dims)
        return self.op("Shape", value, start=start, end=end)

    def dim(self, value: Value, axis: int) -> Value:
        """The size of one axis of `value`, as a 0-D int64 value (a constant when static)."""
        size = self.shape_of(value, axis, axis + 1)
        if size.const is not None:
            return self.ints(size.const[0])
        return self.op("Squeeze", size, axes=(0,))

    def pack(self, items: list[Value]) -> Value:
        """A 1-D int64 value from 0-D int64 IR values (constants fold)."""
        if all(v.const is not None for v in items):
            return self.ints([v.const for v in items])
        return self.op("Concat", *[self.op("Unsqueeze", v, axes=(0,)) for v in items], axis=0)

    def product(self, sizes: list[Value]) -> Value:
        """The product of int64 scalars (1 for none), folded where they are constants."""
        total = self.ints(1)
        for s in sizes:
            both = total.const is not None and s.const is not None
            total = self.ints(total.const * s.const) if both else self.op("Mul", total, s)
        return total

    def vector(self, parts) -> Value:
        """A 1-D int64 value from 0-D PyTensor variables (MakeVector of shape entries)."""
        return self.pack([self.cast(self.value(v), "int64") for v in parts])

    def cast(self, value: Value, dtype: str) -> Value:
        """`value` as `dtype`: constants converted now, others through one shared Cast."""
        if value.dtype == dtype:
            return value
        if value.const is not None:
            with np.errstate(all="ignore"):
                return Value.constant(value.const.astype(dtype), value.name)
        key = (value, dtype)
        if key not in self._casts:
            self._casts[key] = self.op("Cast", value, to=dtype)
        return self._casts[key]
