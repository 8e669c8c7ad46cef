"""A second runtime: the ONNX model compiled by IREE (`pip install ptonnx[iree]`).

IREE compiles the whole graph ahead of time and fuses elementwise chains into single
loops, which onnxruntime's CPU provider runs node by node: a log-density with special functions
over 10,000 observations runs 1.9-3.7x faster (`benchmarks/results/pymc_models.md`). The path is the one IREE
documents for ONNX: the model (with its static shapes, `lowering.lower._static_shapes`)
through onnx's shape inference and IREE's ONNX importer (torch-mlir's `onnx` dialect),
then `iree.compiler.compile_str` for llvm-cpu, in process. float64 needs
`--iree-input-demote-f64-to-f32=false`; `--iree-llvmcpu-link-embedded=false` links
against the system's libm, which has the `sin` and `cos` the embedded linker lacks.

Run-time checks and Loops are lowered in the form IREE reads (`lowering.lower(target="iree")`).
IREE's Gather does not bound its index: one out of range reads past the buffer (IREE 3.13: a
number from neighbouring memory; far past it, a segfault), so the out-of-range Gather that
stops onnxruntime cannot be a check there. Each check's failure flag is instead an output
after the user's, which `IreeModel.run` raises on; Loops write per-trip values into carried buffers.
"""

from __future__ import annotations

import os
import resource
import subprocess

import numpy as np
import onnx
from onnx import helper

from ptonnx.check_errors import check_exception, read_checks, read_flags
from ptonnx.errors import PtonnxError, RuntimeMismatchError
from ptonnx.iree_call import IreeCall, Signature
from ptonnx.lowering.context import KEPT_TYPE

#: iree-compile options: llvm-cpu, float64 kept, the host's vector units, libm linked
COMPILE_FLAGS = (
    "--iree-input-demote-f64-to-f32=false",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-llvmcpu-link-embedded=false",
)
#: one thread, synchronous: what the onnxruntime path's benchmarks use too
DEVICE = "local-sync"
#: iree-compile's address-space bound and time limit: IREE 3.13 exhausts any memory on some
#: graphs (23 GB, then the kernel's OOM killer, for a normal draw's two generator chains);
#: the bound turns that into an IreeCompileError (PTONNX_IREE_COMPILE_GB overrides it)
COMPILE_GB = float(os.environ.get("PTONNX_IREE_COMPILE_GB", "8"))
COMPILE_SECONDS = 600
#: ONNX ops IREE 3.13 cannot compile as ptonnx writes them, refused before iree-compile runs
UNSUPPORTED = {
    "ReduceProd": "iree-compile 3.13 fails to legalise ReduceProd, and ptonnx's product tree at run-time sizes "
                  "(pt.prod over an axis of unknown size; a static one compiles)",
}


class IreeUnavailableError(PtonnxError, ImportError):
    """runtime="iree" without IREE installed."""


class IreeCompileError(PtonnxError):
    """IREE could not import or compile the model."""


def _iree():
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
        from iree.compiler.extras import onnx_importer
        from iree.compiler.ir import Context
    except ImportError as exc:
        raise IreeUnavailableError(f"runtime='iree' needs IREE: pip install 'ptonnx[iree]' ({exc})") from None
    return compiler, runtime, onnx_importer, Context


def available() -> bool:
    try:
        _iree()
    except IreeUnavailableError:
        return False
    return True


def refuse_unsupported(model: onnx.ModelProto) -> None:
    """Refuse, before iree-compile runs, a model with an op IREE cannot compile (`UNSUPPORTED`).
    Every IREE form is the lowering's (`lowering/iree_forms.py` and the modules it names) or the
    carrying's (`passes/carry_dtypes.py`)."""
    every = [*model.graph.node, *_body_nodes(model.graph)]
    unsupported = sorted({n.op_type for n in every if n.op_type in UNSUPPORTED})
    if unsupported:
        raise IreeCompileError(f"the model has {unsupported[0]} (ONNX): {UNSUPPORTED[unsupported[0]]}; use "
                               "runtime='onnxruntime' for it")


def _body_nodes(graph):
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from attribute.g.node
                yield from _body_nodes(attribute.g)


def compile_model(model: onnx.ModelProto) -> bytes:
    """The IREE VM flatbuffer of `model` (ONNX import, then llvm-cpu)."""
    _, _, onnx_importer, Context = _iree()
    from iree.compiler.ir import MLIRError
    from iree.compiler.tools.core import CompilerToolError

    try:
        inferred = _declared_types_kept(model, onnx.shape_inference.infer_shapes(model, data_prop=True))
        info = onnx_importer.ModelInfo(inferred)
        context = Context()
        module = info.create_module(context=context).operation
        onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
        module.verify()
        text = module.get_asm(assume_verified=True)
        return _bounded_compile(text)
    except (onnx.shape_inference.InferenceError, onnx_importer.OnnxImportError, MLIRError, CompilerToolError) as exc:
        lines = [line.strip() for line in str(exc).splitlines() if "error:" in line]
        detail = "\n  ".join(dict.fromkeys(lines[:4])) or f"{type(exc).__name__}: {str(exc).strip()[:500]}"
        raise IreeCompileError(f"IREE could not compile the model:\n  {detail}\nUse runtime='onnxruntime' for it "
                               "(docs/iree.md lists what IREE cannot compile).") from exc


def _declared_types_kept(model: onnx.ModelProto, inferred: onnx.ModelProto) -> onnx.ModelProto:
    """`inferred` with the types `model` declares to keep (`KEPT_TYPE`) where inference found more
    static ones: IREE's importer types a Loop's carried values as their initial values and needs
    them to be the body's, which the lowering declares (`lowering/loop_buffers.py`); ONNX's
    inference refines them from the values' producers (a known size that a trip will change).
    Every other type stays as inferred (weakening one, IREE failed to legalise a tensor.cast)."""
    _restore(model.graph, inferred.graph)
    return inferred


def _restore(declared: onnx.GraphProto, inferred: onnx.GraphProto) -> None:
    types = {v.name: v.type for v in [*declared.value_info, *declared.output] if v.doc_string == KEPT_TYPE}
    for v in [*inferred.value_info, *inferred.output]:
        if v.name in types:
            v.type.CopyFrom(types[v.name])
    for mine, theirs in zip(declared.node, inferred.node, strict=True):
        for a, b in zip(mine.attribute, theirs.attribute, strict=True):
            if a.type == onnx.AttributeProto.GRAPH:
                _restore(a.g, b.g)


def _bounded_compile(text: str) -> bytes:
    """`iree-compile` of the MLIR `text` (as `compile_str` runs it), within COMPILE_GB of address
    space and COMPILE_SECONDS."""
    from iree.compiler.tools.core import CompilerOptions, CompilerToolError, TempFileSaver, build_compile_command_line

    def bound():  # in the child, before exec
        limit = int(COMPILE_GB * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with TempFileSaver.implicit() as tfs:
        options = CompilerOptions(target_backends=["llvm-cpu"], extra_args=list(COMPILE_FLAGS))
        command = build_compile_command_line("-", tfs, options)
    try:
        process = subprocess.run(command, input=text.encode(), capture_output=True, preexec_fn=bound, timeout=COMPILE_SECONDS)
    except subprocess.TimeoutExpired:
        raise IreeCompileError(f"iree-compile ran past {COMPILE_SECONDS} s on the model; use runtime='onnxruntime'") from None
    if process.returncode != 0 and b"out of memory" in process.stderr:
        raise IreeCompileError(f"iree-compile ran out of its {COMPILE_GB:g} GB bound compiling the model (IREE 3.13 does on "
                               "ptonnx's random draws beyond uniform, integers and bernoulli: docs/iree.md); "
                               "use runtime='onnxruntime'")
    if process.returncode != 0:
        raise CompilerToolError(process)
    return process.stdout


def iree_form(graph, name: str, output_names: list[str]) -> tuple[onnx.ModelProto, Boundary]:
    """The model IREE compiles: the IR with the dtypes IREE lacks carried (`passes/carry_dtypes.py`,
    on a copy: `graph` is left as it was), lowered in the form IREE reads (`lower(target="iree")`);
    and the boundary its carried inputs and outputs cross. Needs no IREE (tests run it in onnxruntime)."""
    from ptonnx.errors import LoweringError
    from ptonnx.lowering import lower
    from ptonnx.passes.carry_dtypes import CarryError, carried

    try:
        form = carried(graph, "iree")
        model = lower(form.graph, name=name, output_names=output_names, target="iree")
    except (CarryError, LoweringError) as exc:
        advice = "" if "runtime='onnxruntime'" in str(exc) else "; use runtime='onnxruntime'"
        raise IreeCompileError(f"the model has no form IREE can compile: {exc}{advice}") from exc
    return model, Boundary({i: form.graph.inputs[i].dtype for i in form.inputs}, {i: graph.outputs[i].dtype for i in form.outputs})


def from_ir(graph, name: str, output_names: list[str]) -> IreeModel:
    """`iree_form`, compiled by IREE."""
    return IreeModel(*iree_form(graph, name, output_names))


class Boundary:
    """The user's arrays of the dtypes IREE's copy carries in int64 (`passes/carry_dtypes.py`):
    converted on the way in and back on the way out, bit for bit (uint64 from 2**63 on is the
    negative int64 of its bits, as the copy holds it)."""

    def __init__(self, inputs: dict[int, str] | None = None, outputs: dict[int, str] | None = None):
        #: input position -> the dtype it is carried in; output position -> the user's dtype
        self.inputs, self.outputs = inputs or {}, outputs or {}

    def enter(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(a).astype(self.inputs[i]) if i in self.inputs else a for i, a in enumerate(arrays)]

    def leave(self, outputs: list[np.ndarray]) -> list[np.ndarray]:
        return [o.astype(self.outputs[i]) if i in self.outputs else o for i, o in enumerate(outputs)]


class IreeModel:
    """The model compiled by IREE, called with numpy arrays as `CompiledModel` feeds them."""

    def __init__(self, model: onnx.ModelProto, boundary: Boundary | None = None):
        """`model` lowered for IREE (`lowering.lower(target="iree")`); `boundary`: the user's arrays
        its inputs and outputs carry in wider dtypes."""
        _, runtime, _, _ = _iree()
        refuse_unsupported(model)
        self.signature = Signature(model)
        self.boundary = boundary or Boundary()
        self.checks, self.check_names = read_checks(model), read_flags(model)
        self.vmfb = compile_model(model)
        context = runtime.SystemContext(config=runtime.Config(DEVICE))
        try:
            context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, self.vmfb))
        except (IndexError, RuntimeError, ValueError) as exc:  # what IREE's Python binding raises for a refused module
            raise IreeCompileError(f"IREE's runtime would not load the compiled model: {str(exc).splitlines()[0]} "
                                   "(docs/iree.md); use runtime='onnxruntime' for it") from exc
        inputs, outputs = ([helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type) for v in values]
                           for values in (model.graph.input, model.graph.output))
        self._call = IreeCall(runtime, context, model.graph.name, inputs, outputs)
        self._context = context

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        arrays = self.signature.pack(self.boundary.enter(arrays))
        try:
            outputs = self._call(arrays)
        except Exception as exc:
            raise RuntimeMismatchError(f"IREE could not run the model on the inputs given: {str(exc).splitlines()[0]}") from exc
        outputs = self.boundary.leave(self.signature.unpack(outputs))
        n_outputs = len(outputs) - len(self.check_names)
        for name, flag in zip(self.check_names, outputs[n_outputs:], strict=True):
            if flag > 0:  # a Loop's flags start below 0 (`lowering/loop_buffers.py`)
                raise check_exception(self.checks[name])
        return outputs[:n_outputs]
