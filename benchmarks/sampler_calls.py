#!/usr/bin/env python
"""What a sampler pays per log-density-and-gradient evaluation through `ptonnx.pymc.compile_flat_logp`:
K points evaluated one call each (the flat form) against one call of the batched form.

    .venv-pymc/bin/python -m benchmarks.sampler_calls [--write] [--k 8 64] [--models ...]

Each model of `tests/pymc/models.py` at n = 100 observations (the models without a Scan:
the batched form refuses those), onnxruntime on 1 thread. Cells are µs per point: the
median over rounds of (time of the K evaluations) / K; the rounds interleave the two forms
(a shared machine's load hits both alike). `--write` saves benchmarks/results/sampler_calls.md.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


from benchmarks._common import RESULTS, ROOT, git_commit, require_committed
from ptonnx.testing import session_options



def measure(name: str, ks: list[int], rounds: int) -> dict | None:
    """The row of model `name`, or None where the batched form refuses it (a Scan)."""
    import ptonnx.pymc
    from ptonnx.errors import UnsupportedOpError
    from tests.pymc.models import MODELS

    model = MODELS[name](100)
    try:
        batched = ptonnx.pymc.compile_flat_logp(model, batched=True)
    except UnsupportedOpError:
        print(name, "refused by the batched form (an op with an inner graph)", flush=True)
        return None
    flat = ptonnx.pymc.compile_flat_logp(model)
    flat.cm = flat.cm.with_session_options(session_options(threads=1, spin=True))
    batched.cm = batched.cm.with_session_options(session_options(threads=1, spin=True))
    rng = np.random.default_rng(0)
    row = {"model": name, "size": flat.size, "nodes": len(flat.cm.model.graph.node),
           "batched_nodes": len(batched.cm.model.graph.node), "us_per_point": {}}
    for k in ks:
        q = flat.from_point(model.initial_point()) + rng.normal(scale=0.1, size=(k, flat.size))
        expected = [flat(r) for r in q]
        logp, grad = batched(q)
        assert np.allclose(logp, [e[0] for e in expected], rtol=1e-12, atol=0)
        assert np.allclose(grad, [e[1] for e in expected], rtol=1e-10, atol=1e-12)
        calls = {"one call per point": lambda q=q: [flat(r) for r in q], "batched": lambda q=q: batched(q)}
        samples = {key: [] for key in calls}
        repeat = max(1, 200 // k)
        for _ in range(rounds):
            for key, call in calls.items():
                start = time.perf_counter()
                for _ in range(repeat):
                    call()
                samples[key].append((time.perf_counter() - start) / repeat / k * 1e6)
        row["us_per_point"][k] = {key: statistics.median(s) for key, s in samples.items()}
        print(name, k, row["us_per_point"][k], flush=True)
    return row


def markdown(rows: list[dict], ks: list[int], refused: list[str]) -> str:
    lines = [f"# Sampler calls: µs per point, flat form one call per point against the batched form (ptonnx {git_commit()})",
             "", "Command: `.venv-pymc/bin/python -m benchmarks.sampler_calls --write`; onnxruntime on 1 thread, n = 100.", "",
             "| model | size | " + " | ".join(f"K={k}: per point µs | K={k}: batched µs | speed-up" for k in ks) + " |",
             "|---|---:|" + "---:|---:|---:|" * len(ks)]
    for r in rows:
        cells = [r["model"], str(r["size"])]
        for k in ks:
            c = r["us_per_point"][k]
            cells += [f"{c['one call per point']:.1f}", f"{c['batched']:.1f}", f"{c['one call per point'] / c['batched']:.1f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    if refused:
        lines += ["", f"Not timed: {', '.join(refused)} (the batched form refuses a model with a Scan)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="*", default=[8, 64])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=None)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        require_committed(RESULTS)
    from tests.pymc.models import MODELS

    names = args.models or list(MODELS)
    measured = {name: measure(name, args.k, args.rounds) for name in names}
    rows = [row for row in measured.values() if row is not None]
    table = markdown(rows, args.k, [name for name, row in measured.items() if row is None])
    print(table)
    if args.write:
        (ROOT / "benchmarks" / "results" / "sampler_calls.md").write_text(table)


if __name__ == "__main__":
    main()
