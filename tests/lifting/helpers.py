"""What the per-module lifting tests share: lift a PyTensor graph to IR and check the IR with
`ir.interpret` against PyTensor's own (Python, unrewritten) evaluation of the same graph.

No onnxruntime here: these tests pin down what lifting builds. Each PyTensor function is
compiled once per graph (`check_lift` takes several input lists) with the Python linker and no
rewrites (`ptonnx.testing.reference_mode`); inner graphs PyTensor compiles at run time (an
OpFromGraph's, a Scan's) run in its Python VM, and PyTensor's C compiler is off meanwhile, so
nothing compiles, also on a fresh machine.

Where PyTensor's Python evaluation departs from its own C code or has a bug, the test checks the
IR against the right number instead, and docs/numerics.md ("Where PyTensor is wrong") lists the case
(tests/e2e/test_pytensor_departures.py checks the compiled model there). A case where the lifted IR
gives another number than PyTensor is a bug to fix, not a list entry.
"""

from __future__ import annotations

import contextlib
import importlib

import numpy as np
import pytensor
from pytensor.graph.fg import FunctionGraph

from ptonnx import ir
from ptonnx.errors import CheckFailedError
from ptonnx.ir.core import nested_graphs
from ptonnx.lifting import lift
from ptonnx.testing import assert_same, reference_mode
from tests.conftest import _outcome, rewritten_graph

REFERENCE = reference_mode()


def lazy_reference():
    """PyTensor's Python VM, lazy as its default linker (an IfElse runs only the branch it takes),
    with no rewrites and no C (`REFERENCE`'s Python linker runs both branches)."""
    from pytensor.compile.mode import Mode
    from pytensor.link.vm import VMLinker

    return Mode(linker=VMLinker(lazy=True, use_cloop=False, c_thunks=False), optimizer=None)


#: values at the ends of the float range, for elementwise inputs
F64_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 5e-324, -2.2e-308, 1e-300, 1e300, -1.7e308,
                      np.inf, -np.inf, np.nan])
F32_EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-45, -1.1e-38, 1e-30, 1e30, -3.4e38,
                      np.inf, -np.inf, np.nan], dtype=np.float32)


def ints_at_limits(dtype: str) -> np.ndarray:
    """0, +-1, small values and the dtype's ends."""
    info = np.iinfo(dtype)
    values = [0, 1, 2, 7, info.max, info.max - 1, info.min, info.min + 1]
    if info.min < 0:
        values += [-1, -2, -7]
    return np.array(values, dtype=dtype)


def lifted(inputs, outputs, *, rewritten: bool = False) -> ir.Graph:
    """The verified IR of the graph as written (`rewritten=False`: a FunctionGraph of clones, so
    the user's ops reach lifting) or as `mode="ONNX"` hands it over (PyTensor's rewrites)."""
    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    fgraph = rewritten_graph(inputs, outputs) if rewritten else FunctionGraph(inputs, outputs, clone=True)
    graph = lift(fgraph, "t")
    ir.verify(graph)
    return graph


def ops(graph: ir.Graph) -> list[str]:
    """The ops of the graph's own nodes, in order."""
    return [n.op for n in graph]


def all_ops(graph: ir.Graph) -> set[str]:
    """The ops of the graph and of every body it owns."""
    return {n.op for g in (graph, *nested_graphs(graph)) for n in g}


def _checks(graph: ir.Graph):
    return [n for g in (graph, *nested_graphs(graph)) for n in g if n.op == "Check"]


def _exception_class(name: str) -> type:
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def compare(graph: ir.Graph, fn, values, context: str = "", compare_with=assert_same) -> None:
    """`interpret(graph)` on `values` gives what `fn` (PyTensor) gives, or fails where it raises:
    a failed IR `Check` whose exception is PyTensor's class, or the same exception class."""
    values = list(values)
    expected, raised = _outcome(fn, values)
    actual, failed = _outcome(lambda *a: ir.interpret(graph, *a), values)
    where = f"{context} on {values!r}\n{graph}"
    if raised is None:
        assert failed is None, f"PyTensor returned {expected!r}; interpret raised {failed!r} {where}"
        assert len(actual) == len(expected), where
        for a, e in zip(actual, expected, strict=True):
            compare_with(a, e, where)
        return
    assert failed is not None, f"PyTensor raised {raised!r}; interpret returned {actual!r} {where}"
    if isinstance(failed, CheckFailedError):
        named = [_exception_class(n.attrs["exception"]) for n in _checks(graph) if n.attrs["message"] == str(failed)]
        assert named, f"no Check says {failed} {where}"
        assert any(isinstance(raised, cls) for cls in named), f"PyTensor raised {raised!r}; the Check names {named} {where}"
    else:
        assert isinstance(failed, type(raised)) or isinstance(raised, type(failed)), f"{failed!r} vs PyTensor's {raised!r} {where}"


def rewriting_reference():
    """`lazy_reference` with PyTensor's default rewrites (fast_run): still Python, no C or numba."""
    from pytensor.compile.mode import Mode
    from pytensor.link.vm import VMLinker

    return Mode(linker=VMLinker(lazy=True, use_cloop=False, c_thunks=False), optimizer="fast_run")


#: `check_lift`'s default `inner_mode`
PYTHON_INNER = "python"


def check_lift(inputs, outputs, *value_lists, rewritten: bool = False, compare_with=assert_same, mode=None,
               inner_mode=PYTHON_INNER) -> ir.Graph:
    """Lift the graph (as written, or rewritten), and compare `interpret` with PyTensor (evaluated in
    `mode`, by default `REFERENCE`) on each list of input arrays; returns the IR.

    `inner_mode`: what PyTensor compiles inner graphs it builds at run time in (an OpFromGraph's, a
    Scan's without a mode of its own): by default its Python VM (`lazy_reference`; the default mode
    compiles C or numba), or another mode (pytensor 3's Softmax gives other numbers with rewrites)."""
    mode = mode or REFERENCE
    if inner_mode == PYTHON_INNER:
        inner_mode = lazy_reference()
    with no_c_compiler(), pytensor.config.change_flags(mode=inner_mode) if inner_mode is not None else contextlib.nullcontext():
        return _check_lift(inputs, outputs, value_lists, rewritten, compare_with, mode)


def no_c_compiler():
    """PyTensor without its C compiler: nothing it runs here compiles (a fresh machine has no cached
    modules: C compilation there costs seconds a graph)."""
    return pytensor.config.change_flags(cxx="")


def _check_lift(inputs, outputs, value_lists, rewritten, compare_with, mode) -> ir.Graph:
    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    if rewritten:
        fgraph = rewritten_graph(inputs, outputs)
        graph = lift(fgraph, "t")
        ir.verify(graph)
        fn = pytensor.function(fgraph.inputs, fgraph.outputs, mode=mode)
    else:
        graph = lifted(inputs, outputs)
        fn = pytensor.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    for k, values in enumerate(value_lists):
        compare(graph, fn, values, f"input list {k}", compare_with)
    return graph


def raises_check(graph: ir.Graph, values, exception: type, match: str = "") -> None:
    """`interpret` fails a Check that names `exception` and whose message holds `match`."""
    _, failed = _outcome(lambda *a: ir.interpret(graph, *a), list(values))
    assert isinstance(failed, CheckFailedError), f"{failed!r}\n{graph}"
    assert match in str(failed), str(failed)
    named = [_exception_class(n.attrs["exception"]) for n in _checks(graph) if n.attrs["message"] == str(failed)]
    assert any(issubclass(cls, exception) for cls in named), named
