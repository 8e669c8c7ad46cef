"""Checking an exported model against PyTensor: what ptonnx's own tests, fuzzer, audit and
benchmarks use, public so users can check their exports the same way.

- `ORT_LEVELS` and `session_options(level)`: onnxruntime with its optimisations off and
  at its default (`ORT_ENABLE_ALL`, what users get); every comparison runs at both.
- `TOLERANCE`: the one table of tolerances, per float dtype.
- `assert_same(actual, expected)`: dtype, shape and numbers (NaN == NaN, the sign of a
  zero, floats within `TOLERANCE` of the dtype they were computed in).
- `assert_matches_pytensor(inputs, outputs, arrays)`: compile, check the model, run it at
  every level, compare each output with PyTensor's own (Python) evaluation.

    from ptonnx.testing import assert_matches_pytensor
    assert_matches_pytensor([x], [pt.gammaln(x)], [np.array([0.5, 1e-300, np.inf])])
"""

from __future__ import annotations

import numpy as np

#: onnxruntime's graph optimisation levels every comparison runs at: none, and what users get
ORT_LEVELS = ("ORT_DISABLE_ALL", "ORT_ENABLE_ALL")

#: The tolerances of every ONNX-vs-PyTensor comparison, stated once per dtype (onnxruntime's
#: vectorised float32 exp/tanh/sigmoid differ from NumPy's in the last bits).
TOLERANCE = {
    "float16": {"rtol": 1e-3, "atol": 1e-3},
    "float32": {"rtol": 1e-5, "atol": 1e-6},
    "float64": {"rtol": 1e-12, "atol": 1e-12},
}


def session_options(level: str = "ORT_ENABLE_ALL", *, threads: int | None = None, quiet: bool = False,
                    spin: bool = False, **settings):
    """onnxruntime session options at optimisation `level` (a name from `ORT_LEVELS`, or
    ORT_ENABLE_BASIC/EXTENDED); `threads` pins intra- and inter-op threads (benchmarks);
    `quiet` keeps onnxruntime's own log off stderr (errors still come back as exceptions);
    `spin` keeps onnxruntime's busy-waiting pool threads (its default, what users time:
    benchmarks); other keywords set `SessionOptions` attributes (`enable_profiling=True`)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    if not spin:
        # idle pool threads wait instead of spinning: the same work and numbers, but tests on two
        # workers (two sessions, each with a thread per core) no longer burn each other's cores
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    for name, value in settings.items():
        setattr(options, name, value)
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    if quiet:
        options.log_severity_level = 4
    return options


def narrowest(dtypes) -> str | None:
    """The least precise float dtype among `dtypes`, or None."""
    floats = sorted({d for d in dtypes if d.startswith("float")}, key=lambda d: np.dtype(d).itemsize)
    return floats[0] if floats else None


def computation_dtype(graph) -> str | None:
    """The least precise float dtype any value of the IR graph is computed in: a float64 result
    computed from float32 intermediates is only float32-accurate, and is held to that."""
    return narrowest({v.dtype for v in graph.inputs} | {o.dtype for n in graph for o in n.outputs})


def tolerance_dtype(expected_dtype: str, computed_in: str | None) -> str:
    """The dtype whose tolerance applies: the result's, or the narrower one it was computed in."""
    return min(expected_dtype, computed_in or expected_dtype, key=lambda d: np.dtype(d).itemsize)


def assert_same(actual, expected, context: str = "", computed_in: str | None = None) -> None:
    """Same dtype, same shape, same numbers (within the dtype's tolerance; NaN == NaN; the sign
    of a zero kept, as -0.0 and 0.0 differ after 1/x, log, arctan2...)."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{context}: dtype {actual.dtype} != PyTensor's {expected.dtype}"
    assert actual.shape == expected.shape, f"{context}: shape {actual.shape} != PyTensor's {expected.shape}"
    if expected.dtype.kind == "f":
        tol = TOLERANCE[tolerance_dtype(expected.dtype.name, computed_in)]
        np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=context, **tol)
        zeros = (expected == 0) & (actual == 0)
        np.testing.assert_array_equal(np.signbit(actual[zeros]), np.signbit(expected[zeros]), err_msg=f"sign of zero: {context}")
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=context)


def run_at_every_level(cm, *arrays) -> dict:
    """{level: outputs} of the compiled model run at each of `ORT_LEVELS`."""
    return {level: cm.with_session_options(session_options(level))(*arrays) for level in ORT_LEVELS}


def reference_mode():
    """PyTensor's own evaluation: the Ops' Python implementations, no rewrites."""
    from pytensor.compile.mode import Mode

    return Mode(linker="py", optimizer=None)


#: float32/float64 results of long sums (Conv, pooling, matrix products, BatchNorm folded into
#: weights) that onnxruntime adds in another order than NumPy: the same table, widened
REORDERED_SUMS = {
    "float32": {"rtol": 1e-4, "atol": 1e-5},
    "float64": {"rtol": 1e-10, "atol": 1e-12},
}


def assert_no_miscompiled_pattern(model) -> None:
    """The model holds no pattern an onnxruntime optimiser is known to get wrong.

    `MatMul` with a 1-D operand: onnxruntime 1.32's extended level fuses
    `MatMul(Transpose(A), x)` into a FusedMatMul that computes wrong numbers.
    """
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in
             list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)
             if v.type.tensor_type.HasField("shape")}
    ranks.update({t.name: len(t.dims) for t in model.graph.initializer})
    for node in model.graph.node:
        if node.op_type == "MatMul":
            assert all(ranks.get(name, 2) >= 2 for name in node.input), f"1-D operand of MatMul {node.name}"


def assert_matches(cm, arrays, expected, computed_in: str | None = None, compare=None) -> None:
    """Run `cm` at every onnxruntime level and compare each output with `expected`
    (`compare(actual, expected, context)` replaces `assert_same`)."""
    assert_no_miscompiled_pattern(cm.model)
    compare = compare or (lambda a, e, context: assert_same(a, e, context, computed_in or computation_dtype(cm.ir)))
    for level, actual in run_at_every_level(cm, *arrays).items():
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            compare(a, e, f"output {i} at {level}\n{cm.ir}")


def assert_matches_pytensor(inputs, outputs, arrays, passes=None, reference=None, **compile_kwargs):
    """Compile with ptonnx, run the ONNX checker (full), run the model at every onnxruntime
    level, and compare with PyTensor's evaluation of the same graph; returns the model.

    `reference(*arrays)` replaces PyTensor's Python evaluation only where that departs
    from PyTensor's own C implementation (say why at the call)."""
    import onnx
    import pytensor

    import ptonnx

    outputs = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
    expected = pytensor.function(inputs, outputs, mode=reference_mode())(*arrays)
    if reference is not None:
        expected = reference(*arrays)
    cm = ptonnx.compile_function(inputs, outputs, passes, **compile_kwargs)
    onnx.checker.check_model(cm.model, full_check=True)
    assert_matches(cm, arrays, expected)
    return cm
