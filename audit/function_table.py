"""The float64 accuracy table: each function, by range, its largest relative error, its
absolute error near the zeros a double argument cannot hit exactly, its wrong special values
and (Hyp2F1, BetaInc) its documented refusals.

    python -m audit.function_table [--ops GammaLn,Hyp2F1] [--n 2000] [--seed 0]

Each function is compiled as a user writes it (`audit.accuracy.compiled`: ptonnx,
onnxruntime at its default level ORT_ENABLE_ALL; an op ptonnx refuses with a ptonnx.errors
exception is skipped and listed) and compared with the exact result
(`references.accuracy_reference.reference`: mpmath at 100+ bits for the special functions, the
80-bit long double for the elementary ones), on arguments drawn per op (the same whichever
--ops are chosen) in rows:

- the elementary functions: `--n` log-uniform arguments per magnitude band and sign, from the
  subnormals to 1e300 (a binary function draws its second argument from all bands);
- the special functions (`SWEEPS`: audit/function_sweeps.py, audit/function_sweeps_incomplete.py):
  each op's rows of parameter regions over its whole float64 domain, with the regions where
  its lowering changes method or strains, `--n` times the op's share points per row (fewer
  where the mpmath reference is slow: the inverses, a >= 1e4 of the incomplete gamma function).

Columns:

- max rel: the largest |got - exact| / max(|exact|, smallest normal) over finite, nonzero
  exact results (for the inverses the result is x: its relative error), leaving out the
  arguments near zeros below. Elementary functions: within a relative 1e-4 of a zero of
  `zeros()`, while arguments around the points of `POINTS` (zeros, poles and branch points a
  double hits exactly) count here;
- abs near zeros: the largest |got - exact| there (elementary functions: also on 41 arguments
  closer still, down to the floats next to each zero), where a function's zero is not a double
  and only an absolute error is meaningful: sin at k pi, lgamma and digamma on the negative
  axis; J0, J1, Jv beyond their first zeros; PolyGamma of even order at x < 0; Ive, Iv of
  negative non-integer order: where the result is below 1e-2 (`function_sweeps.NEAR`) of the
  size of the terms that cancel there (J's envelope; n! zeta(n + 1, 1 - x); the Ive or Iv of
  order |v|), in units of that size for PolyGamma, Ive, Iv, as ptonnx.accuracy states their bounds;
- wrong specials: arguments where the result's NaN, infinity or zero is not the exact one's
  (should be 0 everywhere);
- refused (NaN): NaN results in a region the lowering documents as refused (Hyp2F1:
  audit/hyp2f1_reference.refused; BetaInc: a, b from 1e9 near the mean), where the exact value
  is a number: counted here, not as errors. A NaN elsewhere is a wrong special.

Writes audit/results/function_accuracy.md (a summary, one row per function with its worst
range and time; every range over TARGET or with wrong specials, with its worst arguments;
then every range) and .json (each row's worst arguments, result and exact value); the
known limits (docs/limits.md) point to it.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
import zlib

import mpmath
import numpy as np

from audit import function_sweeps, function_sweeps_incomplete
from audit.accuracy import RESULTS, compiled, git_commit
from references.accuracy_reference import REFERENCE, arity, input_dtypes, reference
from audit.function_sweeps import Draw
from ptonnx.errors import PtonnxError

#: op -> its argument sweep by parameter regions (the special functions); others: BANDS
SWEEPS = {**function_sweeps.SWEEPS, **function_sweeps_incomplete.SWEEPS}
#: the issue's target for the special functions in float64: listed where exceeded
TARGET = 1e-12

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
    for (a, fa), (b, fb) in zip(zip(grid, values, strict=True), zip(grid[1:], values[1:], strict=True), strict=False):  # each point with the next: one pair fewer
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
    def lgamma(t):
        return mpmath.log(abs(mpmath.gamma(t))) if _not_integer(float(t)) else mpmath.inf
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


def _example(operands, i: int, got, exact) -> dict:
    """The operands (repr and float.hex), result and exact result (long double) at index i."""
    values = [a[i].item() for a in operands]
    return {"args": [repr(v) for v in values], "hex": [float(v).hex() for v in values], "got": repr(float(got[i])),
            "exact": np.format_float_scientific(exact[i], unique=True)}


def _score(got, exact, near, operands, scale=None, refused=None) -> dict:
    """The row's errors: relative (absolute where `near`, in units of `scale`), wrong specials, refusals."""
    got = np.asarray(got, dtype=np.float64)
    exact64 = np.asarray(exact, dtype=np.longdouble)
    with np.errstate(all="ignore"):
        rounded = exact64.astype(np.float64)
        special = np.isnan(rounded) | np.isinf(rounded) | (rounded == 0)
        refusal = np.isnan(got) & ~np.isnan(rounded) & (False if refused is None else refused)
        wrong = special & ~((got == rounded) | (np.isnan(got) & np.isnan(rounded)))
        wrong = (wrong | ~special & ~np.isfinite(got)) & ~refusal
        ok = ~special & np.isfinite(got)
        err = np.abs(got.astype(np.longdouble) - exact64)
        # below the smallest normal double the spacing is absolute: relative to it there
        rel = np.where(ok & ~near, err / np.maximum(np.abs(exact64), np.finfo(np.float64).tiny), 0)
        absolute = np.where(ok & near, err / (1 if scale is None else np.asarray(scale, np.longdouble)), 0)
    rel, absolute = rel.astype(np.float64), absolute.astype(np.float64)
    i, j = int(np.argmax(rel)) if rel.size else 0, int(np.argmax(absolute)) if rel.size else 0
    row = {"max_rel": float(np.max(rel, initial=0.0)), "abs_near_zeros": float(np.max(absolute, initial=0.0)) if near.any() else None,
           "wrong_specials": int(wrong.sum()), "refused": None if refused is None else int(refusal.sum()), "n": int(got.size)}
    if row["max_rel"] > 0:
        row["worst"] = _example(operands, i, got, exact64)
    if row["abs_near_zeros"]:
        row["worst_near"] = _example(operands, j, got, exact64)
    if wrong.any():
        row["wrong"] = _example(operands, int(np.argmax(wrong)), got, exact64)
    return row


def _bands(op: str, n: int, rng: np.random.Generator, zero_table: dict, run) -> list[dict]:
    """The elementary functions: both signs of each magnitude band (a binary function draws its
    second operand from all bands), and around the points and zeros of the first band's row."""
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
            rows.append({"op": op, "range": f"{name}{label}{around}"} | _score(run(*args), exact, near, args))
    return rows


def _swept(op: str, sweep, n: int, rng: np.random.Generator, run) -> list[dict]:
    """The special functions: each row of the op's sweep (audit/function_sweeps*.py), n * share points."""
    rows, dtypes = [], input_dtypes(op, "float64")
    for label, sampler, *weight in sweep.rows:
        size = max(8, round(n * sweep.share * (weight[0] if weight else 1.0)))
        with np.errstate(all="ignore"):
            operands = [np.broadcast_to(np.asarray(a, np.float64), (size,)).astype(t) for a, t in zip(sampler(Draw(rng, size)), dtypes, strict=True)]
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # overflows to inf, as meant
            warnings.simplefilter("ignore", RuntimeWarning)
            exact = reference(op, "float64", *operands)
            got = run(*operands)
            near = sweep.near(operands, exact) if sweep.near else np.zeros(size, dtype=bool)
            scale = sweep.scale(operands) if sweep.scale else None
            refused = sweep.refused(operands) if sweep.refused else None
        rows.append({"op": op, "range": label} | _score(got, exact, near, operands, scale, refused))
    return rows


def measure(op: str, n: int, seed: int, zero_table: dict) -> list[dict] | str:
    """The op's rows, or why ptonnx does not compile it (a ptonnx.errors exception: skipped)."""
    try:
        run = compiled(op, "float64")["ORT_ENABLE_ALL"]
    except PtonnxError as e:
        return f"ptonnx does not compile it: {type(e).__name__}: {str(e).splitlines()[0]}"
    rng = np.random.default_rng([seed, zlib.crc32(op.encode())])  # the same sweep whichever --ops
    return _swept(op, SWEEPS[op], n, rng, run) if op in SWEEPS else _bands(op, n, rng, zero_table, run)


def _fmt(v) -> str:
    return "" if v is None else "0" if v == 0 else f"{v:.1e}"


def table(rows: list[dict]) -> str:
    lines = ["| function | range | max rel | abs near zeros | wrong specials | refused (NaN) | n |", "|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['op']} | {r['range']} | {_fmt(r['max_rel'])} | {_fmt(r['abs_near_zeros'])} | {r['wrong_specials']} | "
              f"{'' if r['refused'] is None else r['refused']} | {r['n']} |" for r in rows]
    return "\n".join(lines)


def summary(rows: list[dict], seconds: dict) -> str:
    """One row per function: its worst range, over its whole float64 domain."""
    lines = ["| function | range (worst) | max relative error | absolute near zeros | wrong specials | refused (NaN) | n | s |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for op in dict.fromkeys(r["op"] for r in rows):
        mine = [r for r in rows if r["op"] == op]
        worst = max(mine, key=lambda r: r["max_rel"])
        near = [r["abs_near_zeros"] for r in mine if r["abs_near_zeros"] is not None]
        refused = [r["refused"] for r in mine if r["refused"] is not None]
        lines.append(f"| {op} | {worst['range']} | {_fmt(worst['max_rel'])} | {_fmt(max(near)) if near else ''} | "
                     f"{sum(r['wrong_specials'] for r in mine)} | {sum(refused) if refused else ''} | "
                     f"{sum(r['n'] for r in mine)} | {seconds[op]:.0f} |")
    return "\n".join(lines)


def beyond(rows: list[dict], target: float = TARGET) -> str:
    """Every range over the target relative error or with wrong specials, and where."""
    def at(e):
        return f"{e['op']}({', '.join(e['args'])}) = {e['got']}, exact {e['exact']} [hex: {', '.join(e['hex'])}]"

    lines = []
    for r in rows:
        if r["max_rel"] > target:
            lines.append(f"- {r['op']}, {r['range']}: relative {r['max_rel']:.2e} at {at({**r['worst'], 'op': r['op']})}")
        if r["wrong_specials"]:
            lines.append(f"- {r['op']}, {r['range']}: {r['wrong_specials']} wrong specials, e.g. {at({**r['wrong'], 'op': r['op']})}")
    return "\n".join(lines) or "(none)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = [op for op in REFERENCE if op not in SKIP and op not in SWEEPS] + list(SWEEPS)
    parser.add_argument("--ops", default=",".join(default))
    parser.add_argument("--n", type=int, default=2000, help="arguments per band and sign; a sweep row takes n times its share")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    zero_table = zeros()
    rows, skipped, seconds, start = [], {}, {}, time.perf_counter()
    for op in args.ops.split(","):
        t = time.perf_counter()
        try:
            result = measure(op, args.n, args.seed, zero_table)
        except ValueError as error:  # the mpmath reference gave up: listed, not hidden
            result = f"its mpmath reference failed: {str(error).strip().splitlines()[0]}"
        seconds[op] = time.perf_counter() - t
        if isinstance(result, str):
            skipped[op] = result
            print(f"{op}: not measured ({result})", flush=True)
            continue
        rows += result
        print(f"{op}: {seconds[op]:.1f} s, max rel {max(r['max_rel'] for r in result):.1e}", flush=True)
    import onnxruntime
    import pytensor

    header = (f"# float64 accuracy by function and range\n\nptonnx {git_commit()}; onnxruntime {onnxruntime.__version__} "
              f"(ORT_ENABLE_ALL), PyTensor {pytensor.__version__}; --n {args.n}, seed {args.seed}, "
              f"{time.perf_counter() - start:.0f} s. `python -m audit.function_table` (see its docstring).\n")
    not_compiled = "".join(f"\nNot measured: {op}: {why}\n" for op, why in skipped.items())
    text = (f"{header}\n## Summary\n\n{summary(rows, seconds)}\n{not_compiled}\n## Beyond {TARGET:g} relative, or wrong specials\n\n"
            f"{beyond(rows)}\n\n## By range\n\n{table(rows)}\n")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "function_accuracy.md").write_text(text)
    (RESULTS / "function_accuracy.json").write_text(json.dumps(dict(header=header, seconds=seconds, skipped=skipped, rows=rows), indent=1))
    print(summary(rows, seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
