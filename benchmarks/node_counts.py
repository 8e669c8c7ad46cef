"""ONNX node counts of the special functions, with and without the `cse` and `range_facts` passes.

    python -m benchmarks.node_counts [--write]

Each function of one float64 vector (two for the binary ones) is compiled with the
default passes, without `range_facts`, and without it and `cse`; nodes inside Loop bodies are
counted too (onnxruntime runs each of them once per trip). `--write` saves the table
to benchmarks/results/node_counts.md. Counts, not times: they do not depend on the machine.
"""

from __future__ import annotations

import argparse

import pytensor.tensor as pt

import ptonnx
from ptonnx.passes.manager import DEFAULT_PASSES

from benchmarks._common import RESULTS, ROOT, git_commit, require_committed

A, X = pt.dvector("a"), pt.dvector("x")
#: name -> (the PyTensor expression, the inputs it reads)
FUNCTIONS = {
    "gammaln(a)": (lambda: pt.gammaln(A), [A]),
    "psi(a)": (lambda: pt.psi(A), [A]),
    "erfcinv(a)": (lambda: pt.erfcinv(A), [A]),
    "gammaincc(a, x)": (lambda: pt.gammaincc(A, X), [A, X]),
    "gammau(a, x)": (lambda: pt.gammau(A, X), [A, X]),
    "betainc(a, x, 0.3)": (lambda: pt.betainc(A, X, 0.3), [A, X]),
    "betaincinv(a, x, 0.4)": (lambda: pt.betaincinv(A, X, 0.4), [A, X]),
    "gammaincinv(a, x)": (lambda: pt.gammaincinv(A, X), [A, X]),
    "hyp2f1(a, x, 2.5, 0.3)": (lambda: pt.hyp2f1(A, X, 2.5, 0.3), [A, X]),
    "kve(a, x)": (lambda: pt.kve(A, X), [A, X]),
    # positive by construction: the range facts drop what only negative arguments need
    "gammaln(exp(a))": (lambda: pt.gammaln(pt.exp(A)), [A]),
    "psi(exp(a))": (lambda: pt.psi(pt.exp(A)), [A]),
    "gammaln(1 + exp(a))": (lambda: pt.gammaln(1 + pt.exp(A)), [A]),
    "betaln(exp(a), exp(x))": (lambda: pt.gammaln(pt.exp(A)) + pt.gammaln(pt.exp(X)) - pt.gammaln(pt.exp(A) + pt.exp(X)), [A, X]),
}


def count(graph) -> tuple[int, int]:
    """(nodes of the main graph, nodes inside Loop/If bodies at any depth)."""
    inner = 0
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.g.node:
                inner += sum(count(attribute.g))
    return len(graph.node), inner


def table() -> str:
    no_facts = [p for p in DEFAULT_PASSES if p != "range_facts"]
    neither = [p for p in no_facts if p != "cse"]
    rows = ["| function | ONNX nodes (in bodies): no cse, no range_facts | no range_facts | default |", "|---|---:|---:|---:|"]
    for name, (build, inputs) in FUNCTIONS.items():
        cells = []
        for passes in (neither, no_facts, list(DEFAULT_PASSES)):
            outer, inner = count(ptonnx.compile_function(inputs, [build()], passes=passes).model.graph)
            cells.append(f"{outer:,} ({inner:,})")
        rows.append(f"| `{name}` | {' | '.join(cells)} |")
    return "\n".join(rows) + f"\n\nCommit {git_commit()}; `python -m benchmarks.node_counts`.\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="save to benchmarks/results/node_counts.md")
    args = parser.parse_args()
    if args.write:
        require_committed(RESULTS)
    text = table()
    print(text)
    if args.write:
        (ROOT / "benchmarks/results/node_counts.md").write_text("# ONNX node counts of the special functions\n\n" + text)


if __name__ == "__main__":
    main()
