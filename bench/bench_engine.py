"""Engine benchmark: CPU time, peak memory, accuracy and search effort of the subtree-boosting learner.

    python -m bench.bench_engine [--quick] [--repeats N]
    python -m bench.bench_engine --render-only     # rebuild docs/bench_engine.md from the JSON
    python -m bench.bench_engine --sizes 3 --algorithms frequency --workloads synth,svm   # issue-14 figures

Workloads:
  synth   the synthetic word-chain corpus of the shared workload generator
          (default 2,000 training / 1,000 test documents, seed 13), regenerated
          into the output directory on every run; algorithms frequency,
          presence and bact (criterion iwakura) at pattern sizes 1, 2, 3, and
          frequency with criterion z at size 3.
  movie   movie review polarity v2: folds 0-8 train, fold 9 test, each review a
          root with one word chain per line (lower case, split on white
          space); frequency and presence at sizes 1, 2, 3. Skipped with a
          message when the data directory is missing.
  svm     scikit-learn LinearSVC on binary 1..n-grams over the same splits.

Every figure comes from a separate child process reaped with os.wait4, so the
CPU seconds (user + sys) and the peak RSS (ru_maxrss) are that child's own:
  - `python -m spacy_treeboost learn` is the measured process for learn CPU,
    peak RSS and rounds per second (the user-facing command);
  - `python -m spacy_treeboost classify` gives the test accuracy;
  - `bench/engine_driver.py trace` learns the same model through the
    Python API and reports the mean `nodes_visited` of `clf.trace_`;
  - `bench/engine_driver.py decide` times `decision_function` over the
    test documents with time.process_time() around that call only;
  - `bench/svm_baseline.py` is the baseline, reading, vectorizing, fitting
    and predicting in one process.
Medians over --repeats runs are reported (the trace run is deterministic and
runs once). A child's ru_maxrss cannot be lower than this script's own peak RSS
at the time of the spawn (Linux carries it over through fork/exec), so this
script stays on the standard library and records its own peak as the floor.

Scale sections (bench/engine_scale.py, skipped with --sections engine):
the cost-growth table (learn on 2k, 8k, 32k and 100k synthetic documents, 200
rounds: CPU, peak RSS, fitted exponents) and the classify-throughput table
(1,000 and 20,000 documents: CPU, peak RSS, share of the CPU spent reading).

Outputs docs/bench_engine.json and docs/bench_engine.md (generated from the
JSON) and prints the markdown to stdout; --quick writes to the output
directory instead, so a smoke run never replaces the published figures.
"""
import argparse
import datetime
import hashlib
import json
import os
import re
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from bench import engine_scale as scale_section
from bench import harness
from bench.harness import command_output, machine_facts, median, relative_paths, self_peak_kib

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
DOCS = ROOT / "docs"
DRIVER = ("-m", "bench.engine_driver")
SVM_CHILD = ("-m", "bench.svm_baseline")
MOVIE_FILE = "movie_review_polarity_v2/movie_review_polarity_v2.jsonl"
SYNTH_ARGS = {"n_train": 2000, "n_test": 1000, "seed": 13}

TARGETS = {"learn_cpu_seconds": 30.0, "peak_rss_mb": 150.0, "accuracy": 0.94, "decision_function_seconds": 0.05}
TARGET_CONFIG = {"workload": "synth", "algorithm": "frequency", "criterion": "iwakura", "size": 3}
FULL_ROUNDS = 1000
QUICK_ROUNDS = 100

_ESCAPE_RE = re.compile(r"[%()\s]")
_LEARNED_RE = re.compile(
    r"learned (\d+) rounds, (\d+) distinct subtrees(?:, training error ([0-9.eE+-]+|nan), loss ([0-9.eE+-]+|nan|inf))?")
_ACCURACY_RE = re.compile(r"accuracy ([0-9.]+) \((\d+)/(\d+)\)")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- children


def child_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


def run_child(argv: Sequence[str], log_stem: Path, timeout: int) -> Dict[str, Any]:
    """Run one child to completion (see `bench.harness.run_child`) and return its record, logs kept beside
    `log_stem`."""
    run = harness.run_child(argv, cwd=ROOT, env=child_env(), timeout=timeout, log_stem=log_stem)
    return run.to_dict(stdout_path=log_stem.with_suffix(".stdout"))


def ok(run: Dict[str, Any]) -> bool:
    return run["exit"] == 0 and not run["timed_out"]


def describe_failure(run: Dict[str, Any]) -> str:
    why = "timed out" if run["timed_out"] else f"exit {run['exit']}"
    tail = run["stderr_tail"].strip().splitlines()[-1:] or [""]
    return f"{why}: {tail[0][:200]}"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ---------------------------------------------------------------- facts


def stale_kernels() -> List[str]:
    """The compiled kernels (by module path, e.g. `learning/_mine`) whose .pyx is newer than their .so, or
    that have no .so."""
    package = ROOT / "spacy_treeboost"
    stale = []
    for pyx in sorted(package.rglob("*.pyx")):
        sos = sorted(pyx.parent.glob(pyx.stem + ".*.so"))
        if not sos or pyx.stat().st_mtime > sos[0].stat().st_mtime:
            stale.append(pyx.relative_to(package).with_suffix("").as_posix())
    return stale


def source_facts() -> Dict[str, Any]:
    return {
        "commit": command_output(["git", "rev-parse", "HEAD"]),
        "uncommitted_product_files": command_output(
            ["git", "status", "--porcelain", "--", "spacy_treeboost", "setup.py"]).splitlines(),
        "stale_kernels": stale_kernels(),
    }


# ---------------------------------------------------------------- workloads


def encode_label(label: str) -> str:
    """Percent-encode `%`, brackets and white space (the BACT format's escaping)."""
    return _ESCAPE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf8")), label)


def chains_sexpr(sents: Sequence[Sequence[str]]) -> str:
    return "(ROOT" + "".join("".join("(" + encode_label(w) for w in s) + ")" * len(s) for s in sents) + ")"


def split_stats(path: Path) -> Dict[str, int]:
    docs = sents = tokens = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            docs += 1
            sents += len(r["sents"])
            tokens += sum(len(s) for s in r["sents"])
    return {"docs": docs, "sentences": sents, "tokens": tokens}


def prepare_synth(args: argparse.Namespace, out_dir: Path) -> Dict[str, Any]:
    gen = Path(args.synth_generator)
    if not gen.is_absolute():
        gen = (ROOT / gen).resolve()
    if not gen.exists():
        raise SystemExit(f"error: the workload generator {gen} does not exist (see --synth-generator)")
    data = out_dir / "synth"
    argv = [sys.executable, str(gen), "--out-dir", str(data), "--n-train", str(SYNTH_ARGS["n_train"]),
            "--n-test", str(SYNTH_ARGS["n_test"]), "--seed", str(SYNTH_ARGS["seed"])]
    log(f"generating the synthetic workload: {shlex.join(argv)}")
    run = run_child(argv, out_dir / "logs" / "synth_generate", args.timeout)
    if not ok(run):
        raise SystemExit(f"error: the workload generator failed ({describe_failure(run)})")
    files = {k: data / f"{k}.tree" for k in ("train", "test")}
    return {
        "name": "synth",
        "title": "Synthetic word-chain workload",
        "generator": str(gen),
        "generator_sha256": sha256(gen)[:16],
        "generator_args": argv[2:],
        "train": str(files["train"]),
        "test": str(files["test"]),
        "train_jsonl": str(data / "train.jsonl"),
        "test_jsonl": str(data / "test.jsonl"),
        "sha256": {k: sha256(p)[:16] for k, p in files.items()},
        "stats": {k: split_stats(data / f"{k}.jsonl") for k in ("train", "test")},
    }


def prepare_movie(args: argparse.Namespace, out_dir: Path) -> Optional[Dict[str, Any]]:
    data_dir = Path(args.data)
    if not data_dir.is_absolute():
        data_dir = (ROOT / data_dir).resolve()
    src = data_dir / MOVIE_FILE
    if not src.exists():
        log(f"SKIPPING the movie review workload: {src} is missing (see --data)")
        return None
    dest = out_dir / "movie"
    dest.mkdir(parents=True, exist_ok=True)
    paths = {(split, ext): dest / f"{split}.{ext}" for split in ("train", "test") for ext in ("tree", "jsonl")}
    handles = {k: open(p, "w", encoding="utf-8") for k, p in paths.items()}
    try:
        with open(src, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                split = "test" if int(r["fold"]) == 9 else "train"
                sents = [s for s in (ln.lower().split() for ln in r["text"].split("\n")) if s]
                handles[split, "tree"].write(f"{encode_label(str(r['label']))} {chains_sexpr(sents)}\n")
                handles[split, "jsonl"].write(json.dumps({"label": r["label"], "sents": sents}) + "\n")
    finally:
        for h in handles.values():
            h.close()
    return {
        "name": "movie",
        "title": "Movie review polarity v2 (folds 0-8 train, fold 9 test)",
        "source": str(src),
        "source_sha256": sha256(src)[:16],
        "train": str(paths["train", "tree"]),
        "test": str(paths["test", "tree"]),
        "train_jsonl": str(paths["train", "jsonl"]),
        "test_jsonl": str(paths["test", "jsonl"]),
        "sha256": {k: sha256(paths[k, "tree"])[:16] for k in ("train", "test")},
        "stats": {k: split_stats(paths[k, "jsonl"]) for k in ("train", "test")},
    }


def treeboost_configs(workload: str, sizes: Sequence[int], only: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    algorithms = ("frequency", "presence", "bact") if workload == "synth" else ("frequency", "presence")
    algorithms = tuple(a for a in algorithms if not only or a in only)
    configs = [{"workload": workload, "algorithm": a, "criterion": "iwakura", "size": L}
               for L in sizes for a in algorithms]
    if workload == "synth" and 3 in sizes and (not only or "frequency_z" in only):
        configs.append({"workload": workload, "algorithm": "frequency", "criterion": "z", "size": 3})
    return configs


def config_name(c: Dict[str, Any]) -> str:
    return f"{c['workload']}_{c['algorithm']}_{c['criterion']}_L{c['size']}"


# ---------------------------------------------------------------- measuring


def bench_treeboost(args, w: Dict[str, Any], c: Dict[str, Any], out_dir: Path) -> Dict[str, Any]:
    name = config_name(c)
    logs = out_dir / "logs" / name
    model = out_dir / "models" / f"{name}.model"
    model.parent.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    learn_argv = [py, "-m", "spacy_treeboost", "learn", w["train"], str(model), "--algorithm", c["algorithm"],
                  "--criterion", c["criterion"], "--max-pattern-size", str(c["size"]),
                  "--min-support", str(args.min_support), "--rounds", str(args.rounds)]
    result: Dict[str, Any] = {**c, "rounds_requested": args.rounds, "min_support": args.min_support,
                              "learn_command": shlex.join(["python"] + learn_argv[1:])}
    learn, model_hashes, summaries = [], [], []
    for r in range(args.repeats):
        run = run_child(learn_argv, logs / f"learn{r}", args.timeout)
        learn.append(run)
        if not ok(run):
            result["error"] = f"learn {describe_failure(run)}"
            log(f"  {name}: learn failed: {result['error']}")
            result["learn_runs"] = learn
            return result
        model_hashes.append(sha256(model)[:16])
        m = _LEARNED_RE.search(run["stderr_tail"])
        summaries.append(m.groups() if m else None)
        log(f"  {name}: learn #{r + 1}: {run['cpu_seconds']:.2f} CPU s, {run['maxrss_kib'] / 1024:.1f} MiB")
    result["learn_runs"] = learn
    result["learn_cpu_seconds"] = median([x["cpu_seconds"] for x in learn])
    result["learn_maxrss_kib"] = median([x["maxrss_kib"] for x in learn])
    result["models_identical"] = len(set(model_hashes)) == 1
    s = summaries[-1]
    if s:
        result["rounds_learned"] = int(s[0])
        result["distinct_subtrees"] = int(s[1])
        result["training_error"] = float(s[2]) if s[2] else None
    rounds = result.get("rounds_learned", args.rounds)
    result["rounds_per_cpu_second"] = rounds / result["learn_cpu_seconds"] if result["learn_cpu_seconds"] else None

    classify_argv = [py, "-m", "spacy_treeboost", "classify", w["test"], str(model)]
    result["classify_command"] = shlex.join(["python"] + classify_argv[1:])
    classify = []
    accuracies = []
    for r in range(args.repeats):
        run = run_child(classify_argv, logs / f"classify{r}", args.timeout)
        classify.append(run)
        m = _ACCURACY_RE.search(run["stderr_tail"])
        if not ok(run) or not m:
            result["error"] = f"classify {describe_failure(run)}"
            break
        accuracies.append(int(m.group(2)) / int(m.group(3)))
        result["test_docs"] = int(m.group(3))
    result["classify_runs"] = classify
    result["classify_cpu_seconds"] = median([x["cpu_seconds"] for x in classify if ok(x)])
    result["classify_maxrss_kib"] = median([x["maxrss_kib"] for x in classify if ok(x)])
    result["accuracy"] = accuracies[0] if accuracies else None
    result["accuracy_stable"] = len(set(accuracies)) <= 1

    trace_json = logs / "trace.json"
    trace_argv = [py, *DRIVER, "trace", w["train"], str(trace_json), "--algorithm", c["algorithm"],
                  "--criterion", c["criterion"], "--max-pattern-size", str(c["size"]),
                  "--min-support", str(args.min_support), "--rounds", str(args.rounds)]
    run = run_child(trace_argv, logs / "trace", args.timeout)
    result["trace_run"] = run
    if ok(run):
        trace = json.loads(trace_json.read_text(encoding="utf-8"))
        result["trace"] = trace
        result["nodes_visited_mean"] = trace["nodes_visited_mean"]
        result["trace_matches_cli"] = (
            trace["rounds"] == result.get("rounds_learned")
            and trace["distinct_subtrees"] == result.get("distinct_subtrees"))
    else:
        result.setdefault("error", f"trace {describe_failure(run)}")

    decide_json = logs / "decide.json"
    decide_argv = [py, *DRIVER, "decide", w["test"], str(model), str(decide_json)]
    decide, cold, warm = [], [], []
    for r in range(args.repeats):
        run = run_child(decide_argv, logs / f"decide{r}", args.timeout)
        decide.append(run)
        if not ok(run):
            result.setdefault("error", f"decide {describe_failure(run)}")
            break
        d = json.loads(decide_json.read_text(encoding="utf-8"))
        cold.append(d["decision_function_cpu_seconds"])
        warm.append(d["decision_function_warm_cpu_seconds"])
        result["decide_accuracy"] = d["accuracy"]
        result["n_rules"] = d["n_rules"]
    result["decide_runs"] = decide
    result["decision_function_seconds"] = median(cold)
    result["decision_function_seconds_all"] = cold
    result["decision_function_warm_seconds"] = median(warm)
    log(f"  {name}: accuracy {result['accuracy']}, nodes/round {result.get('nodes_visited_mean')}, "
        f"decision_function {result['decision_function_seconds']} s")
    return result


def bench_svm(args, w: Dict[str, Any], size: int, out_dir: Path) -> Dict[str, Any]:
    name = f"{w['name']}_svm_L{size}"
    logs = out_dir / "logs" / name
    out_json = logs / "svm.json"
    argv = [sys.executable, *SVM_CHILD, w["train_jsonl"], w["test_jsonl"], str(size), str(out_json)]
    result: Dict[str, Any] = {"workload": w["name"], "system": "svm", "size": size,
                              "command": shlex.join(["python"] + argv[1:])}
    runs, details = [], []
    for r in range(args.repeats):
        run = run_child(argv, logs / f"svm{r}", args.timeout)
        runs.append(run)
        if not ok(run):
            result["error"] = f"svm {describe_failure(run)}"
            break
        details.append(json.loads(out_json.read_text(encoding="utf-8")))
        log(f"  {name} #{r + 1}: {run['cpu_seconds']:.2f} CPU s, {run['maxrss_kib'] / 1024:.1f} MiB, "
            f"accuracy {details[-1]['accuracy']:.4f}")
    result["runs"] = runs
    good = [x for x in runs if ok(x)]
    result["cpu_seconds"] = median([x["cpu_seconds"] for x in good])
    result["maxrss_kib"] = median([x["maxrss_kib"] for x in good])
    if details:
        d = details[-1]
        result.update({k: d[k] for k in ("n_features", "nnz_train", "accuracy", "converged", "n_iter")})
        for k in ("read_cpu_seconds", "vectorize_train_cpu_seconds", "fit_cpu_seconds", "predict_cpu_seconds",
                  "import_cpu_seconds"):
            result[k] = median([x[k] for x in details])
        result["accuracy_stable"] = len({x["accuracy"] for x in details}) == 1
    return result


# ---------------------------------------------------------------- report


def fmt(x: Any, spec: str = ".2f", none: str = "—") -> str:
    if x is None:
        return none
    return format(x, spec)


def mib(kib: Optional[float]) -> Optional[float]:
    return None if kib is None else kib / 1024


def svm_for(results: Dict[str, Any], workload: str, size: int) -> Optional[Dict[str, Any]]:
    for s in results["svm"]:
        if s["workload"] == workload and s["size"] == size and s.get("cpu_seconds"):
            return s
    return None


def acceptance(results: Dict[str, Any]) -> List[Dict[str, Any]]:
    checks: List[Dict[str, Any]] = []
    full = results["settings"]["rounds"] == FULL_ROUNDS and not results["settings"]["quick"]
    target = next((r for r in results["treeboost"] if all(r.get(k) == v for k, v in TARGET_CONFIG.items())), None)
    why_not = None
    if not full:
        why_not = f"not evaluated: {results['settings']['rounds']} rounds (quick mode), the targets are for {FULL_ROUNDS}"
    elif target is None or target.get("learn_cpu_seconds") is None:
        why_not = "not evaluated: the frequency / size 3 run is missing or failed"
    label = "synthetic, frequency (iwakura), size 3, 1,000 rounds"
    rows = [
        ("learn CPU seconds (median)", "≤ 30 s", lambda t: t.get("learn_cpu_seconds"),
         lambda v: v <= TARGETS["learn_cpu_seconds"], lambda v: f"{v:.2f} s"),
        ("learn peak RSS (median)", "≤ 150 MB", lambda t: t.get("learn_maxrss_kib"),
         lambda v: v * 1024 <= TARGETS["peak_rss_mb"] * 2 ** 20 and v * 1024 <= TARGETS["peak_rss_mb"] * 10 ** 6,
         lambda v: f"{v / 1024:.1f} MiB = {v * 1024 / 1e6:.1f} MB (10^6 bytes)"),
        ("test accuracy", "≥ 94 %", lambda t: t.get("accuracy"),
         lambda v: v >= TARGETS["accuracy"], lambda v: f"{100 * v:.2f} %"),
    ]
    for what, goal, get, test, show in rows:
        v = get(target) if target and not why_not else None
        checks.append({"check": f"{label}: {what}", "target": goal,
                       "measured": show(v) if v is not None else why_not or "missing",
                       "met": None if v is None else bool(test(v))})
    synth = [r for r in results["treeboost"] if r["workload"] == "synth" and r.get("decision_function_seconds") is not None]
    if synth:
        worst = max(synth, key=lambda r: r["decision_function_seconds"])
        over = [config_name(r) for r in synth if r["decision_function_seconds"] > TARGETS["decision_function_seconds"]]
        measured = (f"max {worst['decision_function_seconds']:.4f} s ({config_name(worst)}); "
                    + (f"over the target: {', '.join(over)}" if over else "all configurations within"))
        checks.append({"check": f"decision_function over the {synth[0].get('test_docs', 1000)} synthetic test documents, "
                                f"every configuration ({results['settings']['rounds']} rounds)",
                       "target": "≤ 0.05 s", "measured": measured, "met": not over})
    return checks


def render(results: Dict[str, Any]) -> str:
    st, mf, src = results["settings"], results["machine"], results["source"]
    lines = [
        "# Engine benchmark",
        "",
        f"Generated by `python -m bench.bench_engine` from `{st['json_name']}`; do not edit by hand.",
        "",
    ]
    if not results.get("complete", True):
        lines += ["**Partial results**: the run did not finish; sections or rows may be missing.", ""]
    if st["quick"]:
        lines += ["**Quick mode** (smoke test): fewer rounds and repeats; these are not the benchmark figures.", ""]
    lines += [
        f"Command: `{results['command']}` (from the repository root)",
        "",
        f"- Started {results['started']}, finished {results.get('finished', '—')} (UTC); "
        f"wall time {fmt(results.get('wall_seconds'), '.0f')} s.",
        f"- Machine: `nproc` = {mf.get('nproc')}, CPU model \"{mf.get('cpu_model')}\", memory {mf.get('mem_total')}, "
        f"Linux {mf.get('kernel')} {mf.get('machine')}.",
        f"- Python {mf.get('python')}, numpy {mf.get('numpy')}, scipy {mf.get('scipy')}, scikit-learn "
        f"{mf.get('scikit-learn')}.",
        f"- Load average (1/5/15 min) at start {results.get('loadavg_start')}, at end {results.get('loadavg_end')}: "
        "the machine is shared, so wall times are not reported as results; CPU seconds are.",
        f"- Source: commit `{src['start'].get('commit', '')[:12]}`"
        + (f"; product files with uncommitted changes: {', '.join('`' + x.strip() + '`' for x in src['start']['uncommitted_product_files'])}"
           if src["start"]["uncommitted_product_files"] else "; no uncommitted changes in the product files")
        + ".",
    ]
    if src["start"].get("stale_kernels") or any(k["stale"] for k in src["start"].get("kernels", {}).values()):
        lines.append("- **Warning**: a .pyx was newer than its compiled .so when the run started.")
    lines += [
        "",
        f"Each figure is a separate child process, reaped with `os.wait4`: CPU = user + sys seconds of that process, "
        f"peak RSS = its `ru_maxrss` (MiB = 2^20 bytes). Medians over {st['repeats']} runs. Learn CPU / RSS / rounds "
        "per second: `python -m spacy_treeboost learn` (whole process: reading the file, indexing, boosting, writing "
        "the model). Accuracy: `python -m spacy_treeboost classify` on the test file. Nodes visited per round: mean "
        "`nodes_visited` of `clf.trace_` from the same learning run through the Python API "
        "(`bench/engine_driver.py trace`). decision_function: process time of that call alone over the test "
        "documents, first call in a fresh process (it includes compiling the rule matcher) "
        "(`bench/engine_driver.py decide`). CPU / SVM: learn CPU divided by the CPU of the LinearSVC process at "
        "the same n (which reads, vectorizes, fits and also predicts the test set). "
        f"Floor: a child's ru_maxrss cannot be below the parent's peak RSS at spawn, which was at most "
        f"{fmt(mib(results.get('parent_peak_kib')), '.1f')} MiB.",
        "",
    ]
    checks = results.get("acceptance") or []
    if checks:
        lines += ["## Acceptance targets", "", "| check | target | measured | met |", "|---|---|---|---|"]
        for c in checks:
            met = "n/a" if c["met"] is None else ("yes" if c["met"] else "**NO**")
            lines.append(f"| {c['check']} | {c['target']} | {c['measured']} | {met} |")
        lines.append("")
    for w in results["workloads"]:
        rows = [r for r in results["treeboost"] if r["workload"] == w["name"]]
        svms = [s for s in results["svm"] if s["workload"] == w["name"]]
        tr = w.get("stats", {}).get("train", {})
        te = w.get("stats", {}).get("test", {})
        lines += [
            f"## {w['title']}",
            "",
            f"Train {tr.get('docs', 0):,} documents ({tr.get('sentences', 0):,} sentences, {tr.get('tokens', 0):,} "
            f"tokens), test {te.get('docs', 0):,} documents; {st['rounds']:,} rounds requested, min support "
            f"{st['min_support']}.",
            "",
            "| system | criterion | size | learn CPU s | peak RSS MiB | test accuracy | rounds / CPU s | "
            "nodes visited / round | decision_function s | CPU / SVM CPU |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            s = svm_for(results, r["workload"], r["size"])
            ratio = r["learn_cpu_seconds"] / s["cpu_seconds"] if s and r.get("learn_cpu_seconds") else None
            crit = "—" if r["algorithm"] == "bact" else r["criterion"]
            if r.get("learn_cpu_seconds") is None:
                lines.append(f"| treeboost {r['algorithm']} | {crit} | {r['size']} | failed: {r.get('error', '')} "
                             "| | | | | | |")
                continue
            lines.append(
                f"| treeboost {r['algorithm']} | {crit} | {r['size']} | {fmt(r['learn_cpu_seconds'])} | "
                f"{fmt(mib(r['learn_maxrss_kib']), '.1f')} | {fmt(r.get('accuracy') and 100 * r['accuracy'], '.2f')} % | "
                f"{fmt(r.get('rounds_per_cpu_second'), '.1f')} | {fmt(r.get('nodes_visited_mean'), ',.0f')} | "
                f"{fmt(r.get('decision_function_seconds'), '.4f')} | {fmt(ratio, '.2f')} |")
        for s in svms:
            if s.get("cpu_seconds") is None:
                lines.append(f"| LinearSVC, binary 1..{s['size']}-grams | — | {s['size']} | failed: "
                             f"{s.get('error', '')} | | | | | | |")
                continue
            lines.append(
                f"| LinearSVC, binary 1..{s['size']}-grams | — | {s['size']} | {fmt(s['cpu_seconds'])} | "
                f"{fmt(mib(s['maxrss_kib']), '.1f')} | {fmt(s.get('accuracy') and 100 * s['accuracy'], '.2f')} % | "
                "— | — | — | 1.00 |")
        lines.append("")
        lines += [
            "<details><summary>Details</summary>",
            "",
            "| system | criterion | size | learn CPU s, all runs | classify process CPU s / MiB | "
            "API run: read / start / boost CPU s, boost rounds per CPU s | distinct subtrees | cached patterns | "
            "decision_function warm s | checks |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            if r.get("learn_cpu_seconds") is None:
                continue
            t = r.get("trace") or {}
            boost_rate = t["rounds"] / t["boost_cpu_seconds"] if t.get("boost_cpu_seconds") else None
            notes = []
            if not r.get("models_identical", True):
                notes.append("models differ between repeats")
            if not r.get("accuracy_stable", True):
                notes.append("accuracy differs between repeats")
            if r.get("trace_matches_cli") is False:
                notes.append("API run differs from CLI run")
            if r.get("decide_accuracy") is not None and r.get("accuracy") is not None and \
                    abs(r["decide_accuracy"] - r["accuracy"]) > 1e-12:
                notes.append("decide/classify accuracy differ")
            if r.get("error"):
                notes.append(r["error"])
            lines.append(
                f"| treeboost {r['algorithm']} | {'—' if r['algorithm'] == 'bact' else r['criterion']} | {r['size']} | "
                f"{', '.join(fmt(x['cpu_seconds']) for x in r['learn_runs'])} | "
                f"{fmt(r.get('classify_cpu_seconds'))} / {fmt(mib(r.get('classify_maxrss_kib')), '.1f')} | "
                f"{fmt(t.get('read_cpu_seconds'))} / {fmt(t.get('start_cpu_seconds'))} / {fmt(t.get('boost_cpu_seconds'))}, "
                f"{fmt(boost_rate, '.1f')} | "
                f"{fmt(r.get('distinct_subtrees'), ',d')} | {fmt(t.get('patterns_cached_end'), ',d')} | "
                f"{fmt(r.get('decision_function_warm_seconds'), '.4f')} | {'; '.join(notes) or 'ok'} |")
        lines += ["", "| system | size | CPU s, all runs | read / vectorize train / fit / predict CPU s | features | "
                      "converged | checks |", "|---|---|---|---|---|---|---|"]
        for s in svms:
            if s.get("cpu_seconds") is None:
                continue
            lines.append(
                f"| LinearSVC | {s['size']} | {', '.join(fmt(x['cpu_seconds']) for x in s['runs'])} | "
                f"{fmt(s.get('read_cpu_seconds'))} / {fmt(s.get('vectorize_train_cpu_seconds'))} / "
                f"{fmt(s.get('fit_cpu_seconds'))} / {fmt(s.get('predict_cpu_seconds'))} | "
                f"{fmt(s.get('n_features'), ',d')} | {s.get('converged')} | "
                f"{'ok' if s.get('accuracy_stable', True) else 'accuracy differs between repeats'} |")
        lines += ["", "</details>", ""]
    for name, why in results.get("skipped", {}).items():
        lines += [f"## {name}", "", f"Skipped: {why}", ""]
    lines += scale_section.render(results, sys.modules[__name__])
    ex = next((r for r in results["treeboost"] if all(r.get(k) == v for k, v in TARGET_CONFIG.items())), None)
    if ex and ex.get("classify_command"):
        root = str(ROOT) + os.sep
        lines += ["Commands of one configuration (synthetic, frequency, size 3), paths relative to the repository "
                  "root:", "", "```", ex["learn_command"].replace(root, ""), ex["classify_command"].replace(root, ""),
                  "```", ""]
    lines += scale_out_section()
    return "\n".join(lines)


def scale_out_section() -> List[str]:
    """A pointer to the scale-out report, which `bench/bench_scale.py` writes from its own JSON."""
    return ["## Scale-out", "", "Search workers, the default learner on several cores and streaming inference: "
            "[bench_scale.md](bench_scale.md) (`python -m bench.bench_scale`).", ""]


# ---------------------------------------------------------------- main


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help=f"smoke test: {QUICK_ROUNDS} rounds, 1 repeat, outputs in the output directory")
    p.add_argument("--repeats", type=int, default=None, help="runs per measured figure; the median is reported "
                   "(default 3, 1 with --quick)")
    p.add_argument("--rounds", type=int, default=None,
                   help=f"boosting rounds (default {FULL_ROUNDS}, {QUICK_ROUNDS} with --quick)")
    p.add_argument("--min-support", type=int, default=1)
    p.add_argument("--sizes", default="1,2,3", help="pattern sizes (comma separated)")
    p.add_argument("--workloads", default="synth,movie,svm", help="any of synth, movie, svm (comma separated)")
    p.add_argument("--algorithms", default="", help="only these treeboost configurations: any of frequency, "
                   "presence, bact, frequency_z (comma separated; default all)")
    p.add_argument("--sections", default="engine,scale", help="engine (the tables per workload) and/or scale "
                   "(cost growth, classify throughput); or classify alone: re-measure the classify-throughput rows "
                   "into the existing JSON, with the model of its cost-growth table, keeping every other figure")
    p.add_argument("--synth-generator", default="../shared/bench/gen_synth_trees.py",
                   help="the workload generator (relative to the repository root)")
    p.add_argument("--data", default="../shared/data", help="shared data directory (relative to the repository root)")
    p.add_argument("--out-dir", default="bench/_out", help="generated data, models and logs (relative to the root)")
    p.add_argument("--json", default=None, help="results JSON (default docs/bench_engine.json, or "
                   "OUT_DIR/bench_engine_quick.json with --quick)")
    p.add_argument("--md", default=None, help="generated markdown (default next to the JSON, .md)")
    p.add_argument("--timeout", type=int, default=3600, help="seconds before a child process is killed")
    p.add_argument("--allow-stale-build", action="store_true",
                   help="run even if a .pyx is newer than its compiled .so")
    p.add_argument("--render-only", action="store_true", help="rebuild the markdown from the JSON and print it")
    a = p.parse_args(argv)
    if a.repeats is None:
        a.repeats = 1 if a.quick else 3
    if a.rounds is None:
        a.rounds = QUICK_ROUNDS if a.quick else FULL_ROUNDS
    if a.repeats < 1 or a.rounds < 1:
        p.error("--repeats and --rounds must be at least 1")
    out_dir = Path(a.out_dir)
    a.out_dir = out_dir if out_dir.is_absolute() else ROOT / out_dir
    if a.json is None:
        a.json = str(a.out_dir / "bench_engine_quick.json") if a.quick else str(DOCS / "bench_engine.json")
    a.json = Path(a.json) if Path(a.json).is_absolute() else ROOT / a.json
    a.md = Path(a.md) if a.md else a.json.with_suffix(".md")
    a.md = a.md if a.md.is_absolute() else ROOT / a.md
    a.sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    a.workloads = [x.strip() for x in a.workloads.split(",") if x.strip()]
    a.algorithms = [x.strip() for x in a.algorithms.split(",") if x.strip()]
    a.sections = [x.strip() for x in a.sections.split(",") if x.strip()]
    return a


def rel(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def write_outputs(args: argparse.Namespace, results: Dict[str, Any]) -> str:
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(relative_paths(results), indent=1) + "\n", encoding="utf-8")
    md = render(results)
    args.md.write_text(md + "\n", encoding="utf-8")
    return md


def rerun_classify(args: argparse.Namespace, source_start: Dict[str, Any]) -> None:
    """Re-measure the classify-throughput rows of an existing report (`--sections classify`)."""
    results = json.loads(args.json.read_text(encoding="utf-8"))
    sc = results.get("scale") or {}
    if not sc.get("growth") or not (ROOT / sc["growth"][0]["model"]).exists():
        raise SystemExit(f"error: {rel(args.json)} has no cost-growth model to classify with; run the scale section "
                         "first (--sections scale)")
    rerun = {"command": shlex.join(["python", "bench/bench_engine.py"] + sys.argv[1:]),
             "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
             "loadavg_start": " / ".join(f"{x:.2f}" for x in os.getloadavg()), "commit": source_start["commit"],
             "previous": sc.get("classify", [])}
    sc["classify"] = scale_section.classify(args, sys.modules[__name__], sc["workload"], ROOT / sc["growth"][0]["model"],
                                            args.out_dir)
    rerun["loadavg_end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    sc["classify_rerun"] = rerun
    results["acceptance"] = acceptance(results) + scale_section.acceptance(results, sys.modules[__name__])
    print(write_outputs(args, results))
    log(f"wrote {rel(args.json)} and {rel(args.md)}")


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    if args.render_only:
        results = json.loads(args.json.read_text(encoding="utf-8"))
        md = render(results)
        args.md.write_text(md + "\n", encoding="utf-8")
        print(md)
        return
    source_start = source_facts()
    stale = source_start["stale_kernels"]
    if stale and not args.allow_stale_build:
        raise SystemExit(f"error: compiled kernels older than their .pyx: {', '.join(stale)}; rebuild with "
                         "`python setup.py build_ext --inplace` (or pass --allow-stale-build)")
    if args.sections == ["classify"]:
        rerun_classify(args, source_start)
        return
    wall0 = time.perf_counter()
    results: Dict[str, Any] = {
        "command": shlex.join(["python", "bench/bench_engine.py"] + list(sys.argv[1:] if argv is None else argv)),
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S"),
        "loadavg_start": " / ".join(f"{x:.2f}" for x in os.getloadavg()),
        "settings": {"quick": args.quick, "repeats": args.repeats, "rounds": args.rounds,
                     "min_support": args.min_support, "sizes": args.sizes, "workloads": args.workloads,
                     "synth_args": SYNTH_ARGS, "json_name": rel(args.json), "timeout": args.timeout},
        "machine": machine_facts(),
        "source": {"start": source_start},
        "targets": TARGETS,
        "workloads": [],
        "treeboost": [],
        "svm": [],
        "skipped": {},
        "complete": False,
    }
    partial = args.out_dir / "bench_engine.partial.json"
    args.out_dir.mkdir(parents=True, exist_ok=True)

    def checkpoint() -> None:
        results["parent_peak_kib"] = self_peak_kib()
        partial.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")

    workloads = []
    engine = "engine" in args.sections
    if engine and "synth" in args.workloads:
        workloads.append(prepare_synth(args, args.out_dir))
    if engine and "movie" in args.workloads:
        movie = prepare_movie(args, args.out_dir)
        if movie is None:
            results["skipped"]["Movie reviews"] = (
                f"{Path(args.data) / MOVIE_FILE} is missing (--data {args.data}); the workload was not run.")
        else:
            workloads.append(movie)
    results["workloads"] = workloads
    checkpoint()
    for w in workloads:
        log(f"workload {w['name']}: {w['stats']}")
        for c in treeboost_configs(w["name"], args.sizes, args.algorithms):
            log(f"treeboost {config_name(c)}")
            results["treeboost"].append(bench_treeboost(args, w, c, args.out_dir))
            checkpoint()
        if "svm" in args.workloads:
            for size in args.sizes:
                log(f"svm {w['name']} size {size}")
                results["svm"].append(bench_svm(args, w, size, args.out_dir))
                checkpoint()
    if "scale" in args.sections:
        scale_section.run(args, sys.modules[__name__], results, checkpoint)
    results["loadavg_end"] = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    results["finished"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    results["wall_seconds"] = time.perf_counter() - wall0
    results["parent_peak_kib"] = self_peak_kib()
    results["acceptance"] = acceptance(results) + scale_section.acceptance(results, sys.modules[__name__])
    results["complete"] = True
    md = write_outputs(args, results)
    partial.unlink(missing_ok=True)
    print(md)
    log(f"wrote {rel(args.json)} and {rel(args.md)}")


if __name__ == "__main__":
    main()
