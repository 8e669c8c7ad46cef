"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def git_commit() -> str:
    """The short commit of the working tree, marked when it has uncommitted changes."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return commit + (" (+ uncommitted changes)" if dirty else "")
    except Exception:  # noqa: BLE001 - no git, not a checkout: the numbers still stand
        return "unknown"
