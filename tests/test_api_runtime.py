"""Running and saving compiled models: inputs as users hold them, shapes that do not fit,
and models beyond protobuf's 2 GiB (ONNX external data)."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytensor
import pytensor.tensor as pt
import pytest
from onnx import numpy_helper

import ptonnx
import ptonnx.model_files
from ptonnx.errors import CheckFailedError, PtonnxError, RuntimeMismatchError
from ptonnx.ir import Builder, Graph, TensorType
from ptonnx.passes import Report
from tests.conftest import ORT_LEVELS, REFERENCE_MODE, assert_matches, session_options


def _reference(inputs, outputs, arrays):
    return pytensor.function(inputs, outputs, mode=REFERENCE_MODE)(*arrays)


# -- inputs in any byte order and layout ---------------------------------------------


@pytest.mark.parametrize(
    "array",
    [
        np.arange(4, dtype=">f4"),
        np.arange(8, dtype="float32")[::2],
        np.arange(4, dtype=">i8"),  # converted exactly to float32, after the byte swap
        np.arange(12, dtype=">f4").reshape(3, 4)[:, 1],  # big-endian and strided
    ],
    ids=["big-endian", "strided", "big-endian-int", "big-endian-strided"],
)
def test_inputs_in_any_byte_order_or_layout_are_read_by_value(array):
    x = pt.vector("x", dtype="float32")
    cm = ptonnx.compile_function([x], [x * 2 + 1])
    native = np.array(array, dtype="float32")
    assert_matches(cm, [array], _reference([x], [x * 2 + 1], [native]))


def test_a_fortran_ordered_big_endian_matrix():
    m = pt.matrix("m", dtype="float64")
    cm = ptonnx.compile_function([m], [m.T - 1])
    array = np.asfortranarray(np.arange(6.0).reshape(2, 3)).astype(">f8", order="F")
    assert_matches(cm, [array], _reference([m], [m.T - 1], [np.array(array, dtype="float64")]))


# -- shapes that do not fit ------------------------------------------------------------


def test_inputs_that_do_not_broadcast_name_the_inputs_and_shapes():
    x = pt.vector("x", dtype="float32")
    y = pt.vector("y", dtype="float32")
    cm = ptonnx.compile_function([x, y], [x + y])
    for level in ORT_LEVELS:  # a CheckFailedError that is also PyTensor's ValueError
        with pytest.raises(CheckFailedError, match=r"Add of x, y: Runtime broadcasting not allowed"):
            cm.with_session_options(session_options(level))(np.ones(3, np.float32), np.ones(4, np.float32))
        with pytest.raises(ValueError):
            cm.with_session_options(session_options(level))(np.ones(1, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError):  # what PyTensor raises for these shapes
        pytensor.function([x, y], x + y, mode=REFERENCE_MODE)(np.ones(3, np.float32), np.ones(4, np.float32))
    a, b = np.ones(3, np.float32), np.arange(3, dtype=np.float32)
    assert_matches(cm, [a, b], _reference([x, y], [x + y], [a, b]))


def test_a_size_that_differs_from_a_static_dim_is_refused_before_running():
    x = pt.tensor("x", dtype="float32", shape=(3, None))
    cm = ptonnx.compile_function([x], [x * 2])
    with pytest.raises(RuntimeMismatchError, match=r"input x has type f32\[3,x_dim1\]; got shape \(4, 2\)"):
        cm(np.ones((4, 2), np.float32))


def test_inputs_that_share_a_named_dim_must_agree_on_it():
    g = Graph("shared_dim")
    a = g.add_input(TensorType("float32", ("n",)), "a")
    b = g.add_input(TensorType("float32", ("n",)), "b")
    g.set_outputs([Builder(g).op("Add", a, b, name="s")])
    cm = ptonnx.CompiledModel(ptonnx.lower(g), g, Report())
    with pytest.raises(RuntimeMismatchError, match=r"inputs a and b share the dimension 'n' but disagree on its size \(3 vs 4\)"):
        cm(np.ones(3, np.float32), np.ones(4, np.float32))
    arrays = [np.ones(3, np.float32), np.arange(3, dtype=np.float32)]
    assert_matches(cm, arrays, [arrays[0] + arrays[1]])


# -- models beyond protobuf's 2 GiB --------------------------------------------------


@pytest.fixture
def small_proto_limit(monkeypatch):
    """Models over 10 kB count as too large for one protobuf message."""
    monkeypatch.setattr(ptonnx.model_files, "MAX_PROTO_BYTES", 10_000)


def _weighted(n: int = 5000):
    x = pt.vector("x", dtype="float32")
    w = np.linspace(-1, 1, n, dtype=np.float32)
    return x, w, (x * pt.constant(w, name="w")) + 1


def _initializer(model, name):
    return next(t for t in model.graph.initializer if t.name == name)


def test_a_model_over_the_limit_is_checked_run_and_saved_with_external_data(small_proto_limit, tmp_path):
    x, w, y = _weighted()
    cm = ptonnx.compile_function([x], [y])
    assert "check" in cm.report.stages and ptonnx.model_files.needs_external_data(cm.model)
    arrays = [np.linspace(0, 3, w.size, dtype=np.float32)]
    assert_matches(cm, arrays, _reference([x], [y], arrays))

    path = cm.save(tmp_path / "big.onnx")
    data = tmp_path / "big.onnx.data"
    assert os.path.getsize(path) < w.nbytes <= os.path.getsize(data)
    cm.save(path)  # saving again rewrites the data file, never appends to it
    assert os.path.getsize(data) == w.nbytes
    tensor = _initializer(cm.model, "w")  # the in-memory model refers to the user's array: no copy
    assert tensor.data_location == onnx.TensorProto.EXTERNAL and not tensor.HasField("raw_data")
    assert np.shares_memory(cm.weights["w"], w) and set(cm.weights) == {"w"}

    loaded = onnx.load(path)
    np.testing.assert_array_equal(numpy_helper.to_array(_initializer(loaded, "w")), w)
    onnx.checker.check_model(path, full_check=True)
    import onnxruntime as ort

    [out] = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": arrays[0]})
    np.testing.assert_array_equal(out, cm(*arrays)[0])


def test_export_and_save_on_request_write_external_data(small_proto_limit, tmp_path):
    x, w, y = _weighted()
    ptonnx.export([x], tmp_path / "e.onnx", outputs=[y])
    assert (tmp_path / "e.onnx.data").exists()
    small = ptonnx.compile_function([x], [x + 1])
    small.save(tmp_path / "s.onnx")
    assert not (tmp_path / "s.onnx.data").exists()
    cm = ptonnx.compile_function([x], [y])
    cm.save(tmp_path / "inline.onnx", external_data=False)
    assert not (tmp_path / "inline.onnx.data").exists() and os.path.getsize(tmp_path / "inline.onnx") > w.nbytes


def test_saving_with_external_data_leaves_the_model_untouched(tmp_path):
    """A whole model saved with external data: the data file gets each large tensor,
    page-aligned; the in-memory model is not edited (moving its bytes out and back would
    leave a second copy in protobuf's arena)."""
    x, w, y = _weighted(20_000)
    cm = ptonnx.compile_function([x], [y])
    assert not cm.weights
    before = cm.model.SerializeToString()
    path = cm.save(tmp_path / "m.onnx", external_data=True)
    assert cm.model.SerializeToString() == before
    (moved,) = [t for t in onnx.load(path, load_external_data=False).graph.initializer if t.external_data]
    entries = {e.key: e.value for e in moved.external_data}
    assert int(entries["offset"]) % 4096 == 0 and int(entries["length"]) == w.nbytes


def test_one_copy_of_the_weights(tmp_path):
    """The IR's constant is the user's array (read-only view; theirs stays writeable) and the
    compiled model keeps nothing of the user's PyTensor graph alive (Node.source is text)."""
    import gc
    import weakref

    def build():
        x, w, y = _weighted(20_000)
        return ptonnx.compile_function([x], [y]), w, weakref.ref(y)

    cm, w, y_ref = build()
    gc.collect()
    assert y_ref() is None, "the compiled model keeps the user's PyTensor graph alive"
    (const,) = [v.const for n in cm.ir for v in n.inputs if v.const is not None and v.const.size == w.size]
    assert np.shares_memory(const, w) and w.flags.writeable and not const.flags.writeable
    node = next(n for n in cm.ir if n.source is not None)
    assert isinstance(node.source.variable, str) and isinstance(node.source.type, str), node.source


def test_a_model_over_the_limit_shares_its_weights_with_onnxruntime(small_proto_limit, tmp_path):
    """onnxruntime runs on `cm.weights` themselves (shared initializers), at both levels;
    the data file is written from them, its references as the in-memory model's; session
    options that already hold a weight of that name are refused with what to do."""
    x, w, y = _weighted(3000)
    z = pt.vector("z", dtype="int64")
    idx = np.arange(400, dtype=np.int64)[::-1].copy()
    out = (x * pt.constant(w, name="w")).sum() + pt.constant(idx, name="idx")[z].sum()
    cm = ptonnx.compile_function([x, z], [out])
    assert set(cm.weights) == {"w", "idx"} and np.shares_memory(cm.weights["idx"], idx)
    arrays = [np.linspace(-2, 2, w.size, dtype=np.float32), np.array([0, 399, -1, 7], np.int64)]
    assert_matches(cm, arrays, _reference([x, z], [out], arrays))
    on_disk = onnx.load(cm._copy.path(), load_external_data=False).graph.initializer
    assert [list(t.external_data) for t in on_disk] == [list(t.external_data) for t in cm.model.graph.initializer]

    import onnxruntime as ort

    options = ort.SessionOptions()
    cm.with_session_options(options)(*arrays)
    with pytest.raises(PtonnxError, match="already hold a weight named '(w|idx)'.*SessionOptions of its own"):
        cm.with_session_options(options)(*arrays)

    cm(*arrays)  # the session exists; now the user's array changes under it (as the docs say not to)
    w[:] = 0
    np.testing.assert_array_equal(cm(*arrays)[0], np.float32(idx[arrays[1]].sum()))  # it read `w` itself: one copy


# -- the call path: inputs passed on as they are, or converted -------------------------


@pytest.fixture
def converted(monkeypatch):
    """The inputs that went through `ptonnx.call.as_input` (the slow path), by name."""
    import ptonnx.call

    names: list[str] = []
    as_input = ptonnx.call.as_input
    monkeypatch.setattr(ptonnx.call, "as_input", lambda name, value, array: names.append(name) or as_input(name, value, array))
    return names


@pytest.mark.parametrize(
    "array",
    [
        [0.5, -1.0, 2.25],  # a Python list
        np.arange(8.0)[::2],  # not contiguous
        (np.arange(4.0) / 4).astype(">f8"),  # big-endian
        np.arange(4, dtype=np.float32) / 4,  # float32, which converts exactly
        np.arange(5),  # int64 that converts exactly
    ],
    ids=["list", "strided", "big-endian", "float32", "int64"],
)
def test_inputs_not_as_the_model_needs_them_give_the_numbers_of_the_array_it_needs(array, converted):
    x, mu = pt.dvector("x"), pt.dscalar("mu")
    cm = ptonnx.compile_function([x, mu], [x * 2 - mu, (x - mu).sum()])
    native = np.ascontiguousarray(np.array(array, dtype=np.float64))
    expected = cm(native, np.array(0.5))
    assert converted == []  # both arrays as the model needs them: passed on as they are
    for actual, wanted in zip(cm(array, 0.5), expected, strict=True):
        np.testing.assert_array_equal(actual, wanted)
    assert converted == ["x", "mu"]


BEYOND_2_53 = np.array([2**53 + 1, -(2**53) - 1, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 2**53, 0, -1])


def test_int64_beyond_2_53_for_a_float64_input_is_rounded_as_pytensor_rounds_it():
    """PyTensor casts an int64 array given for a float64 input (int64 upcasts to float64: its filter
    casts without asking, on both lines), rounding 2**53 + 1 to 2**53; so does the compiled model
    (it once called the conversion exact, since the rounded values compare equal as float64)."""
    x = pt.dvector("x")
    out = [x * 1.0, x - 9007199254740992.0]
    expected = pytensor.function([x], out, mode=REFERENCE_MODE)(BEYOND_2_53)
    assert expected[0][0] == 2.0**53 and expected[0][2] == 2.0**63  # rounded, not refused
    assert_matches(ptonnx.compile_function([x], out), [BEYOND_2_53], expected)


def test_int64_beyond_2_53_for_a_float32_input_is_refused():
    """int64 to float32 is no cast PyTensor makes without asking (its TypeError, 'loss of precision'):
    ptonnx takes what converts exactly and refuses the rest, 2**53 + 1 included (it once took it)."""
    x = pt.fvector("x")
    cm = ptonnx.compile_function([x], [x * 2])
    with pytest.raises(TypeError, match="loss of precision"):
        pytensor.function([x], x * 2, mode=REFERENCE_MODE)(np.array([2**53 + 1]))
    for value in (2**53 + 1, -(2**53) - 1, np.iinfo(np.int64).max, 2**24 + 1):
        with pytest.raises(RuntimeMismatchError, match="does not convert exactly"):
            cm(np.array([value]))
    assert cm(np.array([2**53, -(2**24), 0]))[0].tolist() == [2.0**54, -(2.0**25), 0.0]


def test_the_casts_taken_without_asking_are_pytensors():
    """PyTensor casts an array given for an input without asking where its upcast of the two dtypes is the
    input's; ptonnx's rule (NumPy's promotion) is the same for every pair of dtypes."""
    import pytensor.scalar as ps

    dtypes = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64"]
    for given in dtypes:
        for wanted in dtypes:
            assert (ps.upcast(wanted, given) == wanted) == (np.promote_types(given, wanted) == np.dtype(wanted)), (given, wanted)


def test_a_static_dim_is_checked_on_the_fast_path_too(converted):
    x = pt.tensor("x", dtype="float64", shape=(3, None))
    cm = ptonnx.compile_function([x], [x * 2])
    np.testing.assert_array_equal(cm(np.ones((3, 2)))[0], np.full((3, 2), 2.0))
    assert converted == []
    with pytest.raises(RuntimeMismatchError, match=r"input x has type f64\[3,x_dim1\]; got shape \(4, 2\)"):
        cm(np.ones((4, 2)))
    with pytest.raises(RuntimeMismatchError, match=r"input x has type f64\[3,x_dim1\]; got shape \(3,\)"):
        cm(np.ones(3))
    with pytest.raises(RuntimeMismatchError, match=r"(?s)input x is float64; got ndarray .*, which is not that"):
        cm(np.full((3, 2), "a"))


def test_outputs_are_the_callers_own():
    """Each call returns new arrays: no output shares memory with another call's, with an
    input, or with the model's constants, whether it is computed, an input or a constant."""
    x = pt.dvector("x")
    const = pt.as_tensor(np.arange(3.0))
    cm = ptonnx.compile_function([x], [x * 2, x, const, const * 1])
    a = np.arange(4.0)
    first = cm(a)
    kept = [o.copy() for o in first]
    for out in first:
        out += 100
    second = cm(a)
    for out, want in zip(second, [a * 2, a, np.arange(3.0), np.arange(3.0)], strict=True):
        np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(a, np.arange(4.0))
    for out, was in zip(first, kept, strict=True):  # the second call left the first's results alone
        np.testing.assert_array_equal(out, was + 100)
    for i, out in enumerate(first):
        assert not any(np.shares_memory(out, other) for other in [a, *second, *first[:i]])


def _shared_dims_model():
    g = Graph("shared_dims")
    a = g.add_input(TensorType("float32", ("n", "m")), "a")
    b = g.add_input(TensorType("float32", ("m",)), "b")
    c = g.add_input(TensorType("float32", ("n",)), "c")
    builder = Builder(g)
    g.set_outputs([builder.op("Neg", a, name="na"), builder.op("Add", b, c, name="s")])
    return ptonnx.CompiledModel(ptonnx.lower(g), g, Report())


@pytest.mark.parametrize("as_lists", [False, True], ids=["arrays", "lists"])
def test_a_named_dim_mismatch_names_the_first_place_that_disagrees(as_lists):
    """The inputs are read in order: `m` (a's axis 1 vs b) disagrees before `n` (a's axis 0 vs c) is reached."""
    cm = _shared_dims_model()
    arrays = [np.ones((3, 4), np.float32), np.ones(5, np.float32), np.ones(2, np.float32)]
    with pytest.raises(RuntimeMismatchError) as info:
        cm(*[a.tolist() for a in arrays] if as_lists else arrays)
    assert str(info.value) == (
        "inputs a and b share the dimension 'm' but disagree on its size (4 vs 5): "
        "a: float32 (3, 4), b: float32 (5,), c: float32 (2,)"
    )
    with pytest.raises(RuntimeMismatchError, match=r"share the dimension 'n' but disagree on its size \(3 vs 2\)"):
        cm(arrays[0], np.ones(4, np.float32), arrays[2])


def test_an_onnxruntime_failure_names_the_inputs():
    cm = _shared_dims_model()  # b + c broadcasts m against n, which the named dims allow
    with pytest.raises(RuntimeMismatchError, match=r"onnxruntime could not run the model on the inputs a: float32 \(3, 4\), "
                       r"b: float32 \(4,\), c: float32 \(3,\):\n  \[ONNXRuntimeError\]") as info:
        cm(np.ones((3, 4), np.float32), np.ones(4, np.float32), np.ones(3, np.float32))
    assert type(info.value.__cause__).__module__.startswith("onnxruntime")


def _asserting():
    from pytensor.raise_op import Assert

    x = pt.dvector("x")
    return ptonnx.compile_function([x], [Assert("x must be positive")(x, pt.all(x > 0)) * 2])


@pytest.mark.parametrize("array", [np.array([1.0, -2.0]), [1.0, -2.0]], ids=["array", "list"])
def test_a_failed_check_raises_check_failed_error_on_either_path(array):
    cm = _asserting()
    with pytest.raises(CheckFailedError, match="x must be positive") as info:
        cm(array)
    assert isinstance(info.value, AssertionError)
    np.testing.assert_array_equal(cm(np.array([1.0, 2.0]))[0], [2.0, 4.0])


def test_any_session_with_onnxruntimes_run_is_run():
    """Where a session has no C++ object with a `run` (a later onnxruntime, a wrapper), the
    public `run(output_names, feed, run_options)` runs the model, and its check failures raise."""
    import types

    cm = _asserting()
    cm._session = types.SimpleNamespace(run=cm.session.run)
    np.testing.assert_array_equal(cm(np.array([1.0, 2.0]))[0], [2.0, 4.0])
    with pytest.raises(CheckFailedError, match="x must be positive"):
        cm(np.array([1.0, -2.0]))


def test_the_installed_onnxruntime_is_called_without_the_public_runs_second_name_check():
    """The pinned onnxruntime has `InferenceSession._sess.run`, which the call path uses (the
    public `run` re-checks the feed's names: ~1 µs a call, `benchmarks/call_overhead.py`);
    a new session (`with_session_options`) is found anew."""
    from ptonnx.call import runner

    cm = _asserting()
    session = cm.session
    assert runner(session) == session._sess.run
    np.testing.assert_array_equal(cm(np.array([1.0, 2.0]))[0], [2.0, 4.0])
    assert cm._plan._run == session._sess.run
    other = cm.with_session_options(session_options(ORT_LEVELS[0]))
    with pytest.raises(CheckFailedError, match="x must be positive"):
        other(np.array([1.0, -2.0]))
    assert other._plan._run == other.session._sess.run != session._sess.run
