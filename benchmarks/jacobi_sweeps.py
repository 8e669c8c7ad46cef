"""How many sweeps ptonnx's one-sided Jacobi takes (SVD and Eigh): a NumPy model of the iteration.

The model is `svd._jacobi`'s scalar form (rows in the round-robin ordering, a pair rotated while
|p.q| > k' eps ||p|| ||q||, rows of squared norm at most eps^2 ||W||_F^2 left alone; after a
sweep that rotated, the rows' Gram test), which `svd_block.py` follows pair for pair in
another order (the same sweep counts in its own NumPy model). Counted: the SVD's Jacobi on
R of A = QR, Eigh's one pass on a + I for a positive definite matrix, and its two passes (the
matrix scaled, shifted by Gershgorin's bound, then by the least eigenvalue found) on the
benchmark's positive definite matrices (g g^T / n + I,
`benchmarks/linalg.py`) and on a random symmetric one. Sweeps times the cost of a sweep
(`benchmarks/loop_floor.py`) is the Jacobi's time.

    python -m benchmarks.jacobi_sweeps [--n 200] [--write]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks._common import RESULTS, ROOT, git_commit, require_committed

EPS = np.finfo(np.float64).eps


def _next_order(h: int) -> np.ndarray:
    """Where the rows of [P; Q] come from for the next round (`common.round_robin`)."""
    i = np.arange(h)
    new_p = np.where(i == 0, 0, np.where(i == 1, h, i - 1))
    new_q = np.where(i == h - 1, (h - 1) + int(h == 1), h + i + 1)
    return np.concatenate([new_p, new_q])


def sweeps(w: np.ndarray, cap: int = 40) -> tuple[np.ndarray, int]:
    """(J w, sweeps run) of one-sided Jacobi on the rows of square w."""
    k = w.shape[0]
    kk = k + k % 2
    w = np.vstack([w, np.zeros((kk - k, w.shape[1]))])
    h, tol = kk // 2, kk * EPS
    small = (w * w).sum() * EPS**2
    order = _next_order(h)
    for sweep in range(1, cap + 1):
        rotated = False
        for _ in range(kk - 1):
            p, q = w[:h], w[h:]
            pp, qq, pq = (p * p).sum(1), (q * q).sum(1), (p * q).sum(1)
            rotate = (abs(pq) > tol * np.sqrt(pp * qq)) & (np.minimum(pp, qq) > small)
            with np.errstate(divide="ignore", invalid="ignore"):
                zeta = (qq - pp) / (2 * pq)
                t = np.where(zeta < 0, -1.0, 1.0) / (abs(zeta) + np.sqrt(zeta * zeta + 1))
            t = np.where(rotate, t, 0.0)
            c = 1 / np.sqrt(1 + t * t)
            s = c * t
            rotated |= bool(rotate.any())
            w = np.vstack([c[:, None] * p - s[:, None] * q, s[:, None] * p + c[:, None] * q])[order]
        if not rotated:
            return w[:k], sweep
        g = w @ w.T
        d = np.diag(g)
        due = (abs(g) > tol * np.sqrt(np.outer(d, d))) & (np.minimum.outer(d, d) > small)
        np.fill_diagonal(due, False)
        if not due.any():
            return w[:k], sweep
    return w[:k], cap


def eigh_passes(a: np.ndarray) -> tuple[int, int]:
    """Eigh's two passes (`eigh.py`): (sweeps of the first, of the second)."""
    n = a.shape[0]
    a = a / 2.0 ** np.ceil(np.log2(abs(a).max()))
    d = np.diag(a)
    shift = 1 - min(0.0, (d + abs(d) - abs(a).sum(1)).min())
    g, first = sweeps(a + shift * np.eye(n))
    v = (g / np.linalg.norm(g, axis=1)[:, None]).T
    least = (v * (a @ v)).sum(0).min()
    _, second = sweeps(v.T @ (a + (1 - min(0.0, least)) * np.eye(n)))
    return first, second


def report(n: int) -> str:
    rng = np.random.default_rng(0)
    general = rng.normal(size=(n, n))
    g = rng.normal(size=(n, n))
    spd = g @ g.T / n + np.eye(n)
    symmetric = general + general.T
    scaled = spd / 2.0 ** np.ceil(np.log2(abs(spd).max()))
    rows = [("SVD of a random matrix (Jacobi on R)", sweeps(np.linalg.qr(general, mode="r"))[1]),
            ("Eigh of the benchmark's positive definite matrix (one pass on a + I: `eigh._positive_definite`)",
             sweeps(scaled + np.eye(n))[1]),
            ("Eigh of the benchmark's positive definite matrix (two passes, as for any other)", "%d + %d" % eigh_passes(spd)),
            ("Eigh of a random symmetric matrix (two passes)", "%d + %d" % eigh_passes(symmetric))]
    lines = [f"Sweeps of ptonnx's one-sided Jacobi at n = {n} (NumPy model; commit {git_commit()}; "
             f"`python -m benchmarks.jacobi_sweeps --n {n}`).", "", "| matrix | sweeps |", "|---|---:|"]
    lines += [f"| {name} | {count} |" for name, count in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.write:
        require_committed(RESULTS)
    text = report(args.n)
    print(text)
    if args.write:
        (ROOT / "benchmarks" / "results" / "jacobi_sweeps.md").write_text(text)
    return text


if __name__ == "__main__":
    main()
