"""Where the test suite's time goes: test time per folder and per module, and the slowest tests,
read from pytest's JUnit XML (one file per environment).

    make test        # each environment writes <venv>/junit.xml
    python -m benchmarks.ci_time .venv/junit.xml .venv-pymc/junit.xml

Test time is summed over pytest-xdist's workers: on CI's two workers the wall time of an
environment is about half its sum (worksteal keeps both busy until the last tests).
"""

from __future__ import annotations

import argparse
import collections
import xml.etree.ElementTree as ET
from pathlib import Path


def tests(path: Path) -> list[tuple[float, str, str]]:
    """(seconds, module, test) for each test case of one JUnit file."""
    found = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "")
        found.append((float(case.get("time", 0.0)), module, case.get("name", "")))
    return found


def folder(module: str) -> str:
    """`tests.e2e.test_special` -> `e2e`; a module directly in tests/ is its own folder."""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else parts[-1]


def report(path: Path, top: int) -> str:
    cases = tests(path)
    total = sum(t for t, _, _ in cases)
    by_folder, count = collections.Counter(), collections.Counter()
    by_module = collections.Counter()
    for seconds, module, _ in cases:
        by_folder[folder(module)] += seconds
        count[folder(module)] += 1
        by_module[module] += seconds
    lines = [f"## {path}: {len(cases):,} tests, {total:,.0f} s of test time", "",
             "| folder | s | share | tests |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {s:,.0f} | {s / total:.0%} | {count[name]:,} |" for name, s in by_folder.most_common()]
    lines += ["", "| module | s |", "|---|---:|"]
    lines += [f"| {name} | {s:,.0f} |" for name, s in by_module.most_common(top)]
    slowest = sorted(cases, reverse=True)[:top]
    lines += ["", "| test | s |", "|---|---:|"]
    lines += [f"| {module}::{name} | {s:.1f} |" for s, module, name in slowest]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path, help="pytest --junitxml files")
    parser.add_argument("--top", type=int, default=15, help="modules and tests listed")
    args = parser.parse_args(argv)
    print("\n\n".join(report(path, args.top) for path in args.files))


if __name__ == "__main__":
    main()
