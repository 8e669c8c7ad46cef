"""Two-node patterns whose result onnxruntime changes when it optimises the pair.

Each chain is compared with its own nodes run one at a time at the same level,
so a kernel's single-node quirks do not show here; only what the pair adds:

- ``X→Cast`` (float16 X): onnxruntime computes float16 ops it lacks kernels for
  in float32 and drops the Casts between consecutive ones, so X is not rounded
  to float16 before a Cast to float32 (kind ``fused-precision``).
- ``Cast→Cast`` (a->b->a): a round trip through a narrower dtype must keep the
  narrowing (kind ``fused-precision`` if onnxruntime removes the pair).
- ``Transpose→MatMul``: the extended optimiser fuses a Transpose into MatMul
  (FusedMatMul transA/transB); ``(1-D x)`` when the other operand is a vector
  (kind ``fusion``).

Chains are derived from the emitted pairs: X→Cast for every float16 X with a
Cast float16->float32; Cast→Cast for every emitted cast whose inverse is
emitted; Transpose→MatMul for every emitted MatMul dtype and operand ranks.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from references.emitted import Pair, op_label
from references.probe import (
    LEVELS,
    ORT_ERRORS,
    Finding,
    classify,
    first_line,
    fmt,
    make_model,
    same,
    session,
    tensor_type,
)
from references.reference import APPROX, FLOAT_BINARY, FLOAT_UNARY, Ref, cast, in_domain
from references.values import binary_values, grid, unary_values

ARROW = "→"
MAX_EXAMPLES = 3


def is_chain(op: str) -> bool:
    return ARROW in op


def matmul_batches(dtype: str, ranks) -> list[list[np.ndarray]]:
    """Runs of MatMul operands of the given ranks: rows and columns built from edge values."""
    v = binary_values(dtype)
    a, b = grid(v, v)
    rows = np.ascontiguousarray(np.stack([a, b], axis=1))  # (K*K, 2)
    cols = np.ascontiguousarray(np.stack([v, v[::-1]]))  # (2, K)
    r0, r1 = (min(max(r, 1), 2) for r in ranks)
    if (r0, r1) == (2, 2):
        return [[rows, cols]]
    if (r0, r1) == (2, 1):
        return [[rows, cols[:, j].copy()] for j in range(cols.shape[1])]
    if (r0, r1) == (1, 2):
        return [[cols[:, j].copy(), np.ascontiguousarray(rows.T)] for j in range(cols.shape[1])]
    return [[cols[:, j].copy(), cols[:, (j + 1) % cols.shape[1]].copy()] for j in range(cols.shape[1])]


def _run(model: onnx.ModelProto, level: str, feeds: list[np.ndarray]) -> np.ndarray:
    sess = session(model, level)
    return sess.run(None, dict(zip([i.name for i in model.graph.input], feeds, strict=True)))[0]


def _model(nodes, inputs, out_dtype, ranks=None) -> onnx.ModelProto:
    ranks = ranks or [1] * len(inputs)
    return make_model(nodes, [(n, d, r) for (n, d), r in zip(inputs, ranks, strict=True)], [("y", out_dtype)])


def _report(op: str, dtype: str, origins, per_level: dict[str, list[str]], kind: str, detail: str):
    from references.kernels import PairReport

    findings = []
    levels = tuple(level for level in LEVELS if per_level.get(level))
    if levels:
        first = per_level[levels[0]]
        findings.append(Finding(op, dtype, kind, levels, detail, tuple(first[:MAX_EXAMPLES])))
    return PairReport(op, dtype, tuple(sorted(origins)), findings, {}, 0)


def f16_then_cast(op_type: str, attributes=(), origins=()):
    """X(float16) then Cast to float32, against X alone then NumPy's float16 -> float32."""
    attributes = dict(attributes)
    binary = op_type in FLOAT_BINARY
    if binary:
        a, b = grid(binary_values("float16"), binary_values("float16"))
        keep = in_domain(op_type, [a, b])
        feeds = [a[keep], b[keep]]
    else:
        feeds = [unary_values("float16")]
    names = [f"x{i}" for i in range(len(feeds))]
    single = _model([helper.make_node(op_type, names, ["y"], **attributes)], [(n, "float16") for n in names], "float16")
    chain = _model(
        [helper.make_node(op_type, names, ["t"], **attributes), helper.make_node("Cast", ["t"], ["y"], to=tensor_type("float32"))],
        [(n, "float16") for n in names], "float32",
    )
    per_level = {}
    for level in LEVELS:
        try:
            alone = _run(single, level, feeds).astype(np.float32)
            got = _run(chain, level, feeds)
        except ORT_ERRORS as exc:
            per_level[level] = [f"fails: {first_line(exc)}"]
            continue
        bad = np.flatnonzero(~same(got, alone))
        per_level[level] = [
            f"Cast({op_type}({', '.join(fmt(f[i]) for f in feeds)}), float32) = {fmt(got[i])}, "
            f"{op_type} alone {fmt(alone[i].astype(np.float16))}" for i in bad
        ]
    return _report(f"{op_label(op_type, attributes.items())}{ARROW}Cast", "float16", origins, per_level, "fused-precision",
                   "the float16 result is not rounded to float16 before the Cast to float32")


def cast_round_trip(a: str, b: str, origins=()):
    """Cast(Cast(x, b), a) against the two Casts run one at a time."""
    x = unary_values(a)
    undefined = cast(x, b).undefined
    if undefined is not None:
        x = x[~undefined]
    first = _model([helper.make_node("Cast", ["x"], ["y"], to=tensor_type(b))], [("x", a)], b)
    second = _model([helper.make_node("Cast", ["x"], ["y"], to=tensor_type(a))], [("x", b)], a)
    chain = _model(
        [helper.make_node("Cast", ["x"], ["t"], to=tensor_type(b)), helper.make_node("Cast", ["t"], ["y"], to=tensor_type(a))],
        [("x", a)], a,
    )
    per_level = {}
    for level in LEVELS:
        mid = _run(first, level, [x])
        alone = _run(second, level, [mid])
        got = _run(chain, level, [x])
        bad = np.flatnonzero(~same(np.asarray(got), np.asarray(alone)))
        per_level[level] = [f"Cast(Cast({fmt(x[i])}, {b}), {a}) = {fmt(got[i])}, one at a time {fmt(alone[i])}" for i in bad]
    return _report(f"Cast{ARROW}Cast", f"{a}->{b}->{a}", origins, per_level, "fused-precision",
                   f"the round trip does not keep the conversion to {b}")


def transpose_matmul(dtype: str, vector: bool, origins=()):
    """MatMul with a transposed 2-D operand (a Transpose node) against MatMul on the transposed data;
    with `vector`, the other operand is 1-D (both orders), else 2-D."""
    label = f"Transpose{ARROW}MatMul" + ("(1-D x)" if vector else "")
    per_level: dict[str, list[str]] = {}
    for side in (0, 1):
        ranks = [2, 2]
        ranks[1 - side] = 1 if vector else 2
        single = _model([helper.make_node("MatMul", ["p", "q"], ["y"])], [("p", dtype), ("q", dtype)], dtype, ranks)
        names = ["p", "q"]
        names[side] = "t"
        chain = _model(
            [helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0]), helper.make_node("MatMul", names, ["y"])],
            [("s", dtype), ("q", dtype)] if side == 0 else [("p", dtype), ("s", dtype)], dtype, ranks,
        )
        what = "MatMul(Transpose(A), x)" if side == 0 else "MatMul(x, Transpose(A))"
        plain = [np.arange(1, 7, dtype=dtype).reshape(3, 2), np.arange(1, 3, dtype=dtype)]  # 3x2 @ 2
        if ranks == [1, 2]:
            plain = [plain[1], np.ascontiguousarray(plain[0].T)]
        elif ranks == [2, 2]:
            plain[1] = np.arange(1, 7, dtype=dtype).reshape(2, 3)
        for feeds in [plain, *matmul_batches(dtype, ranks)[:4]]:
            stored = list(feeds)
            stored[side] = np.ascontiguousarray(feeds[side].T)
            for level in LEVELS:
                alone = _run(single, level, feeds)
                try:
                    got = _run(chain, level, stored)
                except ORT_ERRORS as exc:
                    per_level.setdefault(level, []).append(f"{what}: fails: {first_line(exc)}")
                    continue
                if np.shape(got) != np.shape(alone):
                    per_level.setdefault(level, []).append(f"{what}: shape {np.shape(got)}, expected {np.shape(alone)}")
                    continue
                cmp = classify(np.asarray(got), Ref(np.asarray(alone)), dtype, APPROX)
                for kind, mask in cmp.kinds.items():
                    i = np.flatnonzero(mask)[0]
                    per_level.setdefault(level, []).append(
                        f"{what} ranks {tuple(ranks)}: element {tuple(int(k) for k in np.unravel_index(i, np.shape(got)))} = "
                        f"{fmt(np.ravel(got)[i])}, MatMul alone {fmt(np.ravel(alone)[i])} ({kind})"
                    )
    return _report(label, dtype, origins, per_level, "fusion", "wrong numbers once onnxruntime fuses the Transpose into MatMul")


ADD_ZERO = f"Neg{ARROW}Add(+0.0){ARROW}Neg"


def add_positive_zero(dtype: str, origins=()):
    """Neg(Add(Neg(x), +0.0)) against NumPy: -0.0 + 0.0 is +0.0 (the optimiser only drops an
    Add whose other input a node computes, so x goes through a Neg first)."""
    x = unary_values(dtype)
    chain = make_model(
        [helper.make_node("Neg", ["x"], ["u"]), helper.make_node("Add", ["u", "zero"], ["t"]), helper.make_node("Neg", ["t"], ["y"])],
        [("x", dtype, 1)], [("y", dtype)], [("zero", np.zeros((), dtype))],
    )
    with np.errstate(all="ignore"):
        expected = -(-x + np.zeros((), dtype))
    per_level = {}
    for level in LEVELS:
        got = _run(chain, level, [x])
        bad = np.flatnonzero(~same(got, expected))
        per_level[level] = [f"Neg(Add(Neg({fmt(x[i])}), 0.0)) = {fmt(got[i])}, NumPy {fmt(expected[i])}" for i in bad]
    return _report(ADD_ZERO, dtype, origins, per_level, "signed-zero",
                   "the optimiser drops `x + 0.0` as a no-op, so -0.0 stays -0.0")


def derived_chains(pairs: dict[tuple[str, str], Pair]) -> dict[tuple[str, str], tuple]:
    """(label, dtype) -> (builder, args) for each chain the emitted pairs make possible."""
    out = {}
    casts = {tuple(p.dtype.split("->")) for p in pairs.values() if p.op_type == "Cast"}
    if ("float16", "float32") in casts:
        for p in pairs.values():
            if p.dtype == "float16" and p.out_dtypes == ("float16",) and p.op_type in FLOAT_UNARY | FLOAT_BINARY:
                out[(f"{p.op}{ARROW}Cast", "float16")] = (f16_then_cast, (p.op_type, p.attributes))
    for a, b in sorted(casts):
        if a != b and (b, a) in casts:
            out[(f"Cast{ARROW}Cast", f"{a}->{b}->{a}")] = (cast_round_trip, (a, b))
    for p in pairs.values():
        if p.op_type == "Add" and p.dtype in ("float32", "float64"):
            out[(ADD_ZERO, p.dtype)] = (add_positive_zero, (p.dtype,))
    transposes = {p.dtype for p in pairs.values() if p.op_type == "Transpose"}
    for p in pairs.values():
        if p.op_type == "MatMul" and p.dtype in transposes:
            ranks = tuple(len(s or ()) for s in p.in_shapes)
            if 2 in ranks:
                vector = 1 in ranks
                out[(f"Transpose{ARROW}MatMul" + ("(1-D x)" if vector else ""), p.dtype)] = (transpose_matmul, (p.dtype, vector))
    return out


def recorded_chain(op: str, dtype: str) -> tuple:
    """(builder, args) for a recorded chain label."""
    first = op.split(ARROW)[0]
    op_type, _, rest = first.partition("(")
    attributes = [(k, int(v)) for k, v in (item.split("=") for item in filter(None, rest.rstrip(")").split(", ")))]
    if op.startswith(f"Cast{ARROW}Cast"):
        a, b, _ = dtype.split("->")
        return cast_round_trip, (a, b)
    if op.startswith(f"Transpose{ARROW}MatMul"):
        return transpose_matmul, (dtype, "(1-D x)" in op)
    if op == ADD_ZERO:
        return add_positive_zero, (dtype,)
    return f16_then_cast, (op_type, tuple(attributes))


def probe_chains(pairs: dict[tuple[str, str], Pair], recorded) -> list:
    chains = {k: (fn, args, {"(emitted)"}) for k, (fn, args) in derived_chains(pairs).items()}
    for q in recorded:
        if is_chain(q.op) and (q.op, q.dtype) not in chains:
            fn, args = recorded_chain(q.op, q.dtype)
            chains[(q.op, q.dtype)] = (fn, args, {"(recorded quirk)"})
    return [fn(*args, origins=origins) for _, (fn, args, origins) in sorted(chains.items())]
