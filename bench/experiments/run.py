"""Run the experiments and regenerate docs/results.json, docs/results.md and docs/results_*.png.

    python -m bench.experiments.run [--quick] [--jobs 2] [--data ../shared/data] [--corpora movie_reviews r8 ...]
    python -m bench.experiments.run --report-only      # rebuild docs/results.md and the plots from the JSON

Every corpus is written into docs/results.json as soon as it is complete, labeled with the
run that produced it ("quick" or "full"), so one file can hold corpora from different runs
and the report says which is which. A smoke run (--profile smoke) writes its report into
bench/_out/experiments/smoke/ instead of docs/. Each system's result on each split is also cached under
bench/_out/experiments/runs/, so an interrupted run resumes where it stopped.
"""
import argparse
import datetime
import hashlib
import json
import os
import pickle
import platform
import subprocess
import sys
import time
from multiprocessing import connection as mp_connection
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy

from . import config as cfgmod
from .data import CORPUS_TITLES, OUT, ROOT, build_corpus, load_source, read_source, text_of
from .rules import pattern_support, rule_examples
from .stats import correctness, mcnemar, mean_std, metrics
from .systems import ChildFit, FoldData, encode_truth, fit_system, system_list

DOCS = ROOT / "docs"
RESULTS = DOCS / "results.json"
CORPUS_ORDER = ("movie_reviews", "sentence_polarity", "r8", "r10")
ALL_CORPORA = CORPUS_ORDER + ("embedded_reviews",)


def log(msg: str) -> None:
    print(f"[{datetime.datetime.now():%H:%M:%S}] {msg}", flush=True)


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cfg_hash(cfg: Dict[str, Any]) -> str:
    return hashlib.sha1(json.dumps(cfg, sort_keys=True).encode()).hexdigest()[:8]


def jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, numpy.ndarray):
        return x.tolist()
    if isinstance(x, numpy.generic):
        return x.item()
    if isinstance(x, float) and not numpy.isfinite(x):
        return None
    return x


def fold_data(corpus, split, sd, texts: List[str]) -> FoldData:
    idx = {k: corpus.source_index[getattr(split, k)] for k in ("train", "dev", "test")}
    pos = {k: getattr(split, k) for k in ("train", "dev", "test")}
    fd = FoldData(
        classes=corpus.classes, multilabel=corpus.multilabel, positive=corpus.positive,
        y_train=[corpus.labels[i] for i in pos["train"]],
        truth={k: encode_truth([corpus.labels[i] for i in pos[k]], corpus.classes, corpus.multilabel)
               for k in ("dev", "test")},
        chain={k: sd.chain.subset(idx[k]) for k in idx},
        tree={k: sd.tree.subset(idx[k]) for k in idx} if sd.tree is not None else {},
        tokens={k: [sd.tokens[i] for i in idx[k]] for k in idx},
        texts={k: [texts[i] for i in idx[k]] for k in idx},
    )
    return fd


def load_corpus(name: str, cfg: Dict[str, Any], data: Path):
    """The corpus (documents, labels, splits) of one task under a profile's settings, and its texts."""
    records = read_source(data, cfg_source(name))
    corpus = build_corpus(name, records, test_folds=cfg.get("test_folds", range(10)), limit=cfg.get("limit", 0),
                          test_limit=cfg.get("test_limit", 0))
    return corpus, [text_of(corpus.source, r) for r in records]


def run_corpus(name: str, cfg: Dict[str, Any], data: Path, profile: str, cached_only: bool = False,
               jobs: int = 1) -> Optional[Dict[str, Any]]:
    t_start = time.time()
    cpu_start = time.process_time()
    corpus, texts = load_corpus(name, cfg, data)
    log(f"{name}: {len(corpus)} documents, {len(corpus.splits)} split(s), classes {corpus.classes}")
    sd = load_source(data, corpus.source, trees=cfg["trees"], log=log)
    systems = system_list(trees=sd.tree is not None)
    run_dir = OUT / "runs" / profile / f"{name}_{cfg_hash(cfg)}"
    run_dir.mkdir(parents=True, exist_ok=True)
    per_split: List[Dict[str, Any]] = []
    preds: Dict[str, List[numpy.ndarray]] = {s["name"]: [] for s in systems}
    size_preds: Dict[str, Dict[str, List[numpy.ndarray]]] = {}
    truths: List[numpy.ndarray] = []
    kept_rules: Dict[str, Any] = {}
    def cache_path(split, sname: str) -> Path:
        return run_dir / f"{split.name}__{sname.replace(' ', '_').replace('/', '_')}.pkl"

    splits = corpus.splits
    if cached_only:
        # only the splits whose every system is already in the cache, in order
        done = 0
        while done < len(splits) and all(cache_path(splits[done], s["name"]).is_file() for s in systems):
            done += 1
        splits = splits[:done]
        if not splits:
            log(f"{name}: no complete split in {run_dir}")
            return None
        log(f"{name}: summarizing the {done} complete split(s) of {len(corpus.splits)} from the cache")
    all_wall = 0.0   # all fits, cached ones included, each at the wall time it took
    t_train = time.time()
    if not cached_only:
        train_missing(corpus, sd, texts, systems, cfg, cache_path, jobs)
    t_train = time.time() - t_train
    for si, split in enumerate(splits):
        fd = fold_data(corpus, split, sd, texts)
        truths.append(fd.truth["test"])
        entry = {"split": split.name, "n_train": len(split.train), "n_dev": len(split.dev), "n_test": len(split.test),
                 "systems": {}}
        for system in systems:
            sname = system["name"]
            cache = cache_path(split, sname)
            with open(cache, "rb") as f:
                res = pickle.load(f)
            all_wall += res.get("wall_seconds", 0.0) / res.get("jobs", 1)
            test = metrics(fd.truth["test"], res["test_pred"], corpus.classes, corpus.multilabel)
            preds[sname].append(numpy.asarray(res["test_pred"]))
            for size, p in res.get("test_pred_per_size", {}).items():
                size_preds.setdefault(sname, {}).setdefault(size, []).append(numpy.asarray(p))
            if "rules" in res:
                forest = (fd.tree if system.get("representation") == "Tree" else fd.chain)["train"]
                head = res["rules"]["heads"][0]
                in_class = [head in v if corpus.multilabel else v == head for v in fd.y_train]
                kept_rules[sname] = (res["rules"], pattern_support(res["rules"], forest, in_class))
            row = {k: v for k, v in res.items() if k not in ("test_pred", "test_pred_per_size", "rules")}
            row["test"] = test
            if "per_size" in row:
                for size, ps in row["per_size"].items():
                    p = res["test_pred_per_size"].get(size)
                    ps["test_accuracy"] = (float(numpy.mean(correctness(fd.truth["test"], p)))
                                           if p is not None else None)
                    ps["test_score"] = (metrics(fd.truth["test"], p, corpus.classes, corpus.multilabel)
                                        ["micro_f1" if corpus.multilabel else "accuracy"] if p is not None else None)
            entry["systems"][sname] = row
            sel = ", ".join(f"{k}={v}" for k, v in res["selected"].items())
            log(f"  {split.name} {sname:32s} dev {res['dev']:.4f} test acc {test['accuracy']:.4f} "
                f"microF1 {test['micro_f1']:.4f} [{sel}] cpu {res['cpu_fit']:.1f}/{res['cpu_total']:.1f} s "
                f"rss+{res['rss_growth_mb']:.0f} MB")
        per_split.append(entry)
    cpu = time.process_time() - cpu_start + sum(row.get("cpu_process", 0.0) for e in per_split
                                                  for row in e["systems"].values())
    # wall time: this pass, with every fit counted at the wall time it took when it ran, divided by
    # the number of fits that ran at once then
    wall = time.time() - t_start - t_train + all_wall
    res = summarize(name, corpus, cfg, profile, systems, per_split, preds, size_preds, truths, kept_rules,
                    wall, cpu)
    if len(splits) < len(corpus.splits):
        res["partial"] = f"{len(splits)} of {len(corpus.splits)} splits ({', '.join(s.name for s in splits)})"
    return res


def train_missing(corpus, sd, texts: List[str], systems, cfg: Dict[str, Any], cache_path, jobs: int,
                  fit=fit_system, keep_rules=cfgmod.RULE_EXAMPLE_SYSTEMS, make_fold=fold_data) -> None:
    """Train every (split, system) pair that is not in the cache, `jobs` child processes at once.

    fit(fold_data, system, cfg, keep) trains one system; `keep` is true for the
    first split of the systems in `keep_rules` (their rule lists are kept). make_fold(corpus, split, sd,
    texts) builds a split's FoldData.
    """
    todo = [(si, split, system) for si, split in enumerate(corpus.splits) for system in systems
            if not cache_path(split, system["name"]).is_file()]
    if not todo:
        return
    log(f"training {len(todo)} fit(s), {jobs} at a time")
    running: Dict[Any, Any] = {}
    fds: Dict[int, FoldData] = {}
    while todo or running:
        while todo and len(running) < jobs:
            si, split, system = todo.pop(0)
            if si not in fds:
                fds = {si: make_fold(corpus, split, sd, texts)}   # children hold their own copies
            keep = si == 0 and system["name"] in keep_rules
            child = ChildFit(fit, fds[si], system, cfg, keep)
            running[child.conn] = (child, split, system["name"])
        for conn in mp_connection.wait(list(running)):
            child, split, sname = running.pop(conn)
            res = child.result()
            res["jobs"] = jobs
            save_fit(cache_path(split, sname), res)
            sel = ", ".join(f"{k}={v}" for k, v in res["selected"].items())
            log(f"  trained {split.name} {sname:32s} dev {res['dev']:.4f} [{sel}] "
                f"cpu {res['cpu_fit']:.1f}/{res['cpu_total']:.1f} s, wall {res['wall_seconds']:.0f} s")


def save_fit(path: Path, res: Dict[str, Any]) -> None:
    """Cache one fit's result, atomically: as JSON when the path ends in .json (plain data, arrays tagged with
    their dtype, floats exact; such a cache can be committed to resume a run elsewhere), else pickled."""
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    if path.suffix == ".json":
        tmp.write_text(json.dumps(res, default=_encode_array, separators=(",", ":")) + "\n", encoding="utf8")
    else:
        with open(tmp, "wb") as f:
            pickle.dump(res, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def load_fit(path: Path) -> Dict[str, Any]:
    """A fit's result cached by `save_fit`."""
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf8"), object_hook=_decode_array)
    with open(path, "rb") as f:
        return pickle.load(f)


def _encode_array(x: Any) -> Any:
    if isinstance(x, numpy.ndarray):
        return {"__ndarray__": x.tolist(), "dtype": x.dtype.str}
    if isinstance(x, numpy.generic):
        return x.item()
    raise TypeError(f"cannot cache a {type(x).__name__} as JSON")


def _decode_array(d: Dict[str, Any]) -> Any:
    return numpy.array(d["__ndarray__"], dtype=numpy.dtype(d["dtype"])) if "__ndarray__" in d else d


def cfg_source(name: str) -> str:
    from .data import CORPUS_SOURCE

    return CORPUS_SOURCE[name]


def summarize(name, corpus, cfg, profile, systems, per_split, preds, size_preds, truths, kept_rules, wall,
              cpu) -> Dict[str, Any]:
    truth = numpy.concatenate(truths)
    score_key = "micro_f1" if corpus.multilabel else "accuracy"
    summary: Dict[str, Any] = {}
    correct: Dict[str, numpy.ndarray] = {}
    for s in systems:
        sname = s["name"]
        pred = numpy.concatenate(preds[sname])
        correct[sname] = correctness(truth, pred)
        rows = [e["systems"][sname] for e in per_split]
        summary[sname] = {
            "family": s["family"], "representation": s.get("representation"), "algorithm": s.get("algorithm", s.get("peer")),
            "pooled": metrics(truth, pred, corpus.classes, corpus.multilabel),
            "accuracy": mean_std([r["test"]["accuracy"] for r in rows]),
            "score": mean_std([r["test"][score_key] for r in rows]),
            "dev": mean_std([r["dev"] for r in rows]),
            "cpu_fit": mean_std([r["cpu_fit"] for r in rows]),
            "cpu_total": mean_std([r["cpu_total"] for r in rows]),
            "rss_growth_mb": max(r["rss_growth_mb"] for r in rows),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rows),
            "selected": [r["selected"] for r in rows],
        }
        if "n_features" in rows[0]:
            summary[sname]["n_features"] = mean_std([r["n_features"] for r in rows])
        if s["family"] == "treeboost":
            summary[sname]["train_error_at_selected"] = mean_std([r["train_error"] for r in rows if r["train_error"] is not None])
            zero = [r["first_zero_error_round"] for r in rows if r["first_zero_error_round"] is not None]
            summary[sname]["first_zero_error_round"] = zero
            summary[sname]["n_patterns_used"] = mean_std([r.get("n_patterns_used", 0) for r in rows])
            # score against pattern size: each size at its own dev-chosen round (sizes that ran)
            by_size = {}
            for size, plist in size_preds.get(sname, {}).items():
                if len(plist) == len(per_split):
                    p = numpy.concatenate(plist)
                    by_size[size] = {
                        "dev": mean_std([e["systems"][sname]["per_size"][size]["dev"] for e in per_split]),
                        "test": metrics(truth, p, corpus.classes, corpus.multilabel)[score_key],
                        "rounds": [e["systems"][sname]["per_size"][size]["rounds"] for e in per_split],
                        "chosen": sum(1 for e in per_split if e["systems"][sname]["selected"]["size"] == int(size)),
                    }
            summary[sname]["by_size"] = by_size

    tests = []
    names = {s["name"] for s in systems}
    reps = [r for r in ("BOW", "N-gram", "Tree") if f"{r} +FQ" in names]
    for rep in reps:
        for a, b in ((f"{rep} +FQ", f"{rep} -FQ"), (f"{rep} +FQ(z)", f"{rep} -FQ"), (f"{rep} +FQ", f"{rep} BACT")):
            tests.append(dict(kind="+FQ vs -FQ" if b.endswith("-FQ") else "+FQ vs BACT", a=a, b=b,
                              **mcnemar(correct[a], correct[b])))
    for alg in ("+FQ", "+FQ(z)", "-FQ", "BACT"):
        for rep in ("N-gram", "Tree"):
            if f"{rep} {alg}" in names:
                tests.append(dict(kind=f"{rep} vs BOW", a=f"{rep} {alg}", b=f"BOW {alg}",
                                  **mcnemar(correct[f"{rep} {alg}"], correct[f"BOW {alg}"])))
        if f"Tree {alg}" in names:
            tests.append(dict(kind="Tree vs N-gram", a=f"Tree {alg}", b=f"N-gram {alg}",
                              **mcnemar(correct[f"Tree {alg}"], correct[f"N-gram {alg}"])))
    boost = [s["name"] for s in systems if s["family"] == "treeboost"]
    peers = [s["name"] for s in systems if s["family"] == "peer"]
    best_boost = max(boost, key=lambda n: summary[n]["score"]["mean"])
    best_vs = [dict(kind="best treeboost vs peer", a=best_boost, b=p, **mcnemar(correct[best_boost], correct[p]))
               for p in peers]
    examples = {}
    for sname, (rd, support) in kept_rules.items():
        examples[sname] = rule_examples(rd, 0, support)
        examples[sname]["split"] = per_split[0]["split"]
        examples[sname]["classes"] = corpus.classes
    return jsonable({
        "title": CORPUS_TITLES[name], "run": profile,
        "finished": datetime.datetime.now().isoformat(timespec="seconds"), "commit": _git_commit(),
        "wall_seconds": wall, "cpu_seconds": cpu, "settings": cfg, "classes": corpus.classes, "multilabel": corpus.multilabel,
        "positive": corpus.positive, "n_docs": len(corpus), "score_name": score_key,
        "splits": [{k: e[k] for k in ("split", "n_train", "n_dev", "n_test")} for e in per_split],
        "per_split": per_split, "summary": summary, "mcnemar": tests, "best_vs_peers": best_vs,
        "best_treeboost": best_boost, "rule_examples": examples,
    })


def load_results() -> Dict[str, Any]:
    if RESULTS.is_file():
        return json.loads(RESULTS.read_text(encoding="utf8"))
    return {"corpora": {}}


def save_results(results: Dict[str, Any]) -> None:
    DOCS.mkdir(exist_ok=True)
    tmp = RESULTS.with_suffix(".json.tmp")
    # compact: the per-split learning curves make an indented file several times larger
    tmp.write_text(json.dumps(results, separators=(",", ":")) + "\n", encoding="utf8")
    os.replace(tmp, RESULTS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the small run (under 10 minutes)")
    ap.add_argument("--profile", choices=sorted(cfgmod.PROFILES), default=None,
                    help="settings profile (default: full, or quick with --quick; smoke is the test's)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data", help="the shared data directory")
    ap.add_argument("--corpora", nargs="+", choices=ALL_CORPORA, default=None,
                    help="the corpora to run (default: every corpus of the profile)")
    ap.add_argument("--report-only", action="store_true", help="only rebuild docs/results.md and plots from the JSON")
    ap.add_argument("--no-plots", action="store_true", help="write docs/results.md without PNG plots")
    ap.add_argument("--cached-only", action="store_true",
                    help="train nothing: summarize the splits whose systems are all in the cache (marked partial)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="fits that run at once, each in its own process (default: the usable CPUs)")
    ap.add_argument("--results", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global RESULTS, DOCS
    if args.docs is not None:
        DOCS = args.docs
        RESULTS = DOCS / "results.json"
    from .report import render

    if args.report_only:
        render(load_results(), DOCS, plots=not args.no_plots)
        return 0
    profile = args.profile or ("quick" if args.quick else "full")
    if profile == "smoke" and args.docs is None:
        DOCS = OUT / "smoke"
        RESULTS = DOCS / "results.json"
    settings = cfgmod.PROFILES[profile]
    if args.corpora is None:
        args.corpora = [c for c in ALL_CORPORA if c in settings]
    results = load_results()
    results.setdefault("corpora", {})
    env = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()}
    for name in args.corpora:
        log(f"=== {name} ({profile} run)")
        res = run_corpus(name, settings[name], args.data, profile, cached_only=args.cached_only,
                         jobs=max(1, args.jobs))
        if res is None:
            continue
        # merge into the file as it is now: another run may have written other corpora meanwhile
        results = load_results()
        results.setdefault("corpora", {})[name] = res
        results["environment"] = env
        save_results(results)
        render(results, DOCS, plots=not args.no_plots)
        log(f"=== {name} done in {res['wall_seconds']:.0f} s; best treeboost {res['best_treeboost']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
