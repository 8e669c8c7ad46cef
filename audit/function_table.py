"""The float64 accuracy table: each function, by range, its largest relative error, and
its absolute error near the zeros a double argument cannot hit exactly.

    python -m audit.function_table [--ops GammaLn,Psi] [--n 2000] [--seed 0]

Each function is compiled as a user writes it (`audit.accuracy.compiled`: ptonnx,
onnxruntime at its default level ORT_ENABLE_ALL) and compared with the exact result
(`audit.accuracy_reference.reference`: mpmath at 100 bits for the special functions,
the 80-bit long double for the elementary ones) on `--n` log-uniform arguments per
range: both signs, magnitudes from the subnormals to 1e300, in bands. A binary
function draws both arguments from the bands' product (the first argument's band
names the row).

- max rel: the largest |got - exact| / max(|exact|, smallest normal) over finite,
  nonzero exact results, leaving out the arguments within a relative 1e-4 of a zero
  of `zeros()`; arguments around the points of `POINTS` (zeros, poles and branch
  points a double hits exactly) count here;
- abs near zeros: the largest |got - exact| there (and on 41 arguments closer
  still, down to the floats next to each zero). Where a function's zero is not a
  double (sin at k pi, lgamma and digamma on the negative axis), the exact result
  at the nearest double is as small as the double's own rounding of the zero, and
  only an absolute error is meaningful;
- wrong specials: arguments where the result's NaN, infinity or zero is not the
  exact one's (should be 0 everywhere).

Writes audit/results/function_accuracy.md (a summary, one row per function with its
worst band, then every band) and .json; the README's known limits point to it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import mpmath
import numpy as np

from audit.accuracy import RESULTS, compiled, git_commit
from audit.accuracy_reference import REFERENCE, arity, reference

#: magnitude bands, (label, lowest, highest); sampled log-uniformly, both signs
BANDS = (
    ("subnormal", 5e-324, 2.2250738585072014e-308),
    ("1e-308..1e-8", 2.2250738585072014e-308, 1e-8),
    ("1e-8..1", 1e-8, 1.0),
    ("1..10", 1.0, 10.0),
    ("10..1e3", 10.0, 1e3),
    ("1e3..1e300", 1e3, 1e300),
)
#: the functions measured: every float64 function ptonnx composes or works around
#: (the IEEE basic operations, rounding and sign ops are exact and left out)
SKIP = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "IntDiv", "Mod", "Reciprocal", "Neg", "Abs", "Sign",
    "Floor", "Ceil", "Round", "RoundHalfAwayFromZero", "Trunc", "Cast", "Sqrt",
})


#: op -> points where the function has an exactly representable zero, pole or branch
#: point: arguments around them (relative 1e-16..1e-2, and the nearest doubles) join
#: the first band's row, measured relatively (a double hits these points exactly)
POINTS = {
    "GammaLn": (1.0, 2.0, -1.0, -2.0, -3.0), "Gamma": (0.0, -1.0, -2.0, -3.0), "Psi": (0.0, -1.0, -2.0),
    "TriGamma": (0.0, -1.0, -2.0), "Log": (1.0,), "Log2": (1.0,), "Log10": (1.0,), "Log1p": (-1.0,),
    "ArcCos": (1.0, -1.0), "ArcSin": (1.0, -1.0), "ArcCosh": (1.0,), "ArcTanh": (1.0, -1.0), "Log1mexp": (0.0,),
}


def _around(points, rng: np.random.Generator) -> np.ndarray:
    out = []
    for p in points:
        u = np.exp(rng.uniform(np.log(1e-16), np.log(1e-2), 40)) * rng.choice([-1, 1], 40)
        out.append(p * (1 + u) if p else u)
        out.append(np.array([np.nextafter(p, np.inf), np.nextafter(p, -np.inf)]))
    return np.concatenate(out) if out else np.zeros(0)


def _zeros_of(fn, lo: float, hi: float, step: float) -> list[float]:
    """The zeros of `fn` in [lo, hi], from the sign changes on a grid, refined by mpmath."""
    mpmath.mp.prec = 120
    grid = np.arange(lo, hi, step)
    values = [fn(mpmath.mpf(float(x))) for x in grid]
    found = []
    for (a, fa), (b, fb) in zip(zip(grid, values), zip(grid[1:], values[1:])):
        if mpmath.isfinite(fa) and mpmath.isfinite(fb) and fa * fb < 0 and b - a <= 2 * step:
            found.append(float(mpmath.findroot(fn, (mpmath.mpf(float(a)), mpmath.mpf(float(b))), solver="anderson")))
    return found


def _not_integer(x: float) -> bool:
    return x != np.floor(x)


def zeros() -> dict[str, list[float]]:
    """op -> the zeros (as doubles nearest them) that no double argument hits exactly."""
    k = np.arange(1, 9)
    big = np.array([1e3, 1e6, 1e15]) // np.pi
    multiples = np.concatenate([k, big])
    lgamma = lambda t: mpmath.log(abs(mpmath.gamma(t))) if _not_integer(float(t)) else mpmath.inf
    return {
        "Sin": sorted(set(np.concatenate([-multiples, multiples]) * np.pi)),
        "Tan": sorted(set(np.concatenate([-multiples, multiples]) * np.pi)),
        "Cos": sorted(set(np.concatenate([-multiples, multiples - 1]) * np.pi + np.pi / 2)),
        "GammaLn": _zeros_of(lgamma, -12.0, -1.0, 1 / 512),
        "Psi": [1.4616321449683622] + _zeros_of(lambda t: mpmath.digamma(t) if _not_integer(float(t)) else mpmath.inf, -12.0, 0.0, 1 / 256),
    }


def _band_values(lo: float, hi: float, n: int, rng: np.random.Generator) -> np.ndarray:
    magnitude = np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    return magnitude * rng.choice([-1.0, 1.0], n)


def _near(zero_list: list[float], rng: np.random.Generator) -> np.ndarray:
    if not zero_list:
        return np.zeros(0)
    out = []
    for z in zero_list:
        out.append(z * (1 + np.exp(rng.uniform(np.log(1e-15), np.log(1e-4), 30)) * rng.choice([-1, 1], 30)))
        out.append(np.array([np.nextafter(z, np.inf) if i > 0 else np.nextafter(z, -np.inf) if i < 0 else z for i in range(-5, 6)]))
    return np.concatenate(out)


def _is_near(x: np.ndarray, zero_list: list[float]) -> np.ndarray:
    near = np.zeros(x.shape, dtype=bool)
    for z in zero_list:
        near |= np.abs(x - z) <= 1e-4 * abs(z)
    return near


def _score(got: np.ndarray, exact: np.ndarray, near: np.ndarray) -> dict:
    got = np.asarray(got, dtype=np.float64)
    exact64 = np.asarray(exact, dtype=np.longdouble)
    with np.errstate(all="ignore"):
        rounded = exact64.astype(np.float64)
        special = np.isnan(rounded) | np.isinf(rounded) | (rounded == 0)
        wrong = special & ~((got == rounded) | (np.isnan(got) & np.isnan(rounded)))
        wrong |= ~special & ~np.isfinite(got)
        ok = ~special & np.isfinite(got)
        err = np.abs(got.astype(np.longdouble) - exact64)
        # below the smallest normal double the spacing is absolute: relative to it there
        scale = np.maximum(np.abs(exact64), np.finfo(np.float64).tiny)
        rel = np.where(ok & ~near, err / scale, 0)
        absolute = np.where(ok & near, err, 0)
    rel_max, abs_max = float(np.max(rel, initial=0.0)), float(np.max(absolute, initial=0.0))
    return {"max_rel": rel_max, "abs_near_zeros": abs_max if near.any() else None,
            "wrong_specials": int(wrong.sum()), "n": int(got.size)}


def measure(op: str, n: int, rng: np.random.Generator, zero_table: dict) -> list[dict]:
    run = compiled(op, "float64")["ORT_ENABLE_ALL"]
    zero_list = zero_table.get(op, [])
    rows = []
    for label, lo, hi in BANDS:
        for sign, name in ((1.0, "+"), (-1.0, "-")):
            x = sign * np.abs(_band_values(lo, hi, n, rng))
            args = [x] if arity(op) == 1 else [x, np.concatenate([_band_values(b_lo, b_hi, n // len(BANDS) + 1, rng) for _, b_lo, b_hi in BANDS])[:n]]
            near = _is_near(x, zero_list)
            if arity(op) == 1 and sign == 1.0 and label == "1..10":
                extra, points = _near(zero_list, rng), _around(POINTS.get(op, ()), rng)
                args = [np.concatenate([x, points, extra])]
                near = np.concatenate([near, _is_near(points, zero_list), np.ones(extra.size, dtype=bool)])
            exact = reference(op, "float64", *args)
            around = f" and around {', '.join(f'{p:g}' for p in POINTS[op])}" if len(args[0]) > n and op in POINTS else ""
            row = {"op": op, "range": f"{name}{label}{around}"} | _score(run(*args), exact, near)
            rows.append(row)
    return rows


def _fmt(v) -> str:
    return "" if v is None else "0" if v == 0 else f"{v:.1e}"


def table(rows: list[dict]) -> str:
    lines = ["| function | range (sign, magnitude) | max rel | abs near zeros | wrong specials | n |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {r['op']} | {r['range']} | {_fmt(r['max_rel'])} | {_fmt(r['abs_near_zeros'])} | {r['wrong_specials']} | {r['n']} |" for r in rows]
    return "\n".join(lines)


def summary(rows: list[dict]) -> str:
    """One row per function: its worst band, over its whole float64 domain."""
    lines = ["| function | range | max relative error | absolute near zeros | wrong specials |", "|---|---|---:|---:|---:|"]
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        worst = max(mine, key=lambda r: r["max_rel"])
        near = [r["abs_near_zeros"] for r in mine if r["abs_near_zeros"] is not None]
        lines.append(f"| {op} | all doubles (worst: {worst['range']}) | {_fmt(worst['max_rel'])} | "
                     f"{_fmt(max(near)) if near else ''} | {sum(r['wrong_specials'] for r in mine)} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(op for op in REFERENCE if op not in SKIP))
    parser.add_argument("--n", type=int, default=2000, help="arguments per range and sign")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    zero_table = zeros()
    rows, start = [], time.perf_counter()
    for op in args.ops.split(","):
        t = time.perf_counter()
        rows += measure(op, args.n, rng, zero_table)
        print(f"{op}: {time.perf_counter() - t:.1f} s", flush=True)
    import onnxruntime
    import pytensor

    header = (f"# float64 accuracy by function and range\n\nptonnx {git_commit()}; onnxruntime {onnxruntime.__version__} "
              f"(ORT_ENABLE_ALL), PyTensor {pytensor.__version__}; {args.n} arguments per row, seed {args.seed}, "
              f"{time.perf_counter() - start:.0f} s. `python -m audit.function_table` (see its docstring).\n")
    text = f"{header}\n## Summary\n\n{summary(rows)}\n\n## By range\n\n{table(rows)}\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "function_accuracy.md").write_text(text)
    (RESULTS / "function_accuracy.json").write_text(json.dumps(rows, indent=1))
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
