"""The generator: Threefry-2x32-20's published known answers, the same bits from the NumPy twin,
interpret, constant folding and onnxruntime at both levels; keys; independent streams."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import ptonnx
from ptonnx import keys, stages
from ptonnx.errors import SignatureError
from ptonnx.ir import Builder, Graph, TensorType, Value, interpret
from ptonnx.ir.ops.bits import threefry2x32
from tests.conftest import run_at_every_level

#: the ops only the generator's tests reach from PyTensor (read by tests/ir/test_registry.py)
REACHED_BY = {"NextKey": ("test_the_next_generator_is_a_key_output",), "Threefry2x32": ("test_known_answers_in_interpret_folding_and_onnxruntime",)}

#: Random123's kat_vectors for threefry2x32_20: (counter, key) -> output (JAX tests the third)
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


def _threefry_graph(constant: bool, case_count: int) -> Graph:
    g = Graph()
    if constant:
        arrays = _cases()
        ins = [Value.constant(a) for a in arrays]
    else:
        ins = [g.add_input(TensorType("uint32", (case_count,)), f"x{i}") for i in range(4)]
    g.set_outputs(Builder(g).node("Threefry2x32", ins).outputs)
    return g


def _cases():
    counters = np.array([c for c, _, _ in KNOWN_ANSWERS], np.uint32)
    key = np.array([k for _, k, _ in KNOWN_ANSWERS], np.uint32)
    return [key[:, 0], key[:, 1], counters[:, 0], counters[:, 1]]


def test_numpy_twin_matches_the_known_answers():
    y0, y1 = threefry2x32(*_cases())
    assert [(int(a), int(b)) for a, b in zip(y0, y1, strict=True)] == [out for _, _, out in KNOWN_ANSWERS]


def test_known_answers_in_interpret_folding_and_onnxruntime():
    expected = [np.array([out[i] for _, _, out in KNOWN_ANSWERS], np.uint32) for i in (0, 1)]
    run = _threefry_graph(False, len(KNOWN_ANSWERS))
    for got in interpret(run, *_cases()), *_onnxruntime(run, _cases()):
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    folded = stages.compile_graph(_threefry_graph(True, 3), passes=("constant_folding", "unify_dtypes"))
    assert not folded.model.graph.node or all(n.op_type in ("Identity", "Constant") for n in folded.model.graph.node)
    for got in _onnxruntime(None, [], folded.model):  # the folded bits, as the model holds them
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])


def _onnxruntime(graph, arrays, model=None):
    import onnxruntime as ort

    from tests.conftest import ORT_LEVELS, session_options

    model = model if model is not None else stages.compile_graph(graph).model
    names = [i.name for i in model.graph.input]
    for level in ORT_LEVELS:
        session = ort.InferenceSession(model.SerializeToString(), session_options(level), providers=["CPUExecutionProvider"])
        yield session.run(None, dict(zip(names, arrays, strict=True)))


def _draws(n=20_000):
    rng = pytensor.shared(np.random.default_rng(0), name="rng")
    a = pt.random.normal(0.0, 1.0, size=(n,), rng=rng)
    b = pt.random.normal(0.0, 1.0, size=(n,), rng=rng)  # the same generator: a stream of its own
    u = pt.random.uniform(size=(n,), rng=rng)
    return ptonnx.compile_function([], [a, b, u])


def test_one_key_gives_the_same_draws_at_every_level_and_another_key_others():
    cm = _draws()
    runs = run_at_every_level(cm, keys.key(42))
    first, second = runs.values()
    for x, y in zip(first, second, strict=True):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(cm(keys.key(42))[0], first[0])
    other = cm(keys.key(43))
    assert not np.isclose(other[0], first[0]).any()


def test_streams_and_keys_are_uncorrelated():
    cm = _draws()
    a, b, u = cm(keys.key(7))
    a2, _, _ = cm(keys.key(8))
    bound = 5 / np.sqrt(a.size)
    for x, y in ((a, b), (a, u), (b, u), (a, a2)):
        assert abs(np.corrcoef(x, y)[0, 1]) < bound
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < bound  # neighbouring counters too


def test_keys_from_seeds_generators_and_words():
    np.testing.assert_array_equal(keys.key(2**32 + 5), np.array([1, 5], np.uint32))
    np.testing.assert_array_equal(keys.key([3, 4]), np.array([3, 4], np.uint32))
    k1, k2 = keys.key(np.random.default_rng(3)), keys.key(np.random.default_rng(3))
    np.testing.assert_array_equal(k1, k2)
    split = keys.split(keys.key(1), 4)
    assert split.shape == (4, 2) and split.dtype == np.uint32 and len({tuple(s) for s in split}) == 4
    for bad in (-1, 2**64, 1.5, [1, 2, 3], np.array([1, -2]), True):
        with pytest.raises(SignatureError, match="key"):
            keys.key(bad)


def test_the_next_generator_is_a_key_output():
    """A graph that returns the next generator returns the next key; drawing from it gives
    other numbers than the key before it, and a chain of draws is reproducible from its key."""
    rng = pt.random.type.RandomGeneratorType()("rng")
    next_rng, x = pt.random.normal(0.0, 1.0, size=(1000,), rng=rng).owner.outputs
    y = pt.random.normal(0.0, 1.0, size=(1000,), rng=next_rng)
    cm = ptonnx.compile_function([rng], [next_rng, x, y])
    assert "NextKey" in cm.ir.op_counts() or "Threefry2x32" not in cm.ir.op_counts()
    assert [i.name for i in cm.model.graph.input] == ["rng"]
    k, a, b = cm(keys.key(5))
    assert k.dtype == np.uint32 and k.shape == (2,) and not np.array_equal(k, keys.key(5))
    k2, a2, _ = cm(k)
    assert not np.isclose(a2, a).any()
    again = run_at_every_level(cm, keys.key(5))
    for level_outputs in again.values():
        for got, want in zip(level_outputs, (k, a, b), strict=True):
            np.testing.assert_array_equal(got, want)
    lifted = ptonnx.lift(ptonnx.api.function_graph([rng], [next_rng, x]))
    assert lifted.op_counts()["NextKey"] == 1
