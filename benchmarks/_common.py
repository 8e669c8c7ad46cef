"""Helpers shared by the benchmark scripts: the run's metadata, and the report code of the two
compile-speed benchmarks (`compile_speed.py`, `compile_general.py`)."""

from __future__ import annotations

import datetime
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: where results files go: written only from a committed tree (`require_committed`)
RESULTS = ROOT / "benchmarks" / "results"

#: the compile-speed target (issue): µs/node at the largest size within this factor of the smallest
TARGET_RATIO = 1.5  # issue 34: µs/node at 20,000 nodes within 1.5x of that at 1,000
#: how the compile-speed benchmarks leave Python's cyclic GC unless --no-gc
GC_DEFAULT = "enabled (CPython's defaults, as users run)"


def _tree() -> tuple[str, bool] | None:
    """(short commit, whether tracked files outside benchmarks/results differ from it), or None
    without git or a checkout. Results files are left out: writing one does not change what the
    next benchmark measures."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)benchmarks/results"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit, bool(dirty)


def git_commit() -> str:
    """The short commit of the working tree, marked in printed numbers when the tree has uncommitted
    changes (results files are not written from such a tree: `require_committed`)."""
    tree = _tree()
    if tree is None:
        return "unknown"
    commit, dirty = tree
    return commit + (" (+ uncommitted changes)" if dirty else "")


def require_committed(destination: Path) -> None:
    """Exit, before anything is measured, when results would go to `destination` (a file or a
    directory) in benchmarks/results from a tree with uncommitted changes: results name the commit
    they were measured at. Elsewhere (`--out /tmp/...`) the numbers go with their marked commit."""
    destination = Path(destination).resolve()
    if destination != RESULTS and RESULTS not in destination.parents:
        return
    tree = _tree()
    if tree is None:
        sys.exit(f"refusing to write {destination}: results name a commit, and {ROOT} is not a git checkout")
    if tree[1]:
        sys.exit(f"refusing to write {destination}: the working tree has uncommitted changes, and results name "
                 f"the commit they were measured at ({tree[0]} is not it). Commit first, or run without writing "
                 "(without --write, or with --out elsewhere) to print the numbers.")


def jsonable(obj):
    """`json.dumps(default=...)`: tuples as lists, NaN as null, anything else as its str."""
    if isinstance(obj, tuple):
        return list(obj)
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return str(obj)


# --------------------------------------------------------------------------
# compile-speed reports
# --------------------------------------------------------------------------
def compile_meta(script: str, argv) -> dict:
    """Where and how a compile-speed benchmark ran (`script`: its module name under benchmarks)."""
    import onnx
    import pytensor

    from ptonnx.passes import DEFAULT_PASSES

    return {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pytensor": pytensor.__version__,
        "onnx": onnx.__version__,
        "commit": git_commit(),
        "command": f"python -m benchmarks.{script} " + " ".join(argv),
        "passes": list(DEFAULT_PASSES),
    }


def ms(seconds: float) -> str:
    ms_ = seconds * 1e3
    return f"{ms_:.1f}" if ms_ >= 10 else f"{ms_:.2f}"


def summarize(runs: list[dict], pass_names) -> dict:
    """One table row from the repeats of one graph (each a `compile_speed.measure_once` dict): medians."""
    med = statistics.median
    return {
        "n": runs[0]["n"],
        "repeats": len(runs),
        "lift": med(r["lift"] for r in runs),
        "passes": {p: med(r["passes"][p] for r in runs) for p in pass_names},
        "lower": med(r["lower"] for r in runs),
        "total": med(r["total"] for r in runs),
        "total_min": min(r["total"] for r in runs),
        "total_max": max(r["total"] for r in runs),
        "check": med(r["check"] for r in runs),
        "gc": med(r["gc"] for r in runs),
        "gc_full": med(r["gc_full"] for r in runs),
        "us_per_node": med(r["total"] for r in runs) / runs[0]["n"] * 1e6,
        "us_per_node_excl_gc": med(r["total"] - r["gc"] for r in runs) / runs[0]["n"] * 1e6,
        "check_us_per_node": med(r["check"] for r in runs) / runs[0]["n"] * 1e6,
        "pass_nodes": runs[0]["pass_nodes"],
        "ir_after": runs[0]["ir_after"],
        "onnx_nodes": runs[0]["onnx_nodes"],
        "initializers": runs[0]["initializers"],
    }


def per_node_ratio(rows: list[dict]) -> dict:
    """µs/node at the largest size over µs/node at the smallest (`rows` sorted by size), and the verdict."""
    small, large = rows[0], rows[-1]
    ratio = large["us_per_node"] / small["us_per_node"]
    return {
        "n_small": small["n"], "n_large": large["n"],
        "us_small": small["us_per_node"], "us_large": large["us_per_node"],
        "ratio": ratio,
        "us_small_excl_gc": small["us_per_node_excl_gc"], "us_large_excl_gc": large["us_per_node_excl_gc"],
        "ratio_excl_gc": large["us_per_node_excl_gc"] / small["us_per_node_excl_gc"],
        "verdict": ("PASS" if ratio <= TARGET_RATIO else "FAIL") if len(rows) > 1 else "n/a (one size)",
    }


def report_head(title: str, meta: dict) -> list[str]:
    """The title, where and how it ran, and a blank line."""
    return [
        f"# {title}",
        "",
        f"Measured {meta['date']} on {meta['machine']} ({meta['cpus']} CPUs), Python {meta['python']}, "
        f"pytensor {meta['pytensor']}, onnx {meta['onnx']}, commit {meta['commit']}.",
        f"Command: `{meta['command']}`",
        "",
    ]


def cells_legend(meta: dict, gc_tail: str) -> str:
    """What the stage table's cells are; `gc_tail` ends the sentence on the GC column."""
    return (
        "Cells are medians over the repeats, in milliseconds. N = IR nodes right after lifting. "
        "total = lift + passes + lower (median of the per-repeat totals); µs/node = total / N. "
        "The ONNX checker (`check_model(full_check=True)`) is onnx's cost, shown apart and not in the total. "
        f"Python's cyclic GC was {meta['gc']} during the timed stages; the GC column is the part of "
        "the total spent inside the collector " + gc_tail
    )


def stage_table(rows: list[dict], pass_names, first_header: str, first_cells, first_align: str = "---") -> list[str]:
    """The table of stage times, one line per `summarize` row, led by a column `first_header` of `first_cells`."""
    head = [first_header, "N (IR nodes)", "repeats", "lift ms", *[f"{p} ms" for p in pass_names],
            "lower ms", "total ms (ours)", "checker ms", "µs/node",
            "of total: GC ms (full GCs)", "µs/node excl. GC", "IR after passes", "ONNX nodes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join([first_align] + ["---:"] * (len(head) - 1)) + "|"]
    for first, s in zip(first_cells, rows, strict=True):
        cells = [str(first), f"{s['n']:,}", str(s["repeats"]), ms(s["lift"]),
                 *[ms(s["passes"][p]) for p in pass_names], ms(s["lower"]), ms(s["total"]),
                 ms(s["check"]), f"{s['us_per_node']:.2f}", f"{ms(s['gc'])} ({s['gc_full']:g})",
                 f"{s['us_per_node_excl_gc']:.2f}", f"{s['ir_after']:,}", f"{s['onnx_nodes']:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratio_line(label: str, r: dict) -> str:
    """The verdict on a `per_node_ratio`, as a markdown list item."""
    return (
        f"- **{label}**: µs/node at N={r['n_large']:,} / at N={r['n_small']:,} = "
        f"{r['us_large']:.2f} / {r['us_small']:.2f} = **{r['ratio']:.2f}x** "
        f"(target ≤ {TARGET_RATIO:g}x): **{r['verdict']}**; excluding GC time: "
        f"{r['us_large_excl_gc']:.2f} / {r['us_small_excl_gc']:.2f} = {r['ratio_excl_gc']:.2f}x"
    )


def median_seconds(fn, rounds: int) -> float:
    """The median time of `rounds` calls of `fn` after one warm-up call."""
    import statistics
    import time

    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
