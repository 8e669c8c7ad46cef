"""A real model over protobuf's 2 GiB limit, end to end (not in CI: ~4.5 GB of memory, ~30 s).

    python -m benchmarks.big_model

Compiles `x @ w` with a 2 GiB + 4 MiB float32 weight, checks that ptonnx chose
ONNX external data, runs it in onnxruntime, saves it and prints the sizes, and the
peak resident memory of the whole run (VmHWM) against the weight's size: the
user's own array is 1x; issue 19's goal is 2.5x.
`tests/test_api_runtime.py` covers the same paths with the limit lowered.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np
import pytensor.tensor as pt

import ptonnx


def main() -> int:
    k, n = 1024, (1 << 19) + 1024
    x = pt.matrix("x", dtype="float32", shape=(1, k))
    y = pt.dot(x, pt.constant(np.ones((k, n), np.float32), name="w"))
    start = time.perf_counter()
    cm = ptonnx.compile_function([x], [y])
    print(f"compiled in {time.perf_counter() - start:.1f} s; external data: {ptonnx.model_files.needs_external_data(cm.model)}")
    got = cm(np.full((1, k), 0.5, np.float32))[0]
    ok = np.array_equal(got, np.full((1, n), k * 0.5, np.float32))
    with tempfile.TemporaryDirectory() as tmp:
        path = cm.save(os.path.join(tmp, "huge.onnx"))
        print(f"ran: {'ok' if ok else 'WRONG'}; {path}: {os.path.getsize(path)} bytes + "
              f"{os.path.getsize(path + '.data')} bytes of external data")
    peak = _peak_resident_bytes()
    weight = k * n * 4
    print(f"peak resident memory: {peak / 1e9:.2f} GB = {peak / weight:.1f}x the {weight / 1e9:.2f} GB weight")
    return 0 if ok else 1


def _peak_resident_bytes() -> int:
    """The process's peak resident set (Linux /proc: VmHWM, in kB)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


if __name__ == "__main__":
    sys.exit(main())
