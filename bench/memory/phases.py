"""Reproduce `python -m spacy_treeboost learn` (frequency, iwakura, L3, min_support 1) phase by phase and record
RSS (VmRSS), the peak within each phase (VmHWM after resetting it through /proc/self/clear_refs), glibc heap
statistics (mallinfo2) and the sizes of the main data structures.

usage (from the repository root, kernels built in place): nice python -m bench.memory.phases TRAIN OUT.json [--rounds 200] [--min-support 1]
       [--max-cache-mb 8192] [--every 10]
"""
import argparse, ctypes, json, sys, time, gc


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("train"); p.add_argument("out")
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--min-support", type=int, default=1)
    p.add_argument("--max-pattern-size", type=int, default=3)
    p.add_argument("--max-cache-mb", type=int, default=8192)
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--census-step", type=int, default=0, help="0: no census; k: every k-th pattern")
    return p.parse_args(argv)


class MI2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MI2


def mall():
    m = libc.mallinfo2()
    return {"heap_in_use": m.uordblks, "heap_free": m.fordblks, "mmapped": m.hblkhd, "arena": m.arena}


def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[k] = int(v.split()[0]) * 1024
    return out


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


rows = []


def mark(phase, **extra):
    s = status()
    row = {"phase": phase, "t": time.process_time(), **s, **mall(), **extra}
    rows.append(row)
    print(f"{phase:32s} RSS {s['VmRSS']/2**20:8.1f} MiB  peak-in-phase {s['VmHWM']/2**20:8.1f} MiB  "
          f"heap {row['heap_in_use']/2**20:8.1f} MiB  free-held {row['heap_free']/2**20:7.1f} mmapped {row['mmapped']/2**20:7.1f}",
          flush=True)
    reset_peak()


def main(argv=None) -> None:
    a = parse_args(argv)
    import os
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import spacy_treeboost
    assert spacy_treeboost.__file__.startswith(ROOT), f"not this checkout's code: {spacy_treeboost.__file__}"
    from spacy_treeboost.learning.learner import TreeBoostClassifier
    from spacy_treeboost.trees.bact import read_bact
    import numpy
    reset_peak()
    mark("imports", file=spacy_treeboost.__file__)

    forest, classes = read_bact(a.train)
    fsz = {"n_docs": len(forest), "n_nodes": forest.n_nodes, "n_labels": len(forest.vocab),
           "labels_bytes": forest.labels.nbytes, "parents_bytes": forest.parents.nbytes,
           "depths_bytes": 0 if forest._depths is None else forest._depths.nbytes, "offsets_bytes": forest.offsets.nbytes,
           "vocab_py_bytes_est": sum(sys.getsizeof(s) for s in forest.vocab._strings) + sys.getsizeof(forest.vocab._strings)
           + sys.getsizeof(forest.vocab._ids),
           "classes_py_bytes_est": sys.getsizeof(classes) + 8 * 0}
    mark("read_bact", forest=fsz)

    clf = TreeBoostClassifier("frequency", criterion="iwakura", n_rounds=a.rounds, max_pattern_size=a.max_pattern_size,
                              min_support=a.min_support, max_cache_mb=a.max_cache_mb)
    clf.start(forest, classes)
    space = clf.space_.workers.objects[0].space
    mark("start", space=space.memory_report(), cache_bytes=space.cache_bytes())
    del forest
    gc.collect()
    mark("del forest (CLI does this)")

    def cb(entry):
        r = entry["round"]
        if r % a.every == 0 or r == 1:
            mark(f"boost round {r}", space=space.memory_report(), cache_bytes=space.cache_bytes(),
                 nodes_visited=entry["nodes_visited"])

    clf.boost(a.rounds, callback=cb)
    mark("boost end", space=space.memory_report(), cache_bytes=space.cache_bytes())
    from spacy_treeboost.learning.classifier_files import classifier_to_bytes
    clf.space_.close()
    mark("space closed")
    b = classifier_to_bytes(clf)
    mark("model bytes", model_bytes=len(b))
    census = None
    if a.census_step:
        from collections import Counter
        by = Counter(); docs_by = Counter(); single_by = Counter(); cnt_hist = Counter()
        for i in range(0, space.n_patterns, a.census_step):
            sz = space.pattern_size(i)
            d, c = space.pattern_docs(i)
            by[sz] += 1; docs_by[sz] += len(d); single_by[sz] += len(d) == 1
            if len(c):
                cnt_hist["1" if c.max() == 1 else "2-255" if c.max() < 256 else ">=256"] += 1
        # detail: single-document patterns with count 1, occurrences (sum of counts), expanded parents (code prefixes)
        det = Counter(); prefixes = set()
        for i in range(0, space.n_patterns, a.census_step):
            sz = space.pattern_size(i)
            d, c = space.pattern_docs(i)
            det[f"s{sz}_single_count1"] += int(len(d) == 1 and c[0] == 1)
            det[f"s{sz}_all_counts_1"] += int(len(c) > 0 and c.max() == 1)
            det[f"s{sz}_sum_counts"] += int(c.sum())
            if sz >= 2 and a.census_step == 1:
                prefixes.add(space.pattern_code(i)[:-1])
        exp = Counter(len(p) for p in prefixes)
        census = {"step": a.census_step, "detail": dict(det), "expanded_with_children_by_size": dict(exp), "patterns_by_size": dict(by), "doc_entries_by_size": dict(docs_by),
                  "single_doc_by_size": dict(single_by), "max_count_hist": dict(cnt_hist)}
        print(census)
    import resource
    final = {"ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "rounds": clf.n_rounds_,
             "distinct": len(clf.rules_.patterns), "loss": clf.trace_[-1]["loss"], "error": clf.trace_[-1]["error"],
             "rules_sha": __import__("hashlib").sha256(b).hexdigest(), "census": census}
    print(final)
    from bench.harness import relative_paths

    json.dump(relative_paths({"args": dict(vars(a), out=os.path.basename(a.out)), "rows": rows, "final": final}),
              open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
