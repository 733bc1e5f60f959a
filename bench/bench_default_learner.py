"""Engine report of the default learner: docs/bench_default_learner.{json,md}.

    python -m bench.bench_default_learner [--sizes60 8000 32000 128000] [--sizes600 2000 8000] [--repeats 3]
        [--single-run words60:512000 words600:32000]

Workloads from the shared generator (`../shared/bench/gen_synth_trees.py`, seed 13): 60-word documents
(`--words 20 --sents 3`) and its default 600-word documents, the first N training documents of one
generated corpus per workload, tested on its test split. At each size, in turn and `--repeats` times:

- `python -m spacy_treeboost learn TRAIN.tree MODEL` (the default learner, the subtree-linear model
  with its defaults), whole-process CPU and peak RSS; its test accuracy from `classify`;
- CountVectorizer(1-3, binary) + LinearSVC at its defaults (`bench/peer_baseline.py svc`), the whole
  process: reading, vectorizing, fitting, predicting;
- the same features + LogisticRegressionCV over the default learner's C grid, 5 folds (`lrcv`).

Reported: medians, the ratios to LinearSVC, growth exponents (least squares on log CPU against log n
over the 60-word sizes, and 32k -> 128k alone), and the learner's own split of its CPU by phase (read,
mine, features, fit, rules, write) from `learn`'s summary line.
"""
import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from bench.bench_engine import ROOT, log, median, ok, run_child
from bench.harness import generate_corpus, provenance, stamp

OUT = ROOT / "bench" / "_out" / "default_bench"
WORKLOADS = {"words60": ["--words", "20", "--sents", "3"], "words600": []}
_PHASES_RE = re.compile(r"phases \(CPU s\): (.*)$", re.M)
_ACCURACY_RE = re.compile(r"accuracy ([0-9.]+) \((\d+)/(\d+)\)")
_SUBTREES_RE = re.compile(r"learned (\d+) rules over (\d+) distinct subtrees")


def prepare(workload: str, n_max: int) -> Path:
    """The generated corpus of a workload with at least n_max training documents."""
    return generate_corpus(OUT / f"{workload}_{n_max}", n_max, 4000, WORKLOADS[workload])


def head(src: Path, n: int, dst: Path) -> Path:
    if not dst.is_file():
        with open(src, encoding="utf-8") as f, open(dst, "w", encoding="utf-8") as g:
            for i, line in enumerate(f):
                if i >= n:
                    break
                g.write(line)
    return dst


def run_size(workload: str, corpus: Path, n: int, repeats: int, timeout: int, lrcv_max: int) -> Dict[str, Any]:
    work = OUT / "runs" / f"{workload}_{n}"
    work.mkdir(parents=True, exist_ok=True)
    tree, jsonl = head(corpus / "train.tree", n, work / "train.tree"), head(corpus / "train.jsonl", n, work / "train.jsonl")
    model = work / "default.model"
    py = sys.executable
    commands = {
        "default": [py, "-m", "spacy_treeboost", "learn", str(tree), str(model)],
        "svc": [py, "-m", "bench.peer_baseline", str(jsonl), str(corpus / "test.jsonl"), "3", "svc",
                str(work / "svc.json")],
        "lrcv": [py, "-m", "bench.peer_baseline", str(jsonl), str(corpus / "test.jsonl"), "3", "lrcv",
                 str(work / "lrcv.json")],
    }
    if n > lrcv_max:
        del commands["lrcv"]
    runs: Dict[str, List[Dict[str, Any]]] = {k: [] for k in commands}
    result: Dict[str, Any] = {"workload": workload, "n": n}
    for r in range(repeats):
        for name, argv in commands.items():
            if name == "lrcv" and r:
                continue
            run = run_child(argv, work / f"{name}{r}", timeout)
            if not ok(run):
                result.setdefault("errors", []).append(f"{name}: exit {run['exit']} {run['stderr_tail'][-300:]}")
                continue
            if name == "default":
                m = _PHASES_RE.search(run["stderr_tail"])
                run["phases"] = json.loads(m.group(1)) if m else None
                m = _SUBTREES_RE.search(run["stderr_tail"])
                run["n_subtrees"] = int(m.group(2)) if m else None
            else:
                run["peer"] = json.loads((work / f"{name}.json").read_text(encoding="utf-8"))
            runs[name].append(run)
            log(f"{workload} {n} {name} #{r + 1}: {run['cpu_seconds']:.1f} CPU s, {run['maxrss_kib'] / 1024:.0f} MiB")
    for name, rs in runs.items():
        if rs:
            result[name] = {"cpu_seconds": median([x["cpu_seconds"] for x in rs]),
                            "maxrss_mib": median([x["maxrss_kib"] / 1024 for x in rs]),
                            "wall_seconds": median([x["wall_seconds"] for x in rs]), "runs": len(rs),
                            "cpu_all": [round(x["cpu_seconds"], 2) for x in rs]}
    if runs["default"]:
        phases = [x["phases"] for x in runs["default"] if x.get("phases")]
        if phases:
            result["default"]["phases"] = {k: median([p[k] for p in phases]) for k in phases[0]}
        result["default"]["n_subtrees"] = runs["default"][-1].get("n_subtrees")
        cls = run_child([py, "-m", "spacy_treeboost", "classify", str(corpus / "test.tree"), str(model)],
                        work / "classify", timeout)
        m = _ACCURACY_RE.search(cls["stderr_tail"])
        result["default"]["accuracy"] = float(m.group(1)) if m else None
        result["default"]["model_mib"] = model.stat().st_size / 2 ** 20
    for name in ("svc", "lrcv"):
        if runs.get(name):
            result[name]["accuracy"] = runs[name][-1]["peer"]["accuracy"]
            result[name]["n_features"] = runs[name][-1]["peer"]["n_features"]
    return result


def subtrees_of_run(workload: str, n: int) -> Optional[int]:
    """The number of subtrees in the model of a size's first `learn` run, from its kept stderr."""
    path = OUT / "runs" / f"{workload}_{n}" / "default0.stderr"
    m = _SUBTREES_RE.search(path.read_text(encoding="utf-8")) if path.is_file() else None
    return int(m.group(2)) if m else None


def fmt(row: Dict[str, Any], key: str, spec: str) -> str:
    """A figure of a system's row, or a dash where the system did not run."""
    return format(row[key], spec).rstrip("%") if row.get(key) is not None else "—"


def exponent(points: List[List[float]]) -> float:
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(c) for _, c in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _single(args: argparse.Namespace) -> str:
    if not args.single_run:
        return ""
    return "; one run of each at " + ", ".join(f"{n:,} {w}" for w, n in sorted(args.single_run))


def repeats_at(workload: str, n: int, args: argparse.Namespace) -> int:
    return 1 if (workload, n) in args.single_run else args.repeats


def workload_size(text: str) -> Tuple[str, int]:
    workload, _, n = text.partition(":")
    if workload not in WORKLOADS or not n.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: use WORKLOAD:N with a workload of {sorted(WORKLOADS)}")
    return workload, int(n)


def render(results: List[Dict[str, Any]], args: argparse.Namespace) -> str:
    lines = ["# The default learner against CountVectorizer + LinearSVC / LogisticRegressionCV", "",
             "Generated by `python -m bench.bench_default_learner " + " ".join(sys.argv[1:]) + "` (module docstring: "
             "the workloads and commands). Whole-process CPU seconds (user + sys) and peak RSS of each command, "
             f"medians of {args.repeats} runs taken in turn{_single(args)} (LogisticRegressionCV: one run, up to "
             f"{args.lrcv_max:,} documents); one core each.", "",
             stamp([r["provenance"] for r in results if r.get("provenance")]), "",
             "| workload | n | default CPU s | LinearSVC CPU s | LRCV CPU s | default / LinearSVC CPU | default RSS MiB | "
             "LinearSVC RSS MiB | default / LinearSVC RSS | default acc | LinearSVC acc | LRCV acc |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        d, s, l = r.get("default", {}), r.get("svc", {}), r.get("lrcv", {})
        if not d or not s:
            lines.append(f"| {r['workload']} | {r['n']} | failed: {'; '.join(r.get('errors', []))[:200]} |")
            continue
        lines.append(
            f"| {r['workload']} | {r['n']:,} | {d['cpu_seconds']:.1f} | {s['cpu_seconds']:.1f} | "
            f"{fmt(l, 'cpu_seconds', '.1f')} | {d['cpu_seconds'] / s['cpu_seconds']:.2f} | "
            f"{d['maxrss_mib']:.0f} | {s['maxrss_mib']:.0f} | {d['maxrss_mib'] / s['maxrss_mib']:.2f} | "
            f"{100 * (d.get('accuracy') or 0):.2f} | {100 * s['accuracy']:.2f} | {fmt(l, 'accuracy', '.2%')} |")
    lines += ["", "Growth exponents of CPU seconds in the number of training documents (least squares over the sizes "
              "run; 32k -> 128k alone where both ran):", ""]
    for workload in WORKLOADS:
        rows = [r for r in results if r["workload"] == workload and r.get("default") and r.get("svc")]
        if len(rows) < 2:
            continue
        for name, label in (("default", "default learner"), ("svc", "CountVectorizer + LinearSVC"),
                            ("lrcv", "CountVectorizer + LogisticRegressionCV")):
            pts = [[r["n"], r[name]["cpu_seconds"]] for r in rows if r.get(name)]
            if len(pts) < 2:
                continue
            last = {r["n"]: r[name]["cpu_seconds"] for r in rows if r.get(name)}
            tail = ""
            if 32000 in last and 128000 in last:
                tail = f"; 32k -> 128k: {math.log(last[128000] / last[32000]) / math.log(4):.2f}"
            lines.append(f"- {workload}, {label}: n^{exponent(pts):.2f}{tail}")
    lines += ["", "Where the default learner's CPU goes (its `learn` summary, medians, CPU s):", "",
              "| workload | n | phases |", "|---|---|---|"]
    for r in results:
        ph = r.get("default", {}).get("phases")
        if ph:
            lines.append(f"| {r['workload']} | {r['n']:,} | " + ", ".join(f"{k} {v:.2f}" for k, v in ph.items()) + " |")
    lines += ["", "Peak RSS of the default learner per training document and per subtree of its model, and the size "
              "of its model file:", "",
              "| workload | n | subtrees in the model | peak RSS / document | peak RSS / subtree | model MiB |",
              "|---|---|---|---|---|---|"]
    for r in results:
        d = r.get("default")
        if d:
            k = d.get("n_subtrees") or subtrees_of_run(r["workload"], r["n"])
            per_subtree = f"{d['maxrss_mib'] * 2 ** 20 / k:,.0f} B" if k else "—"
            lines.append(f"| {r['workload']} | {r['n']:,} | {k or 0:,} | {d['maxrss_mib'] * 2 ** 20 / r['n']:,.0f} B | "
                         f"{per_subtree} | {d.get('model_mib', 0):.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes60", type=int, nargs="*", default=[8000, 32000, 128000])
    p.add_argument("--sizes600", type=int, nargs="*", default=[2000, 8000])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--single-run", type=workload_size, nargs="*", default=[],
                   help="WORKLOAD:N sizes whose commands run once, not --repeats times (e.g. words60:512000)")
    p.add_argument("--lrcv-max", type=int, default=32000, help="run LogisticRegressionCV (once) up to this size")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "bench_default_learner")
    p.add_argument("--render-only", action="store_true", help="rewrite the Markdown page from the JSON results")
    args = p.parse_args()
    if args.render_only:
        results = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        args.out.with_suffix(".md").write_text(render(results, args), encoding="utf-8")
        print(render(results, args))
        return
    results = []
    for workload, sizes in (("words60", args.sizes60), ("words600", args.sizes600)):
        if sizes:
            corpus = prepare(workload, max(sizes))
            for n in sorted(sizes):
                results.append(dict(run_size(workload, corpus, n, repeats_at(workload, n, args), args.timeout,
                                             args.lrcv_max), provenance=provenance()))
                args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(results, args), encoding="utf-8")
    print(render(results, args))


if __name__ == "__main__":
    main()
