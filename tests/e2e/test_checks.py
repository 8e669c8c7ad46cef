"""Run-time checks (Assert, CheckAndRaise, SpecifyShape, Alloc's broadcast rule).

Each program is run on inputs that pass and inputs that fail its check. Where
PyTensor raises, the compiled model must raise a `ptonnx.errors.CheckFailedError`
that is also PyTensor's exception class, at every onnxruntime level, from the
plain graph and from the ONNX mode's rewritten graph; where PyTensor returns,
the numbers must be PyTensor's.
"""

from __future__ import annotations


import numpy as np
import onnx
import pytensor.tensor as pt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pytensor.raise_op import Assert, CheckAndRaise

import ptonnx
from tests.conftest import check_like_pytensor
from tests.e2e.test_shape_programs import arrays


class _UserError(ValueError):
    """An exception class of the user's, as PyMC's ParameterValueError is."""


@given(st.data())
def test_specify_shape_checks_the_sizes_it_is_given(data):
    x, static = data.draw(arrays(min_ndim=1, max_ndim=3))
    wanted = tuple(data.draw(st.sampled_from([None, d, d + 1, max(d - 1, 0)])) for d in x.shape)
    v = pt.tensor("x", dtype=x.dtype.name, shape=tuple(s if s is None or w is None or s == w else None
                                                        for s, w in zip(static, wanted, strict=True)))
    check_like_pytensor([v], [pt.specify_shape(v, wanted)], [x])


def test_specify_shape_with_a_computed_size():
    x, n = pt.matrix("x"), pt.lscalar("n")
    out = pt.specify_shape(x, (n, None)) * 2
    assert check_like_pytensor([x, n], [out], [np.ones((3, 2)), np.array(3)]) is None
    raised = check_like_pytensor([x, n], [out], [np.ones((3, 2)), np.array(4)], message="SpecifyShape")
    assert isinstance(raised, AssertionError)


def test_specify_shape_gives_the_output_its_static_shape():
    x = pt.matrix("x", shape=(None, 3))
    cm = ptonnx.compile_function([x], [pt.specify_shape(x, (5, None)) + 1])
    assert cm.ir.outputs[0].shape == (5, 3)
    assert [d.dim_value for d in cm.model.graph.output[0].type.tensor_type.shape.dim] == [5, 3]


@given(st.data())
def test_alloc_broadcasts_only_dims_of_static_size_one(data):
    x, static = data.draw(arrays(min_ndim=1, max_ndim=2))
    lead = data.draw(st.integers(0, 2))
    sizes = [data.draw(st.sampled_from([d, 1, d + 1])) for d in x.shape]
    v = pt.tensor("x", dtype=x.dtype.name, shape=static)
    n, given_sizes = pt.lscalar("n"), pt.lvector("sizes")
    # a size that contradicts a static dim is refused by PyTensor when the graph is built: give it at run time
    dims = [pt.as_tensor(s, dtype="int64") if d in (None, s) else given_sizes[i] for i, (s, d) in enumerate(zip(sizes, static, strict=True))]
    out = pt.alloc(v, n, *dims)
    used = any(d is not None and d != s for s, d in zip(sizes, static, strict=True))
    check_like_pytensor([v, n, given_sizes][: 3 if used else 2], [out], [x, np.array(lead), np.array(sizes, dtype=np.int64)][: 3 if used else 2])


@pytest.mark.parametrize("cond", [True, False])
def test_assert_raises_assertion_error_with_its_message(cond):
    x, t = pt.vector("x"), pt.scalar("t")
    out = Assert("x must start above t")(x, pt.gt(x[0], t)) * 2
    values = [np.array([1.0, -0.0, np.nan]), np.array(0.5 if cond else 1.5)]
    raised = check_like_pytensor([x, t], [out], values, message="x must start above t")
    assert (raised is None) == cond


@pytest.mark.parametrize("cond", [1, 0, np.nan])
def test_check_and_raise_raises_the_users_exception_class(cond):
    x, c = pt.vector("x"), pt.scalar("c")
    out = CheckAndRaise(_UserError, "parameter out of range")(x, c, pt.lt(x.shape[0], 5))
    raised = check_like_pytensor([x, c], [out], [np.array([1.0, 2.0]), np.array(cond)])
    assert (raised is None) == bool(cond)  # NaN is true, as Python's bool() reads it


def test_a_check_known_to_fail_fails_every_run():
    x = pt.vector("x")
    out = Assert("never")(pt.constant(np.ones(3)), pt.constant(False)) + x
    check_like_pytensor([x], [out], [np.ones(3)], message="never")


def test_a_check_known_to_pass_leaves_no_trace():
    x = pt.vector("x")
    cm = ptonnx.compile_function([x], [Assert("always")(x, pt.constant(True)) + 1])
    assert "Check" not in cm.ir.op_counts()
    assert not any(p.key == "ptonnx.checks" for p in cm.model.metadata_props)


def test_a_saved_model_keeps_its_check_messages(tmp_path):
    x = pt.vector("x")
    cm = ptonnx.compile_function([x], [pt.specify_shape(x, (2,)) + 1])
    path = cm.save(tmp_path / "m.onnx")
    reloaded = ptonnx.api.CompiledModel(onnx.load(path), cm.ir, cm.report)
    with pytest.raises(AssertionError, match="SpecifyShape"):
        reloaded(np.ones(3))


#: each check op -> the tests of this module that compare programs reaching it with PyTensor
#: (read by tests/ir/test_registry.py; checked by test_every_check_op_is_reached_from_pytensor)
REACHED_BY = {"Check": ("test_assert_raises_assertion_error_with_its_message", "test_specify_shape_with_a_computed_size",
                        "test_check_and_raise_raises_the_users_exception_class", "test_alloc_broadcasts_only_dims_of_static_size_one")}


def test_every_check_op_is_reached_from_pytensor():
    x, t, n = pt.vector("x"), pt.scalar("t"), pt.lscalar("n")
    programs = {"Check": [([x, t], Assert("x must start above t")(x, pt.gt(x.sum(), t))), ([x, n], pt.specify_shape(x, (n,)))]}
    for op, cases in programs.items():
        for inputs, out in cases:
            assert op in ptonnx.lift(ptonnx.api.function_graph(inputs, [out])).op_counts(), (op, out)
    assert set(REACHED_BY) == set(programs) == {name for name, s in ptonnx.ir.all_schemas().items() if s.family == "check"}
    assert all(callable(globals().get(test)) for tests in REACHED_BY.values() for test in tests)
