"""The public entry points: compile, compile_function, export, CompiledModel."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Sequence

import numpy as np
import onnx

from ptonnx.errors import LoweringError, PassError, RuntimeMismatchError, VerificationError
from ptonnx.ir import Graph, verify
from ptonnx.lifting import lift
from ptonnx.lowering import lower
from ptonnx.passes import PassManager, Report


class CompiledModel:
    """An ONNX model compiled from a PyTensor graph, runnable through onnxruntime."""

    def __init__(self, model: onnx.ModelProto, ir: Graph, report: Report, session_options=None):
        self.model = model
        self.ir = ir
        self.report = report
        self._session_options = session_options
        self._session = None

    def with_session_options(self, session_options) -> CompiledModel:
        """The same model, run in a session with other `onnxruntime.SessionOptions`."""
        return CompiledModel(self.model, self.ir, self.report, session_options)

    @property
    def input_names(self) -> list[str]:
        return [i.name for i in self.model.graph.input]

    @property
    def output_names(self) -> list[str]:
        return [o.name for o in self.model.graph.output]

    @property
    def session(self):
        """The onnxruntime InferenceSession (CPU), created on first use."""
        if self._session is None:
            import onnxruntime as ort

            self._session = ort.InferenceSession(
                self.model.SerializeToString(), sess_options=self._session_options, providers=["CPUExecutionProvider"]
            )
        return self._session

    def __call__(self, *arrays) -> list[np.ndarray]:
        """Run in onnxruntime; returns one numpy array per output."""
        inputs = self.ir.inputs
        if len(arrays) != len(inputs):
            raise RuntimeMismatchError(f"the model takes {len(inputs)} inputs ({', '.join(self.input_names)}), got {len(arrays)}")
        feed = {}
        for name, value, array in zip(self.input_names, inputs, arrays):
            feed[name] = _as_input(name, value, array)
        return self.session.run(None, feed)

    def save(self, path: str | os.PathLike) -> str:
        onnx.save_model(self.model, os.fspath(path))
        return os.fspath(path)

    def __repr__(self) -> str:
        return f"CompiledModel({len(self.model.graph.node)} ONNX nodes, inputs={self.input_names}, outputs={self.output_names})"


def _as_input(name: str, value, array) -> np.ndarray:
    """`array` as the model's input `name` needs it, or a RuntimeMismatchError saying why not."""
    python_float = isinstance(array, float) and value.dtype.startswith("float")
    arr = np.asarray(array)
    if arr.dtype.name != value.dtype:
        cast = arr.astype(value.dtype)
        # Python floats are taken in the input's precision, as PyTensor takes them.
        if not python_float and not np.array_equal(cast, arr, equal_nan=arr.dtype.kind == "f"):
            raise RuntimeMismatchError(f"input {name} is {value.dtype}; the {arr.dtype} array given does not convert exactly")
        arr = cast
    if arr.ndim != value.type.ndim or any(isinstance(d, int) and d != n for d, n in zip(value.shape, arr.shape)):
        raise RuntimeMismatchError(f"input {name} has type {value.type}; got shape {arr.shape}")
    return arr


def compile(fgraph, passes: Sequence | None = None, *, verify_each: bool = False, check: bool = True, name: str = "ptonnx", session_options=None) -> CompiledModel:
    """Lift `fgraph` (a PyTensor FunctionGraph), run `passes`, lower to ONNX opset 18.

    `passes=None` runs `ptonnx.DEFAULT_PASSES`. Whatever the list, the result is
    a valid model or a `ptonnx.errors` exception saying what to add.
    """
    # The IR is many small objects: a full garbage collection mid-compile walks the
    # user's whole PyTensor graph too, so the collector waits until compile is done.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _compile(fgraph, passes, verify_each, check, name, session_options)
    finally:
        if gc_was_enabled:
            gc.enable()


def _compile(fgraph, passes, verify_each, check, name, session_options) -> CompiledModel:
    report = Report()
    start = time.perf_counter()
    graph = lift(fgraph, name)
    report.stages["lift"] = time.perf_counter() - start

    start = time.perf_counter()
    PassManager(passes, verify_each=verify_each).run(graph, report)
    report.stages["passes"] = time.perf_counter() - start

    start = time.perf_counter()
    try:
        verify(graph)
    except VerificationError as exc:
        ran = ", ".join(r.name for r in report.records) or "none"
        raise PassError(f"the passes ({ran}) left an invalid IR graph:\n{exc}") from exc
    model = lower(graph, name=name)
    report.stages["lower"] = time.perf_counter() - start
    if check:
        start = time.perf_counter()
        try:
            onnx.checker.check_model(model, full_check=True)
        except Exception as exc:  # onnx raises several kinds; none may escape as a valid model
            raise LoweringError(f"the emitted model fails the ONNX checker (a ptonnx bug; please report it): {exc}") from exc
        report.stages["check"] = time.perf_counter() - start
    return CompiledModel(model, graph, report, session_options)


def function_graph(inputs, outputs):
    """A FunctionGraph over clones of the user's variables (their graph is not touched).

    Shared variables that are not inputs become constants holding their current
    value: an exported model carries its weights.
    """
    from pytensor.graph.fg import FunctionGraph

    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    outputs = _freeze_shared(list(inputs), outputs)
    return FunctionGraph(list(inputs), outputs, clone=True)


def _freeze_shared(inputs, outputs):
    import pytensor.tensor as pt
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.replace import graph_replace
    from pytensor.graph.traversal import ancestors

    shared = [v for v in ancestors(outputs) if isinstance(v, SharedVariable) and v not in inputs]
    if not shared:
        return outputs
    constants = {v: pt.constant(v.get_value(borrow=False), name=v.name) for v in shared}
    return graph_replace(outputs, constants, strict=False)


def compiled_function_graph(function):
    """The rewritten graph of a `pytensor.function`, without its state.

    Its shared variables become constants (their current values) and its
    update outputs are dropped: the model computes the function's outputs.
    """
    from pytensor.graph.fg import FunctionGraph

    fgraph = function.maker.fgraph
    updates = set(getattr(fgraph, "update_mapping", {}) or {})
    outputs = [o for i, o in enumerate(fgraph.outputs) if i not in updates]
    explicit = [i.variable for i in function.maker.inputs if not i.implicit]
    inputs = [v for v, spec in zip(fgraph.inputs, function.maker.inputs) if spec.variable in explicit]
    return FunctionGraph(inputs, _freeze_shared(inputs, outputs), clone=True)


def compile_function(inputs, outputs, passes: Sequence | None = None, **kwargs) -> CompiledModel:
    """Compile the graph from PyTensor `inputs` to `outputs` as the user built it."""
    return compile(function_graph(inputs, outputs), passes, **kwargs)


def export(inputs_or_function, path, outputs=None, passes: Sequence | None = None, **kwargs) -> CompiledModel:
    """Compile and write a `.onnx` file.

    Accepts `export([x], path, outputs=[y])` or `export(f, path)` for a compiled
    `pytensor.function` (its rewritten graph `f.maker.fgraph` is exported, with
    shared variables frozen to their current values and updates left out).
    """
    if getattr(inputs_or_function, "maker", None) is not None:
        cm = compile(compiled_function_graph(inputs_or_function), passes, **kwargs)
    else:
        if outputs is None:
            raise TypeError("export(inputs, path, outputs=...) needs the outputs to export")
        cm = compile_function(inputs_or_function, outputs, passes, **kwargs)
    cm.save(path)
    return cm
