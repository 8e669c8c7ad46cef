"""The public entry points: compile, compile_function, export, CompiledModel."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

import numpy as np
import onnx

from ptonnx.call import CallPlan
from ptonnx.check_errors import read_checks
from ptonnx.errors import (
    PtonnxError,
    SignatureError,
)
from ptonnx.ir import Graph
from ptonnx.model_files import TempCopy, needs_external_data, save_model
from ptonnx import stages
from ptonnx.passes import PassManager, Report


class CompiledModel:
    """An ONNX model compiled from a PyTensor graph, runnable through onnxruntime.

    A model too large for one protobuf message (2 GiB, `ptonnx.model_files.MAX_PROTO_BYTES`)
    refers to its large tensors, whose arrays are `weights` (name -> read-only array, a
    lifted weight a view of the user's own: do not write it while the model lives). They
    are the one copy: the data file for onnx's checker and onnxruntime is written from
    them, and onnxruntime is given them as shared initializers (`add_initializer` on the
    session options, so such a model needs `SessionOptions` of its own). A smaller
    model is whole and `weights` is empty.
    """

    def __init__(self, model: onnx.ModelProto, ir: Graph, report: Report, session_options=None, *,
                 weights: dict | None = None, _copy: TempCopy | None = None, _iree=None):
        self.model = model
        self.ir = ir
        self.report = report
        self.weights = weights or {}
        self._session_options = session_options
        self._session = None
        self._shared: list = []  # the OrtValues over `weights`: they must outlive the session
        self._copy = _copy if _copy is not None else TempCopy(model, self.weights)
        self._plan = None
        self._checks = read_checks(model)
        #: the model compiled by IREE (`ptonnx.iree_runtime.IreeModel`) when runtime="iree"
        self._iree = _iree

    @property
    def runtime(self) -> str:
        """What a call runs the model with: "onnxruntime" or "iree"."""
        return "onnxruntime" if self._iree is None else "iree"

    def with_session_options(self, session_options) -> CompiledModel:
        """The same model, run in a session with other `onnxruntime.SessionOptions`."""
        return CompiledModel(self.model, self.ir, self.report, session_options, weights=self.weights, _copy=self._copy,
                             _iree=self._iree)

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

            if not needs_external_data(self.model):
                source, options = self.model.SerializeToString(), self._session_options
            else:
                source, options = self._copy.path(), self._share_weights(ort)
            self._session = ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
        return self._session

    def _share_weights(self, ort):
        """Session options that hand onnxruntime `weights` itself (it reads no data file)."""
        options = self._session_options if self._session_options is not None else ort.SessionOptions()
        for name, array in self.weights.items():
            value = ort.OrtValue.ortvalue_from_numpy(array)
            try:
                options.add_initializer(name, value)
            except Exception as exc:  # onnxruntime's InvalidArgument: the name is already there
                raise PtonnxError(
                    f"the session options already hold a weight named {name!r}; a model over 2 GiB adds its "
                    "weights to its session options, so give each such model SessionOptions of its own"
                ) from exc
            self._shared.append(value)
        return options

    def __call__(self, *arrays) -> list[np.ndarray]:
        """Run in onnxruntime (or IREE); returns one numpy array per output (new arrays each call)."""
        plan = self._plan if self._plan is not None else self._make_plan()
        feed = plan.feed(arrays)
        if self._iree is not None:
            return self._iree.run(list(feed.values()))
        return plan.run(self.session, feed)  # a model onnxruntime cannot load is not the inputs' fault

    def _make_plan(self) -> CallPlan:
        self._plan = CallPlan(self.model, self.ir.inputs, self._checks)
        return self._plan

    def save(self, path: str | os.PathLike, *, external_data: bool | None = None) -> str:
        """Write the `.onnx` file. A model over 2 GiB (or with `external_data=True`) keeps its
        tensors in `<path>.data` beside it (ONNX external data); `onnx.load(path)` reads both."""
        path = os.fspath(path)
        save_model(self.model, path, needs_external_data(self.model) if external_data is None else external_data, self.weights)
        return path

    def __repr__(self) -> str:
        return f"CompiledModel({len(self.model.graph.node)} ONNX nodes, inputs={self.input_names}, outputs={self.output_names})"


def compile(fgraph, passes: Sequence | None = None, *, verify_each: bool = False, check: bool = True, name: str = "ptonnx",
            session_options=None, float64_via_float32: bool = False, runtime: str = "onnxruntime") -> CompiledModel:
    """Lift `fgraph`, run `passes`, lower to ONNX opset 18.

    `fgraph` is a PyTensor FunctionGraph or a compiled `pytensor.function` (its
    rewritten graph, as `export` takes it). `passes=None` runs
    `ptonnx.DEFAULT_PASSES`; a name, a pass object or a pass class stands for a
    list of one. Whatever the list, the result is a valid model or a
    `ptonnx.errors` exception saying what to add.

    The model's outputs carry the names of the PyTensor output variables; an
    unnamed output is `output_<i>` (its position), and an output whose name is
    already taken (by an input or an earlier output) is `<name>_<i>`.

    `float64_via_float32=True` opts in to computing the float64 ops onnxruntime has no
    kernel for (Conv, the average and global pools, Resize) in float32 between Casts;
    without it such a model is refused with a `LoweringError`.

    `runtime="iree"` also compiles the model with IREE (`pip install ptonnx[iree]`,
    `ptonnx.iree_runtime`) from the IR lowered in the form IREE reads (Loops without
    per-trip outputs, checks reported as outputs: `lowering.lower(target="iree")`), and the
    CompiledModel's calls run that; the model, its file and `session` stay onnxruntime's. A model IREE cannot compile raises
    `IreeCompileError` here.
    """
    if runtime not in RUNTIMES:
        raise SignatureError(f"runtime={runtime!r}: choose one of {', '.join(map(repr, RUNTIMES))}")
    fgraph = _as_function_graph(fgraph)
    cm = _compile(fgraph, passes, verify_each, check, name, session_options, float64_via_float32)
    if runtime == "iree":
        cm = _with_iree(cm)
    return cm


#: what `compile(..., runtime=)` takes
RUNTIMES = ("onnxruntime", "iree")


def _with_iree(cm: CompiledModel) -> CompiledModel:
    from ptonnx.iree_runtime import IreeCompileError, from_ir

    if cm.weights:
        raise IreeCompileError("a model over 2 GiB (external weights) is not compiled for IREE: use runtime='onnxruntime'")
    start = time.perf_counter()
    cm._iree = from_ir(cm.ir, cm.model.graph.name, cm.output_names)
    cm.report.stages["iree"] = time.perf_counter() - start
    return cm


def _as_function_graph(graph):
    from pytensor.graph.fg import FunctionGraph

    if isinstance(graph, FunctionGraph):
        return graph
    if getattr(graph, "maker", None) is not None:
        return compiled_function_graph(graph)
    raise SignatureError(
        f"ptonnx.compile takes a FunctionGraph or a pytensor.function, not {type(graph).__name__}; "
        "for variables use ptonnx.compile_function(inputs, outputs)"
    )


def _compile(fgraph, passes, verify_each, check, name, session_options, float64_via_float32) -> CompiledModel:
    manager = PassManager(passes, verify_each=verify_each)  # a wrong `passes` fails before any work
    c = stages.Compilation(manager, fgraph=fgraph, name=name, float64_via_float32=float64_via_float32)
    stages.run(c, stop="check" if check else "lower", verify_each=verify_each)
    return CompiledModel(c.model, c.graph, c.report, session_options, weights=c.weights, _copy=c.copy)


def function_graph(inputs, outputs):
    """A FunctionGraph over clones of the user's variables (their graph is not touched).

    Inputs and outputs are checked as `pytensor.function` checks them (same
    exception types). Shared variables that are not inputs become constants
    holding their current value: an exported model carries its weights. A shared
    random generator becomes a key input after the user's (`ptonnx.keys`): a model
    draws from the key it is given, never from a key frozen into it.
    """
    from pytensor.graph.fg import FunctionGraph

    inputs, outputs = _signature(inputs, outputs)
    outputs, generators = _freeze_shared(inputs, outputs)
    return FunctionGraph(inputs + generators, outputs, clone=True)


def _signature(inputs, outputs) -> tuple[list, list]:
    """`inputs` and `outputs` as lists of variables, refused as `pytensor.function` refuses them."""
    from pytensor.compile.io import Out
    from pytensor.graph.basic import Constant, Variable

    from ptonnx.errors import DuplicateInputError

    if not isinstance(inputs, list | tuple):
        raise SignatureError(
            "Input variables of a PyTensor function should be contained in a list, even when there is a single input "
            f"(got {type(inputs).__name__}); e.g. ptonnx.compile_function([x], outputs)"
        )
    seen: dict = {}
    for i, v in enumerate(inputs):
        if isinstance(v, Constant):
            raise SignatureError(f"Constants not allowed in param list: input {i} is the constant {v}; a model input must be a variable")
        if not isinstance(v, Variable):
            raise SignatureError(f"Unknown parameter type: {type(v)} (input {i}, {v!r:.60}); inputs must be PyTensor variables")
        if v in seen:
            raise DuplicateInputError(
                f"Variable {v} is used twice in inputs to ptonnx.compile_function, at indices {seen[v]} and {i}. "
                "Please do not duplicate variables in the inputs list."
            )
        seen[v] = i
    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    for i, v in enumerate(outputs):
        if isinstance(v, Out):
            outputs[i] = v = v.variable
        if not isinstance(v, Variable):
            raise SignatureError(
                f"Outputs must be pytensor Variable or Out instances. Received {v!r:.60} of type {type(v)} (output {i}); "
                f"make a constant output a variable, e.g. pt.as_tensor({v!r:.20})"
            )
    return list(inputs), outputs


def _freeze_shared(inputs, outputs) -> tuple[list, list]:
    """`outputs` with the shared variables that are not inputs as constants, and the shared
    random generators among them (left as variables: each becomes a key input)."""
    import pytensor.tensor as pt
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.replace import graph_replace
    from pytensor.graph.traversal import ancestors

    from ptonnx.lifting.context import is_random

    variables = list(ancestors(outputs, blockers=inputs))
    shared = [v for v in variables if isinstance(v, SharedVariable) and v not in inputs]
    generators = [v for v in shared if is_random(v)]
    frozen = [v for v in shared if not is_random(v)]
    if not frozen:
        return list(outputs), generators
    constants = {v: pt.constant(v.get_value(borrow=False), name=v.name) for v in frozen}
    return graph_replace(outputs, constants, strict=False), generators


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
    inputs = [v for v, spec in zip(fgraph.inputs, function.maker.inputs, strict=True) if spec.variable in explicit]
    outputs, generators = _freeze_shared(inputs, outputs)
    return FunctionGraph(inputs + generators, outputs, clone=True)


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
        cm = compile(inputs_or_function, passes, **kwargs)
    else:
        if outputs is None:
            raise TypeError("export(inputs, path, outputs=...) needs the outputs to export")
        cm = compile_function(inputs_or_function, outputs, passes, **kwargs)
    cm.save(path)
    return cm
