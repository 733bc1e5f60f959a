"""Dev-split comparison of subtree-linear settings (never looks at test folds).

    python -m bench.experiments.linear_dev movie_reviews --variants nb nb-sqh --sizes 3 [--tree]

Trains each variant on every split's training documents and scores it on the split's dev documents
(movie reviews and sentence polarity: fold k+1 for test fold k; Reuters: the 10 % dev part of ModApte
train). Each result is cached as one JSON line in bench/_out/experiments/linear_dev/<corpus>.jsonl; the
table printed at the end gives the mean dev score per variant and size.
"""
import argparse
import json
import time
from pathlib import Path
from typing import Any, Dict

import numpy

from .data import OUT, ROOT, load_source
from .linear import FULL, SOLVER, predict, combined_forest
from .run import fold_data, load_corpus, log
from .stats import selection_score

VARIANTS: Dict[str, Dict[str, Any]] = {
    "nb": dict(features="nb"),
    "nb-sqh": dict(features="nb", loss="squared_hinge"),
    "nb-views": dict(features="nb", separate_views=True),
    "nb-views-b.25": dict(features="nb", separate_views=True, nb_beta=0.25),
    "nb-views-sqh-b.25": dict(features="nb", separate_views=True, loss="squared_hinge", nb_beta=0.25),
    "nb-views-ms1": dict(features="nb", separate_views=True, min_support=1),
    "nb-views-ms1-b.25": dict(features="nb", separate_views=True, min_support=1, nb_beta=0.25),
    "nb-C100": dict(features="nb", Cs=(0.01, 0.03, 0.1, 0.25, 1.0, 3.0, 10.0, 30.0, 100.0)),
    "nb-b.25": dict(features="nb", nb_beta=0.25),
    "nb-sqh-b.25": dict(features="nb", loss="squared_hinge", nb_beta=0.25),
    "nb-ms1": dict(features="nb", min_support=1),
    "nb-ms1-b.25": dict(features="nb", min_support=1, nb_beta=0.25),
    "log1p": dict(features="log1p"),
    "tfidf": dict(features="tfidf"),
    "tfidf-sqh": dict(features="tfidf", loss="squared_hinge"),
    "tfidf-sqh-ms1": dict(features="tfidf", loss="squared_hinge", min_support=1),
    "tfidf-ms1": dict(features="tfidf", min_support=1),
}


def main(argv=None) -> int:
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS))
    ap.add_argument("--sizes", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--tree", action="store_true", help="dependency trees instead of word chains")
    ap.add_argument("--combined", action="store_true", help="chains and dependency trees under one root")
    ap.add_argument("--folds", nargs="+", type=int, default=None, help="test folds (10-fold corpora)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args(argv)
    cfg = dict(FULL[args.corpus])
    if args.folds is not None:
        cfg["test_folds"] = args.folds
    corpus, texts = load_corpus(args.corpus, cfg, args.data)
    sd = load_source(args.data, corpus.source, trees=args.tree or args.combined, log=log)
    rep = "tree" if args.tree else "combined" if args.combined else "chain"
    if args.combined:
        sd.tree = combined_forest(sd.chain, sd.tree)
        args.tree = True
    path = OUT / "linear_dev" / f"{args.corpus}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = {}
    if path.is_file():
        for line in path.read_text(encoding="utf8").splitlines():
            r = json.loads(line)
            if r.get("solver") == SOLVER:   # rows of another solver or tolerance are not reused
                done[(r["split"], r["rep"], r["variant"], r["size"])] = r
    for split in corpus.splits:
        fd = None
        for variant in args.variants:
            for size in args.sizes:
                key = (split.name, rep, variant, size)
                if key in done:
                    continue
                fd = fd or fold_data(corpus, split, sd, texts)
                X = fd.tree if args.tree else fd.chain
                settings = {"min_support": 2, **VARIANTS[variant]}
                t0 = time.process_time()
                clf = SubtreeLinearClassifier(max_pattern_size=size, **settings).fit(X["train"], fd.y_train)
                cpu = time.process_time() - t0
                dev = selection_score(fd.truth["dev"], predict(clf, X["dev"], fd), fd.multilabel)
                r = {"split": split.name, "rep": rep, "variant": variant, "size": size, "dev": dev, "cpu": cpu,
                     "C": [i["C"] for i in clf.fit_info_], "solver": SOLVER}
                log(json.dumps(r))
                done[key] = r
                with open(path, "a", encoding="utf8") as f:
                    f.write(json.dumps(r) + "\n")
    splits = {s.name for s in corpus.splits}
    print(f"{args.corpus} ({rep}), mean dev score over {len(splits)} split(s):")
    for variant in args.variants:
        for size in args.sizes:
            v = [done[(s, rep, variant, size)]["dev"] for s in sorted(splits)]
            print(f"  {variant:16s} size {size}: {100 * numpy.mean(v):.2f}  "
                  f"(cpu {numpy.mean([done[(s, rep, variant, size)]['cpu'] for s in splits]):.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
