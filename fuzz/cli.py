"""`python -m fuzz`: run the differential fuzzer for a time or a number of graphs, print counts by outcome.

Seeds run in order from `--seed`; each seed is one graph (`fuzz.generate`),
checked as each kind of graph (`fuzz.check.KINDS`) at every onnxruntime level.
Each mismatch and crash is printed with its reproducer (seed, the graph given
to ptonnx, the differing values, the culprit node when localised). Nothing is
written unless `--report PATH` is given.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fuzz.check import FAILURES, KINDS, OUTCOMES, Finding, check_program, kinds_for
from fuzz.generate import generate


@dataclass
class Summary:
    graphs: int = 0
    seconds: float = 0.0
    counts: Counter = field(default_factory=Counter)
    by_kind: dict = field(default_factory=lambda: defaultdict(Counter))
    #: (outcome, signature) -> seeds
    signatures: dict = field(default_factory=lambda: defaultdict(list))
    findings: list = field(default_factory=list)

    @property
    def failures(self) -> list[Finding]:
        return [f for f, _ in self.findings if f.outcome in FAILURES]

    def table(self) -> str:
        lines = [f"{self.graphs} graphs in {self.seconds:.0f} s; comparisons by outcome:"]
        kinds = [k for k in KINDS if k in self.by_kind]
        lines.append(f"  {'outcome':<16}" + "".join(f"{k:>11}" for k in kinds) + f"{'total':>9}")
        for outcome in OUTCOMES:
            row = "".join(f"{self.by_kind[k][outcome]:>11}" for k in kinds)
            lines.append(f"  {outcome:<16}{row}{self.counts[outcome]:>9}")
        return "\n".join(lines)

    def distinct(self, outcomes=("mismatch", "crash", "inexact", "refused", "reference-error")) -> str:
        lines = []
        for outcome in outcomes:
            sigs = [(sig, seeds) for (o, sig), seeds in self.signatures.items() if o == outcome]
            if not sigs:
                continue
            lines.append(f"{outcome}: {len(sigs)} distinct")
            for sig, seeds in sorted(sigs, key=lambda s: -len(s[1])):
                shown = ", ".join(seeds[:6]) + (" ..." if len(seeds) > 6 else "")
                lines.append(f"  {len(seeds):>4}x {sig}\n        seeds: {shown}")
        return "\n".join(lines)


def run(seeds, kinds=KINDS, slow_every: int = 8, deadline: float | None = None, max_ops: int = 8,
        on_finding=None, localise: bool = True) -> Summary:
    """Check the graph of each seed until the seeds or the time (`deadline`, a `time.monotonic()`) run out."""
    summary = Summary()
    start = time.monotonic()
    try:
        for seed in seeds:
            if deadline is not None and time.monotonic() >= deadline:
                break
            program = generate(seed, max_ops=max_ops)
            findings = check_program(program, kinds_for(seed, kinds, slow_every), localise)
            summary.graphs += 1
            for finding in findings:
                summary.counts[finding.outcome] += 1
                summary.by_kind[finding.kind][finding.outcome] += 1
                if finding.outcome != "match":
                    summary.signatures[(finding.outcome, f"[{finding.kind}] {finding.signature}")].append(str(seed))
                    summary.findings.append((finding, program.code()))  # not the graph: memory stays flat
                    if on_finding is not None:
                        on_finding(finding, program)
    except KeyboardInterrupt:  # Ctrl-C: the counts so far
        print(f"interrupted after {summary.graphs} graphs")
    summary.seconds = time.monotonic() - start
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="stop starting new graphs after this long")
    parser.add_argument("--graphs", type=int, help="number of graphs (default 100 when --seconds is not given)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (then seed+1, ...)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated subset of {','.join(KINDS)}")
    parser.add_argument("--slow-every", type=int, default=8, help="check FAST_RUN and cvm on one seed in N (1: all)")
    parser.add_argument("--max-ops", type=int, default=8, help="at most this many ops per graph")
    parser.add_argument("--max-print", type=int, default=2, help="reproducers printed per distinct finding")
    parser.add_argument("--code", action="store_true", help="print the PyTensor code of each reproducer too")
    parser.add_argument("--report", help="write every finding (with code) to this file")
    parser.add_argument("--no-localise", action="store_true", help="skip finding the culprit node of mismatches")
    args = parser.parse_args(argv)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {KINDS}")
    graphs = args.graphs if args.graphs is not None else (None if args.seconds else 100)
    seeds = range(args.seed, args.seed + graphs) if graphs is not None else itertools.count(args.seed)
    deadline = time.monotonic() + args.seconds if args.seconds else None
    printed = Counter()

    def show(finding: Finding, program) -> None:
        if finding.outcome not in FAILURES:
            return
        key = (finding.kind, finding.signature)
        printed[key] += 1
        if printed[key] <= args.max_print:
            print(finding.report(program, code=args.code), "\n", flush=True)
        else:
            print(f"== seed {finding.seed} [{finding.kind}] {finding.outcome}: {finding.signature} (as above)", flush=True)

    summary = run(seeds, kinds, args.slow_every, deadline, args.max_ops, show, not args.no_localise)
    print(summary.table())
    print(summary.distinct())
    if args.report:
        with open(args.report, "w") as out:
            out.write(summary.table() + "\n\n" + summary.distinct() + "\n\n")
            out.writelines(finding.report(code_, code=True) + "\n\n" for finding, code_ in summary.findings)
        print(f"report written to {args.report}")
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
