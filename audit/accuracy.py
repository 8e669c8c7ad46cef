"""Measure every float op ptonnx compiles against its stated bound (`ptonnx.accuracy`).

    python -m audit.accuracy [--ops Exp,Log] [--dtypes float32] [--quick] [--check-reference]

Each op is compiled as a user would (`ptonnx.compile_function` of `pt.exp(x)`
...) and run in onnxruntime at ORT_DISABLE_ALL and ORT_ENABLE_ALL over a dense
sweep of its whole domain: every float16; for float32 and float64 every binade
from the smallest subnormal to the largest float with random significands, both
signs, random bit patterns (NaN payloads included) and the thresholds of
`accuracy_reference.thresholds`; pairs of such values and hard pairs for binary
ops. PyTensor's own evaluation (Python linker) is measured against the same
reference. Writes audit/results/accuracy.md and accuracy.json.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np

from references.accuracy_reference import (
    HAVE_FLOAT64_REFERENCE,
    arity,
    build,
    hard_inputs,
    hard_pairs,
    in_domain,
    input_dtype,
    input_dtypes,
    reference,
    scored,
    thresholds,
)
from ptonnx.accuracy import BY_OP, FLOAT_DTYPES, REFUSED, bound, meets, resolution
from ptonnx.testing import ORT_LEVELS, session_options

LEVELS = ORT_LEVELS
RESULTS = pathlib.Path(__file__).parent / "results"
#: significands drawn per binade and sign, random bit patterns, binary pairs, values in [1/16, 16)
DENSE = dict(per_binade={"float32": 256, "float64": 64}, random_bits=100000, pairs=200000, typical=1 << 20)
QUICK = dict(per_binade={"float32": 4, "float64": 1}, random_bits=2000, pairs=4000, typical=1000)


def random_bits(dtype: str, n: int, rng: np.random.Generator) -> np.ndarray:
    itype = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    return rng.integers(0, np.iinfo(itype).max, n, dtype=itype, endpoint=True).view(dtype)


def unary_sweep(dtype: str, rng: np.random.Generator, size=DENSE) -> np.ndarray:
    """The whole domain of `dtype`: every float16, or every binade of float32/float64."""
    if dtype == "float16":
        return np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    fi = np.finfo(dtype)
    k = size["per_binade"][dtype]
    exps = np.arange(fi.minexp - fi.nmant, fi.maxexp)  # the smallest subnormal's binade .. the largest
    significand = np.concatenate([np.full((exps.size, 1), 1.0), rng.uniform(1, 2, (exps.size, k))], axis=1)
    with np.errstate(over="ignore"):
        magnitudes = np.ldexp(significand.astype(np.longdouble), exps[:, None].astype(np.int32) - 1).ravel()
        values = magnitudes.astype(dtype)
    values = values[np.isfinite(values)]
    # the binades where most results are O(1) get 2**20 more (float32) values
    typical = np.ldexp(rng.uniform(1, 2, size["typical"]), rng.integers(-4, 4, size["typical"])).astype(dtype)
    if dtype == "float64":
        typical = typical[: size["typical"] // 4]
    typical = typical * rng.choice(np.array([-1, 1], dtype=dtype), typical.size)
    return np.concatenate([values, -values, typical, random_bits(dtype, size["random_bits"], rng), thresholds(dtype)])


def binary_sweep(op: str, dtype: str, rng: np.random.Generator, size=DENSE) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs from the unary sweep, pairs of moderate values, every pair of thresholds, hard pairs,
    moved into the op's stated domain (`accuracy_reference.DOMAINS`: e.g. Jv's integer orders)."""
    n = size["pairs"]
    pool = unary_sweep(dtype, rng, size)
    edges = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0], dtype=dtype)
    special = np.concatenate([edges, thresholds(dtype)[::5]])
    sa, sb = (g.ravel() for g in np.meshgrid(special, special))
    def moderate(m):
        return (np.ldexp(rng.uniform(0.5, 1, m), rng.integers(-12, 13, m)) * rng.choice([-1, 1], m)).astype(dtype)
    ha, hb = hard_pairs(op, dtype, rng, n)
    a = np.concatenate([rng.choice(pool, n), moderate(n), sa, ha])
    b = np.concatenate([rng.choice(pool, n), moderate(n), sb, hb])
    a, b = in_domain(op, dtype, a, b)
    return a, b


def git_commit() -> str:
    """The commit measured, marked when the work tree has uncommitted changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=RESULTS.parent.parent, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" (+ uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else "")


def compiled(op: str, dtype: str):
    """{evaluator name: function of numpy arrays}: onnxruntime at each level, and PyTensor."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.mode import Mode

    import ptonnx

    variables = [pt.vector(f"x{i}", dtype=d) for i, d in enumerate(input_dtypes(op, dtype))]
    out = build(op, dtype, *variables)
    assert out.dtype == dtype, f"{op} of {input_dtypes(op, dtype)} gives {out.dtype}"
    cm = ptonnx.compile_function(variables, [out])
    runs = {level: (lambda c: lambda *a: c(*a)[0])(cm.with_session_options(session_options(level))) for level in LEVELS}
    runs["PyTensor"] = pytensor.function(variables, out, mode=Mode(linker="py", optimizer=None))
    return runs


def _fmt(v) -> str:
    return str(v) if not isinstance(v, np.floating) or v.dtype != np.longdouble else f"{float(v):.17g}"


def example(arrays, got, exact, i: int) -> str:
    return f"{', '.join(_fmt(a[i]) for a in arrays)} -> {_fmt(got[i])} ({_fmt(exact[i])})"


def measure(op: str, dtype: str, rng: np.random.Generator, size=DENSE) -> dict:
    """One row of the table: the bound, and per evaluator the largest error and where."""
    b = bound(op, dtype)
    row = dict(op=op, dtype=dtype, bound_ulp=b.ulp, atol=b.atol, atol_arg_ulp=b.atol_arg_ulp, domain=b.domain, note=b.note)
    if dtype == "float64" and not HAVE_FLOAT64_REFERENCE:
        return row | dict(error="no 80-bit long double on this machine: no float64 reference")
    try:
        runs = compiled(op, dtype)
    except Exception as e:  # noqa: BLE001 - reported as the row's result
        return row | dict(error=f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
    if arity(op) == 1:
        arrays = [np.concatenate([unary_sweep(input_dtype(op, dtype), rng, size), *hard_inputs(op, dtype, rng, size["pairs"])])]
    else:
        arrays = list(binary_sweep(op, dtype, rng, size))
    exact = reference(op, dtype, *arrays)
    row["values"] = int(arrays[0].size)
    for name, run in runs.items():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = np.asarray(run(*arrays))
        err = scored(op, dtype, got, exact, arrays, b)
        wrong = ~np.isfinite(err)
        finite = np.where(wrong, -1.0, err)
        i = int(np.argmax(finite))
        j = int(np.argmax(wrong))
        row[name] = dict(
            max_ulp=max(float(finite[i]), 0.0),
            over_bound=int(np.sum(finite > b.ulp + resolution(op, dtype))),
            worst=example(arrays, got, exact, i),
            specials_wrong=int(wrong.sum()),
            special=example(arrays, got, exact, j) if wrong.any() else None,
        )
        row[name]["ok"] = meets(op, dtype, row[name]["max_ulp"]) and not wrong.any()
    row["ok"] = all(row[level]["ok"] for level in LEVELS)
    return row


def _ulp(v: float, bound: float = np.inf) -> str:
    """3 digits, more where 3 would hide that `v` is over `bound`."""
    if v == np.inf:
        return "inf"
    text = f"{v:.3g}" if v < 1e4 else f"{v:.2e}"
    return text if float(text) > bound or v <= bound + 1e-6 else f"{v:.7g}"


def markdown(rows: list[dict], header: str) -> str:
    lines = [
        "# Accuracy of ptonnx's float ops against the exact result", "", header, "",
        "Bounds: `ptonnx/accuracy.py`. Errors in ulp of the dtype at the exact result (subnormal spacing below the",
        "normal range), over the values whose NaN, infinity and sign of zero are right; `special` counts those that",
        "are wrong (at either level). An error within a stated absolute floor counts as at most the bound. `over` counts values over",
        "the bound; `worst` is the input of the larger ORT error: input -> got (exact).",
        "",
        "| op | dtype | bound | DISABLE_ALL | ENABLE_ALL | over | special | PyTensor | worst | first wrong special | result |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        floor = f" or {r['atol']:g}" if r["atol"] else f" or {r['atol_arg_ulp']:g} ulp(x)" if r["atol_arg_ulp"] else ""
        head = f"| {r['op']} | {r['dtype']} | {r['bound_ulp']:g}{floor} |"
        if "error" in r:
            status = "refused (ptonnx.accuracy.REFUSED)" if (r["op"], r["dtype"]) in REFUSED else "not compiled"
            lines.append(f"{head} | | | | | | {r['error']} | {status} |")
            continue
        d, e, p = r[LEVELS[0]], r[LEVELS[1]], r["PyTensor"]
        w = d if d["max_ulp"] >= e["max_ulp"] else e
        s = d if d["specials_wrong"] >= e["specials_wrong"] else e
        pyt = _ulp(p["max_ulp"], r["bound_ulp"]) + (f" +{p['specials_wrong']} special" if p["specials_wrong"] else "")
        lines.append(
            f"{head} {_ulp(d['max_ulp'], r['bound_ulp'])} | {_ulp(e['max_ulp'], r['bound_ulp'])} | {max(d['over_bound'], e['over_bound'])} | "
            f"{s['specials_wrong']} | {pyt}{'' if p['ok'] else ' (over)'} | {w['worst']} | {s['special'] or ''} | "
            f"{'ok' if r['ok'] else '**FAIL**'} |"
        )
    return "\n".join(lines) + "\n"


def check_reference(n: int = 300) -> None:
    """Compare the float64 references with mpmath at 200 bits (dev-only: needs mpmath)."""
    import mpmath

    from references.accuracy_reference import errors

    mpmath.mp.prec = 200
    funcs = dict(Exp=mpmath.exp, Log=mpmath.log, Log1p=mpmath.log1p, Expm1=mpmath.expm1, Sin=mpmath.sin,
                 Cos=mpmath.cos, Tanh=mpmath.tanh, Sqrt=mpmath.sqrt, Sigmoid=lambda x: 1 / (1 + mpmath.exp(-x)),
                 Softplus=lambda x: mpmath.log1p(mpmath.exp(x)), Erf=mpmath.erf)
    rng = np.random.default_rng(1)
    x = unary_sweep("float64", rng, QUICK)
    x = rng.choice(x[np.isfinite(x) & (np.abs(x) < 1e300)], n)
    for op, f in funcs.items():
        args = np.abs(x) if op in ("Log", "Sqrt") else np.maximum(x, -0.99) if op == "Log1p" else x
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact = np.array([mpmath.nstr(f(mpmath.mpf(float(v))), 40) for v in args], dtype=np.longdouble)
        ref = reference(op, "float64", args)
        ulps, _ = errors(ref, exact, "float64")
        print(f"{op:9s} reference vs mpmath: max {np.max(ulps[np.isfinite(ulps)]):.2e} float64 ulp")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(BY_OP))
    parser.add_argument("--dtypes", default=",".join(FLOAT_DTYPES))
    parser.add_argument("--quick", action="store_true", help="a sparse sweep (does not write the results)")
    parser.add_argument("--check-reference", action="store_true", help="check the references against mpmath")
    args = parser.parse_args(argv)
    if args.check_reference:
        check_reference()
        return 0
    import onnxruntime
    import pytensor

    size = QUICK if args.quick else DENSE
    rows, start = [], time.perf_counter()
    for op in args.ops.split(","):
        for dtype in args.dtypes.split(","):
            if op == "Cast" and dtype == "float64":
                continue
            row = measure(op, dtype, np.random.default_rng(0), size)
            rows.append(row)
            print(markdown([row], "").splitlines()[-1], flush=True)
    header = (
        f"ptonnx {git_commit()}; onnxruntime {onnxruntime.__version__}, PyTensor {pytensor.__version__}, "
        f"NumPy {np.__version__}; "
        f"{'quick' if args.quick else 'dense'} sweep, {time.perf_counter() - start:.0f} s."
    )
    if not args.quick:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "accuracy.md").write_text(markdown(rows, header))
        (RESULTS / "accuracy.json").write_text(json.dumps(dict(header=header, rows=rows), indent=1) + "\n")
    refused = [f"{r['op']}/{r['dtype']}" for r in rows if (r["op"], r["dtype"]) in REFUSED]
    failed = [f"{r['op']}/{r['dtype']}" for r in rows if not r.get("ok") and f"{r['op']}/{r['dtype']}" not in refused]
    print(f"{len(rows) - len(failed) - len(refused)} within bound, {len(failed)} not: {', '.join(failed)}; "
          f"refused by design (ptonnx.accuracy.REFUSED): {', '.join(refused)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
