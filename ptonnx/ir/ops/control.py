"""Ops that own a body graph: `ScalarLoop`, an elementwise loop.

PyTensor's `ScalarLoop` (the gradients of gammainc, betainc and hyp2f1 build
them) runs a scalar graph `n_steps` times on each element, carrying a state;
the while form also stops an element once the body's last output (`until`)
holds, and returns that flag. The IR keeps the body as an IR graph in the node's
`body` attribute: its inputs are the state then the constants (0-d values, as
PyTensor's scalars), its outputs the new state then `until`. The node takes
`n_steps` then the initial state and the constants, all broadcast together,
and gives the final state (and the flag). Passes, `verify` and the printer walk
into the body (`ptonnx.ir.core.bodies`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ptonnx.errors import TypeRuleError
from ptonnx.ir.core import Graph
from ptonnx.ir.schema import REQUIRED, define
from ptonnx.ir.types import INT_DTYPES, TensorType, broadcast_shapes


def _need(ok: bool, why) -> None:
    if not ok:
        raise TypeRuleError(f"ScalarLoop: {why()}")


def _loop_rule(types: Sequence[TensorType], a: Mapping[str, Any]) -> list[TensorType]:
    body, n_state, is_while = a["body"], a["n_state"], a["is_while"]
    _need(isinstance(body, Graph), lambda: f"`body` must be an IR graph, got {type(body).__name__}")
    args = types[1:]
    _need(len(body.inputs) == len(args), lambda: f"the body takes {len(body.inputs)} inputs; the node gives {len(args)}")
    _need(len(body.outputs) == n_state + is_while, lambda: f"the body gives {len(body.outputs)} outputs, not {n_state + is_while}")
    for i, (t, v) in enumerate(zip(args, body.inputs)):
        _need(t.dtype == v.dtype, lambda: f"input {i + 1} is {t.dtype} where the body takes {v.dtype}")
    for i in range(n_state):
        _need(body.outputs[i].dtype == body.inputs[i].dtype, lambda: f"state {i} is {body.inputs[i].dtype} but updated as {body.outputs[i].dtype}")
    _need(not is_while or body.outputs[-1].dtype == "bool", lambda: "the until condition must be bool")
    shape = broadcast_shapes(*(t.shape for t in types))
    return [TensorType(v.dtype, shape) for v in body.outputs]


def run_scalar_loop(n_steps, *arrays, body: Graph, n_state: int, is_while: bool):
    """The loop on whole arrays, each element stepping until its own end (the reference
    the lowering follows: one vectorised step per trip, finished elements kept)."""
    from ptonnx.ir.interpret import interpret

    shape = np.broadcast_shapes(*(np.shape(a) for a in (n_steps, *arrays)))
    steps = np.broadcast_to(n_steps, shape)
    state = [np.array(np.broadcast_to(a, shape)) for a in arrays[:n_state]]
    constants = [np.broadcast_to(a, shape) for a in arrays[n_state:]]
    done = np.zeros(shape, bool)
    trips = int(steps.max(initial=0))
    for i in range(trips):
        active = ~done & (i < steps)
        if not active.any():
            break
        with np.errstate(all="ignore"):
            new = interpret(body, *state, *constants)
        state = [np.where(active, n, s) for n, s in zip(new, state)]
        if is_while:
            done = done | (active & new[-1])
    return tuple(state) + ((done,) if is_while else ())


define(
    "ScalarLoop",
    inputs=("n_steps: I", "*args: each"),
    outputs=("*results: each",),
    dtypes={"I": INT_DTYPES},
    type_rule=_loop_rule,
    semantics=run_scalar_loop,
    attributes={"body": (Graph, REQUIRED), "n_state": (int, REQUIRED), "is_while": (bool, REQUIRED)},
    traits=("no_fold",),
    family="control",
    doc="an elementwise loop: `body` (state, constants -> state[, until]) run n_steps times per element",
)
