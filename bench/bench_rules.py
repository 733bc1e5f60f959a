"""A rule set of millions of rules: built, saved, loaded and classifying, with and without a Python object per rule.

    python -m bench.bench_rules [--rules 2000000] [--docs 10000] [--repeats 1]
    python -m bench.bench_rules --quick           # 100,000 rules, 1,000 documents, output under bench/_out/rules/
    python -m bench.bench_rules --render-only     # rebuild docs/bench_rules.md from docs/bench_rules.json

The script draws `--rules` distinct random chain patterns of 1-3 labels over a 50,000-word
vocabulary, one rule each (z = 1, a ~ N(0, 1), b = 0, as the subtree-linear learner writes
them) in one of two heads, and `--docs` random documents (1-3 sentences of 5-25 words over the
same vocabulary, as word chains). It stores them under bench/_out/rules/ and runs every step
of every variant as its own child process, recording the child's whole-process CPU seconds
(user + system, from `os.wait4`) and peak RSS, and the CPU seconds of the step itself
(`time.process_time` around it, without the interpreter start, the imports and the reading of
the inputs):

- build: make the rule set from the stored arrays and write it with `to_disk`;
- load: read the file with `from_disk`;
- classify: read the file, then score the documents (`margins`; the forest of the documents is
  built before the step's clock starts).

Variants: `from_arrays` (this package's `RuleSet.from_arrays`), `add` (this package's
`RuleSet.add`, one call per rule) and `add, before` (the baseline: `RuleSet.add` of the rule
module at `--baseline` (default: the last commit before the tables became arrays), read with
`git show` and imported under another name; it keeps a Python tuple per rule and per pattern).
For the `add` variants, the build step's clock starts after the Python codes that `add` takes
are made, so it covers the `add` calls and `to_disk`. The script checks that every variant
scores the documents the same.
"""
import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

from bench import harness
from bench.harness import ROOT, relative_paths

OUT = ROOT / "bench" / "_out" / "rules"
DOCS = ROOT / "docs"
BASELINE = "7882554"
VOCAB = 50_000
VARIANTS = ["from_arrays", "add", "add, before"]
STEPS = ["build", "load", "classify"]


def make_inputs(n_rules: int, n_docs: int, out: Path, seed: int = 0) -> None:
    import numpy

    rng = numpy.random.default_rng(seed)
    lengths = rng.integers(1, 4, size=2 * n_rules)
    ids = rng.integers(0, VOCAB, size=(len(lengths), 3))
    ids[numpy.arange(3) >= lengths[:, None]] = -1
    _, first = numpy.unique(((ids + 1) * (VOCAB + 1) ** numpy.arange(3)).sum(axis=1), return_index=True)
    keep = numpy.sort(first)[:n_rules]
    if len(keep) < n_rules:
        raise SystemExit(f"only {len(keep)} distinct patterns drawn for {n_rules} rules")
    ids, lengths = ids[keep], lengths[keep]
    head = rng.integers(0, 2, size=n_rules)
    arrays = {"label": ids[ids >= 0].astype(numpy.int32),
              "depth": numpy.broadcast_to(numpy.arange(3, dtype=numpy.int32), ids.shape)[ids >= 0],
              "code_start": numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(numpy.int64)}
    for h in range(2):
        pid = rng.permutation(numpy.flatnonzero(head == h))
        arrays[f"pid{h}"] = pid.astype(numpy.int64)
        arrays[f"z{h}"] = numpy.ones(len(pid), dtype=numpy.int32)
        arrays[f"a{h}"] = rng.normal(size=len(pid))
        arrays[f"b{h}"] = numpy.zeros(len(pid))
    n_sents = rng.integers(1, 4, size=n_docs)
    n_words = rng.integers(5, 26, size=int(n_sents.sum()))
    arrays["doc_sents"] = numpy.concatenate([[0], numpy.cumsum(n_sents)])
    arrays["sent_words"] = numpy.concatenate([[0], numpy.cumsum(n_words)])
    arrays["words"] = rng.integers(0, VOCAB, size=int(n_words.sum())).astype(numpy.int32)
    numpy.savez(out / "inputs.npz", **arrays)


def strings() -> List[str]:
    return [f"w{i}" for i in range(VOCAB)]


def rule_module(variant: str, out: Path) -> Any:
    if variant != "add, before":
        from spacy_treeboost.models import rules

        return rules
    spec = importlib.util.spec_from_file_location("spacy_treeboost.models.rules_before", out / "rules_before.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def child(variant: str, step: str, out: Path) -> Dict[str, Any]:
    """One step of one variant, in this (child) process."""
    import numpy

    from spacy_treeboost.trees.forest import Forest

    RuleSet = rule_module(variant, out).RuleSet
    model = out / f"model-{variant.replace(', ', '-')}.msgpack"
    result: Dict[str, Any] = {}
    if step == "build":
        data = numpy.load(out / "inputs.npz")
        names = strings()
        columns = [(data[f"pid{h}"], data[f"z{h}"], data[f"a{h}"], data[f"b{h}"]) for h in range(2)]
        if variant == "from_arrays":
            t0 = time.process_time()
            rs = RuleSet.from_arrays(["h0", "h1"], algorithm="linear-presence", strings=names, depth=data["depth"],
                                     label=data["label"], code_start=data["code_start"], rules=columns)
        else:
            depth, label, bounds = data["depth"].tolist(), data["label"].tolist(), data["code_start"].tolist()
            nodes = [(d, names[l]) for d, l in zip(depth, label)]
            codes = [tuple(nodes[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
            del nodes, depth, label
            rs = RuleSet(["h0", "h1"], algorithm="linear-presence")
            t0 = time.process_time()
            for h, (pid, z, a, b) in enumerate(columns):
                for p, zz, aa, bb in zip(pid.tolist(), z.tolist(), a.tolist(), b.tolist()):
                    rs.add(h, codes[p], zz, aa, bb)
        rs.to_disk(model)
        result["file_bytes"] = model.stat().st_size
    elif step == "load":
        t0 = time.process_time()
        rs = RuleSet.from_disk(model)
    else:
        data = numpy.load(out / "inputs.npz")
        names = strings()
        words = [names[w] for w in data["words"].tolist()]
        sents, docs = data["sent_words"].tolist(), data["doc_sents"].tolist()
        forest = Forest.from_sentences([[words[sents[s]:sents[s + 1]] for s in range(docs[d], docs[d + 1])]
                                        for d in range(len(docs) - 1)])
        t0 = time.process_time()
        rs = RuleSet.from_disk(model)
        margins = rs.margins(forest)
        result["margins_sum"] = float(numpy.abs(margins).sum())
        numpy.save(out / f"margins-{variant.replace(', ', '-')}.npy", margins)
    result["step_cpu_s"] = time.process_time() - t0
    result["n_rules"] = len(rs)
    return result


def run_child(variant: str, step: str, out: Path) -> Dict[str, Any]:
    run = harness.run_child([sys.executable, "-m", "bench.bench_rules", "--child", variant, step, "--out", str(out)],
                            cwd=ROOT)
    if not run.ok:
        raise SystemExit(f"{variant} {step} failed with exit code {run.exit}")
    result = json.loads(run.stdout)
    result["cpu_s"] = run.cpu_seconds
    result["peak_rss_mb"] = run.peak_rss_mb
    return result


def run(n_rules: int, n_docs: int, repeats: int, out: Path, baseline: str) -> Dict[str, Any]:
    import numpy

    out.mkdir(parents=True, exist_ok=True)
    (out / "rules_before.py").write_bytes(subprocess.run(
        ["git", "show", f"{baseline}:spacy_treeboost/models/rules.py"], cwd=ROOT, check=True,
        capture_output=True).stdout)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    t0 = time.time()
    make_inputs(n_rules, n_docs, out)
    load0 = os.getloadavg()[0]
    cells: Dict[str, Dict[str, Any]] = {}
    for variant in VARIANTS:
        for step in STEPS:
            runs = [run_child(variant, step, out) for _ in range(repeats)]
            cell = {k: statistics.median(r[k] for r in runs) for k in ("cpu_s", "peak_rss_mb", "step_cpu_s")}
            cell.update({k: runs[0][k] for k in ("n_rules", "file_bytes", "margins_sum") if k in runs[0]})
            cells[f"{variant} / {step}"] = cell
            print(f"{variant:>12} {step:>8}: {cell}", flush=True)
    reference = numpy.load(out / "margins-from_arrays.npy")
    same = {v: bool(numpy.array_equal(numpy.load(out / f"margins-{v.replace(', ', '-')}.npy"), reference))
            for v in VARIANTS}
    return {"command": relative_paths([sys.executable] + sys.argv), "commit": commit, "baseline": baseline,
            "rules": n_rules, "docs": n_docs, "repeats": repeats, "cells": cells, "same_margins": same,
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
            "load_average": [round(load0, 1), round(os.getloadavg()[0], 1)], "wall_s": round(time.time() - t0, 1)}


def render(res: Dict[str, Any]) -> str:
    cells = res["cells"]
    lines = [
        "# Rule sets of millions of rules",
        "",
        f"Generated by `{' '.join(res['command'])}` at commit {res['commit']} ({res['repeats']} run(s) per cell, "
        f"medians; machine: {res['machine']}; 1-minute load average {res['load_average'][0]} at the start, "
        f"{res['load_average'][1]} at the end: other processes shared the cores).",
        "",
        f"{res['rules']:,} rules over as many distinct random chain patterns of 1-3 labels (50,000-word vocabulary), "
        f"two heads; {res['docs']:,} random documents of 1-3 sentences of 5-25 words. Every cell is one child "
        "process: its whole-process CPU seconds (user + system, interpreter start, imports and reading the inputs "
        "included), its peak RSS, and the CPU seconds of the step alone. `from_arrays` and `add` are this "
        f"package's `RuleSet`; `add, before` is `RuleSet.add` of the rule module at commit {res['baseline']} "
        "(a Python tuple per rule and per pattern, files as lists), the baseline. The `add` build steps start their "
        "clock after making the Python codes that `add` takes (they time the `add` calls and `to_disk`). See "
        "the docstring of `bench/bench_rules.py` for the steps.",
        "",
    ]
    rows = []
    for key, c in cells.items():
        variant, step = key.split(" / ")
        size = f"{c['file_bytes'] / 2**20:.1f}" if "file_bytes" in c else ""
        rows.append([variant, step, f"{c['cpu_s']:.2f}", f"{c['step_cpu_s']:.2f}", f"{c['peak_rss_mb']:.0f}", size])
    lines += harness.markdown_table(
        ["variant", "step", "process CPU s", "step CPU s", "peak RSS (MB)", "file (MB)"], rows)
    lines += ["", "`from_arrays` against the baseline `add, before`:", ""]
    for step in STEPS:
        new, old = cells[f"from_arrays / {step}"], cells[f"add, before / {step}"]
        lines.append(f"- {step}: step CPU {new['step_cpu_s']:.2f} s against {old['step_cpu_s']:.2f} s "
                     f"({old['step_cpu_s'] / new['step_cpu_s']:.1f} times less), peak RSS {new['peak_rss_mb']:.0f} "
                     f"MB against {old['peak_rss_mb']:.0f} MB ({old['peak_rss_mb'] / new['peak_rss_mb']:.1f} times "
                     "less).")
    same = ", ".join(f"{v}: {'yes' if s else 'NO'}" for v, s in res["same_margins"].items())
    lines += ["", f"Margins of the documents equal to those of `from_arrays`, bit for bit: {same}.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=2_000_000)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--baseline", default=BASELINE, help="the commit whose rule module is the baseline")
    parser.add_argument("--quick", action="store_true", help="100,000 rules and 1,000 documents, not written to docs/")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--child", nargs=2, metavar=("VARIANT", "STEP"), help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], a.out)))
        return
    if a.render_only:
        res = json.loads((DOCS / "bench_rules.json").read_text())
    elif a.quick:
        res = run(100_000, 1_000, 1, a.out, a.baseline)
        print(render(res))
        return
    else:
        res = run(a.rules, a.docs, a.repeats, a.out, a.baseline)
        (DOCS / "bench_rules.json").write_text(json.dumps(res, indent=1) + "\n")
    (DOCS / "bench_rules.md").write_text(render(res))
    print(render(res))


if __name__ == "__main__":
    main()
