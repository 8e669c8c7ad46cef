"""Shared test helpers: Hypothesis profiles and `check_like_pytensor`; the toolkit (tolerances,
sessions, levels, `assert_matches_pytensor`) is `ptonnx.testing`."""

from __future__ import annotations

import os
import warnings

import numpy as np
import onnx
import pytensor
from hypothesis import HealthCheck, settings
from pytensor.compile.mode import Mode

import ptonnx
from ptonnx.testing import (  # noqa: F401  (the toolkit, as the tests import it from here)
    ORT_LEVELS,
    TOLERANCE,
    assert_matches,
    assert_matches_pytensor,
    assert_no_miscompiled_pattern,
    assert_same,
    computation_dtype,
    reference_mode,
    run_at_every_level,
    session_options,
)

# Bounded and deterministic in CI; more examples locally with HYPOTHESIS_PROFILE=dev.
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile("dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# The second environment (`make test-pymc`, PTONNX_SECOND_ENVIRONMENT=1) checks the other PyTensor
# line: which graphs it builds and lifts, not ptonnx's numbers again, so fewer examples of each.
settings.register_profile("ci-second", parent=settings.get_profile("ci"), max_examples=10)
_profile = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile("ci-second" if _profile == "ci" and os.environ.get("PTONNX_SECOND_ENVIRONMENT") else _profile)

#: PyTensor's own evaluation: the Python implementations, no rewrites.
REFERENCE_MODE = reference_mode()
#: What a compiled function's graph looks like after PyTensor's rewrites (Composite ops etc.).
REWRITTEN_MODE = Mode(linker="py", optimizer="fast_run").excluding("inplace", "BlasOpt")

#: the older name of `ptonnx.testing.assert_matches_pytensor`
check_onnx_matches_pytensor = assert_matches_pytensor


def _outcome(fn, values):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(*values), None
    except Exception as exc:  # noqa: BLE001 - the exception is what is compared
        return None, exc


def rewritten_graph(variables, outs):
    """The graph `mode="ONNX"` hands ptonnx: its rewrites, run by PyTensor's Python linker, so the
    graph is not compiled twice (check_like_pytensor compiles it; the mode itself is tested in
    tests/e2e/test_onnx_mode_programs.py and tests/test_api_runtime.py)."""
    return pytensor.function(variables, outs, mode=Mode(linker="py", optimizer=ptonnx.mode.onnx_mode().provided_optimizer)).maker.fgraph


def check_like_pytensor(variables, outs, values, message=None, compare=None, *, more_values=(), compare_for=None, reference_mode=None):
    """The compiled model returns what PyTensor returns, or raises like it: a
    `ptonnx.errors.CheckFailedError` that is also PyTensor's exception class. Checked
    for the plain graph and for the ONNX mode's rewritten graph (each against PyTensor's
    evaluation of that graph), at every onnxruntime level. Returns PyTensor's exception
    on the plain graph, or None. `compare(actual, expected, context)` replaces `assert_same`.

    `more_values`: further input lists (other shapes: one model serves unknown dims) run
    through the same compiled models; `compare_for(values)` gives the compare for each list.
    `reference_mode`: PyTensor's evaluation in another mode (its C backend, where the Python one
    would take too long), REFERENCE_MODE by default."""

    value_lists = [values, *more_values]
    rewritten = rewritten_graph(variables, outs)
    graphs = [(ptonnx.api.function_graph(variables, outs), variables, outs), (rewritten, rewritten.inputs, rewritten.outputs)]
    first = None
    for k, (fgraph, ins, graph_outs) in enumerate(graphs):
        reference = pytensor.function(ins, graph_outs, mode=reference_mode or REFERENCE_MODE)
        cm = None
        for n, vals in enumerate(value_lists):
            expected, raised = _outcome(reference, vals)
            first = raised if k == 0 and n == 0 else first
            if isinstance(raised, NotImplementedError):  # PyTensor has no implementation here (e.g. float16): no number to match
                continue
            if cm is None:
                cm = ptonnx.compile(fgraph)
                onnx.checker.check_model(cm.model, full_check=True)
                runs = {level: cm.with_session_options(session_options(level)) for level in ORT_LEVELS}
            check = compare_for(vals) if compare_for is not None else compare or assert_same
            for level, run in runs.items():
                try:
                    _same_outcome(run, vals, expected, raised, check, message, f"at {level}" + (f" on input list {n}" if n else ""))
                except AssertionError as exc:  # the IR only on failure: printing it costs seconds for a big graph
                    raise AssertionError(f"{exc}\n{cm.ir}") from None
    return first


def _same_outcome(run, vals, expected, raised, check, message, where: str) -> None:
    from ptonnx.errors import CheckFailedError

    actual, failed = _outcome(run, vals)
    if raised is None:
        assert failed is None, f"PyTensor returned; ptonnx raised {failed!r} {where}"
        for a, e in zip(actual, expected, strict=True):
            check(a, e, where)
        return
    assert failed is not None, f"PyTensor raised {raised!r}; ptonnx returned {actual} {where}"
    assert isinstance(failed, CheckFailedError), f"{failed!r} {where}"
    assert isinstance(failed, type(raised)), f"{type(failed).__mro__} is not a {type(raised)} {where}"
    if message is not None:
        assert message in str(failed)


def portability_table(programs: dict, runtimes: tuple[str, ...]) -> dict:
    """`portability.matrix.run` of `programs` on `runtimes`, for the tests of its cheap columns:
    onnxruntime-web needs node and web/node_modules, which `make test` installs (so under CI
    their absence fails the test; elsewhere it skips, saying how to install them)."""
    import shutil

    import pytest

    from portability.matrix import run
    from portability.runtimes import ROOT

    if not (ROOT / "web" / "node_modules" / "onnxruntime-web").is_dir() or not shutil.which("node"):
        if os.environ.get("CI"):
            pytest.fail("the onnxruntime-web column needs node and web/node_modules (make test installs them)")
        pytest.skip("the onnxruntime-web column needs node and web/node_modules (cd web && npm ci)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run(programs, runtimes)
