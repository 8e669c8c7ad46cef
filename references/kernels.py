"""The kernel audit: every (ONNX op, dtype) ptonnx emits, probed in the installed
onnxruntime with edge values, against NumPy/SciPy.

`run_audit()` enumerates the pairs from the compiler (`references.emitted`), adds the
pairs of recorded quirks and of `RUNTIME_WIDENING` (lowering may no longer emit
them because it works around them: they are re-probed so the record stays
true), probes each one as a one-node model at both `LEVELS`, then the
two-node patterns of `references.chains`. `differences(audit)` says how the result
departs from `ptonnx.onnxruntime_kernels.KERNEL_QUIRKS`.
"""

from __future__ import annotations

import time

import attrs
import numpy as np
import onnx
import onnxruntime as ort
import scipy
from onnx import helper

from references import chains
from references.emitted import DTYPE_INPUT, Pair, emitted_pairs, pair_from_label
from references.probe import (
    LEVELS,
    ORT_ERRORS,
    Finding,
    check,
    classify,
    first_line,
    fmt,
    make_model,
    session,
)
from references.reference import (
    APPROX,
    BINARY_OPS,
    EXACT,
    ULP_THRESHOLD,
    UNARY_OPS,
    Ref,
    accuracy_class,
    binary,
    cast,
    in_domain,
    matmul,
    softmax,
    unary,
    where,
)
from references.values import (
    binary_values,
    distinct,
    float_sweep,
    grid,
    pow_sweep,
    unary_values,
)
from ptonnx import onnxruntime_kernels

#: dtypes to try, in order, when onnxruntime has no kernel for one
WIDER = {
    "bool": ("uint8", "int32"), "int8": ("int16", "int32", "int64"), "uint8": ("uint16", "int32", "int64"),
    "int16": ("int32", "int64"), "uint16": ("uint32", "int32", "int64"), "int32": ("int64",),
    "uint32": ("uint64", "int64"), "uint64": ("int64",), "float16": ("float32", "float64"), "float32": ("float64",),
}
MAX_EXAMPLES = 3


@attrs.define
class PairReport:
    op: str
    dtype: str
    origins: tuple[str, ...]
    findings: list[Finding]
    #: largest ulp distance seen on finite results, per level (floats only)
    max_ulp: dict[str, float]
    n_values: int


@attrs.define
class Audit:
    versions: dict[str, str]
    pairs: list[PairReport]
    not_enumerated: list[tuple[str, str]]
    refused: list[tuple[str, str, str]]
    seconds: float = 0.0

    @property
    def findings(self) -> list[Finding]:
        return [f for p in self.pairs for f in p.findings]


def _data_indices(pair: Pair) -> list[int]:
    consts = dict(pair.consts)
    return [i for i in range(len(pair.in_dtypes)) if i not in consts]


def node_model(pair: Pair, in_dtypes=None, out_dtypes=None) -> onnx.ModelProto:
    """The pair as a one-node model: data inputs are graph inputs, the others initializers."""
    in_dtypes = in_dtypes or pair.in_dtypes
    out_dtypes = out_dtypes or pair.out_dtypes
    consts = dict(pair.consts)
    names = [f"c{i}" if i in consts else f"x{i}" for i in range(len(in_dtypes))]
    ranks = [np.ndim(f) for f in batches(pair)[0]]
    inputs = [(names[i], in_dtypes[i], rank) for i, rank in zip(_data_indices(pair), ranks, strict=True)]
    attributes = {k: list(v) if isinstance(v, tuple) else v for k, v in pair.attributes}
    outs = [f"y{j}" for j in range(len(out_dtypes))]
    node = helper.make_node(pair.op_type, names, outs, **attributes)
    return make_model([node], inputs, list(zip(outs, out_dtypes, strict=True)), [(f"c{i}", a) for i, a in consts.items()])


def _shaped_batches(pair: Pair, data: list[int]) -> list[list[np.ndarray]]:
    """Cycle each input's edge values through its recorded shape, in as many runs as it takes."""
    shapes = [tuple(2 if d is None else d for d in (pair.in_shapes[i] or (4,))) for i in data]
    pools = [unary_values(pair.in_dtypes[i]) for i in data]
    sizes = [max(int(np.prod(s)), 1) for s in shapes]
    runs = max(-(-len(p) // s) for p, s in zip(pools, sizes, strict=True))
    return [
        [p[(k * s + np.arange(s) + j) % len(p)].reshape(shape) for j, (p, s, shape) in enumerate(zip(pools, sizes, shapes, strict=True))]
        for k in range(runs)
    ]


def batches(pair: Pair) -> list[list[np.ndarray]]:
    """The probe inputs: runs of arrays for the data inputs."""
    data = _data_indices(pair)
    dtypes = [pair.in_dtypes[i] for i in data]
    t = pair.op_type
    if t == "Where" and len(data) == 3:
        x = unary_values(dtypes[1])
        even = np.arange(len(x)) % 2 == 0  # and its complement: every value is taken from each side
        return [[even, x, x[::-1].copy()], [~even, x, x[::-1].copy()]]
    if t in BINARY_OPS and len(data) == 2:
        a, b = grid(binary_values(dtypes[0]), binary_values(dtypes[1]))
        if accuracy_class(t) == APPROX and np.dtype(dtypes[0]).kind == "f":
            swept = pow_sweep(dtypes[0])
            a, b = np.concatenate([a, swept[0]]), np.concatenate([b, swept[1]])
        keep = in_domain(t, [a, b])
        return [[a[keep], b[keep]]]
    if (t in UNARY_OPS or t == "Cast") and len(data) == 1:
        x = unary_values(dtypes[0])
        if t in UNARY_OPS and x.dtype.kind == "f":
            x = distinct(np.concatenate([x, float_sweep(x.dtype)]))
        return [[x]]
    if t == "Softmax" and len(data) == 1:
        v = unary_values(dtypes[0])
        return [[np.stack([v, np.zeros_like(v), np.ones_like(v)], axis=1)]]
    if t == "MatMul" and len(data) == 2:
        return chains.matmul_batches(dtypes[0], [len(pair.in_shapes[i] or (0, 0)) for i in data])
    return _shaped_batches(pair, data)


def reference(pair: Pair, model: onnx.ModelProto, feeds: list[np.ndarray], out_dtypes) -> list[Ref]:
    t, attributes = pair.op_type, dict(pair.attributes)
    if t == "Cast":
        return [cast(feeds[0], out_dtypes[0])]
    if t == "Where" and len(feeds) == 3:
        return [where(*feeds)]
    if t in BINARY_OPS and len(feeds) == 2:
        return [binary(t, attributes, *feeds)]
    if t in UNARY_OPS and len(feeds) == 1:
        return [unary(t, attributes, feeds[0])]
    if t == "Softmax":
        return [softmax(feeds[0], attributes.get("axis", -1))]
    if t == "MatMul":
        return [matmul(*feeds)]
    from onnx.reference import ReferenceEvaluator

    names = [i.name for i in model.graph.input]
    return [Ref(np.asarray(v)) for v in ReferenceEvaluator(model).run(None, dict(zip(names, feeds, strict=True)))]


def explain(pair: Pair, feeds: list[np.ndarray], out_index: int, flat: int, got, expected) -> str:
    """One biting input: the call, onnxruntime's result and NumPy's."""
    shape = np.shape(got)
    elementwise = all(np.shape(f) == shape for f in feeds) and pair.op_type != "Softmax"
    if elementwise:
        args = ", ".join(fmt(f.ravel()[flat]) for f in feeds)
        call = f"{pair.op_type}({args})"
    else:
        call = f"{pair.op_type}(...)[{', '.join(map(str, np.unravel_index(flat, shape)))}]"
        if pair.op_type == "Softmax":
            call = f"Softmax(row {fmt(feeds[0][np.unravel_index(flat, shape)[0]])})"
    out = f" output {out_index}" if len(pair.out_dtypes) > 1 else ""
    return f"{call}{out} = {fmt(np.ravel(got)[flat])}, NumPy {fmt(np.ravel(expected)[flat])}"


def run_pair(pair: Pair, level: str, in_dtypes=None, out_dtypes=None):
    """{kind: (detail, examples)} for one level, or raise if no session can be made."""
    in_dtypes = in_dtypes or pair.in_dtypes
    out_dtypes = out_dtypes or pair.out_dtypes
    model = node_model(pair, in_dtypes, out_dtypes)
    sess = session(model, level)
    names = [i.name for i in model.graph.input]
    accuracy = accuracy_class(pair.op_type)
    zero_sign = pair.op_type not in ("Max", "Min")  # NumPy's own sign of an equal zero depends on the order
    found: dict[str, tuple[str, list[str]]] = {}
    worst: dict[str, float] = {}
    max_ulp = 0.0
    data_dtypes = [in_dtypes[i] for i in _data_indices(pair)]
    for feeds in batches(pair):
        with np.errstate(all="ignore"):
            run_feeds = [f.astype(d) for f, d in zip(feeds, data_dtypes, strict=True)]
        try:
            results = sess.run(None, dict(zip(names, run_feeds, strict=True)))
        except ORT_ERRORS as exc:  # a kernel that fails at run time
            found.setdefault("error", (f"run fails: {first_line(exc)}", []))
            continue
        refs = reference(pair, model, feeds, pair.out_dtypes)
        for j, (got, ref) in enumerate(zip(results, refs, strict=True)):
            with np.errstate(all="ignore"):
                got = np.asarray(got).astype(pair.out_dtypes[j])
            cmp = classify(got, ref, pair.out_dtypes[j], accuracy, zero_sign)
            max_ulp = max(max_ulp, cmp.max_ulp or 0.0)
            for kind, mask in cmp.kinds.items():
                idx = np.flatnonzero(mask)
                if kind == "inaccurate" and cmp.max_ulp is not None:
                    idx = idx[np.argsort(-cmp.ulps.ravel()[idx], kind="stable")]
                    worst[kind] = max(worst.get(kind, 0.0), float(cmp.ulps.ravel()[idx[0]]))
                detail, examples = found.get(kind, ("", []))
                examples = examples + [explain(pair, feeds, j, k, got, cmp.expected) for k in idx[: MAX_EXAMPLES - len(examples)]]
                found[kind] = (detail, examples)
    for kind, ulp in worst.items():
        bound = 0 if accuracy == EXACT else ULP_THRESHOLD
        found[kind] = (f"up to {ulp:.0f} ulp (bound {bound})", found[kind][1])
    return found, max_ulp


def find_wider(pair: Pair) -> str | None:
    """The first wider dtype in which the op gives NumPy's numbers on the probe values."""
    positions = _same_type_positions(pair)
    for wide in WIDER.get(pair.dtype, ()):
        in_dtypes = tuple(wide if i in positions[0] else d for i, d in enumerate(pair.in_dtypes))
        out_dtypes = tuple(wide if j in positions[1] else d for j, d in enumerate(pair.out_dtypes))
        try:
            found, _ = run_pair(pair, LEVELS[0], in_dtypes, out_dtypes)
        except ORT_ERRORS:
            continue
        if not found:
            return wide
    return None


def _same_type_positions(pair: Pair) -> tuple[set[int], set[int]]:
    """Inputs and outputs typed like the one that names the pair's dtype."""
    schema = onnx.defs.get_schema(pair.op_type, 18)
    formals = [f.type_str for f in schema.inputs]
    key = formals[min(DTYPE_INPUT.get(pair.op_type, 0), len(formals) - 1)]
    ins = {i for i in range(len(pair.in_dtypes)) if formals[min(i, len(formals) - 1)] == key}
    outs = {j for j, o in enumerate(schema.outputs[: len(pair.out_dtypes)]) if o.type_str == key}
    return ins, outs


def probe_pair(pair: Pair, origins=()) -> PairReport:
    report = PairReport(pair.op, pair.dtype, tuple(sorted(origins)), [], {}, sum(len(b[0].ravel()) for b in batches(pair)))
    invalid = check(node_model(pair))
    if invalid:
        report.findings.append(Finding(pair.op, pair.dtype, "invalid-onnx", LEVELS, f"not valid opset-18 ONNX: {invalid}"))
        return report
    per_kind: dict[str, list] = {}
    for level in LEVELS:
        try:
            found, report.max_ulp[level] = run_pair(pair, level)
        except ORT_ERRORS as exc:  # no session: no kernel for these dtypes
            found = {"no kernel": (first_line(exc), [])}
        for kind, (detail, examples) in found.items():
            per_kind.setdefault(kind, [detail, examples, []])[2].append(level)
    for kind, (detail, examples, levels) in per_kind.items():
        wider = find_wider(pair) if kind == "no kernel" else None
        if kind == "no kernel":
            detail = f"no session: {detail}" + (f"; {wider} computes it exactly" if wider else "; no wider dtype computes it")
        report.findings.append(Finding(pair.op, pair.dtype, kind, tuple(levels), detail, tuple(examples), wider))
    return report


def probe_set(recorded=None) -> tuple[dict[tuple[str, str], Pair], dict, list, list]:
    """(pairs to probe, origins, refused, not enumerated): what ptonnx emits, plus recorded pairs."""
    recorded = onnxruntime_kernels.KERNEL_QUIRKS if recorded is None else recorded
    found = emitted_pairs(UNARY_OPS | BINARY_OPS | {"Where", "Cast"})
    pairs = dict(found.pairs)
    origins = {k: set(v) for k, v in found.origins.items()}
    extra = [(q.op, q.dtype, "recorded quirk") for q in recorded if not chains.is_chain(q.op)]
    extra += [(op, dtype, "RUNTIME_WIDENING") for op, dtype in onnxruntime_kernels.RUNTIME_WIDENING]
    extra += [(op, dtype.split("/")[0], "refused by lowering") for op, dtype, _ in found.refused if onnx.defs.has(op)]
    for op, dtype, why in extra:
        if (op, dtype) not in pairs:
            pairs[(op, dtype)] = pair_from_label(op, dtype)
        origins.setdefault((op, dtype), set()).add(f"({why})")
    return pairs, origins, found.refused, found.not_enumerated


def run_audit(recorded=None) -> Audit:
    start = time.perf_counter()
    recorded = onnxruntime_kernels.KERNEL_QUIRKS if recorded is None else recorded
    pairs, origins, refused, not_enumerated = probe_set(recorded)
    reports = [probe_pair(pairs[k], origins.get(k, ())) for k in sorted(pairs)]
    reports += chains.probe_chains(pairs, recorded)
    versions = {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "numpy": np.__version__, "scipy": scipy.__version__}
    return Audit(versions, reports, not_enumerated, refused, time.perf_counter() - start)


def differences(audit: Audit, recorded=None) -> list[str]:
    """How the probed quirks depart from the recorded ones, one line per (op, dtype, kind)."""
    recorded = onnxruntime_kernels.KERNEL_QUIRKS if recorded is None else recorded
    probed = {f.key: f for f in audit.findings}
    expected = {q.key: q for q in recorded}
    lines = []
    for key in sorted(probed.keys() - expected.keys()):
        f = probed[key]
        lines.append(f"new quirk: {f.op} {f.dtype} {f.kind} at {'/'.join(f.levels)}: {f.detail} {'; '.join(f.inputs)}")
    for key in sorted(expected.keys() - probed.keys()):
        q = expected[key]
        if q.varies:  # not on this machine's CPU
            continue
        lines.append(f"gone: {q.op} {q.dtype} {q.kind} ({q.description}); handled by {q.handled_by}")
    for key in sorted(expected.keys() & probed.keys()):
        if tuple(expected[key].levels) != probed[key].levels:
            lines.append(f"levels changed: {' '.join(key)} recorded at {expected[key].levels}, now {probed[key].levels}")
        if expected[key].kind == "no kernel" and expected[key].wider != probed[key].wider:
            lines.append(f"wider dtype changed: {' '.join(key)} recorded {expected[key].wider}, now {probed[key].wider}")
    return lines
