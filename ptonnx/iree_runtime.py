"""A second runtime: the ONNX model compiled by IREE (`pip install ptonnx[iree]`).

IREE compiles the whole graph ahead of time and fuses elementwise chains into single
loops, which onnxruntime's CPU provider runs node by node: a log-density with special functions
over 10,000 observations runs 1.9-3.7x faster (`benchmarks/results/pymc_models.md`). The path is the one IREE
documents for ONNX: the model (with its static shapes, `lowering.lower._static_shapes`)
through onnx's shape inference and IREE's ONNX importer (torch-mlir's `onnx` dialect),
then `iree.compiler.compile_str` for llvm-cpu, in process. float64 needs
`--iree-input-demote-f64-to-f32=false`; `--iree-llvmcpu-link-embedded=false` links
against the system's libm, which has the `sin` and `cos` the embedded linker lacks.

Run-time checks and Loops are lowered in the form IREE reads (`lowering.lower(target="iree")`):
each check's failure flag is an output after the user's (IREE's Gather does not bound its
index), which `IreeModel.run` raises on, and Loops write per-trip values into carried buffers.
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
from ptonnx.iree_words import WordsError, carried_in_int64
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


def for_iree(model: onnx.ModelProto) -> tuple[onnx.ModelProto, tuple[list[int], list[int]]]:
    """`model` (lowered for IREE) with its uint32 words carried in int64 (`iree_words`, the one
    change made after lowering: a dtype IREE's importer lacks across the whole graph), and the
    positions of the inputs and outputs so carried; what IREE cannot compile is refused here
    (`UNSUPPORTED`). Every other IREE form is the lowering's (`lowering/iree_forms.py` and the
    modules it names)."""
    every = [*model.graph.node, *_body_nodes(model.graph)]
    unsupported = sorted({n.op_type for n in every if n.op_type in UNSUPPORTED})
    if unsupported:
        raise IreeCompileError(f"the model has {unsupported[0]} (ONNX): {UNSUPPORTED[unsupported[0]]}; use "
                               "runtime='onnxruntime' for it")
    typed = onnx.shape_inference.infer_shapes(model, data_prop=True)
    dtypes = {v.name: v.type.tensor_type.elem_type for v in [*typed.graph.value_info, *typed.graph.input, *typed.graph.output]}
    dtypes.update({t.name: t.data_type for t in typed.graph.initializer})
    try:
        model, *words = carried_in_int64(model, dtypes)
    except WordsError as exc:
        raise IreeCompileError(f"{exc}: IREE has no uint32 tensors and ptonnx carries them as int64 only in straight-line "
                               "code with constant shifts; use runtime='onnxruntime'") from None
    return model, tuple(words)


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


def from_ir(graph, name: str, output_names: list[str]) -> IreeModel:
    """The IR lowered in the form IREE reads (`lower(target="iree")`), compiled by IREE."""
    from ptonnx.errors import LoweringError
    from ptonnx.lowering import lower

    try:
        model = lower(graph, name=name, output_names=output_names, target="iree")
    except LoweringError as exc:
        raise IreeCompileError(f"the model has no form IREE can compile: {exc}") from exc
    return IreeModel(model)


class IreeModel:
    """The model compiled by IREE, called with numpy arrays as `CompiledModel` feeds them."""

    def __init__(self, model: onnx.ModelProto):
        """`model` lowered for IREE (`lowering.lower(target="iree")`)."""
        _, runtime, _, _ = _iree()
        self.signature = Signature(model)
        compiled, (self._word_inputs, self._word_outputs) = for_iree(model)
        self.checks, self.check_names = read_checks(model), read_flags(model)
        self.vmfb = compile_model(compiled)
        context = runtime.SystemContext(config=runtime.Config(DEVICE))
        try:
            context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, self.vmfb))
        except (IndexError, RuntimeError, ValueError) as exc:  # what IREE's Python binding raises for a refused module
            raise IreeCompileError(f"IREE's runtime would not load the compiled model: {str(exc).splitlines()[0]} "
                                   "(docs/iree.md); use runtime='onnxruntime' for it") from exc
        inputs, outputs = ([helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type) for v in values]
                           for values in (compiled.graph.input, compiled.graph.output))
        self._call = IreeCall(runtime, context, model.graph.name, inputs, outputs)
        self._context = context

    def run(self, arrays: list[np.ndarray]) -> list[np.ndarray]:
        arrays = self.signature.pack(arrays)
        arrays = [a.astype(np.int64) if i in self._word_inputs else a for i, a in enumerate(arrays)]
        try:
            outputs = self._call(arrays)
        except Exception as exc:
            raise RuntimeMismatchError(f"IREE could not run the model on the inputs given: {str(exc).splitlines()[0]}") from exc
        outputs = [o.astype(np.uint32) if i in self._word_outputs else o for i, o in enumerate(outputs)]
        outputs = self.signature.unpack(outputs)
        n_outputs = len(outputs) - len(self.check_names)
        for name, flag in zip(self.check_names, outputs[n_outputs:], strict=True):
            if flag > 0:  # a Loop's flags start below 0 (`lowering/loop_buffers.py`)
                raise check_exception(self.checks[name])
        return outputs[:n_outputs]
