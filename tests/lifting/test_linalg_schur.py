"""lifting/linalg_schur.py: Schur (scipy.linalg.schur, output="real", sort=None), alone or under
Blockwise, lifts to one batched IR Schur node (not a Loop over the batch), checked square at run time
only where the types leave it open; `interpret` (LAPACK's gees through SciPy, as PyTensor's perform)
against PyTensor. The complex form and a `sort` are refused by name."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
import pytest

from ptonnx.errors import UnsupportedOpError
from tests.lifting.helpers import check_lift, lifted, ops
from tests.linalg.helpers import normwise


def _general(n, batch=()):
    return np.random.default_rng(n).normal(size=batch + (n, n))


def test_blockwise_schur_is_one_batched_node():
    x3 = pt.dtensor3("x3")
    bad = _general(4, (3,))
    bad[1, 0, 2] = np.nan
    g = check_lift([x3], [*pt.linalg.schur(x3)], [_general(4, (2,))], [bad], [_general(0, (2,))], compare_with=normwise)
    assert ops(g).count("Schur") == 1 and "Loop" not in ops(g) and "Check" in ops(g)  # square? (unknown sizes)


def test_static_square_matrices_need_no_check():
    x = pt.tensor("x", shape=(5, 5), dtype="float64")
    g = check_lift([x], [*pt.linalg.schur(x)], [_general(5)], compare_with=normwise)
    assert ops(g) == ["Schur"]


def test_float32_and_integer_matrices():
    """float32 stays float32; PyTensor 3 makes an integer matrix's results float64 (a Cast first)."""
    xf = pt.fmatrix("xf")
    check_lift([xf], [*pt.linalg.schur(xf)], [_general(4).astype("float32")], compare_with=normwise)
    xi = pt.imatrix("xi")
    t, z = pt.linalg.schur(xi)
    if t.dtype != "float64":  # PyTensor 2.38 keeps int32 (its perform then fails in LAPACK): refused
        with pytest.raises(UnsupportedOpError, match="cast the matrix to a float dtype"):
            lifted([xi], [t])
        return
    g = check_lift([xi], [t, z], [np.arange(9, dtype="int32").reshape(3, 3) % 4], compare_with=normwise)
    assert "Cast" in ops(g)


@pytest.mark.parametrize("kwargs, match", [({"output": "complex"}, "complex numbers are out of ptonnx's scope"),
                                           ({"sort": "lhp"}, "sort='lhp' reorders the eigenvalues")])
def test_complex_form_and_sorting_are_refused_by_name(kwargs, match):
    x = pt.dmatrix("x")
    with pytest.raises(UnsupportedOpError, match=match):
        lifted([x], [pt.linalg.schur(x, **kwargs)[0]])
