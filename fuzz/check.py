"""One program, several PyTensor compilations, two onnxruntime levels: the outcome of each comparison.

Kinds of graph given to ptonnx (each judged against PyTensor's own evaluation of
that graph, since PyTensor's rewrites sometimes change the numbers themselves):
- "user": the graph as built, `ptonnx.compile_function(inputs, outputs)`, against
  `pytensor.function(..., mode=Mode(linker="py", optimizer=None))`;
- "bare": the same graph compiled with `passes=[]` (only the mandatory stages): PyTensor's
  numbers or a refusal saying which pass to add, never another number;
- "rewritten": `Mode(linker="py", optimizer="fast_run").excluding("inplace", "BlasOpt")`
  (Composite ops, no BLAS), its `maker.fgraph` compiled by ptonnx;
- "blas": all of `fast_run` (inplace, and the BLAS rewrites: Gemv, Gemm, Ger,
  Dot22, Dot22Scalar), still evaluated by the Python linker;
- "FAST_RUN": the mode string itself (PyTensor 3 runs it with the Numba linker and its
  rewrites) and "cvm": `Mode(linker="cvm", optimizer="fast_run")` (C linker).
  These two compile native code (~2.5 s a graph on 2 cores), so they run on a
  sample of the seeds (`slow_every`).
"""

from __future__ import annotations

import logging
import re
import signal
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytensor
from pytensor.compile.mode import Mode

import ptonnx
from fuzz.compare import (
    ORT_LEVELS,
    computation_dtype,
    differences,
    narrowest,
    reference_precision,
    run_at_every_level,
)
from fuzz.generate import Program
from fuzz.localise import localise
from ptonnx.errors import PtonnxError, RuntimeMismatchError

#: match: same dtypes, shapes and numbers at every onnxruntime level.
#: mismatch: a wrong number, dtype or shape (localised to its culprit node when possible).
#: inexact: beyond tolerance, but every node matches PyTensor on the values onnxruntime gave
#:   it: the graph amplified rounding (e.g. cancellation after a last-bit difference).
#: refused: a `ptonnx.errors` exception that does not call itself a ptonnx bug.
#: crash: any other exception from ptonnx, an invalid model, onnxruntime failing to run it.
#: reference-error: PyTensor itself raises, or its native backend disagrees with its own
#:   Python implementation of the graph while ONNX matches the latter: nothing to judge by.
OUTCOMES = ("match", "mismatch", "inexact", "refused", "crash", "reference-error")
#: the outcomes a CI run fails on
FAILURES = ("mismatch", "crash")


def modes() -> dict:
    return {
        "user": Mode(linker="py", optimizer=None),
        "bare": Mode(linker="py", optimizer=None),
        "rewritten": Mode(linker="py", optimizer="fast_run").excluding("inplace", "BlasOpt"),
        "blas": Mode(linker="py", optimizer="fast_run"),
        "FAST_RUN": "FAST_RUN",
        "cvm": Mode(linker="cvm", optimizer="fast_run"),
    }


KINDS = ("user", "bare", "rewritten", "blas", "FAST_RUN", "cvm")
SLOW_KINDS = ("FAST_RUN", "cvm")


def kinds_for(seed: int, kinds=KINDS, slow_every: int = 8) -> tuple[str, ...]:
    """The kinds checked for `seed`: the cheap ones always, each slow one on one seed in `slow_every`."""
    chosen = []
    for kind in kinds:
        if kind in SLOW_KINDS and slow_every > 1:
            offset = SLOW_KINDS.index(kind) * slow_every // len(SLOW_KINDS)
            if seed % slow_every != offset:
                continue
        chosen.append(kind)
    return tuple(chosen)


@dataclass
class Finding:
    seed: int
    kind: str
    outcome: str
    signature: str = ""
    detail: str = ""
    graph: str = ""
    localised: str = ""

    def report(self, program: Program | str | None = None, code: bool = False) -> str:
        """The finding as text; with `code`, the PyTensor code of `program` (a Program or its `code()`)."""
        lines = [f"== seed {self.seed} [{self.kind}] {self.outcome}: {self.signature}", self.detail]
        if self.localised:
            lines.append(self.localised)
        if self.graph:
            lines.append("graph given to ptonnx:\n" + self.graph)
        if code and program is not None:
            lines.append("PyTensor code:\n" + (program if isinstance(program, str) else program.code()))
        return "\n".join(line for line in lines if line)


def normalise(message: str) -> str:
    """An error message's first line without its names, shapes and numbers (dtypes kept), to group findings."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    first = re.sub(r"'[^']*'|\"[^\"]*\"", "'.'", first)
    first = re.sub(r"%[\w.]+|\b[vx]\d+(_\d+)?\b", "%", first)
    first = re.sub(r"\[[^\]]*\]", "[]", first)
    return re.sub(r"(?<![a-z\d])\d+", "#", first)[:160]


def classify_exception(exc: BaseException) -> tuple[str, str]:
    """('refused' | 'crash', signature) for an exception from ptonnx or onnxruntime."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, PtonnxError) and not isinstance(exc, RuntimeMismatchError) and "bug" not in str(exc):
        return "refused", f"{type(exc).__name__}: {normalise(str(exc))}"
    return "crash", normalise(text)


def check_program(program: Program, kinds=KINDS, localise_mismatches: bool = True) -> list[Finding]:
    """One finding per kind; warnings and PyTensor's rewrite-failure logs silenced meanwhile."""
    findings = []
    logger = logging.getLogger("pytensor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:  # the un-rewritten graph's numbers, to tell PyTensor's rewrites disagreeing with it
                with time_limit(TIME_LIMIT):
                    baseline = [np.array(o, copy=True) for o in pytensor.function(
                        program.inputs, program.outputs, mode=modes()["user"])(*_copies(program.arrays))]
            except Exception:
                baseline = None
            except Timeout:
                baseline = None
                kinds = [k for k in kinds if k not in ("user", "bare")]
                findings.append(Finding(program.seed, "user", "reference-error", f"PyTensor ran over {TIME_LIMIT:.0f} s"))
            for kind in kinds:
                findings.append(check_kind(program, kind, localise_mismatches, baseline))
    finally:
        logger.setLevel(level)
    return findings


def _copies(arrays):
    return [np.array(a, copy=True) for a in arrays]


class Timeout(BaseException):
    """A comparison ran over its time limit (a BaseException: no `except Exception` swallows it)."""


@contextmanager
def time_limit(seconds: float | None):
    """Raise `Timeout` in the main thread after `seconds` (no limit elsewhere, or when None)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise Timeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: seconds one comparison may take (PyTensor itself can loop: LogSoftmax of an int vector does)
TIME_LIMIT = 30.0


def check_kind(program: Program, kind: str, localise_mismatches: bool = True, baseline=None, seconds: float | None = TIME_LIMIT) -> Finding:
    """Compile and judge one kind of graph; a run over `seconds` is PyTensor's or ptonnx's, by phase."""
    state = {"phase": "reference", "finding": None}
    try:
        with time_limit(seconds):
            return _check_kind(program, kind, localise_mismatches, baseline, state)
    except Timeout:
        if state["finding"] is not None:  # a mismatch whose localisation ran out of time
            state["finding"].localised = "not localised: out of time"
            return state["finding"]
        if state["phase"] == "reference":
            return Finding(program.seed, kind, "reference-error", f"PyTensor ran over {seconds:.0f} s")
        return Finding(program.seed, kind, "crash", f"ptonnx/onnxruntime ran over {seconds:.0f} s")


def _check_kind(program: Program, kind: str, localise_mismatches: bool, baseline, state: dict) -> Finding:
    seed = program.seed
    try:
        f = pytensor.function(program.inputs, program.outputs, mode=modes()[kind])
        expected = [np.array(o, copy=True) for o in f(*_copies(program.arrays))]
    except Exception as exc:
        return Finding(seed, kind, "reference-error", normalise(f"{type(exc).__name__}: {exc}"))
    state["phase"] = "ptonnx"
    fgraph = None
    try:
        if kind in ("user", "bare"):
            fgraph = ptonnx.api.function_graph(program.inputs, program.outputs)
            cm = ptonnx.compile_function(program.inputs, program.outputs, [] if kind == "bare" else None)
        else:
            fgraph = ptonnx.api.compiled_function_graph(f)
            cm = ptonnx.compile(fgraph)
    except Exception as exc:
        outcome, sig = classify_exception(exc)
        return Finding(seed, kind, outcome, sig, f"{type(exc).__name__}: {str(exc)[:600]}", _dprint(fgraph if fgraph is not None else program.outputs))
    computed_in = narrowest({computation_dtype(cm.ir), reference_precision(fgraph.toposort())} - {None})
    wrong: dict[str, list[str]] = {}
    for level, result in run_at_every_level(cm, *_copies(program.arrays)).items():
        if isinstance(result, BaseException):
            outcome, sig = classify_exception(result)
            return Finding(seed, kind, "crash", f"{level}: {sig}", f"{type(result).__name__}: {str(result)[:600]}", _dprint(fgraph))
        for i, (a, e) in enumerate(zip(result, expected, strict=True)):
            diff = differences(a, e, computed_in)
            if diff:
                wrong.setdefault(level, []).append(f"output {i} ({e.dtype}{e.shape}) at {level}: {diff}")
    if not wrong:
        return Finding(seed, kind, "match")
    if kind not in ("user", "bare") and baseline is not None and _matches(cm, program, baseline, computed_in):
        return Finding(seed, kind, "reference-error", f"{kind}: PyTensor's numbers differ from its un-rewritten graph's; ONNX matches the un-rewritten graph", detail="\n".join(line for lines in wrong.values() for line in lines))
    state["phase"] = "reference"  # PyTensor's own evaluations, to tell which side disagrees
    if kind in SLOW_KINDS and _matches_python_evaluation(fgraph, cm, program, computed_in):
        return Finding(seed, kind, "reference-error", f"{kind} disagrees with PyTensor's Python implementation of its graph; ONNX matches the latter")
    detail = "\n".join(line for lines in wrong.values() for line in lines)
    levels = "+".join(wrong)
    finding = state["finding"] = Finding(seed, kind, "mismatch", f"{levels}: not localised", detail, _dprint(fgraph))
    if localise_mismatches:
        level = ORT_LEVELS[0] if ORT_LEVELS[0] in wrong else levels
        outcome, culprit, note = localise(fgraph, _copies(program.arrays), level, expected)
        finding.outcome = outcome
        if culprit is not None:
            finding.signature = f"{level}: {culprit.signature}" + ("" if culprit.alone else " (not alone)")
            finding.localised = culprit.text
        else:
            finding.signature = f"{levels}: {note.split(':')[0]}"
            finding.localised = note
    return finding


def _matches_python_evaluation(fgraph, cm, program, computed_in) -> bool:
    """True when ONNX matches PyTensor's Python linker on the graph a native backend ran differently."""
    try:
        py = pytensor.function(list(fgraph.inputs), list(fgraph.outputs), mode=Mode(linker="py", optimizer=None), accept_inplace=True)
        expected = [np.array(o, copy=True) for o in py(*_copies(program.arrays))]
    except Exception:
        return False
    return _matches(cm, program, expected, computed_in)


def _matches(cm, program, expected, computed_in) -> bool:
    """True when `cm` gives `expected` at every onnxruntime level."""
    for result in run_at_every_level(cm, *_copies(program.arrays)).values():
        if isinstance(result, BaseException) or any(differences(a, e, computed_in) for a, e in zip(result, expected, strict=True)):
            return False
    return True


def _dprint(graph) -> str:
    try:
        return pytensor.dprint(graph, file="str", print_type=True).rstrip()
    except Exception as exc:  # printing must not hide the finding
        return f"(dprint failed: {exc})"
