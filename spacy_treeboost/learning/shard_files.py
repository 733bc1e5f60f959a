"""The subtree-linear learner trained from an ordered list of shard files that its workers read, convert and mine;
the training process holds what is O(subtrees): the merged label strings, the kept subtrees (`shard_merge`), the
labels, folds and weights."""
import gzip
import logging
import resource
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy

from .classifier import _label_rank
from .features import feature_matrices, on_disk, smooth_idf
from .shard_merge import Keys, merged_strings, mine_files, positions
from .sharded import DocumentShard, Shards, _ShardHolder
from .tasks import Workers, make_workers
from ..exceptions import InvalidSettingError
from ..trees.bact import BactFormatError, read_bact
from ..trees.doc_trees import TreeSpec, docs_to_forest
from ..trees.forest import Forest, LabelVocab

if TYPE_CHECKING:
    from .subtree_linear import SubtreeLinearClassifier

logger = logging.getLogger(__name__)


class TreeShards:
    """Training documents as an ordered list of shard files (the file order is the document order), whose classes
    come from the files: BACT files (`LABEL (tree)` per line, `.gz` allowed) or spaCy DocBins (`.spacy`, as `convert`
    writes them), whose classes are the `doc.cats` labels of score >= 0.5.

    paths (Sequence[Union[str, Path]]): The files, in order; every worker must reach them by these paths.
    spec (Optional[TreeSpec]): How DocBin docs become trees (default: `TreeSpec()`, word chains).
    labels (Optional[Sequence[str]]): The DocBin docs' labels to train on (default: every label of their cats).
    exclusive_classes (bool): Whether every DocBin doc has exactly one label (else a tuple of labels each).
    lang (str): The language of the DocBin tokens' lexical attributes: the pipeline's `nlp.lang`.
    """

    def __init__(self, paths: Sequence[Union[str, Path]], *, spec: Optional[TreeSpec] = None,
                 labels: Optional[Sequence[str]] = None, exclusive_classes: bool = True, lang: str = "xx") -> None:
        if isinstance(paths, (str, Path)):
            paths = [paths]
        self.paths = [str(p) for p in paths]
        self.spec, self.labels, self.exclusive_classes, self.lang = spec, labels, exclusive_classes, lang

    def __len__(self) -> int:
        return len(self.paths)

    def __repr__(self) -> str:
        return f"TreeShards({self.paths!r})"

    def read(self, path: str, vocab: LabelVocab) -> Tuple[Forest, List[Any]]:
        """One shard file's trees (their labels added to `vocab`) and classes."""
        try:
            if path.endswith(".spacy"):
                forest, classes = self._read_docbin(path, vocab)
            elif path.endswith(".gz"):
                with gzip.open(path, "rt", encoding="utf8") as lines:
                    forest, classes = read_bact(lines, vocab)
            else:
                forest, classes = read_bact(path, vocab)
        except OSError as err:
            raise ValueError(f"cannot read the shard file {path}: {err.strerror or err}") from None
        except BactFormatError as err:
            raise BactFormatError(str(err) if str(err).startswith(path) else f"{path}: {err}") from None
        except UnicodeDecodeError as err:
            raise BactFormatError(f"{path}: not UTF-8 ({err.reason})") from None
        if not len(forest):
            raise ValueError(f"the shard file {path} holds no documents: give every shard file at least one "
                             "document, or leave it out")
        return forest, classes

    def _read_docbin(self, path: str, vocab: LabelVocab) -> Tuple[Forest, List[Any]]:
        import spacy
        from spacy.tokens import DocBin

        try:
            docs = list(DocBin().from_disk(path).get_docs(spacy.blank(self.lang).vocab))
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{path} is not a spaCy DocBin ({err}): write shards with `convert`") from None
        spec = self.spec or TreeSpec()
        if spec.tree_mode != "chain" and docs and not any(doc.has_annotation("DEP") for doc in docs):
            raise ValueError(f"{path}: tree_mode={spec.tree_mode!r} needs parsed docs, and these have no dependency "
                             "parse: write the shards with `convert --model` (a pipeline with a parser)")
        classes: List[Any] = []
        for i, doc in enumerate(docs):
            gold = sorted(label for label, score in doc.cats.items()
                          if score >= 0.5 and (self.labels is None or label in self.labels))
            if self.exclusive_classes and len(gold) != 1:
                raise ValueError(f"{path}: doc {i} has {len(gold)} labels of score >= 0.5 ({gold}) but the classes "
                                 "are exclusive: give each doc exactly one (or set exclusive_classes = false)")
            classes.append(gold[0] if self.exclusive_classes else tuple(gold))
        return docs_to_forest(docs, spec, vocab), classes


def shard_paths(names: Union[str, Path, Sequence[Union[str, Path]]]) -> List[str]:
    """The files named, in order: each name, or the files a glob pattern matches (sorted)."""
    import glob

    paths: List[str] = []
    for name in [names] if isinstance(names, (str, Path)) else names:
        if not Path(name).exists() and glob.has_magic(str(name)):
            matched = sorted(glob.glob(str(name)))
            if not matched:
                raise ValueError(f"no file matches {name}: check the pattern and the directory")
            paths.extend(matched)
        else:
            paths.append(str(name))
    return paths


def read_shard_files(shards: TreeShards, paths: Sequence[str]) -> Tuple[Forest, List[Any], List[int]]:
    """The files' trees as one forest (one vocabulary), their classes, and the documents of each file."""
    vocab = LabelVocab()
    labels, parents, offsets, classes, docs = [], [], [numpy.zeros(1, dtype=numpy.int64)], [], []
    nodes = 0
    for path in paths:
        forest, part = shards.read(path, vocab)
        labels.append(forest.labels)
        parents.append(numpy.where(forest.parents >= 0, forest.parents + nodes, -1).astype(numpy.int32))
        offsets.append(forest.offsets[1:] + nodes)
        classes.extend(part)
        docs.append(len(forest))
        nodes += forest.n_nodes
    return Forest(numpy.concatenate(labels), numpy.concatenate(parents), None, numpy.concatenate(offsets),
                  vocab), classes, docs


def peak_rss_bytes() -> int:
    """This process's peak resident set size in bytes (Linux reports KiB, macOS bytes)."""
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class ShardFileWorker(_ShardHolder):
    """A worker holding the consecutive shard files `paths` (the first is file `first`): it reads and mines them,
    places its patterns among the merged ones, then holds their `DocumentShard`s for the fits."""

    def __init__(self, source: TreeShards, paths: Sequence[str], first: int, one_blas_thread: bool = False) -> None:
        super().__init__([], one_blas_thread)
        self.source, self.paths, self.first = source, list(paths), first

    def read(self) -> Dict[str, Any]:
        """The files' label strings, distinct classes, each document's class index, documents per file and nodes."""
        forest, classes, self.docs = read_shard_files(self.source, self.paths)
        self.labels, self.parents, self.offsets = forest.labels, forest.parents, forest.offsets
        self.strings = forest.vocab.to_list()
        index: Dict[Any, int] = {}
        codes = numpy.array([index.setdefault(c, len(index)) for c in classes], dtype=numpy.int32)
        distinct = list(index)
        return {"strings": self.strings, "classes": distinct, "codes": codes,
                "docs": self.docs, "nodes": forest.n_nodes}

    def mine(self, strings: List[str], settings: Dict[str, Any]) -> int:
        """Relabel the trees to the merged `strings` and mine every subtree (support >= 1); returns how many."""
        from ._extension import PatternCache

        index = {s: i for i, s in enumerate(strings)}
        relabel = numpy.array([index[s] for s in self.strings], dtype=numpy.int32)
        self.rank = _label_rank(strings)
        space = PatternCache(relabel[self.labels], self.parents, self.offsets, self.rank, min_support=1, rare_up_to=0,
                             **settings)
        del self.labels, self.parents, relabel
        space.expand_all()
        self.table, (indptr, docs, counts) = space.take_patterns()
        del space
        self.matrix = (indptr, docs, counts)
        self.merged = numpy.full(len(self.table[0]), -1, dtype=numpy.int32)
        return len(self.merged)

    def _level(self, size: int, lo: int, hi: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """This worker's patterns of `size` nodes whose parent is merged pattern lo to hi - 1, and those parents."""
        parent, _, _, sizes = self.table
        mine = numpy.flatnonzero(sizes == size)
        if size == 1:
            return mine, numpy.full(len(mine), -1, dtype=numpy.int64)
        parents = self.merged[parent[mine]]
        take = (parents >= lo) & (parents < hi)
        return mine[take], parents[take]

    def level(self, size: int, lo: int = 0, hi: int = 2 ** 62) -> Tuple[numpy.ndarray, ...]:
        """The keys (parent, depth, label) and documents of `_level`'s patterns."""
        mine, parents = self._level(size, lo, hi)
        return parents, self.table[1][mine], self.table[2][mine], numpy.diff(self.matrix[0])[mine]

    def count(self, size: int) -> int:
        """How many of this worker's patterns of `size` nodes extend a kept pattern."""
        return len(self._level(size, 0, 2 ** 62)[0])

    def place(self, size: int, keys: Keys, base: int, lo: int = 0, hi: int = 2 ** 62) -> None:
        """Number `_level`'s patterns by their place among the sorted kept `keys` from `base` (-1: not kept)."""
        mine, parents = self._level(size, lo, hi)
        found = positions(keys, (parents, self.table[1][mine], self.table[2][mine]), self.rank)
        self.merged[mine] = numpy.where(found >= 0, base + found, -1).astype(numpy.int32)

    def build(self, columns: numpy.ndarray, idf: numpy.ndarray, features: str, starts: List[int]) -> int:
        """Hold the files' `DocumentShard`s of the kept patterns (merged pattern k as column `columns[k]`) as the
        matrices of `features`; file k's documents start at starts[k]. Returns the documents held."""
        from scipy.sparse import csc_matrix

        d = len(idf)
        col = numpy.where(self.merged >= 0, columns[numpy.maximum(self.merged, 0)], -1)
        held = numpy.flatnonzero(col >= 0)
        held = held[numpy.argsort(col[held], kind="stable")]
        indptr, docs, counts = self.matrix
        n = len(self.offsets) - 1
        rows = csc_matrix((counts, docs, indptr), shape=(n, len(indptr) - 1))[:, held].tocsr()
        del self.matrix, self.table, self.merged
        target, lo = col[held], 0
        for k in range(len(self.paths)):
            hi = lo + self.docs[k]
            part = rows[lo:hi].tocsc()
            lengths = numpy.zeros(d, dtype=numpy.int64)
            lengths[target] = numpy.diff(part.indptr)
            index = numpy.int32 if part.nnz < 2 ** 31 else numpy.int64
            wide = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(index)
            counts_k = csc_matrix((part.data, part.indices.astype(index), wide), shape=(hi - lo, d))
            del part, lengths, wide
            self.shards.append(DocumentShard(self.first + k, starts[self.first + k],
                                             feature_matrices(counts_k, features, idf=idf, stored=False)[0]))
            lo = hi
        return n

    def peak_rss(self) -> int:
        return peak_rss_bytes()


def check_files(model: "SubtreeLinearClassifier", X: TreeShards, y: Any) -> None:
    """Clear errors for what training from shard files does not take."""
    if y is not None:
        raise ValueError("fit(TreeShards(...), y): the class labels come from the shard files; pass y=None")
    if not X.paths:
        raise ValueError("TreeShards names no file: give one BACT file per shard, at least one")
    if isinstance(model.max_rules, int):
        raise InvalidSettingError(f"training from shard files cannot be combined with max_rules={model.max_rules!r}, "
                                  "whose refit uses whole matrices: use max_rules='auto' or None",
                                  setting="max_rules", value=model.max_rules)


def start_workers(model: "SubtreeLinearClassifier", X: TreeShards) -> Tuple[Workers, bool]:
    """The model's workers, a run of consecutive files each (all outside this process unless local)."""
    backend = model.backend or ("local" if model.n_workers == 1 else "processes")
    paths = X.paths
    n = min(model.n_workers, len(paths))
    cuts = numpy.linspace(0, len(paths), n + 1).round().astype(int)
    here = backend == "local"

    def builder(i: int, _: bool) -> Tuple[Any, Tuple[Any, ...], Dict[str, Any]]:
        return ShardFileWorker, (X, paths[cuts[i]:cuts[i + 1]], int(cuts[i]), not here), {}

    workers = make_workers(backend, n, builder, ray_address=model.ray_address, name="Shard file worker",
                           worker0_here=False)
    return workers, here


def read_files(workers: Workers) -> Tuple[List[str], List[Any], List[int], int]:
    """Round 1: the merged label strings, every document's class (in file order), documents per file, and nodes."""
    parts = workers.call_all("read")
    strings = merged_strings([p["strings"] for p in parts])
    y = [p["classes"][c] for p in parts for c in p["codes"].tolist()]
    return strings, y, [n for p in parts for n in p["docs"]], sum(p["nodes"] for p in parts)


def fit_files(model: "SubtreeLinearClassifier", X: TreeShards, y: Any = None) -> "SubtreeLinearClassifier":
    """`SubtreeLinearClassifier.fit` on shard files read by the model's workers (see the module's docstring)."""
    model.validate_params()
    check_files(model, X, y)
    clock = time.process_time()
    workers, here = start_workers(model, X)
    try:
        strings, classes, docs, nodes = read_files(workers)
        n_docs = sum(docs)
        targets = model._start(classes, nodes, n_docs)
        del classes
        logger.info("mining the subtrees of up to %d nodes in %d trees of %d files on %d worker(s)",
                    model.max_pattern_size_, n_docs, len(docs), workers.n)
        tree, docs_of, inverse = mine_files(workers, strings, model.max_pattern_size_, model.min_support,
                                            model.keep_rare_up_to, model.include_root_patterns, model.max_cache_mb)
        by_column = numpy.empty(len(docs_of))
        by_column[inverse] = smooth_idf(n_docs, docs_of)
        starts = numpy.concatenate([[0], numpy.cumsum(docs)[:-1]]).astype(int).tolist()
        model.timings_ = {"mine": time.process_time() - clock}
        logger.info("kept %d subtrees of %d documents (training process's peak RSS %.1f MB); building the shards",
                    len(tree), n_docs, peak_rss_bytes() / 1e6)
        workers.call_all("build", (workers.put(inverse), workers.put(by_column), model.features, starts))
        del by_column
        # read again only once the fits are done (the idf made again from docs_of if tf-idf is chosen)
        tree, docs_of, inverse = tree.spill(), on_disk(docs_of), on_disk(inverse)
        shards = Shards(workers, len(docs), ["F", "T"] if model.features == "auto" else ["F"], here)
        model.shard_holders_ = shards.node_ids
        clock = time.process_time()
        fits, kept, pruning, tfidf = model._fit_shards(shards, targets, inverse)
        model.peak_rss_ = {"training": peak_rss_bytes(), "workers": [] if here else workers.call_all("peak_rss")}
    finally:
        workers.close()
    logger.info("peak RSS (MB): training process %.1f, workers %s", model.peak_rss_["training"] / 1e6,
                ", ".join(f"{r / 1e6:.1f}" for r in model.peak_rss_["workers"]) or "in this process")
    fitted = model._finish_heads(targets, fits, kept, pruning, None, tfidf, inverse)
    model.timings_["fit"] = time.process_time() - clock
    return model._set_rules(tree, fitted, smooth_idf(n_docs, docs_of) if tfidf else None)
