"""What `CompiledModel.__call__` costs over onnxruntime itself.

    python -m benchmarks.call_overhead [--write] [--rounds 5] [--no-iobinding]

For each model and size, times single calls of: `cm.session.run(None, feed)` with a prebuilt
feed ("bare"), `cm(*arrays)` ("call"), and unless `--no-iobinding` two IOBinding variants
that `CompiledModel` could use instead of `session.run`, both fed the prebuilt arrays:
one IOBinding reused across calls with onnxruntime allocating the outputs and
`copy_outputs_to_cpu()` ("IOB ort"), and fresh numpy output buffers of the shapes of an
earlier call bound each call ("IOB numpy"). Calls alternate between the variants in
interleaved rounds; each cell is the median of all its calls. The target (issue): call /
bare at most 1.1. `--write` saves the table to benchmarks/results/call_overhead.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import numpy as np

from benchmarks._common import RESULTS, ROOT, git_commit, require_committed

#: calls per round at each size (small calls are noisy, large ones slow)
CALLS = {100: 2000, 1_000_000: 50}
TARGET = 1.1


def models():
    """(name, CompiledModel, input arrays of size n) for each benchmarked model."""
    import pytensor.tensor as pt

    import ptonnx

    x = pt.dvector("x")
    elementwise = ptonnx.compile_function([x], [pt.exp(-0.5 * x**2) * 2 + x])
    x = pt.dvector("x")
    three = ptonnx.compile_function([x], [x + 1, x * 2, pt.exp(x)])
    x, mu, sigma = pt.dvector("x"), pt.dscalar("mu"), pt.dscalar("sigma")
    logp = ptonnx.compile_function([x, mu, sigma], [(-0.5 * ((x - mu) / sigma) ** 2 - pt.log(sigma)).sum()])
    return [
        ("elementwise `exp(-x²/2)·2 + x`", elementwise, lambda v: [v]),
        ("3 outputs `x+1, 2x, exp(x)`", three, lambda v: [v]),
        ("log-density sum (x, mu, sigma)", logp, lambda v: [v, np.array(0.3), np.array(1.5)]),
    ]


def variants(cm, arrays, iobinding: bool) -> dict:
    """The timed calls, each returning the outputs as numpy arrays."""
    session = cm.session
    feed = dict(zip(cm.input_names, arrays, strict=True))
    out = {"bare": lambda: session.run(None, feed), "call": lambda: cm(*arrays)}
    if not iobinding:
        return out
    names = cm.output_names
    reused = session.io_binding()

    def iob_ort():
        for name, array in feed.items():
            reused.bind_cpu_input(name, array)
        for name in names:
            reused.bind_output(name)
        session.run_with_iobinding(reused)
        return reused.copy_outputs_to_cpu()

    earlier = [(o.dtype, list(o.shape)) for o in session.run(None, feed)]

    def iob_numpy():
        binding = session.io_binding()  # a fresh one: the buffers it holds are the caller's
        for name, array in feed.items():
            binding.bind_cpu_input(name, array)
        results = []
        for name, (dtype, shape) in zip(names, earlier, strict=True):
            buffer = np.empty(shape, dtype)
            binding.bind_output(name, "cpu", 0, dtype, shape, buffer.ctypes.data)
            results.append(buffer)
        session.run_with_iobinding(binding)
        return results

    out.update({"IOB ort": iob_ort, "IOB numpy": iob_numpy})
    return out


def measure(calls: dict, per_round: int, rounds: int) -> dict[str, float]:
    """Median seconds per call of each variant, over `rounds` interleaved rounds."""
    reference = calls["bare"]()
    for name, call in calls.items():  # every variant computes the same numbers
        for a, b in zip(reference, call(), strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)
    times: dict[str, list[float]] = {name: [] for name in calls}
    clock = time.perf_counter
    for _ in range(rounds):
        for name, call in calls.items():
            record = times[name].append
            for _ in range(per_round):
                start = clock()
                call()
                record(clock() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save to benchmarks/results/call_overhead.md")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-iobinding", action="store_true", help="time only bare and call")
    args = parser.parse_args()
    if args.write:
        require_committed(RESULTS)
    import onnxruntime

    iobinding = not args.no_iobinding
    extra = ["IOB ort", "IOB numpy"] if iobinding else []
    head = ["model", "n", "calls", "bare µs", "call µs", "call / bare", *[f"{v} µs" for v in extra], *[f"{v} / bare" for v in extra]]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    ratios = []
    rng = np.random.default_rng(0)
    for label, cm, inputs in models():
        for n, per_round in CALLS.items():
            med = measure(variants(cm, inputs(rng.normal(size=n)), iobinding), per_round, args.rounds)
            ratios.append(med["call"] / med["bare"])
            cells = [label, f"{n:,}", f"{per_round * args.rounds:,}", f"{med['bare'] * 1e6:,.1f}", f"{med['call'] * 1e6:,.1f}",
                     f"**{ratios[-1]:.2f}**", *[f"{med[v] * 1e6:,.1f}" for v in extra], *[f"{med[v] / med['bare']:.2f}" for v in extra]]
            lines.append("| " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)
    worst = max(ratios)
    measured = (
        f"Measured {datetime.datetime.now().isoformat(timespec='seconds')} on {platform.system()} {platform.machine()} "
        f"({os.cpu_count()} CPUs), Python {platform.python_version()}, onnxruntime {onnxruntime.__version__}, "
        f"commit {git_commit()}."
    )
    text = "\n".join([
        measured,
        "Command: `python -m benchmarks.call_overhead" + "".join(f" {a}" for a in sys.argv[1:]) + "`",
        "",
        "Medians of single calls, float64 inputs, interleaved rounds. bare = `cm.session.run(None, feed)` "
        "with a prebuilt feed; call = `cm(*arrays)` (inputs checked, outputs the caller's)."
        + (" IOB ort = one reused IOBinding, onnxruntime's outputs copied out by `copy_outputs_to_cpu()`; "
           "IOB numpy = fresh numpy output buffers (shapes of an earlier call) bound to a fresh IOBinding."
           if iobinding else ""),
        "",
        *lines,
        "",
        f"Worst call / bare: **{worst:.2f}** (target ≤ {TARGET}): **{'PASS' if worst <= TARGET else 'FAIL'}**",
        "",
    ])
    print(text)
    if args.write:
        (ROOT / "benchmarks/results/call_overhead.md").write_text("# Call overhead of CompiledModel\n\n" + text)


if __name__ == "__main__":
    main()
