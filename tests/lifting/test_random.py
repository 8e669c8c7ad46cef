"""lifting/random.py: each RandomVariable node as its IR op, numbered streams, generators as keys,
the draws' shape from PyTensor's own shape graph, and the refusal of what is not drawn."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.tensor.random.op import RandomVariable

import ptonnx
from ptonnx import keys
from ptonnx.api import function_graph
from ptonnx.errors import UnsupportedOpError
from ptonnx.lifting import lift
from ptonnx.lifting.random import RANDOM_OPS


def _random_nodes(g):
    return [n for n in g if n.op.startswith("Random")]


def test_each_random_variable_is_its_op_with_a_stream_of_its_own():
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    a = pt.random.normal(0.0, 1.0, size=(3,), rng=rng)
    b = pt.random.gamma(2.0, 1.0, size=(3,), rng=rng)  # the same generator: another stream
    g = lift(function_graph([], [a, b]))
    nodes = _random_nodes(g)
    assert sorted(n.op for n in nodes) == ["RandomGamma", "RandomNormal"]
    assert sorted(n.attrs["stream"] for n in nodes) == [0, 1]
    assert nodes[0].inputs[0] is nodes[1].inputs[0] is g.inputs[0]  # one key, the generator's
    assert isinstance(a.owner.op, RandomVariable) and a.owner.op.name in RANDOM_OPS


def test_the_draws_shape_follows_unknown_sizes_through_pytensors_shape_graph():
    loc, scale = pt.dvector("loc"), pt.dmatrix("scale")
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    draws = pt.random.normal(loc, scale, rng=rng)  # no size: broadcast of (n,) and (m, n)
    g = lift(function_graph([loc, scale], [draws]))
    (node,) = _random_nodes(g)
    assert node.outputs[0].type.ndim == 2
    cm = ptonnx.compile_function([loc, scale], [draws])
    (x,) = cm(np.zeros(4), np.zeros((2, 4)), keys.key(0))
    assert x.shape == (2, 4) and not x.any()


def test_a_random_op_ptonnx_does_not_draw_is_refused_naming_those_it_does():
    class SquareRV(RandomVariable):
        name = "square"
        signature = "()->()"
        dtype = "floatX"

        def rng_fn(self, rng, x, size):
            return rng.normal(x, size=size) ** 2

    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    draw = SquareRV()(1.0, rng=rng)
    with pytest.raises(UnsupportedOpError, match=r"does not draw square yet; it draws .*normal"):
        lift(function_graph([], [draw]))


def test_another_op_that_uses_a_generator_is_refused_naming_it():
    """An op that takes a generator but is not a RandomVariable (a hand-written shuffle): ptonnx
    cannot know what it draws, so it refuses, naming the generator and the draw."""
    from pytensor.graph.basic import Apply
    from pytensor.tensor.random.op import RNGConsumerOp

    from ptonnx.errors import RandomVariableError

    class Shuffle(RNGConsumerOp):
        def make_node(self, rng, x):
            x = pt.as_tensor_variable(x)
            return Apply(self, [rng, x], [rng.type(), x.type()])

        def update(self, node):
            return {node.inputs[0]: node.outputs[0]}

        def perform(self, node, inputs, outputs):
            rng, x = inputs
            outputs[0][0], outputs[1][0] = rng, rng.permutation(x)

    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    x = pt.dvector("x")
    shuffled = Shuffle()(rng, x)[1]
    with pytest.raises(RandomVariableError, match=r"(?s)random generator rng .*is drawn by .*Shuffle.*noise"):
        ptonnx.compile_function([x], [shuffled])
