"""The PyTensor mode "ONNX": `pytensor.function(..., mode="ONNX")` runs through ptonnx."""

from __future__ import annotations

from pytensor.compile.mode import Mode, predefined_modes, register_mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker


class ONNXLinker(JITLinker):
    """Lifts, optimises and lowers the function's graph, then runs it in onnxruntime."""

    # onnxruntime plans its own memory; PyTensor's inplace and BLAS/C-only ops have no ONNX form
    incompatible_rewrites = ("cxx_only", "BlasOpt", "inplace", "local_careduce_fusion", "scan_reduce_trace_prealloc")

    def __init__(self, passes=None, *args, **kwargs):
        from ptonnx.passes.manager import resolve_all

        resolve_all(passes)  # a wrong `passes` is refused when the mode is made, not at the first function
        self.passes = passes
        self.compiled = None
        super().__init__(*args, **kwargs)

    def fgraph_convert(self, fgraph, **kwargs):
        from ptonnx.api import compile

        # A function without outputs computes nothing; ONNX has no model for it.
        self.compiled = compile(fgraph, self.passes) if fgraph.outputs else None
        return self.compiled

    def jit_compile(self, compiled):
        if compiled is None:
            return lambda *inputs: None
        compiled.session  # open the session now, not on the first call
        from ptonnx.lifting.context import is_random

        generators_in = [i for i, v in enumerate(self.fgraph.inputs) if is_random(v)]
        generators_out = [i for i, v in enumerate(self.fgraph.outputs) if is_random(v)]
        if not generators_in and not generators_out:
            def run(*inputs):
                return tuple(compiled(*inputs))

            return run
        from ptonnx.keys import as_generator, of_generator

        def run_drawing(*inputs):
            """A generator's value goes in as its key, a next key comes out as a generator (so a
            shared generator's update makes the next call draw anew, and set_value resets it)."""
            inputs = list(inputs)
            for i in generators_in:
                inputs[i] = of_generator(inputs[i])
            outputs = compiled(*inputs)
            for i in generators_out:
                outputs[i] = as_generator(outputs[i])
            return tuple(outputs)

        return run_drawing

    def create_thunk_inputs(self, storage_map):
        return [storage_map[n] for n in self.fgraph.inputs]


def onnx_mode(passes=None) -> Mode:
    return Mode(
        ONNXLinker(passes),
        RewriteDatabaseQuery(include=["fast_run"], exclude=list(ONNXLinker.incompatible_rewrites)),
    )


def register() -> None:
    if "ONNX" not in predefined_modes:
        register_mode("ONNX", onnx_mode())
