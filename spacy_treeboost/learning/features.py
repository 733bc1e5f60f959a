"""Feature maps of the linear learners: presence, naive Bayes ratios (NBSVM), sublinear tf-idf, the columns by
document frequency, the features seen in one sample each, and the flat codes of mined patterns."""
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

import numpy

from . import products
from ._merge import pattern_codes
from ._order import order_by_count
from ..threads import ThreadTeam

if TYPE_CHECKING:
    import scipy.sparse as sp

NB_ALPHA = 1.0


def presence(counts: "sp.spmatrix", threads: int = 1, stored: bool = True) -> "sp.spmatrix":
    """x = [count >= 1] of a CSC count matrix without explicit zeros (its structure shared), filled on up to `threads`
    threads; without `stored`, its values are one read-only 1.0 of stride 0 (no memory per entry)."""
    from scipy.sparse import csc_matrix

    if not stored:
        return csc_matrix((numpy.broadcast_to(numpy.float64(1.0), (counts.nnz,)), counts.indices, counts.indptr),
                          shape=counts.shape)
    data = numpy.empty(counts.nnz)
    pieces = numpy.linspace(0, counts.nnz, products.N_BLOCKS + 1).astype(numpy.int64).tolist()
    with ThreadTeam(threads if counts.nnz >= products.BLOCK_NNZ else 1) as team:
        team.map(lambda k: data[pieces[k]:pieces[k + 1]].fill(1.0), range(products.N_BLOCKS))
    return csc_matrix((data, counts.indices, counts.indptr), shape=counts.shape)


def nb_ratio(P: "sp.spmatrix", y: numpy.ndarray, alpha: float = NB_ALPHA) -> numpy.ndarray:
    """Naive Bayes log-count ratios r = log((p / |p|_1) / (q / |q|_1)) of binary features P."""
    return log_count_ratio(P.T @ (y > 0).astype(numpy.float64), P.T @ (y < 0).astype(numpy.float64), alpha)


def log_count_ratio(pos: numpy.ndarray, neg: numpy.ndarray, alpha: float = NB_ALPHA) -> numpy.ndarray:
    """`nb_ratio` from the column sums over the positive samples and over the negative ones (two arrays held)."""
    pos, neg = pos + alpha, neg + alpha
    pos /= pos.sum()
    neg /= neg.sum()
    numpy.log(pos, out=pos)
    pos -= numpy.log(neg, out=neg)
    return pos


def interpolate(w: numpy.ndarray, beta: float) -> numpy.ndarray:
    """NBSVM's interpolation (Wang & Manning 2012) w' = (1 - beta) mean|w| + beta w; w itself when beta = 1."""
    if beta == 1.0 or not len(w):
        return w
    out = beta * w
    out += (1.0 - beta) * numpy.abs(w).mean()
    return out


def scale_columns(X: "sp.spmatrix", scale: numpy.ndarray) -> "sp.spmatrix":
    """X with column j times scale[j], its structure kept; CSC stays CSC, anything else becomes CSR."""
    from scipy.sparse import csc_matrix, csr_matrix

    if X.format == "csc":
        return csc_matrix((X.data * numpy.repeat(scale, numpy.diff(X.indptr)), X.indices, X.indptr), shape=X.shape)
    X = X.tocsr()
    return csr_matrix((X.data * scale[X.indices], X.indices, X.indptr), shape=X.shape)


class Singletons(NamedTuple):
    """The columns of a CSC matrix seen in one sample each (`shard.DocumentShard.reduce`): the columns kept, those
    seen once (`cols`) with their sample (`rows`) and value over its norm (`share`), the samples holding them, each
    seen-once column's place among those samples (`slot`), and their norms."""
    keep: numpy.ndarray
    cols: numpy.ndarray
    rows: numpy.ndarray
    share: numpy.ndarray
    samples: numpy.ndarray
    slot: numpy.ndarray
    norms: numpy.ndarray


def find_singletons(X: "sp.spmatrix", df: Optional[numpy.ndarray] = None) -> Singletons:
    """The `Singletons` of a CSC X without explicit zeros whose columns are in `df` samples (None: X's own counts;
    for a shard, the counts over all shards)."""
    if df is None:
        df = numpy.diff(X.indptr)
        cols = numpy.flatnonzero(df == 1)
    else:
        cols = numpy.flatnonzero(df == 1)
        cols = cols[X.indptr[cols + 1] > X.indptr[cols]]
    index = numpy.int32 if max(X.shape) < numpy.iinfo(numpy.int32).max else numpy.int64  # held through the fit
    cols = cols.astype(index)
    once = X.indptr[cols]
    rows = X.indices[once].astype(numpy.int64)
    values = X.data[once]
    sq = numpy.bincount(rows, weights=values ** 2, minlength=X.shape[0])
    samples = numpy.flatnonzero(sq > 0)
    norms = numpy.sqrt(sq)
    slot = numpy.full(X.shape[0], -1, dtype=index)
    slot[samples] = numpy.arange(len(samples))
    share = values / norms[rows]
    del values
    return Singletons(numpy.flatnonzero(df >= 2).astype(index), cols, rows.astype(index), share, samples, slot[rows],
                      norms[samples])


def column_sums(X: Any) -> numpy.ndarray:
    """The sum of each column of a sparse matrix of nonnegative entries (CSC or CSR), without copying its entries."""
    if X.format != "csc":
        return numpy.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    out = numpy.zeros(X.shape[1])
    full = numpy.diff(X.indptr) > 0
    if X.nnz:
        out[full] = numpy.add.reduceat(X.data, X.indptr[:-1][full])
    return out


def level_margins(X: Any, w: numpy.ndarray, c: float, level: numpy.ndarray, n_levels: int,
                  tfidf: bool = False) -> numpy.ndarray:
    """The margins c + X w of the rows of X (nonnegative) restricted to the columns of level <= L, for every level L:
    shape (n_levels, rows). With `tfidf` each restricted row is normalized again over its kept columns."""
    X = X.tocsc()
    n = X.shape[0]
    bucket = numpy.repeat(level.astype(numpy.int64), numpy.diff(X.indptr)) * n + X.indices
    score = numpy.bincount(bucket, weights=X.data * w.repeat(numpy.diff(X.indptr)), minlength=n_levels * n)
    score = numpy.cumsum(score.reshape(n_levels, n), axis=0)
    if tfidf:
        norm = numpy.sqrt(numpy.cumsum(numpy.bincount(bucket, weights=X.data ** 2, minlength=n_levels * n)
                                       .reshape(n_levels, n), axis=0))
        score = numpy.divide(score, norm, out=numpy.zeros_like(score), where=norm > 0)
    return score + c


class PatternCodes:
    """The codes of many patterns as flat arrays: pattern p is (depth[k], strings[label[k]]) for k in start[p] ..
    start[p + 1] - 1, in preorder."""

    def __init__(self, strings: List[str], depth: numpy.ndarray, label: numpy.ndarray, start: numpy.ndarray) -> None:
        self.strings, self.depth, self.label, self.start = strings, depth, label, start

    @classmethod
    def from_tree(cls, parent: numpy.ndarray, depth: numpy.ndarray, label: numpy.ndarray, size: numpy.ndarray,
                  strings: List[str]) -> "PatternCodes":
        """The codes of the miner's enumeration tree (each pattern extends its parent by one rightmost node)."""
        start, flat_depth, flat_label = pattern_codes(*(numpy.ascontiguousarray(a, dtype=numpy.int32)
                                                        for a in (parent, depth, label, size)))
        return cls(list(strings), flat_depth, flat_label, start)

    def __len__(self) -> int:
        return len(self.start) - 1

    def __getitem__(self, p: int) -> Tuple[Tuple[int, str], ...]:
        lo, hi = int(self.start[p]), int(self.start[p + 1])
        return tuple((int(d), self.strings[l]) for d, l in zip(self.depth[lo:hi], self.label[lo:hi]))

    def __iter__(self) -> Iterator[Tuple[Tuple[int, str], ...]]:
        return (self[p] for p in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PatternCodes) and list(self) == list(other)

    def codes_of(self, patterns: numpy.ndarray) -> Tuple["PatternCodes", numpy.ndarray]:
        """These codes and `patterns` (`PatternTree.codes_of` spells out only the codes asked)."""
        return self, numpy.asarray(patterns)


def on_disk(a: numpy.ndarray) -> numpy.ndarray:
    """`a` copied to an unnamed temporary file and mapped read-only: out of this process's memory until it is read."""
    import tempfile

    if not a.size:
        return a
    with tempfile.TemporaryFile() as f:
        numpy.ascontiguousarray(a).tofile(f)
        f.flush()
        return numpy.memmap(f, dtype=a.dtype, mode="r", shape=a.shape)


class PatternTree:
    """Patterns as the miner's enumeration tree, 10 bytes a pattern: per pattern its parent (-1: a single node), the
    depth and label of the node it adds, and its size; codes are spelled out only for the patterns that need them."""

    def __init__(self, strings: List[str], parent: numpy.ndarray, depth: numpy.ndarray, label: numpy.ndarray,
                 size: numpy.ndarray) -> None:
        self.strings = list(strings)
        self.parent, self.label = (numpy.ascontiguousarray(a, dtype=numpy.int32) for a in (parent, label))
        self.depth, self.size = (numpy.ascontiguousarray(a, dtype=numpy.uint8) for a in (depth, size))

    def __len__(self) -> int:
        return len(self.parent)

    def spill(self) -> "PatternTree":
        """The arrays moved to temporary files (`on_disk`), for a process that reads them only at the end."""
        self.parent, self.label, self.depth, self.size = (on_disk(a) for a in (self.parent, self.label, self.depth,
                                                                                self.size))
        return self

    def codes_of(self, patterns: numpy.ndarray) -> Tuple[PatternCodes, numpy.ndarray]:
        """The codes of `patterns` and of their ancestors (in tree order), and the index of each pattern among them."""
        patterns = numpy.asarray(patterns, dtype=numpy.int64)
        needed = numpy.zeros(len(self), dtype=bool)
        step = patterns
        while len(step):
            step = step[~needed[step]]
            needed[step] = True
            step = self.parent[step]
            step = step[step >= 0]
        closure = numpy.flatnonzero(needed)
        index = numpy.full(len(self), -1, dtype=numpy.int64)
        index[closure] = numpy.arange(len(closure))
        parent = self.parent[closure]
        parent = numpy.where(parent >= 0, index[numpy.maximum(parent, 0)], -1)
        codes = PatternCodes.from_tree(parent, self.depth[closure], self.label[closure], self.size[closure],
                                       self.strings)
        return codes, index[patterns]


def order_by_frequency(df: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The columns by decreasing document frequency `df` (ties: column order), and the inverse permutation."""
    return order_by_count(numpy.ascontiguousarray(df, dtype=numpy.int64))


def smooth_idf(n_docs: int, df: numpy.ndarray) -> numpy.ndarray:
    """scikit-learn's smoothed idf of columns in `df` of `n_docs` documents: log((1 + n) / (1 + df)) + 1."""
    return numpy.log((1.0 + n_docs) / (1.0 + df)) + 1.0


def tfidf_matrix(counts: Any, threads: int = 1, idf: Optional[numpy.ndarray] = None) -> Tuple[Any, numpy.ndarray]:
    """Sublinear tf-idf of a CSC count matrix (scikit-learn's `TfidfVectorizer(sublinear_tf=True)`) in fixed column
    pieces: the features (sharing the structure of `counts`) and the idf (None: that of `counts`)."""
    from scipy.sparse import csc_matrix

    df = numpy.diff(counts.indptr)
    if idf is None:
        idf = smooth_idf(counts.shape[0], df)
    data = numpy.empty(counts.nnz)
    pieces = products.column_pieces(counts.indptr, products.N_BLOCKS if counts.nnz >= products.BLOCK_NNZ else 1)
    sq_norms: List[numpy.ndarray] = [numpy.zeros(0)] * len(pieces)

    def scaled(k: int) -> None:
        lo, hi = pieces[k]
        a, b = int(counts.indptr[lo]), int(counts.indptr[hi])
        log_counts(counts.data[a:b], out=data[a:b])
        data[a:b] += 1.0
        data[a:b] *= numpy.repeat(idf[lo:hi], df[lo:hi])
        sq_norms[k] = numpy.bincount(counts.indices[a:b], weights=data[a:b] ** 2, minlength=counts.shape[0])

    def normalized(k: int) -> None:
        a, b = int(counts.indptr[pieces[k][0]]), int(counts.indptr[pieces[k][1]])
        data[a:b] /= norms[counts.indices[a:b]]

    with ThreadTeam(threads) as team:
        team.map(scaled, range(len(pieces)))
        total = sq_norms[0]
        for part in sq_norms[1:]:
            total += part
        norms = numpy.sqrt(total)
        team.map(normalized, range(len(pieces)))
    return csc_matrix((data, counts.indices, counts.indptr), shape=counts.shape), idf


def feature_matrices(counts: Any, features: str, threads: int = 1, idf: Optional[numpy.ndarray] = None,
                     stored: bool = True) -> Tuple[Dict[str, Any], Optional[numpy.ndarray]]:
    """The CSC float64 matrices of `features` of a CSC count matrix, its structure shared: "F" (`tfidf_matrix` for
    "tfidf", else `presence` with `stored`) and for "auto" the tf-idf "T"; and the tf-idf's idf (given: `idf`)."""
    if features == "tfidf":
        F, idf = tfidf_matrix(counts, threads, idf)
    else:
        F = presence(counts, threads, stored)
    matrices = {"F": F}
    if features == "auto":
        matrices["T"], idf = tfidf_matrix(counts, threads, idf)
    return matrices, idf


def log_counts(counts: numpy.ndarray, out: Optional[numpy.ndarray] = None) -> numpy.ndarray:
    """numpy.log of the counts as float64 (into `out`); uint8 counts are looked up in a table of the same logs."""
    if counts.dtype == numpy.uint8:
        table = numpy.zeros(256)
        table[1:] = numpy.log(numpy.arange(1, 256, dtype=numpy.float64))
        return numpy.take(table, counts, out=out)
    return numpy.log(counts, out=out, dtype=numpy.float64)

