"""The registry is the one place to learn an op: every op is complete everywhere."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from ptonnx import ir
from ptonnx.errors import IRError, TypeRuleError
from ptonnx.ir import TensorType
from ptonnx.ir.schema import EACH, define
from ptonnx.decompositions import DECOMPOSITIONS
from ptonnx.lowering import EMITTERS

SCHEMAS = ir.all_schemas()
ROOT = Path(__file__).parents[2]
#: each family -> the test modules that reach its ops (from PyTensor; the ops only passes and decompositions
#: build, from the IR they rewrite) and compare them, with the name under which each lists the ops it has a
#: case for: keyed by op, or PROGRAMS (each program's `ops`). A module with a REACHED_BY map checks it
#: (test_every_<family>_op_is_reached_from_pytensor or alike: each op is in the lifted or rewritten graph).
FAMILY_TESTS = {
    "elementwise": [("tests/e2e/test_op_properties.py", "CASES")],
    "shape": [("tests/e2e/test_shape_programs.py", "PROGRAMS")],
    "indexing": [("tests/e2e/test_indexing.py", "REACHED_BY")],
    "creation": [("tests/e2e/test_creation.py", "REACHED_BY")],
    "reduction": [("tests/e2e/test_reductions.py", "REACHED_BY")],
    "check": [("tests/e2e/test_checks.py", "REACHED_BY")],
    "sequence": [("tests/e2e/test_sequence.py", "REACHED_BY")],
    "special": [("tests/e2e/test_special.py", "CASES")],
    "tensor": [("tests/nn/test_tensor_ops.py", "REACHED_BY")],
    "nn": [("tests/nn/test_end_to_end.py", "REACHED_BY")],
    "fused": [("tests/passes/test_fuse_conv_bn_silu.py", "REACHED_BY")],
    "control": [("tests/e2e/test_scalar_loop.py", "REACHED_BY"), ("tests/e2e/test_ifelse.py", "REACHED_BY")],
    "kernel": [("tests/lowering/test_kernels.py", "COVERS")],
    "linalg": [("tests/linalg/test_linalg.py", "REACHED_BY")],
    "linalg_eigen": [("tests/linalg/test_eigh.py", "REACHED_BY")],
    "linalg_orthogonal": [("tests/linalg/test_qr_svd.py", "REACHED_BY")],
    "linalg_schur": [("tests/linalg/test_schur.py", "REACHED_BY")],
    "linalg_sylvester": [("tests/linalg/test_sylvester.py", "REACHED_BY")],
    "random": [("tests/random/test_distributions.py", "REACHED_BY"), ("tests/random/test_generator.py", "REACHED_BY"),
               ("tests/random/test_rejection.py", "REACHED_BY"), ("tests/random/test_multivariate.py", "REACHED_BY"),
               ("tests/random/test_discrete_loops.py", "REACHED_BY")],
    "bits": [("tests/decompositions/test_random.py", "COVERS")],
}


def _module(path: str):
    return importlib.import_module(path.removesuffix(".py").replace("/", "."))


def _property_cases(family: str) -> set[str]:
    """The ops the family's test modules name a case for."""
    named: set[str] = set()
    for path, attribute in FAMILY_TESTS[family]:
        assert (ROOT / path).exists(), path
        cases = getattr(_module(path), attribute)
        named |= {op for p in cases.values() for op in p.ops} if attribute == "PROGRAMS" else set(cases)
    return named


#: the ops with a hand-built lowering case: the union of the COVERS of tests/lowering/test_*.py
#: and tests/decompositions/test_*.py (an op decomposed before lowering)
LOWERING_CASES = frozenset().union(*(
    getattr(_module(f"tests/{folder}/{path.name}"), "COVERS", frozenset())
    for folder in ("lowering", "decompositions")
    for path in sorted((ROOT / "tests" / folder).glob("test_*.py"))
))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_op_is_complete(name):
    schema = SCHEMAS[name]
    assert callable(schema.type_rule) and callable(schema.semantics)
    assert name in EMITTERS or name in DECOMPOSITIONS, f"{name} has no lowering and no decomposition"
    for var in set(schema.input_vars) | set(schema.output_vars):
        assert var in schema.constraints or var in ir.types.ALL_DTYPES or var == EACH
    assert schema.family in FAMILY_TESTS, f"family {schema.family!r} of {name}: name the test modules that cover it"
    assert name in _property_cases(schema.family), \
        f"{name} has no property test case in {[path for path, _ in FAMILY_TESTS[schema.family]]}"
    assert name in LOWERING_CASES, f"{name} has no hand-built lowering case (COVERS of a tests/lowering or tests/decompositions module)"


def test_registering_twice_or_without_constraints_fails():
    with pytest.raises(IRError, match="registered twice"):
        ir.register(SCHEMAS["Add"])
    with pytest.raises(IRError, match="no entry in `dtypes`"):
        define("AddBad", inputs=("a: T",), outputs=("out: T",), dtypes={}, type_rule=None, semantics=None, family="x", doc="")


def test_semantics_promote_like_pytensor_before_unification():
    (out,) = ir.evaluate("Mul", [np.array([1.5], np.float32), np.array(2, np.int8)], {})
    assert out.dtype == np.float32 and out.tolist() == [3.0]
    t = ir.infer_types("Mul", [TensorType("float32", (3,)), TensorType("int8", ())], {})
    assert t == [TensorType("float32", (3,))]


def test_numpy_semantics_of_the_ops_with_python_meaning():
    a, b = np.array([7, -7, 7, -7, 3]), np.array([2, 2, -2, -2, 0])
    assert ir.evaluate("IntDiv", [a, b], {})[0].tolist() == [3, -4, -4, 3, 0]
    assert ir.evaluate("Mod", [a, b], {})[0].tolist() == [1, 1, -1, -1, 0]
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5])
    assert ir.evaluate("Round", [x], {})[0].tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    assert ir.evaluate("RoundHalfAwayFromZero", [x], {})[0].tolist() == [1.0, 2.0, 3.0, -1.0, -3.0]


def test_optional_ports_are_trailing_and_counted():
    """`"name?: T"` may be left off (a Conv without bias, as ONNX's); it must come last."""
    conv = ir.get_schema("Conv")
    x, w = TensorType("float32", (1, 3, 5, 5)), TensorType("float32", (4, 3, 3, 3))
    assert conv.type_rule([x, w], conv.resolve_attrs({}))[0].shape == (1, 4, 3, 3)
    graph = ir.Graph("g")
    xs = [graph.add_input(t) for t in (x, w, TensorType("float32", (4,)), TensorType("float32", (4,)))]
    with pytest.raises(TypeRuleError, match="takes 2 to 3 inputs, got 4"):
        ir.Builder(graph).op("Conv", *xs)
    with pytest.raises(TypeRuleError, match="takes 2 to 3 inputs, got 1"):
        ir.Builder(graph).op("Conv", xs[0])
    with pytest.raises(IRError, match="optional ports"):
        define("TestOptionalFirst", inputs=("a?: T", "b: T"), outputs=("out: T",), dtypes={"T": {"float32"}},
               type_rule=lambda types, a: [types[-1]], semantics=lambda *xs: xs[-1], family="test", doc="")


def test_an_op_gets_one_emitter_and_one_decomposition():
    from ptonnx.decompositions import decomposes
    from ptonnx.lowering import emits

    with pytest.raises(ValueError, match="Add already has an emitter"):
        emits("Add")(lambda ctx, node, inputs: None)
    with pytest.raises(ValueError, match="GammaLn already has a decomposition"):
        decomposes("GammaLn")(lambda node, inputs: None)
