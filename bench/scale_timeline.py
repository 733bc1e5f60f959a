"""Where the default learner's time goes on 1 and 2 workers, and how much two processes slow each other.

`timeline`: one `SubtreeLinearClassifier` fit (its defaults, processes backend) on the generator's 60-word
documents, with the wall-clock span of each phase (mining tasks, merge, gather, tf-idf, every fold and final task
with the process that ran it, rules), in seconds from the start of the fit.

`products`: the products X v and X^T u of the presence matrix's reduced problem (the default learner's largest
matrix), by the compiled pattern kernels and by scipy on the same column blocks, on 1 and 2 threads.

`contention`: the same single-worker fit (the default learner, or frequency boosting with 1,000 rounds), run
alone and then as two independent processes at once: each process's own CPU seconds (`bench.harness`), which tells
whether two busy processes slow each other on the machine, apart from anything the learners share.

    python -m bench.scale_timeline timeline --docs 128000 --workers 1,2
    python -m bench.scale_timeline products --docs 128000
    python -m bench.scale_timeline contention --learner linear --docs 128000 --repeats 2
    python -m bench.scale_timeline contention --learner boosting --docs 8000 --repeats 2
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from bench.bench_scale import DEFAULT_GENERATOR, ROOT, generate, load_forest
from bench.harness import run_child

OUT_DIR = ROOT / "bench" / "_out" / "scale"
SHAPES = {"linear": ["--words", "20", "--sents", "3"], "boosting": []}


def corpus(learner: str, n: int, generator: Path) -> str:
    return str(generate(generator, n, OUT_DIR, SHAPES[learner]) / "train.tree")


_REAL_TASK: List[Any] = []
_LOG: List[Path] = []


def _timed_task(task: Tuple[Any, ...]) -> Any:
    """`_run_task`, its span appended to the log (module level, so that the workers' pool can name it)."""
    start = time.time()
    out = _REAL_TASK[0](task)
    with open(_LOG[0], "a", encoding="utf-8") as fh:
        fh.write(json.dumps([f"{task[0]} {task[1]} {str(task[2])[:40]}", os.getpid(), start, time.time()]) + "\n")
    return out


def timeline(train: str, n: int, workers: int) -> Dict[str, Any]:
    """The phases of one fit, as (name, process id, start, end) in seconds from the start of the fit."""
    from spacy_treeboost.learning import subtree_linear

    forest, y = load_forest(train)
    forest, y = forest[:n], y[:n]
    spans: List[Tuple[str, int, float, float]] = []
    _LOG[:] = [OUT_DIR / f"timeline_{os.getpid()}.jsonl"]
    _LOG[0].parent.mkdir(parents=True, exist_ok=True)
    _LOG[0].write_text("")

    def timed(name: str, f: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.time()
            out = f(*args, **kwargs)
            spans.append((name, os.getpid(), start, time.time()))
            return out
        return wrapper

    for name in ("mine_subtrees", "merged_columns", "gather_columns", "tfidf_matrix"):
        setattr(subtree_linear, name, timed(name, getattr(subtree_linear, name)))
    subtree_linear.PatternCodes.from_tree = classmethod(timed("pattern codes",
                                                              subtree_linear.PatternCodes.from_tree.__func__))
    subtree_linear.SubtreeLinearClassifier._rules = timed("rules", subtree_linear.SubtreeLinearClassifier._rules)
    _REAL_TASK[:] = [subtree_linear._run_task]
    subtree_linear._run_task = _timed_task
    clf = subtree_linear.SubtreeLinearClassifier(n_workers=workers, backend="processes")
    t0 = time.time()
    clf.fit(forest, y)
    wall = time.time() - t0
    spans += [tuple(json.loads(line)) for line in _LOG[0].read_text().splitlines()]
    _LOG[0].unlink()
    spans = [(name, pid, start - t0, end - t0) for name, pid, start, end in spans]
    return {"docs": n, "workers": workers, "wall": wall, "spans": sorted(spans, key=lambda s: (s[2], s[0]))}


def products(train: str, n: int, repeats: int = 20) -> List[Tuple[str, int, float]]:
    """Milliseconds per pair of products (X v, X^T u) on the reduced presence matrix: (kernels, threads, ms)."""
    import numpy

    from spacy_treeboost.learning import products as kernels_module
    from spacy_treeboost.learning.features import SingletonReduction
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier, mine_subtrees, pattern_size

    forest, _ = load_forest(train)
    forest = forest[:n]
    clf = SubtreeLinearClassifier()
    counts = mine_subtrees(forest, max_pattern_size=pattern_size(forest), min_support=clf.min_support,
                           include_root_patterns=False, max_cache_mb=clf.max_cache_mb,
                           keep_rare_up_to=clf.keep_rare_up_to, by_frequency=True)[0]
    X = SingletonReduction(clf._transform(counts)[0]).X
    rng = numpy.random.default_rng(0)
    v, u = rng.normal(size=X.shape[1]), rng.normal(size=X.shape[0])
    found = kernels_module.column_values
    out = []
    for kernels in ("pattern", "scipy"):
        kernels_module.column_values = found if kernels == "pattern" else (lambda X: None)
        for threads in (1, 2):
            blocks = kernels_module.ColumnBlocks(X, threads)
            blocks @ v, blocks.T @ u
            start = time.perf_counter()
            for _ in range(repeats):
                blocks @ v, blocks.T @ u
            out.append((kernels, threads, (time.perf_counter() - start) / repeats * 1e3))
    kernels_module.column_values = found
    return out


def child(spec: Dict[str, Any]) -> None:
    """One single-worker fit of the contention measurement (its CPU is read by the parent)."""
    forest, y = load_forest(spec["train"])
    forest, y = forest[: spec["docs"]], y[: spec["docs"]]
    if spec["learner"] == "linear":
        from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

        SubtreeLinearClassifier().fit(forest, y)
    else:
        from spacy_treeboost.learning.learner import TreeBoostClassifier

        TreeBoostClassifier("frequency", n_rounds=spec["rounds"], max_pattern_size=3, max_cache_mb=32000).fit(forest, y)


def cpu_of(specs: List[Dict[str, Any]]) -> List[Tuple[float, float]]:
    """Run one child per spec at once (`bench.harness.run_child` each, on threads); each one's (CPU seconds, wall
    seconds)."""
    from concurrent.futures import ThreadPoolExecutor

    argvs = [[sys.executable, "-m", "bench.scale_timeline", "child", json.dumps(s)] for s in specs]
    with ThreadPoolExecutor(len(argvs)) as pool:
        runs = list(pool.map(lambda argv: run_child(argv).check("a contention child"), argvs))
    return [(run.cpu_seconds, run.wall_seconds) for run in runs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["timeline", "products", "contention", "child"])
    parser.add_argument("spec", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--learner", choices=["linear", "boosting"], default="linear")
    parser.add_argument("--docs", type=int, default=128000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    args = parser.parse_args()
    if args.mode == "child":
        child(json.loads(args.spec))
        return
    train = corpus("linear" if args.mode != "contention" else args.learner, args.docs, args.generator)
    if args.mode == "products":
        for kernels, threads, ms in products(train, args.docs):
            print(f"{kernels} kernels, {threads} thread(s): {ms:.1f} ms per X v + X^T u")
        return
    if args.mode == "timeline":
        counts = [int(w) for w in args.workers.split(",")]
        if len(counts) > 1:  # each fit in a fresh process
            for workers in counts:
                subprocess.run([sys.executable, "-m", "bench.scale_timeline", "timeline", "--docs", str(args.docs),
                                "--workers", str(workers), "--generator", str(args.generator)], cwd=ROOT, check=True)
            return
        for workers in counts:
            result = timeline(train, args.docs, workers)
            print(f"\n{args.docs:,} documents, {workers} worker(s): fit {result['wall']:.2f} s wall")
            print(f"| phase | process | start s | end s | seconds |\n|---|---|---|---|---|")
            for name, pid, start, end in result["spans"]:
                print(f"| {name} | {pid} | {start:.2f} | {end:.2f} | {end - start:.2f} |")
        return
    spec = {"learner": args.learner, "train": train, "docs": args.docs, "rounds": args.rounds}
    alone, paired = [], []
    for _ in range(args.repeats):
        alone += [cpu_of([spec])[0][0]]
        paired += [c for c, _ in cpu_of([spec, spec])]
    a, p = statistics.median(alone), statistics.median(paired)
    print(f"{args.learner}, {args.docs:,} documents, one worker: CPU s alone {[round(x, 1) for x in alone]} "
          f"(median {a:.1f}); two at once {[round(x, 1) for x in paired]} (median {p:.1f}): {p / a:.2f}x")


if __name__ == "__main__":
    main()
