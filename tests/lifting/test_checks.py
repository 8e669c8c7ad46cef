"""lifting/checks.py: CheckAndRaise (Assert, a user's exception class) and SpecifyShape as IR `Check`s."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.raise_op import Assert, CheckAndRaise
from pytensor.tensor.shape import _specify_shape

from tests.lifting.helpers import check_lift, ops, raises_check


class OddError(ValueError):
    """A user's own exception class: the Check names it, so the model raises it."""


def test_assert_checks_its_condition():
    x = pt.dvector("x")
    y = Assert("x must be positive")(x, pt.all(x > 0))
    g = check_lift([x], [y], [np.array([1.0, 5e-324])], [np.array([1.0, -0.0])], [np.array([np.nan])], [np.zeros(0)])
    assert ops(g)[-1] == "Check" and g.outputs[0].producer.attrs["exception"] == "builtins:AssertionError"
    raises_check(g, [np.array([-1.0])], AssertionError, "x must be positive")


def test_check_and_raise_reads_nonzero_as_true_and_raises_the_users_class():
    """The condition is read as `bool()` reads it: NaN and inf are true, +0.0 and -0.0 false."""
    x, c = pt.dvector("x"), pt.dscalar("c")
    y = CheckAndRaise(OddError, "c must be nonzero")(x, c)
    x0 = np.array([1.0, -np.inf])
    g = check_lift([x, c], [y], *([x0, np.float64(v)] for v in (np.nan, 0.0, -0.0, 5e-324, -np.inf)))
    assert ops(g) == ["Cast", "Check"]
    raises_check(g, [x0, np.float64(-0.0)], OddError, "c must be nonzero")


def test_a_condition_known_true_is_dropped():
    x = pt.dvector("x")
    g = check_lift([x], [Assert("never")(x, pt.constant(True))], [np.array([np.nan])])
    assert "Check" not in ops(g) and g.outputs[0] is g.inputs[0]


def test_specify_shape_checks_and_gives_the_static_shape():
    m = pt.dmatrix("m")
    y = pt.specify_shape(m, (2, None))
    g = check_lift([m], [y], [np.ones((2, 3))], [np.ones((2, 0))], [np.ones((3, 2))], [np.ones((0, 0))])
    assert ops(g)[-2:] == ["Check", "Reshape"] and g.outputs[0].type.shape == (2, "m_dim1")
    raises_check(g, [np.ones((3, 2))], AssertionError, "SpecifyShape: m must have shape (2, None)")


def test_specify_shape_with_a_computed_size():
    m, n = pt.dmatrix("m"), pt.lscalar("n")
    y = pt.specify_shape(m, (n, 3))
    check_lift([m, n], [y], [np.ones((2, 3)), np.int64(2)], [np.ones((2, 3)), np.int64(3)], [np.ones((0, 3)), np.int64(0)],
               [np.ones((2, 4)), np.int64(2)])


def test_specify_shape_of_sizes_already_known_is_its_input():
    s = pt.tensor("s", shape=(2, None))
    g = check_lift([s], [_specify_shape(s, 2, None)], [np.ones((2, 3))])
    assert g.outputs[0] is g.inputs[0] and "Check" not in ops(g)
