"""`PassManager`: run passes in order, time them, count nodes, verify, report."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import attrs

from ptonnx.errors import PassError, VerificationError
from ptonnx.ir import Graph, verify
from ptonnx.ir.core import nested_graphs
from ptonnx.passes.base import Pass, PassResult
from ptonnx.passes.constant_folding import ConstantFolding
from ptonnx.passes.cse import CommonSubexpressionElimination
from ptonnx.passes.dce import DeadCodeElimination
from ptonnx.passes.fuse_conv_bn_silu import FuseConvBnSilu
from ptonnx.passes.hoist_loop_invariants import HoistLoopInvariants
from ptonnx.passes.layout import Layout
from ptonnx.passes.range_facts import RangeFacts
from ptonnx.passes.simplify import Simplify
from ptonnx.passes.unify_dtypes import UnifyDtypes
from ptonnx.passes.vectorise_loops import VectoriseLoops

#: pass name -> factory; `resolve` turns names into pass objects
PASSES: dict[str, type] = {
    "constant_folding": ConstantFolding,
    "fuse_conv_bn_silu": FuseConvBnSilu,
    "unify_dtypes": UnifyDtypes,
    "dce": DeadCodeElimination,
    "cse": CommonSubexpressionElimination,
    "range_facts": RangeFacts,
    "simplify": Simplify,
    "hoist_loop_invariants": HoistLoopInvariants,
    "layout": Layout,
    "vectorise_loops": VectoriseLoops,
}

DEFAULT_PASSES: tuple[str, ...] = ("constant_folding", "fuse_conv_bn_silu", "unify_dtypes", "range_facts", "layout", "simplify", "cse", "hoist_loop_invariants", "vectorise_loops", "dce")


#: names that are stages or options, not passes: what to do instead
STAGES = {
    "float64_via_float32": "float64_via_float32 is an option of the legalise stage, not a pass: "
                           "ptonnx.compile(..., float64_via_float32=True)",
    "decompose": "decompose is a stage ptonnx.compile always runs before the passes (ptonnx.stages.STAGES), not a pass to list",
    "legalise": "legalise is a stage ptonnx.compile always runs after the passes (ptonnx.stages.STAGES), not a pass to list",
}


def resolve(spec) -> Pass:
    """A pass object from a name, a pass object, or a pass class that takes no arguments."""
    if isinstance(spec, str):
        if spec in STAGES:
            raise PassError(STAGES[spec])
        try:
            return PASSES[spec]()
        except KeyError:
            raise PassError(f"unknown pass {spec!r}; known passes: {', '.join(PASSES)}") from None
    if isinstance(spec, type):
        try:
            instance = spec()
        except TypeError as exc:
            raise PassError(
                f"pass class {spec.__name__} cannot be made without arguments ({exc}); "
                f"pass an instance, e.g. passes=[{spec.__name__}(...)]"
            ) from None
        if _is_pass(instance):
            return instance
    elif _is_pass(spec):
        return spec
    raise PassError(
        f"{spec!r} (a {type(spec).__name__}) is not a pass: passes takes pass names "
        f"({', '.join(PASSES)}), pass objects with a `name` and a `run(graph)` method, or their classes"
    )


def resolve_all(passes) -> list[Pass]:
    """`passes` as a list of pass objects: None means DEFAULT_PASSES; one name or pass stands for a list of one."""
    if passes is None:
        passes = DEFAULT_PASSES
    elif isinstance(passes, str | type) or _is_pass(passes):
        passes = [passes]
    elif not isinstance(passes, Iterable) or isinstance(passes, Mapping):
        raise PassError(f"passes={passes!r} is not a list of pass names or pass objects (e.g. passes=['unify_dtypes', 'dce'])")
    return [resolve(p) for p in passes]


def _is_pass(obj) -> bool:
    return not isinstance(obj, type) and isinstance(getattr(obj, "name", None), str) and callable(getattr(obj, "run", None))


@attrs.frozen
class PassRecord:
    name: str
    seconds: float
    nodes_before: int
    nodes_after: int
    modified: bool
    rewrites: int
    details: dict


@attrs.define
class Report:
    records: list[PassRecord] = attrs.field(factory=list)
    #: stage name -> seconds, filled in by `ptonnx.compile` (lift, passes, lower, ...)
    stages: dict[str, float] = attrs.field(factory=dict)
    #: IR op -> how many of its nodes `decompose` rewrote (the functions the lifted graph computes)
    decomposed: dict[str, int] = attrs.field(factory=dict)
    #: "op:dtype->compute dtype" -> how many nodes `legalise` rebuilt in a dtype the runtime computes
    legalised: dict[str, int] = attrs.field(factory=dict)

    def __getitem__(self, name: str) -> PassRecord:
        for r in self.records:
            if r.name == name:
                return r
        raise KeyError(name)

    def __str__(self) -> str:
        rows = [("pass", "ms", "nodes before", "nodes after", "rewrites", "details")]
        for r in self.records:
            details = ", ".join(f"{k}={v}" for k, v in r.details.items())
            rows.append((r.name, f"{r.seconds * 1e3:.2f}", str(r.nodes_before), str(r.nodes_after), str(r.rewrites), details))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        if self.decomposed:
            lines.append("decomposed: " + ", ".join(f"{op} x{n}" for op, n in sorted(self.decomposed.items())))
        if self.legalised:
            lines.append("legalised: " + ", ".join(f"{k} x{n}" for k, n in sorted(self.legalised.items())))
        if self.stages:
            lines.append("stages: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in self.stages.items()))
        return "\n".join(lines)


class PassManager:
    """Runs `passes` (names or objects) in order; with `verify_each`, checks the IR after each."""

    def __init__(self, passes: Iterable | None = None, *, verify_each: bool = False):
        self.passes: list[Pass] = resolve_all(passes)
        self.verify_each = verify_each

    def run(self, graph: Graph, report: Report | None = None) -> Report:
        report = report if report is not None else Report()
        ran: list[str] = []
        interface = _interface(graph)
        for p in self.passes:
            before = len(graph)
            start = time.perf_counter()
            try:
                result = run_nested(p, graph)
            except Exception as exc:
                exc.add_note(f"while running pass {p.name!r} (after: {', '.join(ran) or 'none'})")
                raise
            seconds = time.perf_counter() - start
            ran.append(p.name)
            if not isinstance(result, PassResult):
                raise PassError(f"pass {p.name!r} returned {result!r}; `run(graph)` must return a ptonnx.passes.PassResult")
            report.records.append(
                PassRecord(p.name, seconds, before, len(graph), result.modified, result.rewrites, dict(result.details))
            )
            if _interface(graph) != interface:
                raise PassError(
                    f"pass {p.name!r} changed the graph's inputs or outputs (dtype, rank or count; passes run: "
                    f"{', '.join(ran)}): {interface} -> {_interface(graph)}"
                )
            if self.verify_each:
                try:
                    verify(graph)
                except VerificationError as exc:
                    raise PassError(f"pass {p.name!r} left an invalid graph (passes run: {', '.join(ran)}):\n{exc}") from exc
        return report


def run_nested(p: Pass, graph: Graph):
    """Run `p` on `graph`, then on every body its nodes own (a pass sees one graph at a
    time); the results add up. A body's interface is its node's contract: it must hold."""
    result = p.run(graph)
    if not isinstance(result, PassResult):
        return result
    details = dict(result.details)
    modified, rewrites = result.modified, result.rewrites
    for body in nested_graphs(graph):
        interface = _interface(body)
        inner = p.run(body)
        if _interface(body) != interface:
            raise PassError(f"pass {p.name!r} changed the inputs or outputs of the body graph {body.name!r}")
        modified, rewrites = modified or inner.modified, rewrites + inner.rewrites
        for key, n in inner.details.items():
            details[key] = details.get(key, 0) + n if isinstance(n, int) else n
    return PassResult(modified, rewrites, details)


def _interface(graph: Graph) -> tuple:
    """What a pass may not change: the dtype and rank of each input and output."""
    return tuple((v.dtype, v.type.ndim) for v in graph.inputs), tuple((v.dtype, v.type.ndim) for v in graph.outputs)
