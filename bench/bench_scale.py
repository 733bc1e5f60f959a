"""Scale-out benchmark: training with 1 and 2 workers on the processes and Ray backends (boosting and the
default subtree-linear learner), cost growth with the corpus size, and streaming inference with `apply`.

    python -m bench.bench_scale                 # the benchmark (long: run it with nice, in the background)
    python -m bench.bench_scale --render-only   # rebuild docs/bench_scale.md from docs/bench_scale.json

Every measurement runs in a fresh child process: wall seconds of `fit`, CPU seconds and peak RSS of
the coordinator and of every worker, the busiest worker's search CPU over the mean, and a digest of
the model file (equal digests = byte-identical models). Total CPU is the coordinator's plus every
worker's (boosting: as each worker reports it; the default learner: the child process and every
process it waited for, which misses Ray actors' CPU).
"""
import argparse
import hashlib
import itertools
import json
import math
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

from bench.harness import ROOT, provenance, relative_paths, run_child as run_process, seeded_review_examples, stamp

DEFAULT_GENERATOR = ROOT.parent / "shared" / "bench" / "gen_synth_trees.py"
OUT_JSON = ROOT / "docs" / "bench_scale.json"
OUT_MD = ROOT / "docs" / "bench_scale.md"


def load_forest(train: str) -> Any:
    """The training forest and classes, from a binary cache beside the BACT file (written on first use)."""
    import numpy
    import srsly

    from spacy_treeboost.trees import Forest, LabelVocab, read_bact

    cache = Path(train).with_suffix(".forest.npz")
    if not cache.exists():
        forest, y = read_bact(train)
        numpy.savez(cache, labels=forest.labels, parents=forest.parents, depths=forest.depths, offsets=forest.offsets,
                    meta=numpy.frombuffer(srsly.json_dumps({"vocab": forest.vocab.to_list(), "y": y}).encode(),
                                          dtype=numpy.uint8))
    data = numpy.load(cache)
    meta = srsly.json_loads(data["meta"].tobytes().decode())
    forest = Forest(data["labels"], data["parents"], data["depths"], data["offsets"], LabelVocab.from_list(meta["vocab"]))
    return forest, meta["y"]


def child_fit(spec: Dict[str, Any]) -> Dict[str, Any]:
    import srsly

    from spacy_treeboost.learning.learner import TreeBoostClassifier

    from spacy_treeboost.learning.classifier_files import classifier_to_dict

    t0 = time.perf_counter()
    forest, y = load_forest(spec["train"])
    read_seconds = time.perf_counter() - t0
    if spec["backend"] == "ray":
        import ray

        ray.init(address="local", num_cpus=spec["n_workers"], log_to_driver=False)
    clf = TreeBoostClassifier("frequency", n_rounds=spec["rounds"], max_pattern_size=3,
                              n_workers=spec["n_workers"], backend=spec["backend"], max_cache_mb=32000)
    t1 = time.perf_counter()
    clf.start(forest, y)
    t2 = time.perf_counter()
    clf.boost(spec["rounds"])
    t3 = time.perf_counter()
    workers = clf.space_.stats()
    model = srsly.msgpack_dumps(classifier_to_dict(clf))
    clf.space_.close()
    usage_self = resource.getrusage(resource.RUSAGE_SELF)
    usage_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    search = [w["search_cpu_seconds"] for w in workers]
    return {
        **spec, "docs": len(forest), "nodes": int(len(forest.labels)), "read_seconds": read_seconds,
        "start_wall_seconds": t2 - t1, "boost_wall_seconds": t3 - t2, "fit_wall_seconds": t3 - t1,
        "rounds_run": clf.n_rounds_, "model_sha256": hashlib.sha256(model).hexdigest(),
        "coordinator_cpu_seconds": usage_self.ru_utime + usage_self.ru_stime, "coordinator_pid": os.getpid(),
        "coordinator_peak_rss_mb": usage_self.ru_maxrss / 1024,
        "children_cpu_seconds": usage_children.ru_utime + usage_children.ru_stime,
        "workers": workers, "load_balance": max(search) / statistics.mean(search) if sum(search) > 0 else 1.0,
    }


def child_linear(spec: Dict[str, Any]) -> Dict[str, Any]:
    """The default learner (SubtreeLinearClassifier with its defaults) on `n_workers` workers of `backend`."""
    import srsly

    from spacy_treeboost.learning.classifier_files import classifier_to_dict
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    forest, y = load_forest(spec["train"])
    forest, y = forest[: spec["n_train"]], y[: spec["n_train"]]
    if spec["backend"] == "ray":
        import ray

        ray.init(address="local", num_cpus=spec["n_workers"], log_to_driver=False)
    clf = SubtreeLinearClassifier(n_workers=spec["n_workers"], backend=spec["backend"])
    t0 = time.perf_counter()
    clf.fit(forest, y)
    wall = time.perf_counter() - t0
    model = srsly.msgpack_dumps(classifier_to_dict(clf))
    usage_self = resource.getrusage(resource.RUSAGE_SELF)
    usage_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {**spec, "docs": len(forest), "fit_wall_seconds": wall, "timings": clf.timings_,
            "model_sha256": hashlib.sha256(model).hexdigest(),
            "coordinator_cpu_seconds": usage_self.ru_utime + usage_self.ru_stime,
            "children_cpu_seconds": usage_children.ru_utime + usage_children.ru_stime,
            "total_cpu_seconds": usage_self.ru_utime + usage_self.ru_stime + usage_children.ru_utime
            + usage_children.ru_stime, "coordinator_peak_rss_mb": usage_self.ru_maxrss / 1024}


def child_apply(spec: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_treeboost.streaming import apply_stream

    t0 = time.perf_counter()
    n = apply_stream(spec["model"], Path(spec["input"]), Path(spec["output"]), batch_size=256, n_workers=1)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {**spec, "lines": n, "wall_seconds": time.perf_counter() - t0,
            "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024}


def write_apply_input(path: Path, n: int) -> None:
    """n short review-like texts (seeded), one JSON object per line."""
    import random

    rng = random.Random(13)
    words = [f"w{i:05d}" for i in range(20000)] + ["good", "bad", "not", "fun", "boring"] * 200
    with open(path, "w", encoding="utf8") as out:
        for i in range(n):
            out.write(json.dumps({"id": i, "text": " ".join(rng.choices(words, k=rng.randint(5, 40)))}) + "\n")


def train_apply_pipeline(path: Path) -> Path:
    """A blank English pipeline with treeboost_textcat (frequency, 100 rounds) trained on 2,000 seeded texts."""
    import spacy

    if path.exists():
        return path
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={
        "learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "frequency"},
        "rounds_per_update": 100})
    examples = seeded_review_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    nlp.to_disk(path)
    return path


def run_child(kind: str, spec: Dict[str, Any], log_dir: Path) -> Dict[str, Any]:
    name = "_".join(str(v) for v in spec.values() if not str(v).startswith("/"))[:80]
    log = log_dir / f"{kind}_{name}"
    run = run_process([sys.executable, "-m", "bench.bench_scale", "--child", kind, json.dumps(spec)], cwd=ROOT,
                      log_stem=log)
    if not run.ok:
        raise RuntimeError(f"child {kind} {spec} failed ({run.describe_failure()}); see {log}.stderr")
    return json.loads(run.stdout.strip().splitlines()[-1])


def generate(generator: Path, n_train: int, out: Path, shape: Sequence[str] = ()) -> Path:
    """The generator's corpus of `n_train` training documents (seed 13); `shape` adds generator options."""
    target = out / (f"synth_{n_train}" + "".join(shape).replace("--", "_"))
    if not (target / "train.tree").exists():
        subprocess.run([sys.executable, str(generator), "--out-dir", str(target), "--n-train", str(n_train),
                        "--n-test", "1000", "--seed", "13", *shape], check=True, capture_output=True)
    if not (target / "train.forest.npz").exists():
        load_forest(str(target / "train.tree"))
    return target


def fitted_exponent(xs: List[float], ys: List[float]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.mean(lx), statistics.mean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def save(results: Dict[str, Any]) -> None:
    OUT_JSON.write_text(json.dumps(relative_paths(results), indent=1) + "\n")
    OUT_MD.write_text(render(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=2)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--apply-only", action="store_true", help="Measure apply only, adding to the saved results")
    parser.add_argument("--linear-only", action="store_true", help="Measure the default learner only, replacing its "
                        "saved results (the boosting and apply results are kept, with their command)")
    parser.add_argument("--boosting-only", action="store_true", help="Measure boosting only, replacing its saved "
                        "results (the default learner's and apply results are kept, with their commands)")
    parser.add_argument("--append", action="store_true", help="Add the training runs to the saved results (repeats)")
    parser.add_argument("--compare-sizes", default="8000,32000")
    parser.add_argument("--growth-sizes", default="2000,8000,32000,100000",
                        help="Sizes for the cost growth (processes, 2 workers); compare runs are reused")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--growth-rounds", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--backends", default="processes,ray")
    parser.add_argument("--workers", default="1,2", help="Worker counts of the comparison runs")
    parser.add_argument("--linear-sizes", default="128000",
                        help="Sizes for the default learner (60-word documents: --words 20 --sents 3), '' for none")
    parser.add_argument("--apply-docs", default="10000,100000")
    parser.add_argument("--apply-model", default="", help="A spaCy pipeline directory for the apply measurement "
                        "(default: one trained by the script)")
    parser.add_argument("--generator", type=Path, default=DEFAULT_GENERATOR)
    parser.add_argument("--out-dir", type=Path, default=ROOT / "bench" / "_out" / "scale")
    args = parser.parse_args()
    if args.child:
        kind, spec = args.child
        print(json.dumps({"fit": child_fit, "linear": child_linear, "apply": child_apply}[kind](json.loads(spec))))
        return
    if args.render_only:
        OUT_MD.write_text(render(json.loads(OUT_JSON.read_text())))
        return
    args.out_dir.mkdir(parents=True, exist_ok=True)
    log_dir = args.out_dir / "logs"
    log_dir.mkdir(exist_ok=True)
    results: Dict[str, Any] = {
        "partial": True, "command": "python -m bench.bench_scale " + shlex.join(sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "load_at_start": os.getloadavg()[0]},
        "rounds": args.rounds, "growth_rounds": args.growth_rounds, "compare": [], "growth": [], "apply": [],
        "linear": [],
    }
    if not (args.append or args.apply_only or args.apply_docs) and OUT_JSON.exists():
        saved = json.loads(OUT_JSON.read_text())   # no apply measurement asked for: keep the saved one
        if saved.get("apply"):
            results["apply"] = saved["apply"]
            results["apply_command"] = saved.get("apply_command", saved["command"])
            results["apply_provenance"] = saved.get("apply_provenance")
    if args.append:
        results = dict(json.loads(OUT_JSON.read_text()), partial=True)
        results["command"] += f"; then python -m bench.bench_scale {shlex.join(sys.argv[1:])}"
        results["machine"]["load_at_appends"] = results["machine"].get("load_at_appends", []) + [os.getloadavg()[0]]
        if args.linear_sizes and results.get("linear_command"):
            results["linear_command"] += f"; then python -m bench.bench_scale {shlex.join(sys.argv[1:])}"
        args.growth_sizes, args.apply_docs = "", ""
    if args.linear_only:
        results = dict(json.loads(OUT_JSON.read_text()), linear=[], partial=True,
                       linear_command="python -m bench.bench_scale " + shlex.join(sys.argv[1:]),
                       linear_load_at_start=os.getloadavg()[0], linear_provenance=provenance())
        args.compare_sizes = args.growth_sizes = args.apply_docs = ""
    if args.boosting_only:
        saved = json.loads(OUT_JSON.read_text())
        results = dict(saved, **{k: v for k, v in results.items() if k not in ("linear", "apply")}, provenance=[])
        results.setdefault("linear_command", saved["command"])
        if saved.get("apply"):
            results.setdefault("apply_command", saved["command"])
        args.linear_sizes = args.apply_docs = ""
    if args.apply_only:
        results = dict(json.loads(OUT_JSON.read_text()), apply=[],
                       apply_command="python -m bench.bench_scale " + shlex.join(sys.argv[1:]),
                       apply_provenance=provenance())
        args.compare_sizes = args.growth_sizes = args.linear_sizes = ""
    if not (args.linear_only or args.apply_only):
        results["provenance"] = results.get("provenance", []) + [provenance()]
    if args.linear_sizes and not args.linear_only:
        results["linear_provenance"] = provenance()
    if args.apply_docs and not args.apply_only:
        results["apply_provenance"] = provenance()
    save(results)
    for n in [int(v) for v in args.compare_sizes.split(",") if v]:
        corpus = generate(args.generator, n, args.out_dir)
        for _ in range(args.repeats):
            for backend in args.backends.split(","):
                for workers in [int(v) for v in args.workers.split(",")]:
                    spec = {"train": str(corpus / "train.tree"), "n_train": n, "backend": backend,
                            "n_workers": workers, "rounds": args.rounds}
                    row = run_child("fit", spec, log_dir)
                    row["invocation"] = results["command"].count("; then ")
                    results["compare"].append(row)
                    save(results)
    for n in [int(v) for v in args.linear_sizes.split(",") if v]:
        corpus = generate(args.generator, n, args.out_dir, ["--words", "20", "--sents", "3"])
        for _, backend, workers in itertools.product(range(args.repeats), args.backends.split(","),
                                                     [int(v) for v in args.workers.split(",")]):
            spec = {"train": str(corpus / "train.tree"), "n_train": n, "backend": backend, "n_workers": workers}
            row = run_child("linear", spec, log_dir)
            row["invocation"] = results["command"].count("; then ")
            results.setdefault("linear", []).append(row)
            save(results)
    for n in [int(v) for v in args.growth_sizes.split(",") if v]:
        corpus = generate(args.generator, n, args.out_dir)
        spec = {"train": str(corpus / "train.tree"), "n_train": n, "backend": "processes", "n_workers": 2,
                "rounds": args.growth_rounds}
        done = [r for r in results["compare"] if all(r[k] == v for k, v in spec.items())]
        results["growth"].append(done[0] if done else run_child("fit", spec, log_dir))
        save(results)
    if args.apply_docs:
        model = args.apply_model or train_apply_pipeline(args.out_dir / "apply_pipeline")
        for n in [int(v) for v in args.apply_docs.split(",") if v]:
            source = args.out_dir / f"apply_input_{n}.jsonl"
            write_apply_input(source, n)
            spec = {"model": str(model), "input": str(source), "output": str(args.out_dir / f"apply_{n}.jsonl"),
                    "n_docs": n}
            results["apply"].append(run_child("apply", spec, log_dir))
            save(results)
    results["partial"] = False
    save(results)
    print(f"wrote {OUT_JSON} and {OUT_MD}")


def _median(rows: List[Dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _paired(rows: List[Dict[str, Any]], base: List[Dict[str, Any]]) -> List[float]:
    """Wall-time ratios of the runs of `rows` to the runs of `base` made in the same repeat of the same invocation
    of the script, so that a ratio never compares runs made under different machine loads."""
    def keyed(runs: List[Dict[str, Any]]) -> Dict[Any, Dict[str, Any]]:
        seen: Dict[int, int] = {}
        out = {}
        for run in runs:
            k = seen[run["invocation"]] = seen.get(run["invocation"], -1) + 1
            out[(run["invocation"], k)] = run
        return out

    by_repeat = keyed(base)
    return [r["fit_wall_seconds"] / by_repeat[key]["fit_wall_seconds"] for key, r in keyed(rows).items()
            if key in by_repeat]


def _total_cpu(row: Dict[str, Any]) -> float:
    """The coordinator's CPU seconds and those of every worker in another process, as the workers report them (worker
    0 of the processes backend runs in the coordinator's process)."""
    here = row.get("coordinator_pid")
    return row["coordinator_cpu_seconds"] + sum(w["process_cpu_seconds"] for w in row["workers"]
                                                if here is None or w.get("pid") != here)


def _fmt(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def render(results: Dict[str, Any]) -> str:
    """docs/bench_scale.md from the JSON results."""
    lines = ["# Scale-out benchmark", "",
             "Generated by `python -m bench.bench_scale` from `docs/bench_scale.json`; do not edit by hand.", ""]
    if results.get("partial"):
        lines += ["**Partial results**: the run had not finished when this file was written.", ""]
    load = results["machine"].get("load_at_start")
    appends = results["machine"].get("load_at_appends")
    lines += [f"Command: `{results['command']}`. Machine: {results['machine']['cpus']} CPUs"
              + (f", load average {load:.2f} at the start" if load is not None else "")
              + (f" (then {', '.join(f'{x:.2f}' for x in appends)} at the appended runs)" if appends else "") +
              "; wall times rise with the load of other jobs during the run, CPU seconds much less.", "",
              stamp(results.get("provenance")), "",
              f"Synthetic generator corpora (seed 13), algorithm frequency (iwakura), size 3, min support 1, "
              f"{results['rounds']} rounds.", "", "## 1 and 2 workers, processes and Ray", "",
              "| training docs | backend | workers | runs | fit wall s (median) | vs 1 worker (median of paired runs) | "
              "total CPU s (coordinator + workers) | vs 1 worker | "
              "busiest worker CPU vs 1 worker | start wall s | CPU s per worker (search), medians | "
              "peak RSS MB per worker, medians | busiest / mean | model digest |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    compare = results["compare"]
    groups: Dict[Any, List[Dict[str, Any]]] = {}
    for row in compare:
        groups.setdefault((row["n_train"], row["backend"], row["n_workers"]), []).append(row)
    for (n, backend, workers), rows in sorted(groups.items()):
        wall = _median(rows, "fit_wall_seconds")
        base = groups.get((n, backend, 1))
        ratio = statistics.median(_paired(rows, base)) if base else float("nan")
        per_worker = [{key: statistics.median(r["workers"][j][key] for r in rows)
                       for key in ("process_cpu_seconds", "search_cpu_seconds", "peak_rss_mb")}
                      for j in range(workers)]
        busiest = max(w["process_cpu_seconds"] for w in per_worker)
        cpu_ratio = busiest / _median([r["workers"][0] for r in base], "process_cpu_seconds") if base else float("nan")
        cpu = " / ".join(_fmt(w["process_cpu_seconds"]) + f" ({_fmt(w['search_cpu_seconds'])})" for w in per_worker)
        rss = " / ".join(_fmt(w["peak_rss_mb"], 0) for w in per_worker)
        total = statistics.median(_total_cpu(r) for r in rows)
        total_ratio = total / statistics.median(_total_cpu(r) for r in base) if base else float("nan")
        lines.append(f"| {n:,} | {backend} | {workers} | {len(rows)} | {_fmt(wall)} | {ratio:.2f}x | {_fmt(total)} | "
                     f"{total_ratio:.2f}x | {cpu_ratio:.2f}x | "
                     f"{_fmt(_median(rows, 'start_wall_seconds'))} | {cpu} | {rss} | "
                     f"{_median(rows, 'load_balance'):.2f} | `{rows[0]['model_sha256'][:12]}` |")
    for n in sorted({k[0] for k in groups}):
        digests = {r["model_sha256"] for r in compare if r["n_train"] == n}
        lines.append("")
        lines.append(f"{n:,} documents: {'one model digest for every backend and worker count' if len(digests) == 1 else 'DIFFERENT model digests'}.")
        proc1, proc2, ray2 = (groups.get((n, "processes", 1)), groups.get((n, "processes", 2)),
                              groups.get((n, "ray", 2)))
        if proc1 and proc2:
            runs = _paired(proc2, proc1)
            wall = statistics.median(runs)
            lines.append(f"Processes, 2 workers / 1 worker: {wall:.2f}x wall time, the median of the runs "
                         f"({', '.join(f'{r:.2f}x' for r in runs)}; each run compares 1 and 2 workers under the same "
                         f"load) (target <= 0.65x: {'met' if wall <= 0.65 else 'not met'}); wall times depend on the "
                         "other jobs' load during each run, CPU per worker does not.")
        if proc2 and ray2:
            runs = _paired(ray2, proc2)
            wall = statistics.median(runs)
            lines.append(f"Ray / processes with 2 workers: {wall:.2f}x wall time, the median of the runs "
                         f"({', '.join(f'{r:.2f}x' for r in runs)}) (target <= 1.15x: "
                         f"{'met' if wall <= 1.15 else 'not met'}).")
    linear = results.get("linear") or []
    if linear:
        lines += ["", "## The default learner: 1 and 2 workers, processes and Ray", ""]
        if results.get("linear_command"):
            lines += [f"Command: `{results['linear_command']}`, load average {results['linear_load_at_start']:.2f} at "
                      "its start.", "", stamp(results.get("linear_provenance")), ""]
        lines += [
                  "Generator corpora of 60-word documents (`--words 20 --sents 3`, seed 13), `SubtreeLinearClassifier` "
                  "with its defaults (feature family, C and nb_beta chosen on 3 folds, Platt calibration): the folds and final "
                  "fits of each class go to the workers, a fit that runs alone multiplies its matrices on the workers' number "
                  "of threads, and mining is split by root label over the workers.", "",
                  "| training docs | shards of | backend | workers | runs | fit wall s (median) | vs 1 worker (median "
                  "of paired runs) | CPU s (coordinator + waited processes) | vs 1 worker | model digest |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        lgroups: Dict[Any, List[Dict[str, Any]]] = {}
        for row in linear:
            lgroups.setdefault((row["n_train"], row.get("shard_documents") or 0, row["backend"], row["n_workers"]),
                               []).append(row)
        for (n, shards, backend, workers), rows in sorted(lgroups.items()):
            base = lgroups.get((n, shards, backend, 1))
            ratio = statistics.median(_paired(rows, base)) if base else float("nan")
            cpu = _median(rows, "total_cpu_seconds")
            cpu_ratio = cpu / _median(base, "total_cpu_seconds") if base else float("nan")
            lines.append(f"| {n:,} | {f'{shards:,}' if shards else 'whole'} | {backend} | {workers} | {len(rows)} | "
                         f"{_fmt(_median(rows, 'fit_wall_seconds'))} | {ratio:.2f}x | {_fmt(cpu)} | {cpu_ratio:.2f}x"
                         f"{' (actors not counted)' if backend == 'ray' and workers > 1 else ''} | "
                         f"`{rows[0]['model_sha256'][:12]}` |")
        for n, shards in sorted({k[:2] for k in lgroups}):
            digests = {r["model_sha256"] for r in linear if r["n_train"] == n and (r.get("shard_documents") or 0) == shards}
            what = f"shards of {shards:,} documents" if shards else "whole matrices"
            lines += ["", f"{n:,} documents, {what}: "
                      f"{'one model digest for every backend and worker count' if len(digests) == 1 else 'DIFFERENT model digests'}."]
            proc1, proc2 = lgroups.get((n, shards, "processes", 1)), lgroups.get((n, shards, "processes", 2))
            if proc1 and proc2 and not shards:
                runs = _paired(proc2, proc1)
                wall = statistics.median(runs)
                lines.append(f"Processes, 2 workers / 1 worker: {wall:.2f}x wall time, the median of the runs "
                             f"({', '.join(f'{r:.2f}x' for r in runs)}; each run compares 1 and 2 workers under the "
                             f"same load) (target <= 0.65x: {'met' if wall <= 0.65 else 'not met'}).")
    growth = results["growth"]
    if growth:
        lines += ["", f"## Cost growth per worker (processes, 2 workers, {results['growth_rounds']} rounds)", "",
                  "| training docs | forest nodes | fit wall s | CPU s per worker (max) | peak RSS MB per worker (max) "
                  "| busiest / mean |", "|---|---|---|---|---|---|"]
        for row in growth:
            lines.append(f"| {row['docs']:,} | {row['nodes']:,} | {_fmt(row['fit_wall_seconds'])} | "
                         f"{_fmt(max(w['process_cpu_seconds'] for w in row['workers']))} | "
                         f"{_fmt(max(w['peak_rss_mb'] for w in row['workers']), 0)} | {row['load_balance']:.2f} |")
        if len(growth) >= 2:
            docs = [r["docs"] for r in growth]
            cpu = [max(w["process_cpu_seconds"] for w in r["workers"]) for r in growth]
            rss = [max(w["peak_rss_mb"] for w in r["workers"]) for r in growth]
            e_cpu, e_rss = fitted_exponent(docs, cpu), fitted_exponent(docs, rss)
            target, scale = 2_300_000, 2_300_000 / docs[-1]
            cpu_8 = cpu[-1] * scale ** e_cpu * 2 / 8
            rss_8 = rss[-1] * scale ** e_rss
            nodes = growth[-1]["nodes"] * scale
            lines += ["", f"Fitted exponents (least squares on log-log, {len(docs)} sizes): CPU per worker "
                      f"~ docs^{e_cpu:.2f}, peak RSS per worker ~ docs^{e_rss:.2f}.", "",
                      f"Extrapolation to {target:,} documents of this generator ({_fmt(nodes / 1e9, 2)} billion "
                      f"nodes) on 8 workers, {results['growth_rounds']} rounds, from the largest size measured, "
                      f"assuming the work divides evenly (it divides by root label; see the load balance): about "
                      f"{_fmt(cpu_8 / 3600, 1)} CPU hours per worker, i.e. about that wall time. Peak RSS per worker "
                      f"extrapolates to {_fmt(rss_8 / 1024, 1)} GB with the cache split in 2 as measured; of this the "
                      f"replicated forest (about 12 bytes per node) is {_fmt(nodes * 12 / 1e9, 1)} GB on every "
                      "worker, and the cached search space shrinks with more workers. Real reviews are far shorter "
                      "than these 600-word documents. An extrapolation over more than an order of magnitude: "
                      "indicative only."]
    if results.get("apply"):
        lines += ["", "## Streaming inference (`apply`, one process)", "",
                  f"Command: `{results.get('apply_command', results['command'])}`.", "",
                  stamp(results.get("apply_provenance")), "",
                  "Seeded short texts (5-40 words) through a blank English pipeline with `treeboost_textcat` "
                  "(frequency, 100 rounds).", "", "| input docs | wall s | CPU s | peak RSS MB |",
                  "|---|---|---|---|"]
        for row in results["apply"]:
            lines.append(f"| {row['lines']:,} | {_fmt(row['wall_seconds'])} | {_fmt(row['cpu_seconds'])} | "
                         f"{_fmt(row['peak_rss_mb'], 0)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
