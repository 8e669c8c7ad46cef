"""What a call of a model IREE compiled costs, by way of calling it.

    python -m benchmarks.iree_call [--write] [--rounds 7]

For k = 1, 5 and 20 float64 parameters, the model `sum(x_i * i), x_1 * 2, ..., x_k * 2`
(k inputs, k + 1 outputs) is compiled for IREE twice: with scalar parameters, which the
lowering packs into one input and one output buffer (`lowering/iree_signature.py`), and with
parameters of shape (?,) given one element each, which it cannot pack (their size is not
static). Timed per call, interleaved rounds, medians:
- "invoker": the unpacked model through IREE's `FunctionInvoker` (`context.modules.module[f]`,
  the documented Python entry point, what ptonnx called before), outputs read by `to_host`;
- "direct": the unpacked model through `ptonnx.iree_call.IreeCall` (`VmContext.invoke`);
- "packed": the packed model through `IreeModel.run` (`Signature` pack/unpack, then `IreeCall`);
- "floor": `VmContext.invoke` alone, its argument list built once, results not read.
`--write` saves benchmarks/results/iree_call.md.
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

KS = (1, 5, 20)


def _model(k: int, packed: bool):
    import pytensor.tensor as pt

    import ptonnx

    xs = [pt.dscalar(f"x{i}") if packed else pt.dvector(f"x{i}") for i in range(k)]
    total = sum(x.sum() * float(i + 1) for i, x in enumerate(xs))
    return ptonnx.compile_function(xs, [total, *(x * 2.0 for x in xs)], runtime="iree")


def variants(k: int) -> dict:
    """The timed calls, each returning the user's outputs as numpy arrays."""
    from iree import runtime

    packed, unpacked = _model(k, True), _model(k, False)
    scalars = [np.asarray(0.5 + i) for i in range(k)]
    vectors = [a.reshape(1) for a in scalars]
    model = unpacked._iree
    invoker = model._context.modules.module[unpacked.model.graph.name]
    call = model._call
    args = runtime.VmVariantList(k)
    for a in vectors:
        args.push_ref(call._allocator.allocate_buffer_copy(memory_type=call._memory, allowed_usage=call._usage,
                                                           device=call._device, buffer=a, element_type=call._input_types[0]))

    def floor():
        results = runtime.VmVariantList(k + 1)
        call._vm_context.invoke(call._function, args, results)
        return None

    return {
        "invoker": lambda: [np.asarray(r.to_host()) for r in invoker(*vectors)],
        "direct": lambda: call(vectors),
        "packed": lambda: packed._iree.run(scalars),
        "floor": floor,
    }


def measure(calls: dict, per_round: int, rounds: int) -> dict[str, float]:
    """Median seconds per call of each variant, over interleaved rounds (the results agree)."""
    reference = calls["invoker"]()
    for name in ("direct", "packed"):
        for a, b in zip(reference, calls[name](), strict=True):
            np.testing.assert_array_equal(np.ravel(a), np.ravel(b), err_msg=name)
    times: dict[str, list[float]] = {name: [] for name in calls}
    clock = time.perf_counter
    for _ in range(rounds):
        for name, call in calls.items():
            start = clock()
            for _ in range(per_round):
                call()
            times[name].append((clock() - start) / per_round)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save to benchmarks/results/iree_call.md")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    args = parser.parse_args()
    if args.write:
        require_committed(RESULTS)
    from importlib.metadata import version

    head = ["k inputs, k + 1 outputs", "invoker µs", "direct µs", "packed µs", "floor µs", "packed / invoker",
            "invoker per buffer µs", "direct per buffer µs"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    rows = {}
    for k in KS:
        med = {name: t * 1e6 for name, t in measure(variants(k), args.calls, args.rounds).items()}
        rows[k] = med
        print(k, {name: round(t, 2) for name, t in med.items()}, file=sys.stderr, flush=True)
    first, last = KS[0], KS[-1]
    buffers = 2 * (last - first)  # inputs and outputs added from the first row to the last

    def per_buffer(name):
        return (rows[last][name] - rows[first][name]) / buffers

    for k, med in rows.items():
        lines.append(f"| {k} | {med['invoker']:.1f} | {med['direct']:.1f} | {med['packed']:.1f} | {med['floor']:.1f} | "
                     f"**{med['packed'] / med['invoker']:.2f}** | {per_buffer('invoker'):.2f} | {per_buffer('direct'):.2f} |")
    measured = (f"Measured {datetime.datetime.now().isoformat(timespec='seconds')} on {platform.system()} {platform.machine()} "
                f"({os.cpu_count()} CPUs), Python {platform.python_version()}, IREE {version('iree-base-runtime')} local-sync, "
                f"commit {git_commit()}.")
    text = "\n".join([
        measured,
        "Command: `python -m benchmarks.iree_call" + "".join(f" {a}" for a in sys.argv[1:]) + "`",
        "",
        f"Per call, median of {args.rounds} interleaved rounds of {args.calls} calls. Per buffer: the growth from "
        f"k = {first} to k = {last} over the {buffers} inputs and outputs added (unpacked model).",
        "",
        *lines,
        "",
    ])
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "iree_call.md").write_text(text)


if __name__ == "__main__":
    main()
