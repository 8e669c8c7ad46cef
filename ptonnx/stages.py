"""The stages of a compilation, declared once: lift -> decompose -> passes -> legalise -> lower -> check.

Each stage names the conditions it requires of the IR and those it ensures
(`ptonnx.contracts`, in the spirit of onnx-ir's pass contracts). `run` checks what a stage
requires before running it, so a pass list that leaves the graph unfit for a later stage
(`passes=[]` on mixed dtypes, a pass that makes an op needing decomposition) is refused
there, naming the stage, the node and what to do: never computed in another dtype. With
`verify_each`, what a stage ensures is checked after it too.

`ptonnx.compile`, the tests' lowering harness and `references/emitted.py` all compile through
`run`: the order is written here and nowhere else.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import onnx

from ptonnx.contracts import DECOMPOSED, LEGALISED, UNIFIED, VERIFIED, Condition
from ptonnx.lowering.lower import LOWERING_REQUIRES
from ptonnx.errors import LoweringError, StageError
from ptonnx.ir import Graph, format_node
from ptonnx.ir.printer import describe_source
from ptonnx.model_files import TempCopy, needs_external_data
from ptonnx.passes import PassManager, Report
from ptonnx.passes.cse import CommonSubexpressionElimination
from ptonnx.passes.decompose import decompose
from ptonnx.passes.legalise import legalise
from ptonnx.passes.manager import run_nested


@attrs.define
class Compilation:
    """What the stages read and write: the PyTensor graph, the IR, the model, the report."""

    passes: PassManager
    fgraph: Any = None
    graph: Graph | None = None
    name: str = "ptonnx"
    float64_via_float32: bool = False
    #: the model's output names (lifting gives the PyTensor variables'; None: the IR's)
    output_names: list | None = None
    report: Report = attrs.field(factory=Report)
    model: onnx.ModelProto | None = None
    #: large tensors kept out of the model (`ptonnx.model_files`): name -> array
    weights: dict = attrs.field(factory=dict)
    copy: TempCopy | None = None


@attrs.frozen
class Stage:
    name: str
    run: Callable[[Compilation], None]
    requires: tuple[Condition, ...] = ()
    ensures: tuple[Condition, ...] = ()
    #: the stage's own code refuses a node that breaks `requires` (lowering's `check_lowerable`,
    #: by the same conditions), so `run` does not check them a second time
    checks_itself: bool = False


def _lift(c: Compilation) -> None:
    from ptonnx.lifting import lift
    from ptonnx.lifting.lift import output_names

    c.graph = lift(c.fgraph, c.name)
    c.output_names = output_names(c.fgraph)


def _decompose(c: Compilation) -> None:
    if any(isinstance(p, CommonSubexpressionElimination) for p in c.passes.passes):
        # merge repeats of the lifted ops first: two norms of one matrix run one SVD, not two
        run_nested(CommonSubexpressionElimination(), c.graph)
    c.report.decomposed = dict(decompose(c.graph))


def _passes(c: Compilation) -> None:
    c.passes.run(c.graph, c.report)


def _legalise(c: Compilation) -> None:
    c.report.legalised = dict(legalise(c.graph, float64_via_float32=c.float64_via_float32))


def _lower(c: Compilation) -> None:
    from ptonnx.lowering import lower

    c.model = lower(c.graph, name=c.name, output_names=c.output_names, weights=c.weights)


def _check(c: Compilation) -> None:
    c.copy = TempCopy(c.model, c.weights)
    try:
        # onnx's checker serialises a model it is given; one over 2 GiB it must read from a file
        onnx.checker.check_model(c.copy.path() if needs_external_data(c.model) else c.model, full_check=True)
    except Exception as exc:  # onnx raises several kinds; none may escape as a valid model
        raise LoweringError(f"the emitted model fails the ONNX checker (a ptonnx bug; please report it): {exc}") from exc


#: the stages in their one order
STAGES: tuple[Stage, ...] = (
    Stage("lift", _lift, ensures=(VERIFIED,)),
    Stage("decompose", _decompose, ensures=(VERIFIED, DECOMPOSED)),
    Stage("passes", _passes, requires=(DECOMPOSED,), ensures=(VERIFIED,)),
    # the IR is verified once, where the user's passes end (`verify_each` checks after every stage)
    Stage("legalise", _legalise, requires=(VERIFIED, DECOMPOSED, UNIFIED), ensures=(VERIFIED, LEGALISED)),
    Stage("lower", _lower, requires=LOWERING_REQUIRES, checks_itself=True),
    Stage("check", _check),
)
NAMES = tuple(s.name for s in STAGES)


def run(c: Compilation, start: str = "lift", stop: str = "check", *, verify_each: bool = False) -> Compilation:
    """Run the stages from `start` to `stop` (inclusive) on `c`, each timed into `c.report.stages`."""
    first, last = _index(start), _index(stop)
    for stage in STAGES[first:last + 1]:
        if not stage.checks_itself:
            require(stage, c, stage.requires, "requires")
        began = time.perf_counter()
        stage.run(c)
        c.report.stages[stage.name] = time.perf_counter() - began
        if verify_each:
            require(stage, c, stage.ensures, "ensures")
    return c


def require(stage: Stage, c: Compilation, conditions: Sequence[Condition], kind: str) -> None:
    """Raise `StageError` at the first node (bodies too) that breaks one of `conditions`."""
    if c.graph is None:
        return
    for condition in conditions:
        for node, why in condition.faults(c.graph):
            ran = ", ".join(r.name for r in c.report.records) or "none"
            when = "before it" if kind == "requires" else "after it"
            where = "the graph does not" if node is None else f"this node does not:\n{format_node(node)}{describe_source(node)}"
            raise StageError(
                f"stage {stage.name!r} {kind} {condition.what} ({condition.name}), but {when} (passes run: {ran}) "
                f"{where}\n  {why}.\n  To fix: {condition.remedy}."
            )


def _index(name: str) -> int:
    if name not in NAMES:
        raise ValueError(f"unknown stage {name!r}; the stages are {', '.join(NAMES)}")
    return NAMES.index(name)


def compile_graph(graph: Graph, passes=("unify_dtypes",), *, stop: str = "lower", **options) -> Compilation:
    """A hand-built IR graph (edited in place) through the stages after lifting, as `ptonnx.compile`
    runs them on a lifted graph (`passes` as its `passes`)."""
    c = Compilation(PassManager(list(passes)), graph=graph, name=options.pop("name", graph.name), **options)
    return run(c, "decompose", stop)
