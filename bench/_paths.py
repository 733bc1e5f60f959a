"""Results files without the machine's paths, for bench/bench_scale.py, which runs as a file
(`bench.harness.relative_paths` is the same function for the scripts of the `bench` package)."""
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def relative_paths(x: Any) -> Any:
    """`x` (JSON-like) with paths under the checkout, or beside it, relative to the repository root, and this
    interpreter as `python`."""
    if isinstance(x, dict):
        return {k: relative_paths(v) for k, v in x.items()}
    if isinstance(x, list):
        return [relative_paths(v) for v in x]
    if not isinstance(x, str):
        return x
    if x == sys.executable:
        return "python"
    return x.replace(str(ROOT) + os.sep, "").replace(str(ROOT.parent) + os.sep, ".." + os.sep)
