"""What `apply --n-workers N` pays: one process against N worker processes on the same short texts.

    python -m bench.bench_apply                      # 20,000 texts, 1 and 2 workers, 5 paired runs
    python -m bench.bench_apply --docs 2000 --repeats 1 --output bench/_out/bench_apply_quick
    python -m bench.bench_apply --render-only        # rebuild docs/bench_apply.md from docs/bench_apply.json

A small pipeline (what `init-config` describes: a blank English tokenizer, a sentencizer and
`treeboost_textcat` with the default learner, trained on 2,000 seeded texts; not measured) classifies
--docs seeded short texts (5-40 words, `bench.bench_scale.write_apply_input`). Each measurement is one
whole `python -m spacy_treeboost apply` process, started and reaped by `bench.harness.run_child`: wall
seconds, CPU seconds (user + sys of the process and of the worker processes it waited for) and peak RSS,
imports and pipeline loading included; the command also reports its own CPU seconds, those of its
workers, and its own when the workers started. The runs are paired: each repeat runs every worker count
once, in an order that alternates between repeats, so that the ratios compare runs made under the same
load; the report gives each pair's ratio and the medians. The outputs of every worker count must be byte
for byte the same.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

from bench.harness import ROOT, machine_facts, markdown_table, relative_paths, run_child, seeded_review_examples

OUT = ROOT / "bench" / "_out" / "apply"
DEFAULT_OUTPUT = ROOT / "docs" / "bench_apply"
TARGET = 0.7


# `python -m spacy_treeboost ARGS`, writing to $BENCH_APPLY_CPU its own CPU seconds, its worker processes' and its
# own when the workers started
COMMAND = """
import json, os, resource, runpy, sys
from spacy_treeboost.learning.tasks import ProcessWorkers
def cpu(who):
    usage = resource.getrusage(getattr(resource, who))
    return usage.ru_utime + usage.ru_stime
start, seen = ProcessWorkers.__init__, {}
def timed_start(self, *args, **kwargs):
    seen["at_start"] = cpu("RUSAGE_SELF")
    start(self, *args, **kwargs)
ProcessWorkers.__init__ = timed_start
sys.argv = ["spacy_treeboost", *sys.argv[1:]]
try:
    runpy.run_module("spacy_treeboost", run_name="__main__", alter_sys=True)
finally:
    with open(os.environ["BENCH_APPLY_CPU"], "w") as f:
        json.dump({"self": cpu("RUSAGE_SELF"), "children": cpu("RUSAGE_CHILDREN"), **seen}, f)
"""


def measure(model: Path, source: Path, workers: Sequence[int], repeats: int, batch_size: int,
            timeout: float) -> List[Dict[str, Any]]:
    """`repeats` rounds of one `apply` run per worker count (the order reversed every other round)."""
    runs = []
    cpu_file = OUT / "cpu.json"
    for r in range(repeats):
        for n in (workers if r % 2 == 0 else list(reversed(workers))):
            target = OUT / f"out_{n}.jsonl"
            load = os.getloadavg()[0]
            run = run_child([sys.executable, "-c", COMMAND, "apply", model, source, target, "--n-workers", n,
                             "--batch-size", batch_size], timeout=timeout,
                            env=dict(os.environ, BENCH_APPLY_CPU=str(cpu_file))).check(f"apply --n-workers {n}")
            split = json.loads(cpu_file.read_text())
            runs.append({"repeat": r, "n_workers": n, "wall_seconds": run.wall_seconds, "cpu_seconds": run.cpu_seconds,
                         "main_process_cpu_seconds": split["self"], "worker_processes_cpu_seconds": split["children"],
                         "main_process_cpu_seconds_before_workers": split["at_start"],
                         "peak_rss_mb": run.peak_rss_mb, "load_1min_before": load,
                         "output_bytes": target.stat().st_size})
            print(f"repeat {r}, {n} workers: wall {run.wall_seconds:.2f} s, CPU {run.cpu_seconds:.2f} s (this "
                  f"process {split['self']:.2f} s, {split['at_start']:.2f} s of it before the workers; "
                  f"load {load:.1f})", file=sys.stderr)
        outputs = {(OUT / f"out_{n}.jsonl").read_bytes() for n in workers}
        if len(outputs) != 1:
            raise RuntimeError(f"repeat {r}: the outputs of {list(workers)} workers differ")
    return runs


def summarize(runs: List[Dict[str, Any]], workers: Sequence[int]) -> Dict[str, Any]:
    """Medians per worker count, and per-repeat wall ratios against the first worker count."""
    base = workers[0]
    by = {n: [r for r in runs if r["n_workers"] == n] for n in workers}
    rows = {}
    for n in workers:
        pairs = [r["wall_seconds"] / b["wall_seconds"] for r, b in zip(by[n], by[base])]
        cpu_pairs = [r["cpu_seconds"] / b["cpu_seconds"] for r, b in zip(by[n], by[base])]
        critical = [r["main_process_cpu_seconds_before_workers"]
                    + max(r["main_process_cpu_seconds"] - r["main_process_cpu_seconds_before_workers"],
                          r["worker_processes_cpu_seconds"] / max(1, n - 1)) for r in by[n]]
        rows[str(n)] = {
            "wall_seconds": statistics.median(r["wall_seconds"] for r in by[n]),
            "cpu_seconds": statistics.median(r["cpu_seconds"] for r in by[n]),
            "main_process_cpu_seconds": statistics.median(r["main_process_cpu_seconds"] for r in by[n]),
            "worker_cpu_seconds": statistics.median(r["worker_processes_cpu_seconds"] / max(1, n - 1)
                                                    for r in by[n]) if n > 1 else None,
            "before_workers_cpu_seconds": statistics.median(r["main_process_cpu_seconds_before_workers"]
                                                            for r in by[n]),
            "critical_cpu_seconds": statistics.median(critical),
            "critical_cpu_ratio": statistics.median(c / one["main_process_cpu_seconds"]
                                                    for c, one in zip(critical, by[base])),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in by[n]),
            "wall_ratios": pairs, "wall_ratio": statistics.median(pairs),
            "cpu_ratio": statistics.median(cpu_pairs),
        }
    return rows


def commit() -> str:
    """The checkout's commit, marked when the tree has changes."""
    described = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=12"], cwd=ROOT,
                               capture_output=True, text=True)
    return described.stdout.strip()


def render(result: Dict[str, Any]) -> str:
    """The Markdown report of a result."""
    m = result["machine"]
    workers = result["workers"]
    lines = [
        "# `apply` with worker processes",
        "",
        f"Generated by `{result['command']}` at commit `{result['commit']}` on {m['nproc']} cores "
        f"({m['cpu_model']}, {m['mem_total']}, Linux {m['kernel']}, Python {m['python']}); the load average "
        f"(1 min) was {result['load_start']:.1f} at the start and {result['load_end']:.1f} at the end"
        + (" — the machine was shared with other jobs, so the paired ratios matter more than the wall seconds."
           if result["load_start"] > 1.5 or result["load_end"] > 1.5 else "."),
        "",
        f"{result['docs']:,} seeded short texts (5-40 words) through a small pipeline as `init-config` describes it "
        f"(a blank English tokenizer, a sentencizer and `treeboost_textcat` with the default learner, trained on "
        f"2,000 seeded texts), batches of {result['batch_size']}. Each run is one "
        "`python -m spacy_treeboost apply MODEL in.jsonl out.jsonl --n-workers N` process (imports and pipeline "
        "loading included); CPU counts the worker processes too. Every repeat runs each worker count once (the "
        "order alternates), and the outputs were the same bytes for every worker count.",
        "",
    ]
    rows = []
    for n in workers:
        row = result["rows"][str(n)]
        worker = "" if row["worker_cpu_seconds"] is None else f"{row['worker_cpu_seconds']:.2f}"
        rows.append([n, f"{row['wall_seconds']:.2f}", f"{row['wall_ratio']:.2f}x",
                     ", ".join(f"{x:.2f}" for x in row["wall_ratios"]), f"{row['cpu_seconds']:.2f}",
                     f"{row['cpu_ratio']:.2f}x", f"{row['main_process_cpu_seconds']:.2f}",
                     f"{row['before_workers_cpu_seconds']:.2f}" if n > 1 else "", worker,
                     f"{row['critical_cpu_seconds']:.2f}", f"{row['critical_cpu_ratio']:.2f}x",
                     f"{row['peak_rss_mb']:.0f}"])
    lines += markdown_table(["workers", "wall s", f"wall / {workers[0]} worker", "paired wall ratios", "CPU s",
                             f"CPU / {workers[0]} worker", "this process CPU s", "of it before the workers",
                             "each worker CPU s", "critical path CPU s", f"critical path / {workers[0]} worker",
                             "peak RSS MiB"], rows, "rrrlrrrrrrrr")
    top = str(max(workers))
    ratio, critical = result["rows"][top]["wall_ratio"], result["rows"][top]["critical_cpu_ratio"]
    lines += [
        "",
        "Medians over the repeats. *CPU s* is the whole command's (this process and its worker processes, as the "
        "harness reaps them); *this process* and *each worker* split it as the processes measure themselves "
        "(without the interpreter's exit), and *of it before the workers* is this process's CPU when the workers "
        "start (Python, the import of spaCy, the loading of the pipeline). *Critical path* is that part plus the "
        "longer of the rest of this process and a worker's CPU: the wall time of the run on a machine with a free "
        "core for each process, waits between processes aside; its ratio is taken against the one-process run "
        "of the same repeat.",
        "",
        f"Wall time: {top} workers take **{ratio:.2f}x** the wall time of {workers[0]} (target ≤ {TARGET}x: "
        f"{'met' if ratio <= TARGET else 'not met'}); critical path: **{critical:.2f}x**. A pair whose wall ratio is "
        "near the CPU ratio ran while the other jobs left no second core free: Linux shares the CPU between "
        "sessions (autogroup scheduling), so the processes of one command then get no more CPU than one process.",
        "",
    ]
    return "\n".join(lines)


def train(model: Path) -> None:
    """Train the pipeline `init-config` describes (a sentencizer and `treeboost_textcat` with the default learner)
    on 2,000 seeded texts and save it to `model` (not measured)."""
    import spacy

    from spacy_treeboost.pipeline.starter_config import starter_config

    component = {k: v for k, v in starter_config()["components"]["treeboost_textcat"].items() if k != "factory"}
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("treeboost_textcat", config=component)
    examples = seeded_review_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.to_disk(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--workers", default="1,2", help="worker counts, the first being the reference")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the report's path without suffix")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--train-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train_only:
        train(args.train_only)
        return
    if args.render_only:
        result = json.loads(args.output.with_suffix(".json").read_text(encoding="utf8"))
        args.output.with_suffix(".md").write_text(render(result), encoding="utf8")
        return
    from bench.bench_scale import write_apply_input

    workers = [int(n) for n in args.workers.split(",")]
    OUT.mkdir(parents=True, exist_ok=True)
    model = OUT / "pipeline"
    if not model.exists():
        subprocess.run([sys.executable, "-m", "bench.bench_apply", "--train-only", str(model)], cwd=ROOT, check=True)
    source = OUT / f"texts_{args.docs}.jsonl"
    if not source.exists():
        write_apply_input(source, args.docs)
    load_start = os.getloadavg()[0]
    started = time.time()
    runs = measure(model, source, workers, args.repeats, args.batch_size, args.timeout)
    result = {
        "command": "python -m bench.bench_apply" + "".join(f" {a}" for a in sys.argv[1:]),
        "commit": commit(), "machine": machine_facts(), "docs": args.docs, "batch_size": args.batch_size,
        "workers": workers, "repeats": args.repeats, "load_start": load_start, "load_end": os.getloadavg()[0],
        "elapsed_seconds": time.time() - started, "runs": runs, "rows": summarize(runs, workers),
    }
    result = relative_paths(result)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    md = render(result)
    args.output.with_suffix(".md").write_text(md, encoding="utf8")
    print(md)


if __name__ == "__main__":
    main()
