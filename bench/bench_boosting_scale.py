"""+FQ boosting at Iwakura's scale on one machine: docs/bench_boosting_scale.{json,md}.

    python -m bench.bench_boosting_scale [--sizes 23000 230000] [--rounds 1000] [--workers 1 2] [--repeats 1]
        [--target-docs 2300000] [--target-rounds 1000]

Workload: the shared generator (`../shared/bench/gen_synth_trees.py`, seed 13, `--words 25 --sents 6`: about
150 words and 151 tree nodes a document), one corpus of the largest size generated once under
`bench/_out/boosting_scale/`, the first N documents at each size. At each size and number of workers, a child
process runs `python -m spacy_treeboost learn --algorithm frequency -L 3 --rounds R --n-workers W` (+FQ, Iwakura
2013; with two workers, worker 1 is a forked process that inherits the indexed forest copy-on-write) and the
harness reports its whole-process CPU seconds, wall and peak RSS (the largest of the process and its workers,
each counted whole, shared pages included). The models must be the same bytes for every number of workers.

Bytes per forest node are the slope between the two largest sizes, (RSS2 - RSS1) / (nodes2 - nodes1), so that
the fixed cost (the interpreter, the libraries) cancels. A `breakdown` child fits the same learner through the
API at those sizes and reports what the search space holds (`memory_report`), per node by the same slope.
The run at `--target-docs` and `--target-rounds` is extrapolated from the largest run measured: CPU and wall
scale with nodes times rounds, RSS with nodes at the measured slope; the page shows the arithmetic.
"""
import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from bench.harness import ROOT, generate_corpus, markdown_table, provenance, relative_paths, run_child, stamp, summarize

WORDS150 = ["--words", "25", "--sents", "6"]
OUT = ROOT / "bench" / "_out" / "boosting_scale"
# counts, not bytes, and the used part of the occurrence arena (the arena's capacity is reported)
SKIPPED_PARTS = ("nodes", "patterns", "pattern_document_entries", "occurrence_lists_held", "large_counts",
                 "occurrence_lists")


def log(msg: str) -> None:
    print(f"[bench_boosting_scale {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def corpus_of(n: int, n_max: int) -> Path:
    """The first `n` training documents of the generated corpus of `n_max`, as a BACT file (generated once)."""
    full = OUT / f"words150_{n_max}"
    if not (full / "train.tree").is_file():
        generate_corpus(full, n_max, 10, WORDS150)
        for other in full.iterdir():
            if other.name != "train.tree":
                other.unlink()
    if n == n_max:
        return full / "train.tree"
    part = OUT / f"words150_{n}_of_{n_max}.tree"
    if not part.is_file():
        with open(full / "train.tree", "rb") as src, open(part, "wb") as dst:
            for _, line in zip(range(n), src):
                dst.write(line)
    return part


def count_nodes(path: Path) -> int:
    """Tree nodes in a BACT file: one "(" a node (the generator's labels hold no bracket)."""
    n = 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            n += block.count(b"(")
    return n


def child_breakdown(args: argparse.Namespace) -> None:
    """Fit the +FQ learner through the API and print its search space's `memory_report` as JSON."""
    from spacy_treeboost.learning.learner import TreeBoostClassifier
    from spacy_treeboost.trees.bact import read_bact

    forest, classes = read_bact(args.corpus)
    clf = TreeBoostClassifier("frequency", n_rounds=args.rounds, max_pattern_size=3)
    clf.start(forest, classes)
    nodes = forest.n_nodes
    del forest
    clf.boost(args.rounds)
    report = clf.space_.workers.objects[0].space.memory_report()
    print(json.dumps({"nodes": nodes, **report}))


def learn(args: argparse.Namespace, corpus: Path, n: int, workers: int) -> Dict[str, Any]:
    model = OUT / f"model_{n}_{args.rounds}r_{workers}w.json"
    argv = [sys.executable, "-m", "spacy_treeboost", "learn", "--algorithm", "frequency", "-L", "3",
            "--rounds", str(args.rounds), "--n-workers", str(workers), corpus, model]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [run_child(argv, env=env, timeout=args.timeout).check(f"learn {n} docs, {workers} workers")
            for _ in range(args.repeats)]
    return {"workers": workers, **summarize(runs), "model_bytes": model.stat().st_size,
            "model_digest": _digest(model),
            "stderr": runs[-1].stderr_tail.strip().splitlines()[-2:]}


def _digest(path: Path) -> str:
    """A short hash of a file's bytes."""
    return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()


def slope(a: Dict[str, Any], b: Dict[str, Any], key: str) -> float:
    """Bytes per node between two sizes of `key` (MiB)."""
    return (b[key] - a[key]) * (1 << 20) / (b["nodes"] - a["nodes"])


def analyse(report: Dict[str, Any]) -> None:
    sizes = report["sizes"]
    if len(sizes) < 2:
        return
    a, b = sizes[-2], sizes[-1]
    per_node: Dict[str, Any] = {}
    for wa, wb in zip(a["runs"], b["runs"]):
        per_node[str(wa["workers"])] = (wb["peak_rss_mb"] - wa["peak_rss_mb"]) * (1 << 20) / (b["nodes"] - a["nodes"])
    report["bytes_per_node"] = per_node
    if a.get("breakdown") and b.get("breakdown"):
        report["breakdown_per_node"] = {
            k: (b["breakdown"][k] - a["breakdown"][k]) / (b["nodes"] - a["nodes"])
            for k in b["breakdown"] if k not in SKIPPED_PARTS}
        report["patterns_per_node"] = (b["breakdown"]["patterns"] - a["breakdown"]["patterns"]) / (b["nodes"] - a["nodes"])
    target = report["target"]
    target_nodes = round(b["nodes"] / b["n"] * target["docs"])
    scale = target_nodes / b["nodes"] * target["rounds"] / report["settings"]["rounds"]
    target.update(nodes=target_nodes, scale=scale, from_docs=b["n"], from_nodes=b["nodes"], runs=[])
    for run in b["runs"]:
        w = str(run["workers"])
        target["runs"].append({
            "workers": run["workers"], "cpu_seconds": run["cpu_seconds"] * scale, "wall_seconds": run["wall_seconds"] * scale,
            "peak_rss_mb": run["peak_rss_mb"] + per_node[w] * (target_nodes - b["nodes"]) / (1 << 20)})


def render(report: Dict[str, Any]) -> str:
    s = report["settings"]
    lines = ["# +FQ boosting at scale: one machine, 1 and 2 workers", "",
             "<!-- generated by bench/bench_boosting_scale.py from docs/bench_boosting_scale.json; do not edit -->", "",
             f"`{report['command']}`. {stamp(report['provenance'])} Load average {report['load'][0]} at the start, "
             f"{report['load'][1]} at the end (other jobs share the cores).", "",
             f"Workload: `gen_synth_trees.py --words 25 --sents 6` (about 150 words a document), +FQ boosting "
             f"(`learn --algorithm frequency -L 3 --rounds {s['rounds']}`), {s['repeats']} run(s) a cell (median). "
             "Peak RSS is the largest process's (a forked worker shares the indexed forest copy-on-write and "
             "counts its pages too).", ""]
    rows = []
    for size in report["sizes"]:
        for run in size["runs"]:
            rows.append([f"{size['n']:,}", f"{size['nodes']:,}", run["workers"], f"{run['cpu_seconds']:.1f}",
                         f"{run['wall_seconds']:.1f}", f"{run['peak_rss_mb']:.0f}", run["model_digest"]])
    lines += markdown_table(["documents", "nodes", "workers", "CPU s", "wall s", "peak RSS MiB", "model"], rows,
                            "rrrrrrl")
    same = all(len({r["model_digest"] for r in size["runs"]}) == 1 for size in report["sizes"])
    lines += ["", f"Models: {'the same bytes' if same else 'NOT the same bytes'} for 1 and 2 workers at each size.", ""]
    if "bytes_per_node" in report:
        a, b = report["sizes"][-2], report["sizes"][-1]
        lines += ["## Bytes per node", "",
                  f"(RSS at {b['n']:,} - RSS at {a['n']:,}) / ({b['nodes']:,} - {a['nodes']:,} nodes): " +
                  ", ".join(f"**{v:.1f} B** with {w} worker{'s' if w != '1' else ''}"
                            for w, v in report["bytes_per_node"].items()) + " (goal: 12 B).", ""]
    if "breakdown_per_node" in report:
        parts = sorted(report["breakdown_per_node"].items(), key=lambda kv: -kv[1])
        lines += [f"What the search space holds per node, by the same slope (`memory_report`, capacities, after "
                  f"{s['breakdown_rounds']} rounds; {report['patterns_per_node']:.3f} cached patterns a node):", ""]
        lines += markdown_table(["part", "bytes per node"],
                                [[k, f"{v:.2f}"] for k, v in parts if v >= 0.05 and k not in SKIPPED_PARTS], "lr")
        lines += [""]
    t = report["target"]
    if t.get("runs"):
        lines += [f"## Extrapolated to {t['docs']:,} documents x {t['rounds']:,} rounds", "",
                  f"Nodes: {t['from_nodes']:,} / {t['from_docs']:,} x {t['docs']:,} = {t['nodes']:,}. Time scales "
                  f"with nodes x rounds: x {t['nodes']:,} / {t['from_nodes']:,} x {t['rounds']} / {s['rounds']} = "
                  f"x {t['scale']:.2f}; RSS adds bytes per node x ({t['nodes']:,} - {t['from_nodes']:,}).", ""]
        lines += markdown_table(["workers", "CPU s", "wall s", "wall h", "peak RSS GiB"], [
            [r["workers"], f"{r['cpu_seconds']:,.0f}", f"{r['wall_seconds']:,.0f}", f"{r['wall_seconds'] / 3600:.1f}",
             f"{r['peak_rss_mb'] / 1024:.1f}"] for r in t["runs"]], "rrrrr")
        lines += ["", report.get("status", "")]
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="step")
    bd = sub.add_parser("breakdown")
    bd.add_argument("--corpus", type=Path, required=True)
    bd.add_argument("--rounds", type=int, default=100)
    p.add_argument("--sizes", type=int, nargs="*", default=[23000, 230000])
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--breakdown-rounds", type=int, default=100, help="rounds of the breakdown children (0: none)")
    p.add_argument("--target-docs", type=int, default=2_300_000)
    p.add_argument("--target-rounds", type=int, default=1000)
    p.add_argument("--timeout", type=int, default=4 * 3600)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "bench_boosting_scale")
    p.add_argument("--render-only", action="store_true", help="rewrite the Markdown page from the JSON results")
    args = p.parse_args(argv)
    if args.step == "breakdown":
        child_breakdown(args)
        return
    if args.render_only:
        report = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        args.out.with_suffix(".md").write_text(render(report), encoding="utf-8")
        return
    report: Dict[str, Any] = {
        "command": "python -m bench.bench_boosting_scale " + " ".join(sys.argv[1:] if argv is None else argv),
        "provenance": provenance(), "load": [f"{os.getloadavg()[0]:.1f}", None],
        "settings": {"rounds": args.rounds, "workers": args.workers, "repeats": args.repeats,
                     "breakdown_rounds": args.breakdown_rounds},
        "target": {"docs": args.target_docs, "rounds": args.target_rounds}, "sizes": []}
    sizes: List[int] = sorted(args.sizes)
    for n in sizes:
        corpus = corpus_of(n, sizes[-1])
        size: Dict[str, Any] = {"n": n, "nodes": count_nodes(corpus), "runs": []}
        for workers in args.workers:
            log(f"{n:,} documents, {workers} worker(s), {args.rounds} rounds")
            size["runs"].append(learn(args, corpus, n, workers))
        if args.breakdown_rounds:
            run = run_child([sys.executable, "-m", "bench.bench_boosting_scale", "breakdown", "--corpus", corpus,
                             "--rounds", str(args.breakdown_rounds)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            timeout=args.timeout).check(f"breakdown {n}")
            size["breakdown"] = json.loads(run.stdout.strip().splitlines()[-1])
        report["sizes"].append(size)
        report["load"][1] = f"{os.getloadavg()[0]:.1f}"
        analyse(report)
        args.out.with_suffix(".json").write_text(json.dumps(relative_paths(report), indent=1) + "\n", encoding="utf-8")
    if sizes[-1] < args.target_docs or args.rounds < args.target_rounds:
        report["status"] = (f"**Partial**: the largest run measured is {sizes[-1]:,} documents x {args.rounds:,} "
                            f"rounds; the figures at {args.target_docs:,} documents x {args.target_rounds:,} rounds are the "
                            "extrapolation above.")
    args.out.with_suffix(".json").write_text(json.dumps(relative_paths(report), indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))


if __name__ == "__main__":
    main()
