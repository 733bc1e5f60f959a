"""Products of large sparse matrices on several threads over fixed column blocks (`ColumnBlocks`) and fixed vector
pieces (`Pieces`), each sum's parts added in order: the same bits for any number of threads."""
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, Union

import numpy

from ._vectors import check_pattern, column_values as _pattern_values, pattern_matvec, pattern_rmatvec, squared_rmatvec
from ..threads import Threads, ThreadTeam

if TYPE_CHECKING:
    import scipy.sparse as sp

BLOCK_NNZ = 1 << 23
N_BLOCKS = 8


def column_pieces(indptr: numpy.ndarray, n_pieces: int) -> List[Tuple[int, int]]:
    """`n_pieces` runs of consecutive columns (lo, hi) of a CSC matrix with `indptr`, of about equal entries."""
    d = len(indptr) - 1
    cuts = numpy.searchsorted(indptr, numpy.linspace(0, indptr[-1], n_pieces + 1)[1:-1])
    edges = [0] + numpy.clip(cuts, 0, d).tolist() + [d]
    return list(zip(edges[:-1], edges[1:]))


CG_PIECE = 1 << 16


class Pieces:
    """A vector's entries in fixed pieces of `CG_PIECE` for the vector kernels of `solver.pcg` on a `ThreadTeam`: a
    sum is each piece's sum added in piece order."""

    def __init__(self, n: int, team: Optional[ThreadTeam]) -> None:
        self.bounds = [(lo, min(lo + CG_PIECE, n)) for lo in range(0, n, CG_PIECE)]
        self.team = team if team is not None else ThreadTeam(1)

    def total(self, kernel: Callable[..., float], *args: Any) -> float:
        total = 0.0
        for part in self.team.map(lambda bounds: kernel(*args, *bounds), self.bounds):
            total += part
        return total

    def each(self, kernel: Callable[..., None], *args: Any) -> None:
        self.team.map(lambda bounds: kernel(*args, *bounds), self.bounds)


class ColumnBlocks:
    """The products of a large CSC matrix over `N_BLOCKS` fixed column blocks of equal nonzeros (views of its arrays)
    on a `ThreadTeam`; columns of one value each go to the pattern kernels. `squared`: X's entries squared, multiplied
    by their transpose only. `blocks`: each block's columns (a, b) and (indptr, rows, the columns' values) for the
    kernels (the entries' values, squared: `squared_rmatvec`), else its scipy matrix and transpose."""

    def __init__(self, X: Any, threads: Union[int, Threads, ThreadTeam], squared: bool = False,
                 values: Optional[numpy.ndarray] = None) -> None:
        from scipy.sparse import csc_matrix, csr_matrix

        n, d = X.shape
        self.n, self.d, self.squared = n, d, squared
        scale = column_values(X) if values is None else values
        self.pattern = scale is not None  # the blocks hold X's structure and one value per column, not X's values
        if scale is not None or squared:
            check_pattern(X.indptr.astype(X.indices.dtype, copy=False), X.indices, n)
        if scale is not None and squared:
            scale = scale * scale
        self.blocks: List[Tuple[int, int, Any]] = []
        for a, b in column_pieces(X.indptr, N_BLOCKS):
            lo, hi = int(X.indptr[a]), int(X.indptr[b])
            indptr = (X.indptr[a:b + 1] - lo).astype(X.indices.dtype)
            if scale is not None or squared:
                of: Any = (indptr, X.indices[lo:hi], X.data[lo:hi] if scale is None else scale[a:b])
            else:
                block, transposed = csc_matrix((n, b - a), dtype=X.dtype), csr_matrix((b - a, n), dtype=X.dtype)
                block.data = transposed.data = X.data[lo:hi]
                block.indices = transposed.indices = X.indices[lo:hi]
                block.indptr = transposed.indptr = indptr
                of = (block, transposed)
            self.blocks.append((a, b, of))
        self.team = threads if isinstance(threads, ThreadTeam) else ThreadTeam(threads)

    @property
    def T(self) -> "_Transposed":
        return _Transposed(self)

    def __matmul__(self, v: numpy.ndarray) -> numpy.ndarray:
        if self.squared:
            raise NotImplementedError("column blocks of squared entries multiply by their transpose only")

        def product(block: Tuple[int, int, Any]) -> numpy.ndarray:
            a, b, of = block
            if not self.pattern:
                return of[0] @ v[a:b]
            indptr, rows, values = of
            out = numpy.zeros(self.n)
            pattern_matvec(indptr, rows, values, numpy.ascontiguousarray(v[a:b], dtype=numpy.float64), out)
            return out

        parts = self.team.map(product, self.blocks)
        out = parts[0]
        for part in parts[1:]:
            out += part
        return out

    def rmatvec(self, u: numpy.ndarray) -> numpy.ndarray:
        """X^T u."""
        u = numpy.ascontiguousarray(u, dtype=numpy.float64)
        out = numpy.empty(self.d)
        kernel = pattern_rmatvec if self.pattern else squared_rmatvec

        def product(block: Tuple[int, int, Any]) -> None:
            a, b, of = block
            if self.pattern or self.squared:
                indptr, rows, values = of
                kernel(indptr, rows, values, u, out[a:b])
            else:
                out[a:b] = of[1] @ u

        self.team.map(product, self.blocks)
        return out


def column_values(X: "sp.spmatrix") -> Optional[numpy.ndarray]:
    """The value of each column of a float64 CSC X whose columns each hold one value (0 when empty), else None."""
    if X.format != "csc" or X.dtype != numpy.float64 or X.indices.dtype not in (numpy.int32, numpy.int64):
        return None
    if X.nnz and X.data.strides[0] == 0:  # one value, not stored per entry (`features.presence`)
        value = float(X.data[0])
        return None if value != value else numpy.where(numpy.diff(X.indptr) > 0, value, 0.0)
    return _pattern_values(X.indptr.astype(X.indices.dtype, copy=False), X.data)


class _Transposed:
    def __init__(self, of: ColumnBlocks) -> None:
        self.of = of

    def __matmul__(self, u: numpy.ndarray) -> numpy.ndarray:
        return self.of.rmatvec(u)


def squared_entries(X: "sp.spmatrix") -> "sp.spmatrix":
    """X with its entries squared: X itself when they are all 1, a CSC X sharing its structure."""
    if X.nnz == 0 or bool(numpy.all(X.data == 1.0)):
        return X
    if X.format != "csc":
        return X.power(2)
    from scipy.sparse import csc_matrix

    return csc_matrix((X.data * X.data, X.indices, X.indptr), shape=X.shape)


def newton_pattern(indptr: numpy.ndarray, indices: numpy.ndarray, shape: Tuple[int, int], values: numpy.ndarray,
                   threads: Union[int, Threads]) -> Tuple[Any, Any]:
    """`newton_blocks` of the CSC matrix of structure (indptr, indices) whose column j holds values[j]: its values
    are stored only below `BLOCK_NNZ` entries."""
    if len(indices) < BLOCK_NNZ:
        from scipy.sparse import csc_matrix

        data = numpy.repeat(values, numpy.diff(indptr))
        return newton_blocks(csc_matrix((data, indices, indptr), shape=shape), threads)
    X = SimpleNamespace(indptr=indptr, indices=indices, shape=shape)  # the structure alone: no values
    team = ThreadTeam(threads)
    return ColumnBlocks(X, team, values=values), ColumnBlocks(X, team, squared=True, values=values)


def newton_blocks(X: "sp.spmatrix", threads: Union[int, Threads]) -> Tuple[Any, Any]:
    """X and its entries squared as the Newton solver multiplies them: scipy matrices below `BLOCK_NNZ` nonzeros,
    else `ColumnBlocks` (the squares never stored)."""
    if X.nnz < BLOCK_NNZ:
        if X.nnz and X.data.strides[0] == 0:
            X = X.copy()
        return X, squared_entries(X)
    team = ThreadTeam(threads)
    return ColumnBlocks(X, team), ColumnBlocks(X, team, squared=True)
