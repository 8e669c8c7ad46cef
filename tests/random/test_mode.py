"""`pytensor.function(..., mode="ONNX")` with random generators: shared generators updated as
PyTensor's modes update them (successive calls draw anew, `set_value` or a seed resets),
left alone without an update, and generators given as inputs and returned as outputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.random.type import RandomGeneratorType

import ptonnx  # noqa: F401  (registers the mode)


def test_updates_draw_anew_and_set_value_reproduces():
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    nxt, x = pt.random.normal(size=(4,), rng=rng).owner.outputs
    f = pytensor.function([], x, mode="ONNX", updates={rng: nxt})
    a, b = f(), f()
    assert not np.isclose(a, b).any()
    rng.set_value(np.random.default_rng(0))
    np.testing.assert_array_equal(f(), a)
    np.testing.assert_array_equal(f(), b)
    assert isinstance(rng.get_value(), np.random.Generator)


def test_without_an_update_every_call_draws_the_same_as_pytensor_does():
    rng = pytensor.shared(np.random.default_rng(1), name="rng")
    x = pt.random.uniform(size=(3,), rng=rng)
    f = pytensor.function([], x, mode="ONNX")
    reference = pytensor.function([], x)
    np.testing.assert_array_equal(f(), f())
    np.testing.assert_array_equal(reference(), reference())


def test_default_updates_of_a_random_stream_and_its_seed():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # RandomStream: deprecated in pytensor 3, PyMC's way in 2.38
        from pytensor.tensor.random.utils import RandomStream

        srng = RandomStream(seed=3)
    y = srng.normal(size=(2,)) + srng.uniform(size=(2,))
    f = pytensor.function([], y, mode="ONNX")
    a, b = f(), f()
    assert not np.isclose(a, b).any()
    srng.seed(3)
    np.testing.assert_array_equal(f(), a)


def test_a_generator_input_and_the_next_generator_output():
    rng = RandomGeneratorType()("rng")
    nxt, x = pt.random.normal(0.0, 2.0, size=(5,), rng=rng).owner.outputs
    f = pytensor.function([rng], [nxt, x], mode="ONNX")
    g = np.random.default_rng(7)
    state = g.bit_generator.state
    new, a = f(g)
    assert g.bit_generator.state == state, "the given generator is not advanced"
    assert isinstance(new, np.random.Generator)
    _, a_again = f(np.random.default_rng(7))
    np.testing.assert_array_equal(a, a_again)
    _, b = f(new)
    assert not np.isclose(a, b).any()
