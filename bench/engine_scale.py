"""Scale sections of the engine benchmark (`bench/bench_engine.py`): cost growth and classify throughput.

Cost growth: `python -m spacy_treeboost learn` (frequency, iwakura, size 3,
min support 1, 200 rounds) on the first 2k, 8k, 32k and 100k training documents
of one synthetic set (the shared generator, 100,000 training and 20,000 test
documents, seed 13); CPU seconds and peak RSS of each process, and the fitted
exponents of CPU ~ n^k and RSS ~ n^k (least squares over log-log points, and
between neighbouring sizes).

Classify throughput: `python -m spacy_treeboost classify` with the 2k model on
the first 1,000 and 20,000 test documents (CPU, peak RSS), and the share of that
CPU spent reading, from `bench/engine_driver.py classify-split` (the
same loop, reading timed apart).
"""
import json
import math
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Optional, Sequence

GROWTH_DOCS = (2000, 8000, 32000, 100000)
GROWTH_ROUNDS = 200
CLASSIFY_DOCS = (1000, 20000)
SCALE_SYNTH = {"n_train": 100000, "n_test": 20000, "seed": 13}
CACHE_MB = 8192
TARGETS = {"growth_cpu_exponent": 1.0, "rss_100k_gib": 1.5, "read_share": 0.30, "classify_rss_ratio": 0.10,
           "cpu_vs_svm": 0.5}


def _prefix(src: Path, dest: Path, n: int) -> None:
    with open(src, "rb") as f, open(dest, "wb") as out:
        for k, line in enumerate(f):
            if k == n:
                break
            out.write(line)


def prepare(args, be: ModuleType, out_dir: Path) -> Dict[str, Any]:
    """Generate the scale workload once (reused while the generator and its arguments are the same)."""
    gen = Path(args.synth_generator)
    gen = gen if gen.is_absolute() else (be.ROOT / gen).resolve()
    data = out_dir / "scale" / "synth"
    argv = [sys.executable, str(gen), "--out-dir", str(data), "--n-train", str(SCALE_SYNTH["n_train"]),
            "--n-test", str(SCALE_SYNTH["n_test"]), "--seed", str(SCALE_SYNTH["seed"])]
    stamp = data / "stamp.json"
    want = {"generator_sha256": be.sha256(gen)[:16], "args": argv[2:]}
    if not (stamp.exists() and json.loads(stamp.read_text(encoding="utf-8")) == want
            and (data / "train.tree").exists()):
        be.log(f"generating the scale workload: {shlex.join(argv)}")
        run = be.run_child(argv, out_dir / "logs" / "scale_generate", args.timeout)
        if not be.ok(run):
            raise SystemExit(f"error: the workload generator failed ({be.describe_failure(run)})")
        stamp.write_text(json.dumps(want) + "\n", encoding="utf-8")
    files = {}
    for n in GROWTH_DOCS:
        files[f"train_{n}"] = data / f"train_{n}.tree"
        _prefix(data / "train.tree", files[f"train_{n}"], n)
    for n in CLASSIFY_DOCS:
        files[f"test_{n}"] = data / f"test_{n}.tree"
        _prefix(data / "test.tree", files[f"test_{n}"], n)
    return {"generator": str(gen), **want, "files": {k: str(v) for k, v in files.items()}}


def fit_exponent(ns: Sequence[float], ys: Sequence[float]) -> Optional[float]:
    """Least-squares slope of log y against log n."""
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys) if y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)


def growth(args, be: ModuleType, scale: Dict[str, Any], out_dir: Path) -> List[Dict[str, Any]]:
    """Every size `args.repeats` times, the sizes taken in turn (2k, 8k, 32k, 100k, 2k, ...), so that a machine
    whose speed drifts during the run slows every size alike instead of the last ones measured."""
    models = {n: out_dir / "models" / f"scale_growth_{n}.model" for n in GROWTH_DOCS}
    argvs, runs = {}, {n: [] for n in GROWTH_DOCS}
    for n in GROWTH_DOCS:
        models[n].parent.mkdir(parents=True, exist_ok=True)
        argvs[n] = [sys.executable, "-m", "spacy_treeboost", "learn", scale["files"][f"train_{n}"], str(models[n]),
                    "--algorithm", "frequency", "--criterion", "iwakura", "--max-pattern-size", "3", "--min-support",
                    "1", "--rounds", str(GROWTH_ROUNDS), "--max-cache-mb", str(CACHE_MB)]
    for r in range(args.repeats):
        for n in GROWTH_DOCS:
            if runs[n] and not be.ok(runs[n][-1]):
                continue
            run = be.run_child(argvs[n], out_dir / "logs" / f"scale_growth_{n}" / f"learn{r}", args.timeout)
            runs[n].append(run)
            be.log(f"  growth {n}: {run['cpu_seconds']:.2f} CPU s, {run['maxrss_kib'] / 1024:.1f} MiB"
                   + ("" if be.ok(run) else f" ({be.describe_failure(run)})"))
    rows = []
    for n in GROWTH_DOCS:
        good = [x for x in runs[n] if be.ok(x)]
        complete = len(good) == len(runs[n])
        rows.append({"n_docs": n, "rounds": GROWTH_ROUNDS, "repeats": len(runs[n]), "runs": runs[n],
                     "command": shlex.join(["python"] + [str(a) for a in argvs[n][1:]]).replace(str(be.ROOT) + "/", ""),
                     "cpu_seconds": be.median([x["cpu_seconds"] for x in good]) if complete else None,
                     "maxrss_kib": be.median([x["maxrss_kib"] for x in good]) if complete else None,
                     "model": str(models[n]), "error": None if complete else be.describe_failure(runs[n][-1])})
    return rows


def classify(args, be: ModuleType, scale: Dict[str, Any], model: Path, out_dir: Path) -> List[Dict[str, Any]]:
    rows = []
    for n in CLASSIFY_DOCS:
        test = scale["files"][f"test_{n}"]
        logs = out_dir / "logs" / f"scale_classify_{n}"
        argv = [sys.executable, "-m", "spacy_treeboost", "classify", test, str(model)]
        runs = [be.run_child(argv, logs / f"classify{r}", args.timeout) for r in range(args.repeats)]
        split_json = logs / "split.json"
        split_argv = [sys.executable, *be.DRIVER, "classify-split", test, str(model), str(split_json)]
        splits = []
        for r in range(args.repeats):
            run = be.run_child(split_argv, logs / f"split{r}", args.timeout)
            if be.ok(run):
                splits.append(json.loads(split_json.read_text(encoding="utf-8")))
        good = [x for x in runs if be.ok(x)]
        row = {"n_docs": n, "runs": runs, "command": shlex.join(["python"] + [str(a) for a in argv[1:]]).replace(
                   str(be.ROOT) + "/", ""),
               "cpu_seconds": be.median([x["cpu_seconds"] for x in good]),
               "maxrss_kib": be.median([x["maxrss_kib"] for x in good]),
               "splits": splits,
               "read_cpu_seconds": be.median([s["read_cpu_seconds"] for s in splits]),
               "score_cpu_seconds": be.median([s["score_cpu_seconds"] for s in splits]),
               "split_process_cpu_seconds": be.median([s["process_cpu_seconds"] for s in splits]),
               "read_share": be.median([s["read_share"] for s in splits])}
        be.log(f"  classify {n}: {row['cpu_seconds']} CPU s, read share {row['read_share']}")
        rows.append(row)
    return rows


def run(args, be: ModuleType, results: Dict[str, Any], checkpoint) -> None:
    scale = prepare(args, be, args.out_dir)
    results["scale"] = {"workload": scale, "growth": [], "classify": []}
    checkpoint()
    results["scale"]["growth"] = growth(args, be, scale, args.out_dir)
    checkpoint()
    model = Path(results["scale"]["growth"][0]["model"])
    if results["scale"]["growth"][0]["cpu_seconds"] is not None:
        results["scale"]["classify"] = classify(args, be, scale, model, args.out_dir)
    checkpoint()


def acceptance(results: Dict[str, Any], be: ModuleType) -> List[Dict[str, Any]]:
    checks = []
    target = next((r for r in results["treeboost"] if all(r.get(k) == v for k, v in be.TARGET_CONFIG.items())), None)
    svm = be.svm_for(results, "synth", 3)
    if target and svm and target.get("learn_cpu_seconds"):
        ratio = target["learn_cpu_seconds"] / svm["cpu_seconds"]
        checks.append({"check": f"learn 2k synthetic, frequency, size 3, {results['settings']['rounds']:,} rounds: CPU / "
                                "LinearSVC 1-3-gram CPU (same run)", "target": "≤ 0.5",
                       "measured": f"{target['learn_cpu_seconds']:.2f} / {svm['cpu_seconds']:.2f} s = {ratio:.2f}",
                       "met": ratio <= TARGETS["cpu_vs_svm"]})
    sc = results.get("scale") or {}
    rows = [r for r in sc.get("growth", []) if r.get("cpu_seconds")]
    if len(rows) >= 2:
        k = fit_exponent([r["n_docs"] for r in rows], [r["cpu_seconds"] for r in rows])
        span = f"{rows[0]['n_docs']:,} → {rows[-1]['n_docs']:,}"
        checks.append({"check": f"cost growth {span} documents, {GROWTH_ROUNDS} rounds: CPU exponent (least squares)",
                       "target": "≤ 1.0", "measured": f"{k:.2f}", "met": k <= TARGETS["growth_cpu_exponent"]})
    big = next((r for r in sc.get("growth", []) if r["n_docs"] == 100000), None)
    if big is not None:
        v = big.get("maxrss_kib")
        checks.append({"check": "peak RSS of learn at 100,000 documents", "target": "≤ 1.5 GiB",
                       "measured": f"{v / 2 ** 20:.2f} GiB" if v else f"failed: {big.get('error')}",
                       "met": None if not v else v <= TARGETS["rss_100k_gib"] * 2 ** 20})
    cl = {r["n_docs"]: r for r in sc.get("classify", [])}
    if 20000 in cl and cl[20000].get("read_share") is not None:
        s = cl[20000]["read_share"]
        checks.append({"check": "classify 20,000 documents: share of its CPU spent reading", "target": "≤ 30 %",
                       "measured": f"{100 * s:.1f} %", "met": s <= TARGETS["read_share"]})
    if 1000 in cl and 20000 in cl and cl[1000].get("maxrss_kib") and cl[20000].get("maxrss_kib"):
        a, b = cl[1000]["maxrss_kib"], cl[20000]["maxrss_kib"]
        checks.append({"check": "classify peak RSS, 20,000 vs 1,000 documents", "target": "within ±10 %",
                       "measured": f"{b / 1024:.1f} vs {a / 1024:.1f} MiB ({100 * (b / a - 1):+.1f} %)",
                       "met": abs(b / a - 1) <= TARGETS["classify_rss_ratio"]})
    return checks


def render(results: Dict[str, Any], be: ModuleType) -> List[str]:
    sc = results.get("scale")
    if not sc:
        return []
    fmt, mib = be.fmt, be.mib
    lines = ["## Cost growth with the number of training documents", "",
             f"Synthetic workload ({SCALE_SYNTH['n_train']:,} training documents, seed {SCALE_SYNTH['seed']}; each size "
             f"is the first n documents), `learn --algorithm frequency --max-pattern-size 3 --min-support 1 --rounds "
             f"{GROWTH_ROUNDS} --max-cache-mb {CACHE_MB}`; whole-process CPU and peak RSS, medians of the runs "
             "counted in the table, the sizes taken in turn (2k, 8k, 32k, 100k, 2k, ...) so that a change in the "
             "machine's speed during the run reaches every size.", "",
             "| documents | runs | learn CPU s | peak RSS MiB | RSS per document KiB | CPU exponent from the previous size | "
             "RSS exponent from the previous size |", "|---|---|---|---|---|---|---|"]
    if max(GROWTH_DOCS) < 100000:
        lines[-2:-2] = [f"The largest size is {max(GROWTH_DOCS):,} documents: the 100,000-document point (about five "
                        "minutes of CPU to learn, and a larger generated set) is not part of this run.", ""]
    prev = None
    for r in sc.get("growth", []):
        if r.get("cpu_seconds") is None:
            lines.append(f"| {r['n_docs']:,} | {r['repeats']} | failed: {r.get('error')} | | | | |")
            continue
        kc = kr = None
        if prev:
            step = math.log(r["n_docs"] / prev["n_docs"])
            kc = math.log(r["cpu_seconds"] / prev["cpu_seconds"]) / step
            kr = math.log(r["maxrss_kib"] / prev["maxrss_kib"]) / step
        lines.append(f"| {r['n_docs']:,} | {r['repeats']} | {fmt(r['cpu_seconds'])} | {fmt(mib(r['maxrss_kib']), '.1f')} | "
                     f"{fmt(r['maxrss_kib'] / r['n_docs'], '.1f')} | {fmt(kc)} | {fmt(kr)} |")
        prev = r
    good = [r for r in sc.get("growth", []) if r.get("cpu_seconds")]
    if len(good) >= 2:
        ns = [r["n_docs"] for r in good]
        lines += ["", f"Fitted exponents (least squares over {len(good)} sizes): CPU ∝ n^"
                  f"{fit_exponent(ns, [r['cpu_seconds'] for r in good]):.2f}, peak RSS ∝ n^"
                  f"{fit_exponent(ns, [r['maxrss_kib'] for r in good]):.2f}."]
    rerun = sc.get("classify_rerun")
    rerun_note = "" if not rerun else (
        f" These rows were measured again on {rerun['started']} UTC at commit {rerun['commit'][:7]} "
        f"(`{rerun['command']}`, load average {rerun['loadavg_start']} at the start), after the rest of this page; "
        "the rows they replaced: " + "; ".join(
            f"{r['n_docs']:,} documents {fmt(r.get('read_share') and 100 * r['read_share'], '.1f')} %"
            for r in rerun["previous"]) + ".")
    lines += ["", "## Classify throughput", "",
              f"`classify` with the {GROWTH_DOCS[0]:,}-document model of the table above on the first n test documents "
              "of the same set. CPU and peak RSS of the `classify` process (medians); reading: CPU of `iter_bact` "
              "in the same loop (`bench/engine_driver.py classify-split`), as a share of that process's whole "
              "CPU (imports included)." + rerun_note, "",
              "| documents | classify CPU s | peak RSS MiB | reading CPU s | scoring and writing CPU s | "
              "reading share |", "|---|---|---|---|---|---|"]
    for r in sc.get("classify", []):
        lines.append(f"| {r['n_docs']:,} | {fmt(r.get('cpu_seconds'))} | {fmt(mib(r.get('maxrss_kib')), '.1f')} | "
                     f"{fmt(r.get('read_cpu_seconds'))} | {fmt(r.get('score_cpu_seconds'))} | "
                     f"{fmt(r.get('read_share') and 100 * r['read_share'], '.1f')} % |")
    lines.append("")
    return lines
