"""The measurement harness every benchmark script shares.

`run_child` runs one child process to completion and reaps it with `os.wait4`, so the CPU seconds
(user + sys) and the peak resident set size (`ru_maxrss`) are that child's own, whole-process figures,
imports included. `repeat` runs the same child several times and `summarize` takes medians. The module
also gathers the machine's facts and renders Markdown tables, so that every results page states the same
things in the same shape.

Linux carries a parent's peak RSS over into a child's `ru_maxrss` through fork/exec, so a child's figure
cannot be lower than the parent's peak at spawn: `ChildRun.parent_peak_kib_at_spawn` records that floor.
"""
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

ROOT = Path(__file__).resolve().parents[1]
STDERR_TAIL = 600


@dataclass
class ChildRun:
    """One finished child process: its exit, its own rusage and its output."""

    argv: List[str]
    exit: int
    timed_out: bool
    cpu_seconds: float
    user_seconds: float
    sys_seconds: float
    maxrss_kib: int
    parent_peak_kib_at_spawn: int
    wall_seconds: float
    stdout: str
    stderr_tail: str

    @property
    def ok(self) -> bool:
        """Whether the child exited with 0 before its timeout."""
        return self.exit == 0 and not self.timed_out

    @property
    def peak_rss_mb(self) -> float:
        """The child's peak resident set size in MiB (2^20 bytes)."""
        return self.maxrss_kib / 1024

    def describe_failure(self) -> str:
        """One line saying why the child failed: the timeout or the exit code, and its last stderr line."""
        why = "timed out" if self.timed_out else f"exit {self.exit}"
        tail = self.stderr_tail.strip().splitlines()[-1:] or [""]
        return f"{why}: {tail[0][:200]}"

    def check(self, what: str) -> "ChildRun":
        """This run, or a RuntimeError naming `what` with the child's stderr tail if it failed."""
        if not self.ok:
            raise RuntimeError(f"{what} failed ({self.describe_failure()}); stderr ends with:\n"
                               f"{self.stderr_tail[-400:]}")
        return self

    def to_dict(self, stdout_path: Optional[Path] = None) -> Dict[str, Any]:
        """The run as a JSON-ready dict, the captured stdout replaced by the path it was written to."""
        out = asdict(self)
        del out["stdout"]
        if stdout_path is not None:
            out["stdout_path"] = (str(stdout_path.relative_to(ROOT)) if stdout_path.is_relative_to(ROOT)
                                  else str(stdout_path))
        return out


def self_peak_kib() -> int:
    """This process's own peak RSS in KiB: the floor under any child it starts now."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_child(argv: Sequence[Union[str, Path]], *, cwd: Path = ROOT, env: Optional[Mapping[str, str]] = None,
              timeout: Optional[float] = None, log_stem: Optional[Path] = None) -> ChildRun:
    """Run `argv` to completion and return its own CPU seconds, peak RSS, wall time, exit and output.

    argv: The command, e.g. `[sys.executable, "-m", "bench.NAME", ...]`.
    cwd: The child's working directory (the repository root by default).
    env: The child's environment (this process's by default).
    timeout: Seconds after which the child is killed (SIGKILL) and the run marked `timed_out`; None waits.
    log_stem: If given, stdout and stderr are kept in `log_stem.stdout` and `log_stem.stderr`; otherwise in
        temporary files removed after reading.
    RETURNS (ChildRun): The finished run; it never raises for a failing child (see `ChildRun.check`).
    """
    argv = [str(a) for a in argv]
    with tempfile.TemporaryDirectory(prefix="bench-child-") as tmp:
        stem = log_stem if log_stem is not None else Path(tmp) / "child"
        stem.parent.mkdir(parents=True, exist_ok=True)
        out_path, err_path = stem.with_suffix(".stdout"), stem.with_suffix(".stderr")
        floor = self_peak_kib()
        timed_out = []
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            wall0 = time.perf_counter()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd,
                                    env=dict(env) if env is not None else None)

            def on_alarm(signum: int, frame: Any) -> None:
                timed_out.append(True)
                try:
                    os.kill(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

            previous = signal.signal(signal.SIGALRM, on_alarm) if timeout is not None else None
            if timeout is not None:
                signal.alarm(max(1, int(timeout)))
            try:
                _, status, ru = os.wait4(proc.pid, 0)
            except BaseException:  # interrupted (Ctrl-C, SIGTERM): do not leave the child running
                proc.kill()
                os.wait4(proc.pid, 0)
                raise
            finally:
                if timeout is not None:
                    signal.alarm(0)
                    signal.signal(signal.SIGALRM, previous)
            wall = time.perf_counter() - wall0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout = out_path.read_text(encoding="utf-8", errors="replace")
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
    return ChildRun(argv=argv, exit=proc.returncode, timed_out=bool(timed_out),
                    cpu_seconds=ru.ru_utime + ru.ru_stime, user_seconds=ru.ru_utime, sys_seconds=ru.ru_stime,
                    maxrss_kib=ru.ru_maxrss, parent_peak_kib_at_spawn=floor, wall_seconds=wall, stdout=stdout,
                    stderr_tail=stderr[-STDERR_TAIL:])


def repeat(argv: Sequence[Union[str, Path]], repeats: int, what: str, **kwargs: Any) -> List[ChildRun]:
    """`repeats` runs of the same child (see `run_child` for the keyword arguments); a RuntimeError naming
    `what` as soon as one fails."""
    return [run_child(argv, **kwargs).check(what) for _ in range(repeats)]


def median(values: Iterable[float]) -> Optional[float]:
    """The median of `values`, or None when there are none."""
    values = list(values)
    return statistics.median(values) if values else None


def summarize(runs: Sequence[ChildRun]) -> Dict[str, Any]:
    """Median whole-process CPU seconds, peak RSS (MiB) and wall seconds of `runs`, with each run's CPU."""
    return {"cpu_seconds": median(r.cpu_seconds for r in runs), "peak_rss_mb": median(r.peak_rss_mb for r in runs),
            "wall_seconds": median(r.wall_seconds for r in runs), "runs_cpu_seconds": [r.cpu_seconds for r in runs]}


def command_output(argv: Sequence[str], cwd: Path = ROOT) -> str:
    """The stripped stdout of a short command, or "" if it cannot run."""
    try:
        return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine_facts() -> Dict[str, Any]:
    """The CPU, memory, kernel, Python and numeric library versions of this machine."""
    cpu_model = ""
    mem_total = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo", encoding="utf-8"):
            if line.startswith("MemTotal"):
                mem_total = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = command_output([sys.executable, "-c", (
        "import json, numpy, scipy, srsly\n"
        "try:\n import sklearn; sk = sklearn.__version__\nexcept ImportError:\n sk = None\n"
        "print(json.dumps({'numpy': numpy.__version__, 'scipy': scipy.__version__, 'srsly': srsly.__version__,"
        " 'scikit-learn': sk}))")])
    return {
        "nproc": command_output(["nproc"]),
        "cpu_model": cpu_model,
        "mem_total": mem_total,
        "kernel": platform.release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        **(json.loads(versions) if versions.startswith("{") else {}),
    }


def provenance() -> Dict[str, str]:
    """The commit this checkout is at (with `+changes` when product files differ from it) and a one-line
    description of this machine: what every generated report states about the run it shows."""
    commit = command_output(["git", "rev-parse", "--short=7", "HEAD"]) or "unknown"
    if command_output(["git", "status", "--porcelain", "--", "spacy_treeboost", "setup.py"]):
        commit += "+changes"
    facts = machine_facts()
    cpu = f" ({facts['cpu_model']})" if facts.get("cpu_model") else ""
    machine = f"{facts.get('nproc') or '?'} CPUs{cpu}, {facts['machine']}, Linux {facts['kernel']}, Python {facts['python']}"
    return {"commit": commit, "machine": machine}


def stamp(facts: Union[None, Mapping[str, Any], Sequence[Mapping[str, Any]]]) -> str:
    """The report line naming the commit and machine of `facts` (from `provenance`, stored in a report's JSON;
    a list when several invocations made one report)."""
    runs = [facts] if isinstance(facts, Mapping) else list(facts or [])
    if not runs:
        return "Commit and machine: not recorded by this run."
    commits = list(dict.fromkeys(str(f.get("commit", "unknown")) for f in runs))
    machines = list(dict.fromkeys(str(f.get("machine", "an unrecorded machine")) for f in runs))
    notes = [str(f["note"]) for f in runs if f.get("note")]
    return (f"Measured at commit{'s' if len(commits) > 1 else ''} {', '.join(f'`{c}`' for c in commits)} "
            f"on {'; '.join(machines)}" + "".join(f" ({n})" for n in dict.fromkeys(notes)) + ".")


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


def markdown_row(cells: Iterable[Any]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: Optional[str] = None) -> List[str]:
    """The lines of a Markdown table; `align` gives one character per column, `l` or `r` (default: all `l`)."""
    align = align or "l" * len(header)
    if len(align) != len(header):
        raise ValueError(f"align has {len(align)} characters for {len(header)} columns: give one `l` or `r` each")
    rule = "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"
    return [markdown_row(header), rule, *(markdown_row(r) for r in rows)]


def read_template(name: str) -> str:
    """The text of the Markdown template `bench/templates/NAME`."""
    return (ROOT / "bench" / "templates" / name).read_text(encoding="utf-8")


def seeded_review_examples(nlp: Any, n: int = 2000, seed: int = 7) -> List[Any]:
    """`n` seeded training examples for a pipeline that classifies streams: two class words ("good", "fun",
    "great" for POS; "bad", "boring", "dull" for NEG) among 3 to 20 filler words of 20,000, shuffled."""
    import random

    from spacy.training import Example

    rng = random.Random(seed)
    examples = []
    for _ in range(n):
        pos = rng.random() < 0.5
        words = rng.choices(["good", "fun", "great"] if pos else ["bad", "boring", "dull"], k=2)
        words += [f"w{rng.randrange(20000):05d}" for _ in range(rng.randint(3, 20))]
        rng.shuffle(words)
        examples.append(Example.from_dict(nlp.make_doc(" ".join(words)),
                                          {"cats": {"POS": float(pos), "NEG": float(not pos)}}))
    return examples


GENERATOR = ROOT.parent / "shared" / "bench" / "gen_synth_trees.py"


def generate_corpus(out: Path, n_train: int, n_test: int, shape: Sequence[str] = ()) -> Path:
    """The shared generator's corpus of `n_train` training and `n_test` test documents (`shape`: its other options)
    in `out`, generated once; RETURNS out."""
    if not (out / "train.tree").is_file():
        out.mkdir(parents=True, exist_ok=True)
        print(f"generating {n_train:,} documents in {out}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, str(GENERATOR), "--out-dir", str(out), "--n-train", str(n_train), "--n-test",
                        str(n_test), *shape], check=True, stdout=subprocess.DEVNULL)
    return out

