"""PyMC models as ONNX: the log-density, its gradient and the Deterministics.

`pip install ptonnx[pymc]`; the rest of ptonnx never imports PyMC (this module does).

    import ptonnx.pymc
    cm = ptonnx.pymc.export_logp(model, "model.onnx")      # logp and its gradient
    logp, *grads = cm(*ptonnx.pymc.inputs_for(cm, model))   # at model.initial_point()
    ptonnx.pymc.export_deterministics(model, "det.onnx")    # Deterministics from the same inputs

**Inputs.** One per free variable, in `model.value_vars` order, in the unconstrained
space and named as PyMC names the value variables (`sigma_log__` for a HalfNormal
`sigma`): the names and shapes of `model.initial_point()`, so `point[name]` feeds input
`name`. A discrete free variable is an integer input and has no gradient.

**Outputs.** `logp` (the joint log-density, a scalar: `model.logp(jacobian=...)`), then
`dlogp_<name>` for each continuous value variable (the gradient, shaped as that input;
`model.compile_dlogp()` returns the same numbers flattened and joined). Deterministics are
named as PyMC names them; `constrained=True` puts before them each transformed free
variable in its own space, named as the variable (`sigma`), as a trace holds it.

**Data.** `pm.Data` containers are PyTensor shared variables. `data="constants"` (the
default) freezes each at its current value: the model has only the inputs above, and
`pm.set_data` needs a new export. `data="inputs"` makes every container (and every shared
dimension length) the outputs depend on an input, after the free variables and named as
the container, so new data, of another length too, needs no new export; `inputs_for` fills
those inputs from the model's current values.

**Invalid parameters.** PyMC's log-densities guard their parameters with
`CheckParameterValue` (`sigma > 0`, ...), which raises in the plain graph. PyMC's compiled
functions rewrite the checks it may (`local_check_parameter_to_ninf_switch`): an invalid
parameter gives -inf, never a finite wrong number. The same rewrite is applied here (or
`local_remove_check_parameter` for `pm.Model(check_bounds=False)`, as PyMC does); a check
PyMC keeps raising stays one, and the model raises `ptonnx.errors.CheckFailedError`, which
is also PyMC's `ParameterValueError`.

**Rewrites.** `rewrite=True` (the default) compiles the graph PyMC itself compiles: the
gradient of `rewrite_pregrad(logp)` (as `model.dlogp`), then PyTensor's `fast_run` rewrites
(without the inplace, BLAS and C-only ones, as the "ONNX" mode), whose stable forms
(log1p, softplus, logsumexp...) sampling relies on. `rewrite=False` compiles `model.logp()`
and `pytensor.grad` of it as PyMC builds them, only the checks rewritten.

What ptonnx cannot compile raises as anywhere in ptonnx (`UnsupportedOpError` naming the
op...); the predictive draws are `ptonnx.pymc_predictive`'s. A model with nothing to feed (no free
variable) or nothing to export (no Deterministic) raises `ptonnx.errors.SignatureError`.
"""

from __future__ import annotations

import os

import numpy as np

try:
    import pymc as pm
except ImportError as exc:  # the optional extra
    raise ImportError(f"ptonnx.pymc needs PyMC: pip install 'ptonnx[pymc]' ({exc})") from exc
import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.replace import graph_replace
from pytensor.graph.rewriting.basic import in2out
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.graph.traversal import ancestors

from ptonnx.api import CompiledModel, compile, compiled_function_graph, function_graph
from ptonnx.errors import SignatureError, UnsupportedOpError
from ptonnx.lifting.context import is_random
from ptonnx.mode import ONNXLinker

__all__ = [
    "FlatLogp", "compile_deterministics", "compile_flat_logp", "compile_logp", "deterministics_graph",
    "export_deterministics", "export_logp", "flat_logp_graph", "inputs_for", "logp_graph",
]

_DATA_CHOICES = ("constants", "inputs")


def logp_graph(model: pm.Model, *, grad: bool = True, jacobian: bool = True, rewrite: bool = True, data: str = "constants") -> FunctionGraph:
    """The FunctionGraph `compile_logp` compiles: value variables (and data) -> logp, dlogp_<name>..."""
    from pymc.pytensorf import rewrite_pregrad

    _check_choices(model, data)
    value_vars = _value_vars(model)
    logp = model.logp(jacobian=jacobian)
    if rewrite:
        logp = rewrite_pregrad(logp)  # as model.dlogp differentiates it
    outputs = [logp]
    if grad:
        wrt = model.continuous_value_vars
        grads = pytensor.grad(logp, wrt, disconnected_inputs="ignore") if wrt else []
        outputs += [_plain(g) for g in grads]
        names = ["logp"] + [f"dlogp_{v.name}" for v in wrt]
    else:
        names = ["logp"]
    return _function_graph(model, value_vars, outputs, names, rewrite, data)


def deterministics_graph(model: pm.Model, *, constrained: bool = False, rewrite: bool = True, data: str = "constants") -> FunctionGraph:
    """The FunctionGraph `compile_deterministics` compiles: value variables (and data) -> each Deterministic."""
    _check_choices(model, data)
    value_vars = _value_vars(model)
    named = list(model.deterministics)
    if constrained:
        named = [rv for rv in model.free_RVs if model.rvs_to_transforms[rv] is not None] + named
    if not named:
        raise SignatureError(f"the model has no Deterministic{' and no transformed free variable' if constrained else ''} to export")
    outputs = model.replace_rvs_by_values(named)
    return _function_graph(model, value_vars, outputs, [v.name for v in named], rewrite, data)


def compile_logp(model: pm.Model, *, grad: bool = True, jacobian: bool = True, rewrite: bool = True, data: str = "constants", passes=None, **kwargs) -> CompiledModel:
    """The log-density (and its gradient) of `model` as a CompiledModel run by onnxruntime.

    Inputs: one per value variable (`model.value_vars` order and names), then with
    `data="inputs"` one per data container. Outputs: `logp`, then `dlogp_<name>` per
    continuous value variable. `passes` and `kwargs` go to `ptonnx.compile`.
    """
    return compile(logp_graph(model, grad=grad, jacobian=jacobian, rewrite=rewrite, data=data), passes, name=_name(model, "logp"), **kwargs)


def export_logp(model: pm.Model, path: str | os.PathLike, *, grad: bool = True, jacobian: bool = True, rewrite: bool = True, data: str = "constants", passes=None, **kwargs) -> CompiledModel:
    """`compile_logp`, written to `path` (an `.onnx` file); returns the CompiledModel."""
    cm = compile_logp(model, grad=grad, jacobian=jacobian, rewrite=rewrite, data=data, passes=passes, **kwargs)
    cm.save(path)
    return cm


def compile_deterministics(model: pm.Model, *, constrained: bool = False, rewrite: bool = True, data: str = "constants", passes=None, **kwargs) -> CompiledModel:
    """The Deterministics of `model` as functions of the same inputs as `compile_logp`'s.

    One output per Deterministic, named as it; `constrained=True` puts first each
    transformed free variable in its own (constrained) space, named as the variable.
    """
    graph = deterministics_graph(model, constrained=constrained, rewrite=rewrite, data=data)
    return compile(graph, passes, name=_name(model, "deterministics"), **kwargs)


def export_deterministics(model: pm.Model, path: str | os.PathLike, *, constrained: bool = False, rewrite: bool = True, data: str = "constants", passes=None, **kwargs) -> CompiledModel:
    """`compile_deterministics`, written to `path`; returns the CompiledModel."""
    cm = compile_deterministics(model, constrained=constrained, rewrite=rewrite, data=data, passes=passes, **kwargs)
    cm.save(path)
    return cm


def inputs_for(cm: CompiledModel, model: pm.Model, point: dict | None = None) -> list[np.ndarray]:
    """The arrays to call `cm` with: each value variable from `point` (by default
    `model.initial_point()`), each data input from the model's current data."""
    point = model.initial_point() if point is None else point
    arrays = []
    for name in cm.input_names:
        if name in point:
            arrays.append(np.asarray(point[name]))
            continue
        try:
            shared = model[name]
        except KeyError:
            shared = model.dim_lengths.get(name)
        if not isinstance(shared, SharedVariable):
            raise SignatureError(f"input {name} of {cm!r} is neither in the point given nor a data container of the model")
        arrays.append(np.asarray(shared.get_value(borrow=True)))
    return arrays


def flat_logp_graph(model: pm.Model, *, batched: bool = False, jacobian: bool = True, rewrite: bool = True) -> FunctionGraph:
    """The FunctionGraph `compile_flat_logp` compiles: one flat vector `q` -> `logp`, `dlogp`.

    `q` holds every value variable raveled, in `model.value_vars` order (`FlatLogp.slices`);
    `dlogp` is the gradient in the same layout. `batched=True` gives every one a leading
    axis of any length K (PyTensor's `vectorize_graph`): `q` (K, d) -> `logp` (K,), `dlogp` (K, d).
    """
    from pymc.pytensorf import rewrite_pregrad
    from pytensor.graph.replace import vectorize_graph

    _check_choices(model, "constants")
    value_vars = _value_vars(model)
    discrete = [v.name for v in value_vars if v not in model.continuous_value_vars]
    if discrete:
        raise SignatureError(f"the flat log-density is for gradient-based samplers; the free variables {', '.join(discrete)} "
                             "are discrete: use compile_logp, whose inputs are one per variable")
    layout = _layout(model, value_vars)
    size = layout[-1][2].stop if layout else 0
    q = pt.vector("q", dtype=pytensor.config.floatX, shape=(size,))
    logp = model.logp(jacobian=jacobian)
    if rewrite:
        logp = rewrite_pregrad(logp)
    grads = pytensor.grad(logp, value_vars, disconnected_inputs="ignore")
    # each gradient reshaped to its known size, not raveled: a batch's ravel becomes a reshape to
    # (K, -1), which no size fits when K = 0
    flat = [_plain(g).reshape((sl.stop - sl.start,)).astype(q.dtype) for g, (_, _, sl) in zip(grads, layout, strict=True)]
    outputs = [_plain(logp), pt.concatenate(flat)]
    plain, outputs = _plain_value_vars(value_vars, outputs)
    outputs = graph_replace(outputs, {v: q[sl].reshape(shape).astype(v.dtype) for v, (_, shape, sl) in zip(plain, layout, strict=True)}, strict=False)
    inputs = [q]
    if batched:
        batch = pt.matrix("q", dtype=q.dtype, shape=(None, size))
        outputs = vectorize_graph(outputs, {q: batch})
        _refuse_inner_graphs(outputs)
        inputs = [batch]
    return _rewritten(model, inputs, outputs, ["logp", "dlogp"], rewrite, "constants")


def _refuse_inner_graphs(outputs) -> None:
    """PyTensor's vectorize_graph makes a Scan the core of a Blockwise, and its rewrites then change
    the Scan's inner graph in place: the model's own graph, which no later `pytensor.grad` can
    differentiate (pytensor 2.38, 3.0). Refused instead. OpFromGraphs (AllocDiag, the GP's
    kernel) batch without it: tests/pymc checks the batched GP and MvNormal models, and the
    model's own log-density after them."""
    from pytensor.graph.traversal import applys_between
    from pytensor.scan.op import Scan
    from pytensor.tensor.blockwise import Blockwise

    def risky(op) -> bool:
        return isinstance(op, Scan)

    inner = next((node for node in applys_between([], outputs)
                  if isinstance(node.op, Blockwise) and risky(node.op.core_op)), None)
    if inner is not None:
        raise UnsupportedOpError(
            inner.op.core_op, inner.outputs[0], (), reason="the batched flat log-density cannot batch an op with an inner graph "
            "(PyTensor's vectorize_graph would change the model's own graph in place): use compile_flat_logp(model) "
            "and call it once per point")


def _layout(model, value_vars) -> list[tuple[str, tuple[int, ...], slice]]:
    """(name, shape, slice of q) per value variable, in order."""
    shapes = model.eval_rv_shapes()
    layout, start = [], 0
    for v in value_vars:
        shape = tuple(int(d) for d in shapes[v.name])
        stop = start + int(np.prod(shape, dtype=np.int64))
        layout.append((v.name, shape, slice(start, stop)))
        start = stop
    return layout


class FlatLogp:
    """logp and its gradient on one flat float vector: what gradient-based samplers call
    (nutpie's `logp_fn(q) -> (logp, grad)`, BlackJAX's `logdensity_fn`).

    `f(q)` returns `(logp, grad)`: a float and an array shaped as `q`. With `batched=True`,
    `f(Q)` takes K points as the rows of `Q` (K, size) in one onnxruntime call and returns
    `(logp (K,), grad (K, size))`. `to_point`/`from_point` convert between `q` and PyMC's
    point dicts (`model.initial_point()`); `cm` is the CompiledModel (`cm.save(path)`).
    """

    def __init__(self, cm: CompiledModel, layout, batched: bool):
        self.cm = cm
        self.layout = layout
        self.batched = batched
        self.size = layout[-1][2].stop if layout else 0
        self.dtype = np.dtype(cm.ir.inputs[0].dtype)

    def __call__(self, q) -> tuple:
        logp, grad = self.cm(q)
        return (logp if self.batched else float(logp)), grad

    def from_point(self, point: dict) -> np.ndarray:
        """The flat vector of a PyMC point (value-variable name -> array)."""
        return np.concatenate([np.asarray(point[name], dtype=self.dtype).ravel() for name, _, _ in self.layout]) if self.layout \
            else np.zeros(0, self.dtype)

    def to_point(self, q) -> dict[str, np.ndarray]:
        """The PyMC point of a flat vector (of the last axis of a batch)."""
        q = np.asarray(q)
        return {name: q[..., sl].reshape(q.shape[:-1] + shape) for name, shape, sl in self.layout}

    def __repr__(self) -> str:
        return f"FlatLogp(size={self.size}, batched={self.batched}, {self.cm!r})"


def compile_flat_logp(model: pm.Model, *, batched: bool = False, jacobian: bool = True, rewrite: bool = True, passes=None, **kwargs) -> FlatLogp:
    """`model`'s log-density and gradient on one flat vector (or, `batched`, on the rows of a
    matrix: K points per call); see `FlatLogp`. Data are frozen at their current values.
    `passes` and `kwargs` go to `ptonnx.compile`."""
    graph = flat_logp_graph(model, batched=batched, jacobian=jacobian, rewrite=rewrite)
    cm = compile(graph, passes, name=_name(model, "flat_logp"), **kwargs)
    return FlatLogp(cm, _layout(model, _value_vars(model)), batched)


def _check_choices(model, data: str) -> None:
    if not isinstance(model, pm.Model):
        raise SignatureError(f"ptonnx.pymc takes a pymc.Model, not {type(model).__name__}")
    if data not in _DATA_CHOICES:
        raise ValueError(f"data={data!r}: choose 'constants' (frozen at their current values) or 'inputs' (one input per container)")


def _value_vars(model) -> list:
    if not model.value_vars:
        raise SignatureError("the model has no free variable: its log-density is a number, with nothing to feed")
    return list(model.value_vars)


def _is_xtensor(var) -> bool:
    return type(var.type).__name__ == "XTensorType"  # pytensor.xtensor, which pymc.dims models use


def _plain(var):
    """A tensor of `var`: an XTensor's values (a pymc.dims gradient), anything else as_tensor."""
    return var.values if _is_xtensor(var) else pt.as_tensor(var)


def _plain_value_vars(value_vars, outputs):
    """pymc.dims models have XTensor value variables: each becomes a plain tensor input, named
    as it, that the graph reads with its dims (PyTensor's rewrites then lower the XTensor ops)."""
    xs = [v for v in value_vars if _is_xtensor(v)]
    if not xs:
        return value_vars, outputs
    from pytensor.xtensor import as_xtensor

    plain = {v: pt.TensorType(v.type.dtype, v.type.shape)(name=v.name) for v in xs}
    outputs = graph_replace(outputs, {v: as_xtensor(plain[v], dims=v.type.dims) for v in xs}, strict=False)
    return [plain.get(v, v) for v in value_vars], outputs


def _lower_xtensor(fgraph) -> None:
    """XTensor ops (pymc.dims models) as tensor ops: the one rewrite an unrewritten graph gets."""
    if any(_is_xtensor(v) for node in fgraph.apply_nodes for v in node.outputs):
        from pytensor.xtensor.rewriting.utils import lower_xtensor_db

        lower_xtensor_db.query("+lower_xtensor").rewrite(fgraph)


def _name(model, what: str) -> str:
    return f"{model.name}_{what}" if model.name else what


def _function_graph(model, value_vars, outputs, names, rewrite: bool, data: str) -> FunctionGraph:
    """value vars (+ data) -> outputs, as PyMC compiles them: checks to -inf, shared data as `data` says."""
    outputs = [_plain(o) for o in outputs]
    inputs, outputs = _plain_value_vars(list(value_vars), outputs)
    if data == "constants":
        inputs, outputs = _static_value_vars(model, inputs, outputs)
    return _rewritten(model, inputs, outputs, names, rewrite, data)


def _rewritten(model, inputs, outputs, names, rewrite: bool, data: str) -> FunctionGraph:
    """inputs (+ data) -> outputs, rewritten as PyMC compiles them, outputs named `names`."""
    shared = [v for v in ancestors(outputs, blockers=inputs) if isinstance(v, SharedVariable) and not is_random(v)]
    if data == "inputs" and shared:
        order = {v: i for i, v in enumerate([*model.data_vars, *model.dim_lengths.values()])}
        shared.sort(key=lambda v: order.get(v, len(order)))
        symbolic = {v: v.type(name=v.name) for v in shared}
        outputs = graph_replace(outputs, symbolic, strict=False)
        inputs += list(symbolic.values())
    if rewrite:
        check_rewrite = "local_check_parameter_to_ninf_switch" if model.check_bounds else "local_remove_check_parameter"
        query = RewriteDatabaseQuery(include=["fast_run", check_rewrite], exclude=list(ONNXLinker.incompatible_rewrites))
        mode = Mode(linker="py", optimizer=query)  # the graph is wanted, not the function: no C code is made
        fgraph = compiled_function_graph(pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore", accept_inplace=True))
    else:
        from pymc.logprob.utils import (
            local_check_parameter_to_ninf_switch,
            local_remove_check_parameter,
        )

        fgraph = function_graph(inputs, outputs)  # shared variables left are frozen, as ptonnx.export does
        _lower_xtensor(fgraph)
        in2out(local_check_parameter_to_ninf_switch if model.check_bounds else local_remove_check_parameter).rewrite(fgraph)
    _name_outputs(fgraph, names)
    return fgraph


def _static_value_vars(model, value_vars, outputs):
    """Value variables typed with their static shapes, where the data are frozen.

    With every data container and dim length a constant, each free variable's shape
    is fixed (`model.eval_rv_shapes()`), as `initial_point()` has it. Saying so lets
    constant folding settle what hangs on those shapes: the bounds checks of an index
    into a group-level vector (`a[group_idx]`), broadcasts, reshapes.
    """
    shapes = model.eval_rv_shapes()
    static = {}
    for v in value_vars:
        shape = tuple(int(d) for d in shapes[v.name])
        if v.type.shape != shape:
            # the type called, not pt.tensor: that reads a name such as bambi's "1|group_offset" as a dtype
            static[v] = pt.TensorType(v.dtype, shape)(name=v.name)
    if not static:
        return value_vars, outputs
    return [static.get(v, v) for v in value_vars], graph_replace(outputs, static, strict=False)


def _name_outputs(fgraph, names) -> None:
    """Output i of the (cloned) `fgraph` named names[i]; an output that is an input, or
    another output too, is first copied, so that each name is its own variable's."""
    from pytensor.compile.ops import deep_copy_op
    from pytensor.graph.fg import Output

    seen = set()
    for i, name in enumerate(names):
        out = fgraph.outputs[i]
        if out.owner is None or out in seen:
            node = next(n for n, _ in fgraph.clients[out] if isinstance(n.op, Output) and n.op.idx == i)
            fgraph.change_node_input(node, 0, deep_copy_op(out))
            out = fgraph.outputs[i]
        seen.add(out)
        out.name = name
