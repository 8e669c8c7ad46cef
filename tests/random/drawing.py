"""Compile a PyTensor random variable with run-time parameters, and draw from it as the tests
check every draw: the same bytes at each onnxruntime level, PyTensor's shape and dtype."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytensor
import pytensor.tensor as pt

import ptonnx
from ptonnx.testing import reference_mode, run_at_every_level


def compile_draws(rv, params, dtype: str, size, as_array: Callable):
    """The compiled model of `rv(*params, size, rng, dtype)` for run-time parameters (each made an
    array by `as_array`), its PyTensor function (PyTensor's own draw), and the parameters' arrays."""
    rng = pytensor.shared(np.random.default_rng(0))
    arrays = [as_array(p) for p in params]
    inputs = [pt.tensor(f"p{i}", dtype=str(a.dtype), shape=a.shape) for i, a in enumerate(arrays)]
    out = rv(*inputs, size=size, rng=rng, dtype=dtype)
    return ptonnx.compile_function(inputs, [out]), pytensor.function(inputs, out, mode=reference_mode()), arrays


def draws(rv, params, dtype: str, size, as_array: Callable, key) -> np.ndarray:
    """The compiled model's draws under `key`, the same at every onnxruntime level, shaped and
    typed as PyTensor's."""
    cm, f, arrays = compile_draws(rv, params, dtype, size, as_array)
    runs = [outs[0] for outs in run_at_every_level(cm, *arrays, key).values()]
    assert runs[0].tobytes() == runs[1].tobytes(), "the onnxruntime levels differ"
    ours, theirs = runs[0], np.asarray(f(*arrays))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, ours.dtype, theirs.shape, theirs.dtype)
    return ours
