"""The runtimes of the portability matrix: each runs a list of (model, input arrays) cases and
gives, per case, the outputs or how it failed (`Failed`: at load, or at run).

One function per runtime, all with one signature (`run(cases) -> list`), so a runtime that runs
cases in another process (onnxruntime-web under Node) runs them in one batch. A runtime that is
not installed gives `Unavailable` for every case.
"""

from __future__ import annotations

import base64
import json
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs
import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]


@attrs.frozen
class Case:
    name: str
    model: onnx.ModelProto
    arrays: list
    checks: dict = attrs.field(factory=dict)
    #: the IR, which IREE's column lowers again in the form IREE reads
    ir: object = None

    @property
    def feeds(self) -> dict[str, np.ndarray]:
        return {i.name: a for i, a in zip(self.model.graph.input, self.arrays, strict=True)}


@attrs.frozen
class Failed:
    stage: str  # "load" or "run"
    message: str


@attrs.frozen
class Unavailable:
    why: str


def _each(cases: list[Case], run_one: Callable[[Case], list]) -> list:
    out = []
    for case in cases:
        try:
            out.append(run_one(case))
        except _LoadError as exc:
            out.append(Failed("load", str(exc)))
        except Exception as exc:  # the runtime's own error, whatever its class: the matrix records it
            out.append(Failed("run", f"{type(exc).__name__}: {exc}"))
    return out


class _LoadError(Exception):
    pass


def onnxruntime_at(level: str) -> Callable[[list[Case]], list]:
    def run(cases: list[Case]) -> list:
        import onnxruntime as ort

        from ptonnx.testing import session_options

        def one(case: Case) -> list:
            try:
                session = ort.InferenceSession(case.model.SerializeToString(), session_options(level),
                                               providers=["CPUExecutionProvider"])
            except Exception as exc:
                raise _LoadError(str(exc)) from exc
            return session.run(None, case.feeds)

        return _each(cases, one)

    return run


def reference(cases: list[Case]) -> list:
    """ONNX's own reference evaluator (`onnx.reference`, NumPy)."""
    from onnx.reference import ReferenceEvaluator

    def one(case: Case) -> list:
        try:
            evaluator = ReferenceEvaluator(case.model)
        except Exception as exc:
            raise _LoadError(str(exc)) from exc
        with np.errstate(all="ignore"):
            return [np.asarray(a) for a in evaluator.run(None, case.feeds)]

    return _each(cases, one)


def _packed(a: np.ndarray) -> dict:
    a = np.array(a, order="C")  # not ascontiguousarray: it makes a 0-d array 1-d
    return {"type": str(a.dtype), "dims": list(a.shape), "data": base64.b64encode(a.tobytes()).decode()}


def onnxruntime_web(cases: list[Case]) -> list:
    """onnxruntime-web (WebAssembly) under Node: `web/run_node.mjs`, one process for all cases."""
    if not (ROOT / "web" / "node_modules" / "onnxruntime-web").is_dir():
        return [Unavailable("web/node_modules is not installed (cd web && npm ci)")] * len(cases)
    with tempfile.TemporaryDirectory() as tmp:
        requests = []
        for k, case in enumerate(cases):
            path = Path(tmp) / f"model{k}.onnx"
            path.write_bytes(case.model.SerializeToString())
            requests.append({"model": str(path), "feeds": {n: _packed(a) for n, a in case.feeds.items()}})
        (Path(tmp) / "requests.json").write_text(json.dumps(requests))
        done = subprocess.run(["node", str(ROOT / "web" / "run_node.mjs"), str(Path(tmp) / "requests.json"),
                               str(Path(tmp) / "results.json")], capture_output=True, text=True, timeout=1800)
        if done.returncode:
            raise RuntimeError(f"web/run_node.mjs failed: {done.stderr[-2000:]}")
        results = json.loads((Path(tmp) / "results.json").read_text())
    out = []
    for result in results:
        if "error" in result:
            out.append(Failed(result["stage"], result["error"]))
        else:
            out.append([np.frombuffer(base64.b64decode(o["data"]), dtype=o["type"]).reshape(o["dims"]).copy()
                        for o in result["outputs"]])
    return out


def iree(cases: list[Case]) -> list:
    """IREE as ptonnx runs it (`runtime="iree"`: the IR lowered for IREE, then iree-compile)."""
    from ptonnx import iree_runtime

    if not iree_runtime.available():
        return [Unavailable("IREE is not installed (pip install ptonnx[iree])")] * len(cases)

    def one(case: Case) -> list:
        try:
            model = iree_runtime.from_ir(case.ir, case.model.graph.name, [o.name for o in case.model.graph.output])
        except iree_runtime.IreeCompileError as exc:  # ptonnx's refusal, or iree-compile's diagnostic
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            raise _LoadError(" ".join(lines[:2])[:300]) from exc
        return model.run(list(case.arrays))

    return _each(cases, one)


def openvino(cases: list[Case]) -> list:
    """OpenVINO's CPU plugin at float32 precision (its default precision may be lower)."""
    try:
        import openvino as ov
    except ImportError:
        return [Unavailable("OpenVINO is not installed (pip install openvino)")] * len(cases)
    core = ov.Core()

    def one(case: Case) -> list:
        try:
            compiled = core.compile_model(core.read_model(case.model.SerializeToString(), b""), "CPU",
                                          {"INFERENCE_PRECISION_HINT": "f32"})
        except Exception as exc:
            raise _LoadError(str(exc).splitlines()[0][:300]) from exc
        result = compiled(list(case.arrays))
        return [np.asarray(result[o]) for o in compiled.outputs]

    return _each(cases, one)


#: column name -> runner; the first is what the others are compared with, bit for bit
RUNTIMES: dict[str, Callable[[list[Case]], list]] = {
    "onnxruntime": onnxruntime_at("ORT_ENABLE_ALL"),
    "onnxruntime, no optimisation": onnxruntime_at("ORT_DISABLE_ALL"),
    "onnxruntime-web (Node)": onnxruntime_web,
    "onnx.reference": reference,
    "IREE": iree,
    "OpenVINO (float32 programs)": openvino,
}
#: the columns CI runs (cheap, no extra install beyond web/'s npm packages)
CI_RUNTIMES = ("onnxruntime", "onnxruntime, no optimisation", "onnxruntime-web (Node)", "onnx.reference")
