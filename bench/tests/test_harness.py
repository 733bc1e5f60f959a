"""The measurement harness of the benchmarks, and the rules that keep it the only one."""
import ast
import sys
from pathlib import Path
from typing import List

import pytest

from bench import harness

BENCH = Path(harness.__file__).resolve().parent

def python_files() -> List[Path]:
    return sorted(p for p in BENCH.rglob("*.py") if "__pycache__" not in p.parts)


def attribute_uses(path: Path, module: str, name: str) -> List[int]:
    """Lines of `path` that use `module.name` or import `name` from `module`."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"), filename=str(path))):
        if (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name)
                and node.value.id == module):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name for a in node.names):
            lines.append(node.lineno)
    return lines


def test_no_benchmark_edits_sys_path():
    edits = {}
    for path in python_files():
        lines = attribute_uses(path, "sys", "path") + [
            node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf8")))
            if isinstance(node, ast.Attribute) and node.attr == "syspath_prepend"]
        if lines:
            edits[str(path.relative_to(BENCH))] = lines
    assert not edits, f"files under bench/ that change the import path (run scripts as `python -m bench.NAME`): {edits}"


def test_only_the_harness_reaps_a_child_with_wait4():
    callers = {str(p.relative_to(BENCH)): attribute_uses(p, "os", "wait4") for p in python_files()}
    callers = {k: v for k, v in callers.items() if v}
    assert set(callers) == {"harness.py"}, f"measure child processes with bench.harness.run_child: {callers}"


def test_markdown_table():
    lines = harness.markdown_table(["system", "CPU s"], [["a", 1.5], ["b", 2]], align="lr")
    assert lines == ["| system | CPU s |", "|---|---:|", "| a | 1.5 |", "| b | 2 |"]
    with pytest.raises(ValueError, match="align has 1 characters for 2 columns"):
        harness.markdown_table(["system", "CPU s"], [], align="l")


def test_median_and_summary_of_no_runs():
    assert harness.median([3.0, 1.0, 2.0]) == 2.0
    assert harness.median([]) is None
    assert harness.summarize([])["cpu_seconds"] is None


def test_machine_facts_name_the_interpreter(monkeypatch):
    monkeypatch.setattr(harness, "command_output", lambda argv, cwd=harness.ROOT: "")
    facts = harness.machine_facts()
    assert facts["python_executable"] == sys.executable and facts["machine"]


BURN = """
import sys
block = bytearray(int(sys.argv[1]) * 2**20)
for i in range(0, len(block), 4096):
    block[i] = 1
total = 0
for i in range(3_000_000):
    total += i
print("done", total)
print("the end of stderr", file=sys.stderr)
sys.exit(int(sys.argv[2]))
"""


@pytest.mark.slow
def test_run_child_measures_the_child_alone(tmp_path):
    # a child's peak RSS cannot be below this process's peak at spawn (Linux carries it over), so the child
    # allocates 200 MiB more than that floor
    megabytes = harness.self_peak_kib() // 1024 + 200
    run = harness.run_child([sys.executable, "-c", BURN, str(megabytes), "0"], log_stem=tmp_path / "logs" / "burn")
    assert run.ok and run.exit == 0 and not run.timed_out
    assert run.stdout.startswith("done ")
    assert run.stderr_tail.strip() == "the end of stderr"
    assert run.peak_rss_mb >= megabytes, run
    assert run.cpu_seconds == pytest.approx(run.user_seconds + run.sys_seconds) and run.cpu_seconds > 0.05
    assert run.wall_seconds >= run.cpu_seconds * 0.5
    assert (tmp_path / "logs" / "burn.stdout").read_text().startswith("done ")
    small = harness.run_child([sys.executable, "-c", BURN, "1", "0"])
    assert small.peak_rss_mb < run.peak_rss_mb - 150
    assert small.maxrss_kib >= small.parent_peak_kib_at_spawn * 0.9
    record = run.to_dict(stdout_path=tmp_path / "logs" / "burn.stdout")
    assert record["maxrss_kib"] == run.maxrss_kib and "stdout" not in record


@pytest.mark.slow
def test_run_child_reports_failures_and_timeouts():
    failed = harness.run_child([sys.executable, "-c", BURN, "1", "3"])
    assert failed.exit == 3 and not failed.ok
    with pytest.raises(RuntimeError, match="the burn child failed \\(exit 3: the end of stderr\\)"):
        failed.check("the burn child")
    with pytest.raises(RuntimeError, match="exit 3"):
        harness.repeat([sys.executable, "-c", BURN, "1", "3"], 2, "the burn child")
    slow = harness.run_child([sys.executable, "-c", "import time; time.sleep(30)"], timeout=1)
    assert slow.timed_out and not slow.ok and slow.wall_seconds < 10
    assert slow.describe_failure().startswith("timed out")
    runs = harness.repeat([sys.executable, "-c", BURN, "1", "0"], 2, "the burn child")
    summary = harness.summarize(runs)
    assert len(summary["runs_cpu_seconds"]) == 2 and summary["cpu_seconds"] > 0
