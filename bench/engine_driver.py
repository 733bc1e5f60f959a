"""Child process of `bench/bench_engine.py` that measures the engine through the Python API.

    python -m bench.engine_driver trace TRAIN OUT.json --algorithm A --criterion C
        --max-pattern-size L --min-support M --rounds T
    python -m bench.engine_driver decide TEST MODEL OUT.json
    python -m bench.engine_driver classify-split TEST MODEL OUT.json

`trace` learns like `python -m spacy_treeboost learn` does (same reader, same
parameters, `start` then `boost`) and writes a summary of `clf.trace_`: the mean
number of search-space nodes visited per round, the CPU seconds of the rounds,
and the same summary figures the CLI prints, so the caller can check that both
runs learned the same rules.

`classify-split` runs the loop of `python -m spacy_treeboost classify` (batches
read by `iter_bact` with the model's label vocabulary, scored, written, here to
/dev/null) and times the reading apart from the rest with
`time.process_time()`; the share of reading is taken of the whole process's
CPU (imports included), from `resource.getrusage` at the end.

`decide` loads a model file written by the CLI, reads the test file and times
`decision_function` alone with `time.process_time()`: once cold (the first call
also compiles the rule matcher, as it does in any fresh process) and once warm.
"""
import argparse
import json
import statistics
import time
from pathlib import Path



def cmd_trace(a: argparse.Namespace) -> dict:
    from spacy_treeboost.learning.learner import TreeBoostClassifier
    from spacy_treeboost.trees.bact import read_bact

    t0 = time.process_time()
    forest, classes = read_bact(a.train)
    t_read = time.process_time() - t0
    clf = TreeBoostClassifier(
        a.algorithm, criterion=a.criterion, n_rounds=a.rounds, max_pattern_size=a.max_pattern_size,
        min_support=a.min_support)
    t0 = time.process_time()
    clf.start(forest, classes)
    t_start = time.process_time() - t0
    del forest
    t0 = time.process_time()
    clf.boost(a.rounds)
    t_boost = time.process_time() - t0
    trace = clf.trace_
    visited = [int(e["nodes_visited"]) for e in trace]
    round_cpu = [float(e["cpu_seconds"]) for e in trace]
    last = trace[-1] if trace else {}
    return {
        "mode": "trace",
        "rounds": clf.n_rounds_,
        "trace_entries": len(trace),
        "nodes_visited_mean": statistics.fmean(visited) if visited else None,
        "nodes_visited_median": statistics.median(visited) if visited else None,
        "nodes_visited_max": max(visited) if visited else None,
        "nodes_visited_first": visited[0] if visited else None,
        "nodes_visited_total": sum(visited),
        "round_cpu_seconds_sum": sum(round_cpu),
        "patterns_cached_end": int(last.get("patterns_cached", 0)) if last else None,
        "read_cpu_seconds": t_read,
        "start_cpu_seconds": t_start,
        "boost_cpu_seconds": t_boost,
        "distinct_subtrees": clf.rules_.n_patterns,
        "training_error": last.get("error"),
        "loss": last.get("loss"),
    }


def cmd_decide(a: argparse.Namespace) -> dict:
    import srsly

    from spacy_treeboost.learning.classifier_files import classifier_from_dict
    from spacy_treeboost.trees.bact import read_bact

    clf = classifier_from_dict(srsly.msgpack_loads(Path(a.model).read_bytes()))
    forest, gold = read_bact(a.test)
    t0 = time.process_time()
    F = clf.decision_function(forest)
    cold = time.process_time() - t0
    t0 = time.process_time()
    clf.decision_function(forest)
    warm = time.process_time() - t0
    pred = clf.predict(forest)
    correct = sum(str(p) == str(g) for p, g in zip(pred, gold))
    return {
        "mode": "decide",
        "n_docs": len(forest),
        "n_nodes": int(forest.n_nodes),
        "n_rules": len(clf.rules_),
        "decision_function_cpu_seconds": cold,
        "decision_function_warm_cpu_seconds": warm,
        "accuracy": correct / len(pred) if len(pred) else None,
        "correct": correct,
        "margin_sum": float(F.sum()),
    }


def cmd_classify_split(a: argparse.Namespace) -> dict:
    import os
    import resource

    import srsly

    from spacy_treeboost.cli.bact import CLASSIFY_BATCH
    from spacy_treeboost.learning.classifier_files import classifier_from_dict
    from spacy_treeboost.trees import LabelVocab, encode_label, iter_bact

    clf = classifier_from_dict(srsly.msgpack_loads(Path(a.model).read_bytes()))
    batches = iter_bact(a.test, LabelVocab(clf.rules_.label_strings), add_labels=False, batch_size=CLASSIFY_BATCH)
    read = score = 0.0
    n_docs = 0
    with open(os.devnull, "w", encoding="utf-8") as out:
        while True:
            t0 = time.process_time()
            batch = next(batches, None)
            read += time.process_time() - t0
            if batch is None:
                break
            t0 = time.process_time()
            forest, _ = batch
            F = clf.decision_function(forest)
            pred = clf.predict_from_margins(F)
            out.write("".join(f"{encode_label(str(p))} {(F[i] if F.ndim == 1 else F[i].max()):.6f}\n"
                              for i, p in enumerate(pred)))
            n_docs += len(pred)
            score += time.process_time() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    total = ru.ru_utime + ru.ru_stime
    return {"mode": "classify-split", "n_docs": n_docs, "read_cpu_seconds": read, "score_cpu_seconds": score,
            "process_cpu_seconds": total, "read_share": read / total if total else None,
            "maxrss_kib": ru.ru_maxrss}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="mode", required=True)
    t = sub.add_parser("trace")
    t.add_argument("train")
    t.add_argument("out")
    t.add_argument("--algorithm", default="frequency")
    t.add_argument("--criterion", default="iwakura")
    t.add_argument("--max-pattern-size", type=int, default=3)
    t.add_argument("--min-support", type=int, default=1)
    t.add_argument("--rounds", type=int, default=100)
    d = sub.add_parser("decide")
    d.add_argument("test")
    d.add_argument("model")
    d.add_argument("out")
    c = sub.add_parser("classify-split")
    c.add_argument("test")
    c.add_argument("model")
    c.add_argument("out")
    a = p.parse_args()
    result = {"trace": cmd_trace, "decide": cmd_decide, "classify-split": cmd_classify_split}[a.mode](a)
    Path(a.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
