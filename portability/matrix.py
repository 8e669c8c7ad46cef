"""Run the programs on the runtimes and judge each cell against PyTensor and onnxruntime.

A cell is one of:
- `identical`: within the program's tolerance of PyTensor's own evaluation, and the bytes
  onnxruntime (default level) gives (the largest relative error to PyTensor is recorded);
- `close`: within the tolerance, not onnxruntime's bytes;
- `raises`: the run failed, as a program with a failing check must;
- `differs`: beyond the tolerance, or another shape or dtype (the error is recorded);
- `no error`: a program that must fail returned numbers;
- `refused`: the runtime would not load or compile the model; `fails`: it failed at run time;
- `not installed`.
"""

from __future__ import annotations

import attrs
import numpy as np

from portability.programs import Program
from portability.runtimes import RUNTIMES, Case, Failed, Unavailable

#: verdicts that keep a file's promise (numbers as PyTensor's, or the raise it must give)
GOOD = ("identical", "close", "raises")


@attrs.frozen
class Cell:
    verdict: str
    detail: str = ""

    @property
    def good(self) -> bool:
        return self.verdict in GOOD


def expected_outputs(program: Program) -> list[np.ndarray] | None:
    """PyTensor's own evaluation (`ptonnx.testing.reference_mode`: the Ops' Python code, as every
    end-to-end test compares with); None where it raises."""
    import pytensor

    from ptonnx.testing import reference_mode

    fn = pytensor.function(program.inputs, program.outputs, mode=reference_mode(), on_unused_input="ignore")
    try:
        with np.errstate(all="ignore"):
            return [np.asarray(a) for a in fn(*program.arrays)]
    except Exception:
        return None


def compiled_case(program: Program) -> Case:
    import ptonnx

    cm = ptonnx.compile_function(program.inputs, program.outputs)
    return Case(program.name, cm.model, list(program.arrays), cm._checks, ir=cm.ir)


def relative_error(actual: np.ndarray, expected: np.ndarray, atol: float = 0.0) -> float:
    """The largest |a - e| / |e| over the finite elements with |e| above `atol` (the rest are held
    to `atol`); inf where a NaN or an infinity is not matched."""
    a, e = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    special = ~np.isfinite(e) | ~np.isfinite(a)
    if not np.array_equal(a[special], e[special], equal_nan=True):
        return float("inf")
    keep = ~special & (np.abs(e) > atol)
    a, e = a[keep], e[keep]
    with np.errstate(all="ignore"):
        return float(np.max(np.abs(a - e) / np.where(e == 0, 1.0, np.abs(e)), initial=0.0))


def judge(program: Program, got, reference: list | None, expected: list | None) -> Cell:
    """One cell: `got` (a runtime's outputs or failure) against onnxruntime's outputs (`reference`)
    and PyTensor's (`expected`)."""
    if isinstance(got, Unavailable):
        return Cell("not installed", got.why)
    if isinstance(got, Failed):
        if got.stage == "load":
            return Cell("refused", got.message)
        return Cell("raises" if program.raises else "fails", got.message)
    if program.raises:
        return Cell("no error", "returned numbers where the check must fail")
    if expected is None:
        return Cell("differs", "PyTensor raises here")
    worst = 0.0
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g.shape != e.shape or g.dtype != e.dtype:
            return Cell("differs", f"output {k}: {g.dtype}{list(g.shape)} where PyTensor gives {e.dtype}{list(e.shape)}")
        if e.dtype.kind in "iub":
            if not np.array_equal(g, e):
                return Cell("differs", f"output {k}: {int(np.sum(g != e))} of {e.size} integers differ")
            continue
        if not np.allclose(g, e, rtol=program.rtol, atol=program.atol, equal_nan=True):
            bad = np.flatnonzero(~np.isclose(g, e, rtol=program.rtol, atol=program.atol, equal_nan=True))
            return Cell("differs", f"output {k} at flat index {bad[:3].tolist()}: {g.ravel()[bad[:3]].tolist()} where "
                                   f"PyTensor gives {e.ravel()[bad[:3]].tolist()}")
        worst = max(worst, relative_error(g, e, program.atol))
    if reference is not None and all(g.dtype == r.dtype and g.shape == r.shape and g.tobytes() == r.tobytes()
                                     for g, r in zip(got, reference, strict=True)):
        return Cell("identical", f"relative error {worst:.2g}")
    return Cell("close", f"relative error {worst:.2g}")


def run(programs: dict, runtimes: tuple[str, ...]) -> dict[str, dict[str, Cell]]:
    """{program name: {runtime: Cell}} for every program and runtime named."""
    built = {name: make() for name, make in programs.items()}
    cases = [compiled_case(p) for p in built.values()]
    expected = {name: expected_outputs(p) for name, p in built.items()}
    outputs = {runtime: RUNTIMES[runtime](cases) for runtime in ("onnxruntime", *runtimes) if runtime in RUNTIMES}
    reference = [o if isinstance(o, list) else None for o in outputs["onnxruntime"]]
    table = {}
    for k, (name, program) in enumerate(built.items()):
        row = {}
        for runtime in runtimes:
            got = outputs[runtime][k]
            if runtime.startswith("OpenVINO") and not program.float32:
                row[runtime] = Cell("not run", "float64 or integer program: OpenVINO computes float64 in float32")
                continue
            row[runtime] = judge(program, got, reference[k], expected[name])
        table[name] = row
    return table
