"""Every trait an op declares holds of its semantics, on hard values: the analyses and passes
that read a trait (`ptonnx.ir.schema.TRAITS` names each reader) trust it without looking
at the op, so a wrong trait is a wrong number. The lowering of each op is held to the same
semantics by tests/lowering/test_every_op.py, so a trait true of the semantics is true of the
model that runs."""

from __future__ import annotations

import numpy as np
import pytest

from ptonnx.errors import CheckFailedError
from ptonnx.ir.registry import all_schemas, evaluate
from ptonnx.ir.schema import TRAITS

HARD = np.array([-np.inf, -1e308, -2.5, -1.0, -5e-324, -0.0, 0.0, 5e-324, 1e-300, 0.5, 1.0, 3.0, 1e308, np.inf, np.nan])
#: required attributes of the ops whose traits are checked on elementwise operands
ATTRIBUTES = {"Cast": {"to": "float64"}, "Check": {"message": "m"}}


def _with(trait: str) -> list[str]:
    return sorted(name for name, schema in all_schemas().items() if schema.has(trait))


def _arity(op: str) -> int:
    return sum(1 for p in all_schemas()[op].inputs if not p.optional)


def _operands(op: str, dtype: str, nan_at: int | None = None) -> list[np.ndarray]:
    """Every combination of hard values, one operand per input (bool for a `bool` port)."""
    ports = all_schemas()[op].inputs
    grids = np.meshgrid(*[HARD] * _arity(op), indexing="ij")
    out = []
    for i, (port, grid) in enumerate(zip(ports, grids, strict=False)):
        if port.var == "bool":
            out.append(np.ones(grid.size, bool) if op == "Check" else grid.ravel() > 0)
        else:
            values = np.full(grid.size, np.nan) if i == nan_at else grid.ravel()
            out.append(values.astype(dtype))
    return out


def _run(op: str, operands) -> np.ndarray:
    with np.errstate(all="ignore"):
        return evaluate(op, operands, ATTRIBUTES.get(op, {}))[0]


def _float_ports(op: str) -> list[int]:
    return [i for i, p in enumerate(all_schemas()[op].inputs[:_arity(op)]) if p.var != "bool"]


def test_every_trait_has_a_reader_and_every_op_only_known_traits():
    assert [name for name, why in TRAITS.items() if "read by" not in why] == []
    assert all(schema.traits <= set(TRAITS) for schema in all_schemas().values())


@pytest.mark.parametrize("op", _with("nan_in_nan_out"))
def test_a_nan_operand_gives_nan(op):
    if op not in {"Check", "Cast"} and all_schemas()[op].family not in ("elementwise", "special"):
        pytest.fail(f"{op}: add a case for its operands")
    for i in _float_ports(op):
        result = _run(op, _operands(op, "float64", nan_at=i))
        assert np.isnan(result).all(), f"{op}: operand {i} NaN gives {result[~np.isnan(result)][:5]}"


@pytest.mark.parametrize("trait, verdict", [("nan_compares_false", False), ("nan_compares_true", True)])
def test_a_nan_operand_settles_the_comparison(trait, verdict):
    for op in _with(trait):
        for i in _float_ports(op):
            result = _run(op, _operands(op, "float64", nan_at=i))
            assert result.dtype == bool and (result == verdict).all(), op


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint8) if a.dtype != bool else a


@pytest.mark.parametrize("op", _with("commutative"))
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_swapping_the_operands_of_a_commutative_op_keeps_every_bit(op, dtype):
    if dtype not in all_schemas()[op].allowed("T") and dtype not in all_schemas()[op].constraints.get("T", ()):
        return
    a, b = _operands(op, "float64")
    if dtype == "bool":
        a, b = a > 0, b > 0
    elif dtype == "int64":
        a, b = (np.clip(np.nan_to_num(v), -(2.0**62), 2.0**62).astype(dtype) for v in (a, b))
    assert np.array_equal(_bits(_run(op, [a, b])), _bits(_run(op, [b, a]))), op


@pytest.mark.parametrize("op", _with("idempotent"))
def test_an_idempotent_op_of_one_value_twice_is_that_value(op):
    for x in (HARD, HARD > 0, np.array([-(2**63), -1, 0, 7, 2**63 - 1])):
        if str(x.dtype) in all_schemas()[op].allowed("T"):
            assert np.array_equal(_bits(_run(op, [x, x])), _bits(x)), (op, x.dtype)


@pytest.mark.parametrize("op", _with("never_negative_zero"))
def test_never_negative_zero_holds_on_hard_values(op):
    result = _run(op, _operands(op, "float64"))
    assert not (np.signbit(result) & (result == 0)).any(), op


#: an example call of each op with the `copies` trait: (operands, attributes)
COPIES = {
    "Transpose": (lambda x: [x], {"perm": (1, 0)}),
    "Reshape": (lambda x: [x, np.array([6])], {}),
    "Expand": (lambda x: [x[:1], np.array([4, 3])], {}),
    "Squeeze": (lambda x: [x[:1]], {"axes": (0,)}),
    "Unsqueeze": (lambda x: [x], {"axes": (0,)}),
    "Slice": (lambda x: [x, np.array([1]), np.array([-1]), np.array([1])], {"axes": (1,)}),
    "Gather": (lambda x: [x, np.array([1, 0, 1])], {"axis": 1}),
    "Concat": (lambda x: [x, -x], {"axis": 0}),
    "Split": (lambda x: [x, np.array([1, 1])], {"axis": 0, "num_outputs": 2}),
}


@pytest.mark.parametrize("op", _with("copies"))
def test_a_copying_op_gives_only_its_inputs_elements(op):
    assert op in COPIES, f"{op} declares `copies`: add an example call to COPIES"
    x = np.array([[1.5, -0.0, np.nan], [np.inf, 5e-324, -7.0]])
    make, attributes = COPIES[op]
    operands = make(x)
    allowed = {v.tobytes() for data in operands if data.dtype == x.dtype for v in data.ravel()}
    for result in evaluate(op, operands, attributes):
        assert {v.tobytes() for v in result.ravel()} <= allowed, op


@pytest.mark.parametrize("op", _with("shape_only"))
def test_a_shape_only_result_ignores_the_elements(op):
    x = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(evaluate(op, [x], {})[0], evaluate(op, [np.full_like(x, np.nan)], {})[0])


@pytest.mark.parametrize("op", _with("mixes"))
def test_a_nan_in_a_slice_of_a_mixing_op_reaches_the_whole_slice(op):
    x = np.array([[0.5, np.nan, 2.0], [1.0, 2.0, 3.0]])
    result = evaluate(op, [x], {"axis": 1})[0]
    assert np.isnan(result[0]).all() and not np.isnan(result[1]).any()


@pytest.mark.parametrize("op", _with("selects"))
def test_a_selecting_op_takes_each_element_from_the_branch_its_condition_names(op):
    cond = np.array([True, False, True, False])
    a, b = np.array([1.0, 2.0, np.nan, 4.0]), np.array([-1.0, np.nan, -3.0, -0.0])
    result = evaluate(op, [cond, a, b], {})[0]
    assert np.array_equal(_bits(result), _bits(np.where(cond, a, b))), op


@pytest.mark.parametrize("op", _with("effect"))
def test_an_op_with_an_effect_raises_where_its_condition_fails(op):
    with pytest.raises(CheckFailedError):
        evaluate(op, [np.ones(2), np.array([True, False])], {"message": "failed"})


@pytest.mark.parametrize("op", _with("reduces_axes"))
def test_a_reduction_of_a_transpose_reduces_the_permuted_axes(op):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 4))
    if "bool" in all_schemas()[op].allowed("T") and "float64" not in all_schemas()[op].allowed("T"):
        x = x > 0
    perm = (2, 0, 1)
    for axes in ((0,), (1, 2), (0, 2)):
        for keepdims in (False, True):
            direct = evaluate(op, [np.transpose(x, perm)], {"axes": axes, "keepdims": keepdims})[0]
            permuted = evaluate(op, [x], {"axes": tuple(perm[a] for a in axes), "keepdims": True})[0]
            permuted = np.transpose(permuted, perm)
            if not keepdims:
                permuted = np.squeeze(permuted, axis=axes)
            assert np.allclose(direct, permuted, rtol=1e-15, atol=0), (op, axes, keepdims)


@pytest.mark.parametrize("op", sorted(name for name, schema in all_schemas().items() if schema.zero_sign))
def test_what_a_zero_sign_does_is_what_the_declaration_says(op):
    """"blind": -0.0 and +0.0 at that input give the same bits; "passes": bits that differ at most
    in the result's own zero sign."""
    schema = all_schemas()[op]
    for index, sign in enumerate(schema.zero_sign):
        if not sign:
            continue
        if schema.family == "reduction":
            operands, attributes = [np.array([[-0.0, 0.0], [-0.0, -0.0], [1.5, -0.0]])], {"axes": (1,)}
        else:
            operands, attributes = _operands(op, "float64"), {}
        plus = [o if i != index else np.where(o == 0, 0.0, o) for i, o in enumerate(operands)]
        minus = [o if i != index else np.where(o == 0, -0.0, o) for i, o in enumerate(operands)]
        with np.errstate(all="ignore"):
            a, b = (evaluate(op, ops, attributes)[0] for ops in (plus, minus))
        if sign == "passes":
            a, b = (np.where(r == 0, 0.0, r) if r.dtype.kind == "f" else r for r in (a, b))
        assert np.array_equal(_bits(a), _bits(b)), (op, index, sign)
