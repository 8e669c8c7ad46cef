"""The differential fuzzer's CI slice: fixed seeds, bounded time, no mismatch and no crash allowed.

Longer runs: `python -m fuzz --seconds 600 --seed 0` (see fuzz/cli.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fuzz.check import FAILURES, KINDS, check_program
from fuzz.cli import run
from fuzz.generate import generate
from fuzz.values import DTYPES, extremes

#: Every seed as the user graph, rewritten, and with inplace/BLAS rewrites; one seed in
#: SLOW_EVERY also through FAST_RUN (Numba) and the C linker, which compile native code.
#: Measured on 2 shared cores: ~35 s with warm PyTensor/Numba caches, ~45 s cold. The second
#: environment (pytensor 2.38) runs half of the seeds, to keep CI's whole run near 15 minutes.
GRAPHS = 200 if os.environ.get("PTONNX_SECOND_ENVIRONMENT") else 400
SLOW_EVERY = 100
FIRST_SEED = 20260101
#: the slice in shards of consecutive seeds, so that pytest-xdist spreads them over workers
SHARDS = 8


@pytest.mark.parametrize("shard", range(SHARDS))
def test_fuzz_slice(shard):
    size = GRAPHS // SHARDS
    first = FIRST_SEED + shard * size
    summary = run(range(first, first + size), KINDS, slow_every=SLOW_EVERY)
    print(summary.table())
    print(summary.distinct())
    reproducers = [finding.report(code, code=True) for finding, code in summary.findings if finding.outcome in FAILURES]
    assert not reproducers, f"{len(reproducers)} mismatches/crashes:\n\n" + "\n\n".join(reproducers)
    assert summary.counts["match"] > size, summary.table()  # the slice does compare numbers


def test_a_seed_reproduces_its_graph():
    a, b = generate(7), generate(7)
    assert a.code() == b.code()
    assert all(np.array_equal(x, y, equal_nan=x.dtype.kind == "f") for x, y in zip(a.arrays, b.arrays, strict=True))
    assert generate(8).code() != a.code()


@pytest.mark.parametrize("dtype", DTYPES)
def test_extremes_are_in_the_dtype(dtype):
    values = extremes(dtype)
    assert values.dtype == np.dtype(dtype) and values.size >= 2
    if np.dtype(dtype).kind == "f":
        assert np.isnan(values).any() and np.isinf(values).any() and (values == 0).any()
        assert (np.abs(values[np.isfinite(values)]) == np.finfo(dtype).max).any()
        assert ((values != 0) & (np.abs(values) < np.finfo(dtype).tiny)).any()  # a subnormal


def test_a_wrong_number_is_a_mismatch(monkeypatch):
    """The judge itself: onnxruntime results nudged by 1 % must be reported as a mismatch."""
    from fuzz import check

    program = next(p for p in map(generate, range(100)) if _plain_float(p))
    real = check.run_at_every_level

    def nudged(cm, *arrays):
        return {level: [o * 1.01 if o.dtype.kind == "f" else o for o in outs] for level, outs in real(cm, *arrays).items()}

    monkeypatch.setattr(check, "run_at_every_level", nudged)
    (finding,) = check_program(program, ("user",))
    assert finding.outcome == "mismatch", finding.report(program)


def _plain_float(program) -> bool:
    """A graph whose outputs are float arrays of ordinary values (so a 1 % change shows)."""
    (finding,) = check_program(program, ("user",), localise_mismatches=False)
    if finding.outcome != "match":
        return False
    import pytensor
    from pytensor.compile.mode import Mode

    outs = pytensor.function(program.inputs, program.outputs, mode=Mode(linker="py", optimizer=None))(*program.arrays)
    return all(o.dtype.kind == "f" and o.size and np.isfinite(o).all() and (np.abs(o) > 1e-3).all() for o in outs)
