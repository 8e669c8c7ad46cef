"""Random draws: ptonnx's models against NumPy's Generator, and PyMC's posterior predictive.

    python -m benchmarks.random_draws [--write] [--rounds 7] [--draws 1000000] [--no-pymc] [--generator]

Part 1: `--draws` float64 (int64 for counts) draws of each distribution, one compiled model
each (parameters as inputs, the key an input), onnxruntime on one thread, against NumPy's
`Generator` (PCG64) drawing the same number with the same parameters; interleaved rounds,
medians, the ratio of the two medians from the same run. Node counts are the model's ONNX
nodes (a Loop's body counted once).

`--generator` adds the floor: onnxruntime's time per kernel (a chain of one op, uint32 at
`--draws` elements, uint64 at half as many) and what Threefry-2x32-20 and Philox-4x32-10 cost
at the least when every node runs at those speeds (64 bits a draw), against NumPy's `random()`.

Part 2 (the PyMC environment; `--no-pymc` skips it): the posterior predictive of three
`tests/pymc` models, 4,000 posterior rows at 100 and 10,000 observations: ptonnx's model
(compiled once, as an application holds it; compile time reported beside it; on one thread and
at onnxruntime's default, one thread per core, which is what an application gets) against
`pm.sample_posterior_predictive` (which loops over the rows in Python; C backend, its
compile included as a user pays it). `--write` saves benchmarks/results/random.md.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import time
import warnings

import numpy as np

from benchmarks._common import RESULTS, ROOT, git_commit, require_committed

#: name -> (PyTensor builder of the draws from parameter variables, parameter values, NumPy's draw)
DISTRIBUTIONS = {
    "uniform": (lambda rng, n, a, b: _rv("uniform", rng, n, a, b), (0.0, 1.0), lambda g, n: g.uniform(0.0, 1.0, n)),
    "normal": (lambda rng, n, a, b: _rv("normal", rng, n, a, b), (0.0, 1.0), lambda g, n: g.normal(0.0, 1.0, n)),
    "exponential": (lambda rng, n, a: _rv("exponential", rng, n, a), (1.0,), lambda g, n: g.exponential(1.0, n)),
    "gamma": (lambda rng, n, a, b: _rv("gamma", rng, n, a, b), (2.5, 1.0), lambda g, n: g.gamma(2.5, 1.0, n)),
    "beta": (lambda rng, n, a, b: _rv("beta", rng, n, a, b), (2.0, 3.0), lambda g, n: g.beta(2.0, 3.0, n)),
    "poisson": (lambda rng, n, a: _rv("poisson", rng, n, a), (4.0,), lambda g, n: g.poisson(4.0, n)),
    "poisson (lam 50)": (lambda rng, n, a: _rv("poisson", rng, n, a), (50.0,), lambda g, n: g.poisson(50.0, n)),
    "binomial": (lambda rng, n, a, b: _rv("binomial", rng, n, a, b), (20, 0.3), lambda g, n: g.binomial(20, 0.3, n)),
}
#: the PyMC models of part 2
PYMC_MODELS = ("linear_regression", "logistic_regression", "hierarchical")


def _rv(name, rng, n, *params):
    import pytensor.tensor as pt

    fn = {"gamma": lambda *p, **kw: pt.random.gamma(p[0], scale=p[1], **kw)}.get(name, getattr(pt.random, name))
    return fn(*params, size=(n,), rng=rng)


def _options():
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return options


def _median_times(calls: dict, rounds: int) -> dict:
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def draws_table(n: int, rounds: int) -> list[str]:
    import pytensor
    import pytensor.tensor as pt

    import ptonnx
    from ptonnx.errors import UnsupportedOpError
    from ptonnx.keys import key

    rows = ["| distribution | ONNX nodes | ptonnx ms | NumPy ms | ratio | compile s |", "|---|---|---|---|---|---|"]
    for name, (build, values, numpy_draw) in DISTRIBUTIONS.items():
        params = [pt.scalar(f"p{i}", dtype="int64" if isinstance(v, int) else "float64") for i, v in enumerate(values)]
        rng = pytensor.shared(np.random.default_rng(0), name="rng")
        start = time.perf_counter()
        try:
            cm = ptonnx.compile_function(params, [build(rng, n, *params)]).with_session_options(_options())
        except UnsupportedOpError as exc:
            rows.append(f"| {name} | not drawn yet ({str(exc).split(';')[0][-60:]}) | | | | |")
            continue
        compile_s = time.perf_counter() - start
        arrays = [np.asarray(v) for v in values]
        k = key(1)
        cm(*arrays, k)  # the session, and a first run
        g = np.random.default_rng(1)
        t = _median_times({"ptonnx": lambda: cm(*arrays, k), "numpy": lambda: numpy_draw(g, n)}, rounds)
        rows.append(f"| {name} | {len(cm.model.graph.node)} | {t['ptonnx'] * 1e3:.1f} | {t['numpy'] * 1e3:.1f} | "
                    f"{t['ptonnx'] / t['numpy']:.2f} | {compile_s:.2f} |")
    return rows


#: (op, dtype, second operand: "vector" or a scalar constant); BitShift is RIGHT
KERNELS = [("Add", "uint32", "vector"), ("Mul", "uint32", 8), ("BitShift", "uint32", 13), ("BitwiseXor", "uint32", "vector"),
           ("Mul", "uint64", 0xD2511F53), ("BitShift", "uint64", 32), ("BitwiseAnd", "uint64", 0xFFFFFFFF),
           ("BitwiseXor", "uint64", "vector")]
#: nodes per 64 bits a draw takes, at least: Threefry-2x32-20 on one counter (20 rounds of Add,
#: the rotation's Mul, ShiftRight and Add, Xor; 12 key-injection Adds); Philox-4x32-10 on half a
#: counter (10 rounds of 2 Mul, 2 ShiftRight, 2 And, 4 Xor on uint64 carriers of the words)
GENERATORS = {
    "Threefry-2x32-20": {("Add", "uint32"): 52, ("Mul", "uint32"): 20, ("BitShift", "uint32"): 20, ("BitwiseXor", "uint32"): 20},
    "Philox-4x32-10": {("Mul", "uint64"): 20, ("BitShift", "uint64"): 20, ("BitwiseAnd", "uint64"): 20, ("BitwiseXor", "uint64"): 40},
}


def _kernel_ms(op: str, dtype: str, second, n: int, rounds: int, chain: int = 40) -> float:
    """onnxruntime's median time per node of a chain of `chain` `op` nodes over n elements."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    kind = getattr(TensorProto, dtype.upper())
    extra = {"direction": "RIGHT"} if op == "BitShift" else {}
    nodes = [helper.make_node(op, [f"y{i}", "c"], [f"y{i + 1}"], **extra) for i in range(chain)]
    inputs = [helper.make_tensor_value_info("y0", kind, [n])]
    inits = []
    if second == "vector":
        inputs.append(helper.make_tensor_value_info("c", kind, [n]))
    else:
        inits.append(helper.make_tensor("c", kind, [], [second]))
    graph = helper.make_graph(nodes, "chain", inputs, [helper.make_tensor_value_info(f"y{chain}", kind, [n])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    session = ort.InferenceSession(model.SerializeToString(), _options(), providers=["CPUExecutionProvider"])
    feeds = {i.name: np.arange(n, dtype=dtype) * 2654435761 for i in session.get_inputs()}
    session.run(None, feeds)
    return _median_times({"chain": lambda: session.run(None, feeds)}, rounds)["chain"] * 1e3 / chain


def floor_table(n: int, rounds: int) -> list[str]:
    """The per-kernel times, and each generator's least time for n draws' 64 bits against NumPy's."""
    ms = {(op, dtype): _kernel_ms(op, dtype, second, n if dtype == "uint32" else n // 2, rounds)
          for op, dtype, second in KERNELS}
    g = np.random.default_rng(0)
    numpy_ms = _median_times({"numpy": lambda: g.random(n)}, rounds)["numpy"] * 1e3
    rows = ["| kernel | elements | ms per node |", "|---|---|---|"]
    rows += [f"| {op} {dtype} | {n if dtype == 'uint32' else n // 2:,} | {t:.3f} |" for (op, dtype), t in ms.items()]
    rows += ["", "| generator | nodes per draw | least ms (kernels alone) | NumPy random() ms | least / NumPy |", "|---|---|---|---|---|"]
    for name, counts in GENERATORS.items():
        least = sum(ms[k] * c for k, c in counts.items())
        rows.append(f"| {name} | {sum(counts.values())} | {least:.1f} | {numpy_ms:.1f} | {least / numpy_ms:.2f} |")
    return rows


def predictive_table(rounds: int) -> list[str]:
    import pymc as pm

    import ptonnx.pymc_predictive as pp
    from ptonnx.keys import key
    from tests.pymc import models

    rows = ["| model | observations | ptonnx ms (1 thread) | ptonnx ms (default threads) | compile s | "
            "pm.sample_posterior_predictive ms | ratio (1 thread) | ratio (default) |", "|---|---|---|---|---|---|---|---|"]
    for name in PYMC_MODELS:
        for n in (100, 10_000):
            model = getattr(models, name)(n)
            with model, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                posterior = pm.sample_prior_predictive(4000, random_seed=1).prior
            start = time.perf_counter()
            default = pp.compile_predictive(model, [rv.name for rv in model.observed_RVs])
            compile_s = time.perf_counter() - start
            cm = default.with_session_options(_options())
            arrays = pp.inputs_from(cm, posterior)
            cm(*arrays, key(0))
            default(*arrays, key(0))

            def theirs():
                with model, warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pm.sample_posterior_predictive(posterior, random_seed=2, progressbar=False)

            t = _median_times({"ptonnx": lambda: cm(*arrays, key(0)), "default": lambda: default(*arrays, key(0)),
                               "pymc": theirs}, max(3, rounds // 2))
            rows.append(f"| {name} | {n:,} | {t['ptonnx'] * 1e3:.0f} | {t['default'] * 1e3:.0f} | {compile_s:.2f} | "
                        f"{t['pymc'] * 1e3:.0f} | {t['ptonnx'] / t['pymc']:.3f} | {t['default'] / t['pymc']:.3f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--no-pymc", action="store_true")
    parser.add_argument("--generator", action="store_true")
    args = parser.parse_args()
    if args.write:
        require_committed(RESULTS)
    import onnxruntime
    import pytensor

    lines = ["# Random draws (`benchmarks/random_draws.py`)", "",
             f"{datetime.date.today()}, commit {git_commit()}, {platform.machine()}, onnxruntime {onnxruntime.__version__} "
             f"(1 thread), pytensor {pytensor.__version__}, NumPy {np.__version__}; medians of {args.rounds} interleaved rounds.",
             "", f"## {args.draws:,} draws", "", *draws_table(args.draws, args.rounds)]
    if args.generator:
        lines += ["", f"## The generator's floor, {args.draws:,} draws", "", *floor_table(args.draws, args.rounds)]
    if not args.no_pymc:
        lines += ["", "## Posterior predictive, 4,000 rows", "", *predictive_table(args.rounds)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "random.md").write_text(text)


if __name__ == "__main__":
    main()
