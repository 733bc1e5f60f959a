"""One shard of the training documents (`DocumentShard`): its rows of the feature matrices, and its part of every
sum of a fit (loss, gradient, preconditioner, Hessian-vector products)."""
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

import numpy

from ._columns import return_free_heap, split_csc_rows, take_columns
from .features import Singletons, column_sums, find_singletons, level_margins, scale_columns
from .products import column_pieces, column_values, newton_blocks, newton_pattern
from .solver import curvature, loss_terms
from ..threads import Threads, ThreadTeam


class Part(NamedTuple):
    """A shard's part of a vector of `size` entries that sums over shards: its entries at `columns` (None: all)."""

    columns: Optional[numpy.ndarray]
    values: numpy.ndarray
    size: int


def add_part(total: Any, part: Any) -> Any:
    """`total` (None: nothing yet) plus `part`: a number, an array or a `Part` (added in place at its columns)."""
    if not isinstance(part, Part):
        return part if total is None else total + part
    if part.columns is None:
        return part.values if total is None else total + part.values
    if total is None:
        total = numpy.zeros(part.size, dtype=part.values.dtype)
    total[part.columns] += part.values
    return total


def fold_split(X: Any, folds: numpy.ndarray, fold: int, threads: Union[int, Threads] = 1) -> Tuple[Any, Any]:
    """The rows of X outside fold `fold` and in it, as two CSC matrices, split in one pass on up to `threads` threads;
    when every value is 1 (presence), both parts' values are read-only views of X's."""
    from scipy.sparse import csc_matrix

    X = csc_matrix(X, dtype=numpy.float64)
    ones = X.nnz > 0 and (X.data.strides[0] == 0 and X.data[0] == 1.0 or bool((X.data == 1.0).all()))
    test = folds == fold
    n_test = int(test.sum())
    rank = numpy.empty(len(test), dtype=X.indices.dtype)
    rank[~test] = numpy.arange(len(test) - n_test, dtype=rank.dtype)
    rank[test] = numpy.arange(n_test, dtype=rank.dtype)
    n = max(1, min(int(threads), X.shape[1]))
    with ThreadTeam(threads) as team:
        parts = split_csc_rows(X.indptr.astype(numpy.int64, copy=False), X.indices, None if ones else X.data,
                               test.view(numpy.uint8), rank, team.map, column_pieces(X.indptr, n))
    shared = X.data.view()
    shared.flags.writeable = False
    return tuple(csc_matrix((shared[:len(indices)] if ones else data, indices, indptr), shape=(rows, X.shape[1]))
                 for (indptr, indices, data), rows in zip(parts, (len(test) - n_test, n_test)))


class DocumentShard:
    """Rows `start` to `start + n` of the feature matrices (CSC, by name), and one fit's state on them; a pickled
    copy holds the rows alone."""

    A: Any  # the training rows, scaled
    B: Any  # the held-out rows, scaled
    R: Any  # the reduced training rows
    X: Any  # ... as multiplied (`products.newton_blocks`), and their squares
    squared: Any

    def __init__(self, index: int, start: int, matrices: Dict[str, Any]) -> None:
        self.index, self.start, self.matrices = index, start, matrices
        self._selected: Optional[Tuple[Any, ...]] = None
        self._threads: Union[int, Threads] = 1
        self.train: Any = None
        self.test: Any = None
        self.release()

    def __getstate__(self) -> Dict[str, Any]:
        return {"index": self.index, "start": self.start, "matrices": self.matrices}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def release(self) -> None:
        """Drop the fit's scaled rows, reduced rows and threads (the selected rows stay for the next fit)."""
        team = getattr(getattr(self, "X", None), "team", None)
        if team is not None:
            team.close()
        self.A = self.B = self.R = self.X = self.squared = None
        self.found: Optional[Singletons] = None
        return_free_heap()

    def select(self, name: str, y: numpy.ndarray, folds: Optional[numpy.ndarray], fold: Optional[int],
               threads: Union[int, Threads] = 1) -> int:
        """Take matrix `name`'s rows outside fold `fold` (all when `folds` is None) as the training rows, the others
        as the held-out rows; returns the columns. The split is kept while the matrix and folds stay the same."""
        X = self.matrices[name]
        stop = self.start + X.shape[0]
        part = None if folds is None or fold is None else folds[self.start:stop]
        labels = y[self.start:stop]
        self.release()
        key = self._selected
        if key is None or key[0] != name or key[1] != fold or not _same(key[2], part):
            self.train = self.test = None  # freed before the next split is made
            return_free_heap()
            self._selected = (name, fold, part)
            self._threads = threads
        self.y = labels if part is None else labels[part != fold]
        self.A, self.B = self._training_rows(), self.test
        return int(X.shape[1])

    def _training_rows(self) -> Any:
        """The selected training rows, split again from the matrix when `place` dropped them."""
        if self.train is None:
            assert self._selected is not None
            name, fold, part = self._selected
            X = self.matrices[name]
            self.train, self.test = (X, None) if part is None else fold_split(X, part, fold, self._threads)
        return self.train

    def nb_counts(self) -> Tuple[Part, Part]:
        """The training rows' column sums over positive and over negative documents."""
        train = self._training_rows()
        return (self._present(train.T @ (self.y > 0).astype(numpy.float64), train),
                self._present(train.T @ (self.y < 0).astype(numpy.float64), train))

    def column_sums(self) -> Tuple[Part]:
        """The training rows' column sums (`features.column_sums`)."""
        train = self._training_rows()
        return (self._present(column_sums(train), train),)

    @staticmethod
    def _present(values: numpy.ndarray, X: Any) -> Part:
        """The part of a vector over X's columns at the columns X has."""
        present = numpy.flatnonzero(X.indptr[1:] != X.indptr[:-1])
        if len(present) == len(values):
            return Part(None, values, len(values))
        return Part(present, values[present], len(values))

    def level_margins(self, w: numpy.ndarray, c: float, level: numpy.ndarray, n_levels: int,
                      tfidf: bool) -> numpy.ndarray:
        """The held-out rows' margins at every level (`features.level_margins`), unscaled; drops the split."""
        self.train = self._selected = None
        return level_margins(self.test, w, c, level, n_levels, tfidf)

    def scale(self, scale: Optional[numpy.ndarray]) -> None:
        """Scale the columns of the training and held-out rows (None: as selected)."""
        self.release()
        train = self._training_rows()
        if scale is None:
            self.A, self.B = train, self.test
        else:
            self.A = scale_columns(train, scale)
            self.B = None if self.test is None else scale_columns(self.test, scale)
        if not bool(numpy.all(self.A.data != 0)):
            self.A = self.A.copy()
            self.A.eliminate_zeros()

    def column_counts(self) -> Tuple[Part]:
        """How many training rows of this shard have each column."""
        return (self._present(numpy.diff(self.A.indptr), self.A),)

    def reduce(self, df: Optional[numpy.ndarray], keep_all: bool) -> Tuple[int, Optional[numpy.ndarray]]:
        """Find the columns seen in one document of all shards (`df`: their document counts; None: this shard is all):
        how many of this shard's documents hold them (0 with `keep_all`), and with `df` None the columns kept."""
        self.found = None if keep_all else find_singletons(self.A, df)
        if self.found is None:
            return 0, None
        return len(self.found.samples), self.found.keep if df is None else None

    def place(self, offsets: numpy.ndarray, total: int, threads: Union[int, Threads] = 1) -> None:
        """Build the reduced rows: the kept columns, then `total` document columns, this shard's from k +
        offsets[index] (k kept columns); only the columns this shard has are stored (`local`; None: all)."""
        from scipy.sparse import csc_matrix

        A, s = self.A, self.found
        split = self._selected is not None and self._selected[2] is not None
        if split and A is not self.train:
            self.train = None  # the scaled rows share its structure; its values are not needed again in this fit
        if s is None:
            columns, rows, values = numpy.flatnonzero(numpy.diff(A.indptr)), numpy.zeros(0, numpy.int64), numpy.zeros(0)
            local, self.d = columns, A.shape[1]
        else:
            kept = A.indptr[s.keep + 1] > A.indptr[s.keep]
            columns, rows, values = s.keep, s.samples, s.norms
            self.offset, self.k, self.d = int(offsets[self.index]), len(s.keep), len(s.keep) + total
            local = None
            if not kept.all() or len(rows) != total:
                kept = numpy.flatnonzero(kept)
                columns, local = s.keep[kept], numpy.concatenate([kept, self.k + self.offset + numpy.arange(len(rows))])
        wide = numpy.int32 if self.d < 2 ** 31 else numpy.int64  # the columns sent with every part of a sum
        self.local = None if local is None or len(local) == self.d else local.astype(wide, copy=False)
        if self.local is None and s is None:
            R = A
            self.X, self.squared = newton_blocks(R, threads)
        else:
            # one value per column (presence, naive Bayes): the structure is taken, its values stored only where
            # scipy multiplies it
            pattern, index = column_values(A), A.indices.dtype
            indptr, indices, data = take_columns(A.indptr.astype(index, copy=False), A.indices,
                                                 A.data if pattern is None else None,
                                                 columns.astype(numpy.int64, copy=False), rows.astype(index), values)
            shape = (A.shape[0], len(columns) + len(rows))
            if pattern is None:
                R = csc_matrix((data, indices, indptr), shape=shape)
                self.X, self.squared = newton_blocks(R, threads)
            else:
                self.X, self.squared = newton_pattern(indptr, indices, shape,
                                                      numpy.concatenate([pattern[columns], values]), threads)
                R = self.X if isinstance(self.X, csc_matrix) else None
        # the fit multiplies the reduced rows alone: the training rows are split again when asked for, and the
        # reduced rows' values are dropped when the column blocks read one value per column
        self.R = None if getattr(self.X, "pattern", False) else R
        del R
        self.A = A = None
        if split:
            self.train = None
        return_free_heap()

    def reduced(self) -> Tuple[Any, numpy.ndarray]:
        """The reduced rows (CSC, this shard's columns) and their labels (`bench/bench_solver.py`)."""
        return self.R, self.y

    def _part(self, v: numpy.ndarray) -> numpy.ndarray:
        return v if self.local is None else v[self.local]

    def _whole(self, part: numpy.ndarray) -> Part:
        """The part of a vector over all the reduced problem's columns at this shard's."""
        return Part(self.local, part, self.d)

    def reduce_point(self, x: numpy.ndarray) -> numpy.ndarray:
        """This shard's documents' coordinates of the reduced point matching the full one x."""
        s = self.found
        assert s is not None
        return numpy.bincount(s.slot, weights=s.share * x[s.cols], minlength=len(s.samples))

    def expand(self, z: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The weights of this shard's columns seen in one document, at the reduced point z."""
        s = self.found
        assert s is not None
        return s.cols, z[self.k + self.offset + s.slot] * s.share

    def value_grad(self, x: numpy.ndarray, loss: str) -> Tuple[float, Part, float]:
        f = self.X @ self._part(x[:-1])
        f += x[-1]
        value, d = loss_terms(self.y * f, loss)
        g_f = self.y * d
        return value, self._whole(self.X.T @ g_f), float(g_f.sum())

    def preconditioner(self, x: numpy.ndarray, loss: str) -> Tuple[Part, float]:
        """The Hessian's diagonal at x; keeps the loss's curvature there for `hessp`."""
        f = self.X @ self._part(x[:-1])
        f += x[-1]
        self.curvature = curvature(self.y * f, loss)
        return self._whole(self.squared.T @ self.curvature), float(self.curvature.sum())

    def hessp(self, v: numpy.ndarray) -> Tuple[Part, float]:
        u = self.X @ self._part(v[:-1])
        u += v[-1]
        u *= self.curvature
        return self._whole(self.X.T @ u), float(u.sum())

    def margins(self, w: numpy.ndarray, c: float) -> numpy.ndarray:
        """The held-out rows' margins."""
        return self.B @ w + c


def _same(a: Optional[numpy.ndarray], b: Optional[numpy.ndarray]) -> bool:
    return a is b if a is None or b is None else numpy.array_equal(a, b)
