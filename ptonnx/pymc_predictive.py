"""PyMC's prior and posterior predictive as ONNX models: draws for every posterior draw in one call.

    import ptonnx.pymc_predictive as pp
    cm = pp.compile_predictive(model, var_names=["obs"])           # kind="posterior"
    (obs,) = cm(*pp.inputs_from(cm, idata.posterior), ptonnx.keys.key(0))

**Posterior.** Inputs: each free variable with a leading draws axis (one row per posterior
draw, in its own constrained space, named as the variable: the arrays `idata.posterior`
holds, chains and draws flattened, `inputs_from` does that), then the data containers when
`data="inputs"`, then `key` (`ptonnx.keys`). Outputs: draws of `var_names` (observed
variables, Deterministics, free variables alike) with the same leading axis, as
`pm.sample_posterior_predictive` would draw them one posterior draw at a time. PyMC's
forward graph is vectorised over the draws axis (`vectorize_graph`), so the model draws
every row in one call instead of looping over draws in Python.

**Prior.** Inputs: `draws` (an int64 scalar, how many), the data containers when
`data="inputs"`, then `key`; outputs: `var_names` (default: every free and observed
variable and Deterministic) with a leading axis of `draws`, as `pm.sample_prior_predictive`.

Every generator of the model becomes the one `key` input: each random node draws its own
stream from it (`decompositions/random/bits.py`), so the draws are independent and the
same key gives the same draws on every runtime. A parameter PyMC's distribution refuses
(a negative scale drawn from an improper posterior row) fails the call as PyMC's forward
sampling does (`ptonnx.errors.CheckFailedError`, a `ValueError`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.replace import clone_replace, vectorize_graph
from pytensor.graph.traversal import ancestors
from pytensor.tensor.random.type import RandomGeneratorType

from ptonnx.api import CompiledModel, compile_function
from ptonnx.errors import SignatureError
from ptonnx.lifting.context import is_random

__all__ = ["compile_predictive", "export_predictive", "inputs_from", "predictive_graph"]

KINDS = ("posterior", "prior")
DATA = ("constants", "inputs")


def predictive_graph(model, var_names: Sequence[str] | None = None, *, kind: str = "posterior", data: str = "constants"):
    """(inputs, outputs): PyTensor variables of the batched forward graph `compile_predictive` compiles."""
    if kind not in KINDS:
        raise SignatureError(f"kind={kind!r}: choose one of {', '.join(map(repr, KINDS))}")
    if data not in DATA:
        raise SignatureError(f"data={data!r}: choose one of {', '.join(map(repr, DATA))}")
    names = list(var_names) if var_names is not None else _default_names(model, kind)
    if not names:
        raise SignatureError(f"the model has nothing to draw for the {kind} predictive (no observed variable"
                             f"{'' if kind == 'posterior' else ', free variable or Deterministic'}): name var_names")
    unknown = [n for n in names if n not in model.named_vars]
    if unknown:
        raise SignatureError(f"var_names {unknown} are not variables of the model; it has {sorted(model.named_vars)}")
    outputs = [model[n] for n in names]
    key = RandomGeneratorType()("key")
    if kind == "posterior":
        free = [rv for rv in model.free_RVs if rv in ancestors(outputs)]
        rows = {rv: rv.type.clone(shape=(None, *rv.type.shape))(rv.name) for rv in free}
        single = {rv: rv.type(f"{rv.name}_row") for rv in free}
        outputs = clone_replace(outputs, single)  # the free variables' values, not their draws
        inputs = list(rows.values())
        batched = {single[rv]: rows[rv] for rv in free}
        count = None
    else:
        count = pt.lscalar("draws")
        inputs, batched = [count], {}
    data_inputs = []
    if data == "inputs":  # before anything reads a container's current length
        containers = [v for v in ancestors(outputs) if isinstance(v, SharedVariable) and not is_random(v)]
        symbolic = {v: v.type(name=v.name) for v in containers}
        outputs = clone_replace(outputs, symbolic)
        data_inputs = list(symbolic.values())
    outputs = _merged(_constant_sizes(_inlined(outputs)))
    vectorised = _vectorised(outputs, batched, count)
    if vectorised is not None:
        outputs = clone_replace(vectorised, {g: key for g in _generators(vectorised) if g is not key})
    else:
        outputs = _scanned(outputs, batched, count, key)
    inputs += [v for v in data_inputs if v in ancestors(outputs)]
    for name, out in zip(names, outputs, strict=True):
        out.name = name
    return [*inputs, key], outputs


def _generators(outputs) -> list:
    return [v for v in ancestors(outputs) if is_random(v) and v.owner is None]


def _vectorised(outputs, batched: dict, count):
    """`outputs` with a leading draws axis by PyTensor's `vectorize_graph` (the fast form: every
    random node draws all rows at once): over the batched free variables, or `count` prior draws.
    None where PyTensor cannot batch a node: NotImplementedError for an op with no batched form
    (a Scan drawing inside: a random walk), ValueError for a node rebuilt on batched inputs it
    refuses (a size fixed against batched parameters, a mixture's indexing)."""
    rank = [pt.as_tensor(o).type.ndim for o in outputs]
    if count is not None:
        outputs, batched = _rooted(outputs, count)
    rows = count if count is not None else next(iter(batched.values())).shape[0] if batched else None
    try:
        result = [pt.as_tensor(o) for o in vectorize_graph(outputs, batched)]
    except (NotImplementedError, ValueError):
        return None
    # an output no row changes (a constant Deterministic) is the same in every row
    return [o if o.type.ndim > r or rows is None else pt.broadcast_to(o, (rows, *o.shape)) for o, r in zip(result, rank, strict=True)]


def _scanned(outputs, batched: dict, count, key):
    """`outputs` with a leading draws axis by a Scan over the draws, where PyTensor cannot vectorise
    the graph: each step computes one row, with the key carried (every random node reads it, and
    the step passes on a next key, so each row draws anew)."""
    import pytensor
    from pytensor.tensor.random.op import RandomVariable

    singles, rows = list(batched), list(batched.values())
    generators = _generators(outputs)

    def step(*args):
        values, rng = args[: len(singles)], args[-1]
        row = clone_replace(outputs, {**dict(zip(singles, values, strict=True)), **{g: rng for g in generators}})
        following = next((v.owner.outputs[0] for v in ancestors(row) if v.owner is not None
                          and isinstance(v.owner.op, RandomVariable) and v.owner.inputs[0] is rng), None)
        if following is None:  # no random node reads the key outside an inner scan: draw a key to pass on
            following = pt.random.uniform(rng=rng).owner.outputs[0]
        return [*row, following]

    scanned = pytensor.scan(step, sequences=rows, outputs_info=[None] * len(outputs) + [key],
                            n_steps=count if count is not None else None, return_updates=False)
    return list(scanned[:-1])


def _default_names(model, kind: str) -> list[str]:
    observed = [rv.name for rv in model.observed_RVs]
    if kind == "posterior":
        return observed
    return [rv.name for rv in model.free_RVs] + observed + [d.name for d in model.deterministics]


def _inlined(outputs):
    """`outputs` with every OpFromGraph (PyMC's symbolic random variables: HalfCauchy, mixtures,
    censored, random walks, CustomDist) replaced by its inner graph, so only PyTensor's basic
    random variables are left to vectorise. One pass in topological order: each node is rebuilt
    once on its inputs' replacements, an inner graph walked once where it is inlined."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.graph.basic import clone_get_equiv
    from pytensor.graph.traversal import io_toposort

    new: dict = {}

    def rebuild(roots, outs) -> None:
        for node in io_toposort(roots, outs):
            inputs = [new.get(v, v) for v in node.inputs]
            if isinstance(node.op, OpFromGraph):
                # the inner graph cloned onto the outer inputs (clone_replace would clone their graphs too:
                # copies of the model's random nodes, each drawing anew)
                memo = dict(zip(node.op.inner_inputs, inputs, strict=True))
                equiv = clone_get_equiv(node.op.inner_inputs, node.op.inner_outputs, copy_inputs=False, memo=memo)
                inner = [equiv[v] for v in node.op.inner_outputs]
                rebuild(inputs, inner)  # an inner graph may hold OpFromGraphs too
                replaced = [new.get(v, v) for v in inner]
            elif any(a is not b for a, b in zip(inputs, node.inputs, strict=True)):
                replaced = node.clone_with_new_inputs(inputs).outputs
            else:
                continue
            new.update(zip(node.outputs, replaced, strict=True))

    rebuild([], outputs)
    return [new.get(o, o) for o in outputs]


def _merged(outputs):
    """`outputs` with equal nodes merged (PyTensor's MergeOptimizer, on a copy: the model's graph is
    not touched), before the generators become one key: equal random nodes on one generator draw
    alike in PyTensor (one generator state; its compiled functions merge them), where ptonnx
    would give each node a stream of its own."""
    from pytensor.graph.basic import clone_get_equiv
    from pytensor.graph.fg import FunctionGraph
    from pytensor.graph.rewriting.basic import MergeOptimizer

    equiv = clone_get_equiv([], outputs, copy_inputs=False, copy_orphans=False)  # new nodes, the same roots
    fgraph = FunctionGraph(outputs=[equiv[o] for o in outputs], clone=False)
    MergeOptimizer().rewrite(fgraph)
    return list(fgraph.outputs)


def _constant_sizes(outputs):
    """`outputs` with each random node's size a constant where it is one (a data container's
    length, taken at its current value): `vectorize_graph` extends only a size it finds unchanged,
    and it rebuilds a size graph (MakeVector as ExpandDims) even where nothing in it is batched."""
    from pytensor.graph.basic import Constant
    from pytensor.tensor.random.op import RandomVariable

    sizes = {}
    for v in ancestors(outputs):
        node = v.owner
        if node is None or not isinstance(node.op, RandomVariable):
            continue
        size = node.op.size_param(node)
        if isinstance(size, Constant) or getattr(size.type, "dtype", None) is None:
            continue
        roots = [r for r in ancestors([size]) if r.owner is None]
        if all(isinstance(r, Constant | SharedVariable) for r in roots):
            sizes[size] = pt.constant(np.asarray(size.eval(), dtype=size.dtype))
    return clone_replace(outputs, sizes) if sizes else list(outputs)


def _rooted(outputs, draws):
    """The prior's outputs, and the replacement that gives them a leading draws axis: each random
    node with no random parameter reads `zero` (0.0) in its first parameter, and vectorising
    makes `zero` a vector of `draws` zeros (the other random nodes follow their parents)."""
    from pytensor.tensor.random.op import RandomVariable

    zero = pt.dscalar("zero")
    drawn = {v.owner for v in ancestors(outputs) if v.owner is not None and isinstance(v.owner.op, RandomVariable)}
    rooted = {}
    for node in drawn:
        rng, size, *params = node.inputs
        if not params or any(a.owner in drawn for a in ancestors(params)):
            continue
        first = params[0] + pt.cast(zero, params[0].dtype)
        new = node.op.make_node(rng, size, first, *params[1:])
        rooted.update(zip(node.outputs, new.outputs, strict=True))
    outputs = clone_replace(outputs, rooted)
    return outputs, {zero: pt.zeros((draws,), dtype="float64")}


def compile_predictive(model, var_names: Sequence[str] | None = None, *, kind: str = "posterior", data: str = "constants",
                       passes=None, **kwargs) -> CompiledModel:
    """The model's predictive draws as an ONNX model (see the module doc for inputs and outputs)."""
    inputs, outputs = predictive_graph(model, var_names, kind=kind, data=data)
    return compile_function(inputs, outputs, passes, **kwargs)


def export_predictive(model, path: str | os.PathLike, var_names: Sequence[str] | None = None, *, kind: str = "posterior",
                      data: str = "constants", passes=None, **kwargs) -> CompiledModel:
    cm = compile_predictive(model, var_names, kind=kind, data=data, passes=passes, **kwargs)
    cm.save(path)
    return cm


def inputs_from(cm: CompiledModel, posterior) -> list[np.ndarray]:
    """The posterior inputs of `cm` from an `InferenceData.posterior` (or a dict of arrays shaped
    (chain, draw, ...)): chains and draws flattened into the leading axis, in `cm`'s input order
    (the key and any data inputs are the caller's)."""
    arrays = []
    for value in cm.ir.inputs:
        name = value.name
        if name == "key" or name not in posterior:
            continue
        a = np.asarray(posterior[name])
        arrays.append(np.ascontiguousarray(a.reshape(-1, *a.shape[2:]), dtype=value.dtype))
    return arrays
