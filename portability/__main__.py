"""Write docs/portability.md: every program on every runtime.

    python -m portability [--write] [--runtimes NAME ...] [--no-pymc]

The PyMC rows need the PyMC environment (`.venv-pymc/bin/python -m portability`); the
OpenVINO column needs `pip install openvino` there (not a dependency of ptonnx). CI runs
the onnxruntime, onnxruntime-web and onnx.reference columns as a test
(`tests/test_portability.py`); this script runs them all and writes the table.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from portability.deviations import DEVIATIONS  # noqa: E402
from portability.matrix import run  # noqa: E402
from portability.programs import PROGRAMS, pymc_programs  # noqa: E402
from portability.runtimes import RUNTIMES  # noqa: E402

SYMBOL = {"identical": "= ort", "close": "close", "raises": "raises", "differs": "**differs**", "no error": "**no error**",
          "refused": "refused", "fails": "**fails**", "not installed": "n/a", "not run": "-"}


def _versions() -> str:
    import json
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for dist in ("onnxruntime", "onnx", "pytensor", "iree-base-compiler", "openvino"):
        try:
            found.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            found.append(f"{dist} not installed")
    web = ROOT / "web" / "node_modules" / "onnxruntime-web" / "package.json"
    if web.exists():
        found.append(f"onnxruntime-web {json.loads(web.read_text())['version']} (Node)")
    return ", ".join(found)


def render(table: dict, runtimes: tuple[str, ...]) -> str:
    from benchmarks._common import git_commit

    lines = ["# Where ptonnx's files run (`python -m portability`)", "",
             f"{datetime.date.today()}, commit {git_commit()}, {platform.machine()}; {_versions()}.", "",
             "Each program is compiled once by ptonnx and the same file is run on each runtime, with inputs at the",
             "ends of the range. `= ort`: onnxruntime's bytes, within the program's tolerance of PyTensor's own",
             "evaluation; `close e`: within that tolerance, other bytes, e the largest relative error to PyTensor",
             "(over elements above the program's absolute tolerance); `raises`: the run fails, as the program",
             "must (a failed check); `refused`: the runtime would not load or compile it (IREE: ptonnx's",
             "`runtime=\"iree\"` refuses what IREE cannot compile); `differs`, `no error`, `fails`: a departure,",
             "explained below; `-`: not run (OpenVINO computes float64 in float32); `n/a`: not installed.", "",
             "| program | " + " | ".join(runtimes) + " |", "|---" * (len(runtimes) + 1) + "|"]
    notes = []
    for name, row in table.items():
        cells = []
        for runtime in runtimes:
            cell = row[runtime]
            error = cell.detail.removeprefix("relative error ") if cell.verdict == "close" else ""
            cells.append(f"{SYMBOL[cell.verdict]} {error}".strip())
            if not cell.good and cell.verdict not in ("not run", "not installed"):
                why = DEVIATIONS.get((name, runtime), "A refusal, with its reason (IREE for every model is issue 36's "
                                      "third point)." if cell.verdict == "refused" else "Not explained yet.")
                notes.append(f"- **{name}, {runtime}** ({cell.verdict}): {cell.detail[:240]}. {why}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Departures", "", *(notes or ["None."]), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--runtimes", nargs="*", default=list(RUNTIMES))
    parser.add_argument("--no-pymc", action="store_true")
    args = parser.parse_args()
    programs = dict(PROGRAMS)
    if not args.no_pymc:
        programs.update(pymc_programs())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = run(programs, tuple(args.runtimes))
    text = render(table, tuple(args.runtimes))
    print(text)
    if args.write:
        (ROOT / "docs" / "portability.md").write_text(text)


if __name__ == "__main__":
    main()
