"""What the IREE runtime compiles: a program per family of ops, each compiled with
`runtime="iree"` and compared with onnxruntime (rtol 1e-12; shapes exact).

    python -m references.iree_coverage

Prints one line per program: ok, IREE's compile error, a run-time error, or WRONG. The
docs/iree.md lists what this finds that IREE cannot do.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.ifelse import ifelse

import ptonnx
from ptonnx.iree_runtime import IreeCompileError


def programs() -> dict:
    """name -> (inputs, outputs, input values)."""
    x, m, i, iv, s = pt.dvector("x"), pt.dmatrix("m"), pt.lscalar("i"), pt.lvector("iv"), pt.dscalar("s")
    X, M, J = np.array([3.0, -1.0, 2.5, 0.0, 7.0]), np.arange(12.0).reshape(3, 4), np.int64(1)
    IV, S = np.array([0, 2, 4]), np.float64(0.7)
    return {
        "sort": ([x], [pt.sort(x)], [X]), "argsort": ([x], [pt.argsort(x)], [X]),
        "int_argsort": ([iv], [pt.argsort(-iv), pt.sort(-iv)], [IV]), "argmax": ([x], [pt.argmax(x)], [X]),
        "cumsum": ([x], [pt.cumsum(x)], [X]), "cumprod": ([x], [pt.cumprod(x)], [X]), "nonzero": ([x], [pt.nonzero(x)[0]], [X]),
        "advanced_index": ([x, iv], [x[iv]], [X, IV]), "set_subtensor": ([x, iv], [pt.set_subtensor(x[iv], 0.0)], [X, IV]),
        "inc_subtensor": ([x, iv], [pt.inc_subtensor(x[iv], 1.0)], [X, IV]), "slice": ([x, i], [x[i:]], [X, J]),
        "matmul": ([m, x], [pt.dot(m, x[:4])], [M, X]), "reshape": ([m], [m.reshape((4, 3)).T], [M]),
        "concat": ([x], [pt.concatenate([x, x * 2])], [X]), "max_min": ([m], [m.max(axis=0), m.min(axis=1)], [M]),
        "prod": ([x], [pt.prod(x)], [X]), "ifelse": ([x, s], [ifelse(s > 0.5, x * 2, x - 1)], [X, S]),
        "scan": ([x], [pytensor.scan(lambda a, acc: acc + a, sequences=[x], outputs_info=[pt.zeros(())], return_updates=False)[-1]], [X]),
        "softmax": ([m], [pt.special.softmax(m, axis=1)], [M]), "logsumexp": ([m], [pt.logsumexp(m, axis=1)], [M]),
        "where": ([x], [pt.switch(x > 1, x, -x)], [X]), "intdiv_mod": ([iv], [iv // 3, iv % 3], [IV]),
        "cast": ([x], [pt.cast(x, "int32"), pt.cast(x, "float32")], [X]), "arange": ([i], [pt.arange(i + 3)], [J]),
        "repeat": ([x], [pt.repeat(x, 2)], [X]), "tile": ([x], [pt.tile(x, 2)], [X]), "gammaincc": ([x], [pt.gammaincc(2.0, pt.abs(x))], [X]),
        "betainc": ([x], [pt.betainc(2.0, 3.0, pt.clip(x / 10, 0, 1))], [X]), "erfinv": ([x], [pt.erfinv(x / 10)], [X]),
        "gammaincinv": ([x], [pt.gammaincinv(2.0, pt.clip(x / 10, 0, 1))], [X]),
        "sin_tan": ([x], [pt.sin(x), pt.tan(x), pt.arctan2(x, 2.0)], [X]), "kve": ([x], [pt.kve(1.0, pt.abs(x) + 0.1)], [X]),
        "hyp2f1": ([x], [pt.hyp2f1(0.5, 1.0, 2.0, x / 10)], [X]), "pow_int": ([x], [x ** 3, pt.pow(x, 0.5)], [X]),
    }


def outcome(inputs, outputs, values) -> str:
    expected = ptonnx.compile_function(inputs, outputs)(*values)
    try:
        got = ptonnx.compile_function(inputs, outputs, runtime="iree")(*values)
    except IreeCompileError as exc:
        lines = str(exc).strip().splitlines()
        return "compile error: " + lines[min(1, len(lines) - 1)].strip()[:160]
    except Exception as exc:  # noqa: BLE001 (what IREE raises at run time is reported, not fixed here)
        return f"run-time error: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    same = all(a.shape == b.shape and np.allclose(a, b, rtol=1e-12, equal_nan=True) for a, b in zip(got, expected, strict=True))
    return "ok" if same else "WRONG"


def main() -> None:
    for name, (inputs, outputs, values) in programs().items():
        print(f"{name:16s} {outcome(inputs, outputs, values)}", flush=True)


if __name__ == "__main__":
    main()
