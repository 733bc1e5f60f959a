"""Forests: documents as labeled ordered trees (a virtual root over the sentence trees) in flat preorder arrays."""
import mmap
import sys
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

import numpy

from ._preorder import preorder_depths as _compiled_depths

ROOT_LABEL = "\x00ROOT"
ROOT_TEXT = "ROOT"
DEPENDENCY_VIEW_PREFIX = "dep:"

Tree = Tuple[str, Sequence["Tree"]]


class LabelVocab:
    """Interns node-label strings to consecutive ids. Id 0 is the virtual root."""

    def __init__(self, strings: Iterable[str] = ()) -> None:
        self._strings: List[str] = [ROOT_LABEL]
        self._ids = {ROOT_LABEL: 0}
        for s in strings:
            self.add(s)

    def add(self, string: str) -> int:
        """Return the id of `string`, adding it if it is new."""
        i = self._ids.get(string)
        if i is None:
            i = self._ids[string] = len(self._strings)
            self._strings.append(string)
        return i

    def get(self, string: str, default: int = -1) -> int:
        return self._ids.get(string, default)

    def __getitem__(self, i: int) -> str:
        return self._strings[i]

    def __contains__(self, string: object) -> bool:
        return string in self._ids

    def __len__(self) -> int:
        return len(self._strings)

    def to_list(self) -> List[str]:
        return list(self._strings)

    @classmethod
    def from_list(cls, strings: Sequence[str]) -> "LabelVocab":
        if not strings or strings[0] != ROOT_LABEL:
            raise ValueError("A label vocabulary must start with the virtual root label.")
        vocab = cls(strings[1:])
        if len(vocab) != len(strings):
            raise ValueError("A label vocabulary must not list a label twice.")
        return vocab

    def lookup(self, strings: Iterable[str], *, add: bool = True) -> numpy.ndarray:
        """Map strings to ids; unknown strings get -1 unless `add` is True."""
        if add:
            return numpy.fromiter((self.add(s) for s in strings), dtype=numpy.int32)
        return numpy.fromiter((self._ids.get(s, -1) for s in strings), dtype=numpy.int32)


class Forest:
    """Documents as labeled ordered trees in flat preorder arrays, documents concatenated: every node's int32 label
    id (into `vocab`), its parent's global index (-1 for roots) and depth (None: computed when first read); document
    i is nodes offsets[i]:offsets[i + 1]."""

    def __init__(self, labels: numpy.ndarray, parents: numpy.ndarray, depths: Optional[numpy.ndarray],
                 offsets: numpy.ndarray, vocab: LabelVocab) -> None:
        self.labels = numpy.ascontiguousarray(labels, dtype=numpy.int32)
        self.parents = numpy.ascontiguousarray(parents, dtype=numpy.int32)
        self._depths = None if depths is None else numpy.ascontiguousarray(depths, dtype=numpy.int32)
        self.offsets = numpy.ascontiguousarray(offsets, dtype=numpy.int64)
        self.vocab = vocab
        n = len(self.labels)
        if len(self.parents) != n or (self._depths is not None and len(self._depths) != n) or self.offsets[-1] != n:
            raise ValueError("Forest arrays disagree in length.")

    @property
    def depths(self) -> numpy.ndarray:
        """int32 depth of each node (0 for document roots)."""
        if self._depths is None:
            self._depths = preorder_depths(self.parents)
        return self._depths

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def shape(self) -> Tuple[int]:
        """(number of documents,): lets scikit-learn's indexing helpers split a forest like an array."""
        return (len(self),)

    @property
    def n_nodes(self) -> int:
        return len(self.labels)

    def subset(self, indices: Union[Sequence[int], numpy.ndarray]) -> "Forest":
        """Return a forest of the documents at `indices`, in that order."""
        builder = ForestBuilder(self.vocab)
        for i in indices:
            lo, hi = self.offsets[i], self.offsets[i + 1]
            parents = self.parents[lo:hi].astype(numpy.int64) - lo
            parents[0] = -1
            builder.add_arrays(self.labels[lo:hi], parents)
        return builder.build()

    def __getitem__(self, key: Any) -> "Forest":
        """The documents of an index, a slice, indices or a boolean mask (as numpy indexes), as a forest."""
        return self.subset(numpy.atleast_1d(numpy.arange(len(self))[key]).tolist())

    def tree(self, i: int) -> Tree:
        """Return document i as a nested `(label, children)` tuple."""
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        kids: List[List[Tree]] = [[] for _ in range(hi - lo)]
        node: Tree = ("", ())
        for v in range(hi - lo - 1, -1, -1):
            node = (self.vocab[int(self.labels[lo + v])], tuple(reversed(kids[v])))
            if v:
                kids[int(self.parents[lo + v]) - lo].append(node)
        return node

    @classmethod
    def from_trees(cls, trees: Iterable[Tree], vocab: Optional[LabelVocab] = None) -> "Forest":
        """Build a forest from nested `(label, children)` tuples; the tree root is the document root."""
        builder = ForestBuilder(vocab)
        for tree in trees:
            builder.add_tree(tree)
        return builder.build()

    @classmethod
    def from_sentences(cls, docs: Iterable[Sequence[Sequence[str]]], vocab: Optional[LabelVocab] = None) -> "Forest":
        """Build a forest of word chains: each sentence a chain, all under the virtual root."""
        builder = ForestBuilder(vocab)
        for sents in docs:
            builder.add_chains(sents)
        return builder.build()


class ForestBuilder:
    """Accumulate documents, then `build()` one `Forest` (its depths computed when first read)."""

    def __init__(self, vocab: Optional[LabelVocab] = None, *, add_labels: bool = True) -> None:
        self.vocab = vocab if vocab is not None else LabelVocab()
        self.add_labels = add_labels
        self._labels: List[numpy.ndarray] = []
        self._parents: List[numpy.ndarray] = []
        self._sizes: List[int] = []
        self._n = 0

    def add_arrays(self, label_ids: numpy.ndarray, parents: numpy.ndarray) -> None:
        """Add one document given preorder label ids and local parent indices (-1 for the root)."""
        label_ids = numpy.asarray(label_ids, dtype=numpy.int32)
        parents = numpy.asarray(parents, dtype=numpy.int64)
        n = len(label_ids)
        if n == 0 or len(parents) != n or parents[0] != -1:
            raise ValueError("A document tree needs a root: its first node must have parent -1.")
        if numpy.any(parents[1:] < 0) or numpy.any(parents[1:] >= numpy.arange(1, n)):
            raise ValueError("Nodes must be in preorder: every parent must come before its child.")
        glob = parents + self._n
        glob[0] = -1
        self._labels.append(label_ids)
        self._parents.append(glob.astype(numpy.int32))
        self._sizes.append(n)
        self._n += n

    def add_tree(self, tree: Tree) -> None:
        """Add one document given as a nested `(label, children)` tuple."""
        labels: List[str] = []
        parents: List[int] = []
        stack = [(tree, -1)]
        while stack:
            (label, children), parent = stack.pop()
            if not isinstance(label, str):
                raise TypeError(f"Node labels must be strings, got {label!r}.")
            parents.append(parent)
            labels.append(label)
            stack.extend((child, len(labels) - 1) for child in reversed(children))
        self.add_labeled(labels, parents)

    def add_labeled(self, labels: Sequence[str], parents: Sequence[int]) -> None:
        """Add one document given preorder label strings and local parent indices."""
        root = 0 if labels[0] in (ROOT_TEXT, ROOT_LABEL) else self._ids(labels[:1])[0]
        self.add_arrays(numpy.concatenate(([root], self._ids(labels[1:]))), numpy.asarray(parents))

    def add_chains(self, sents: Sequence[Sequence[str]]) -> None:
        """Add one document whose sentences are word chains under the virtual root."""
        tokens = [tok for sent in sents for tok in sent]
        lengths = numpy.asarray([len(s) for s in sents if len(s)], dtype=numpy.int64)
        parents = numpy.arange(-1, len(tokens), dtype=numpy.int64)
        parents[numpy.cumsum(lengths) - lengths + 1] = 0
        self.add_arrays(numpy.concatenate(([0], self._ids(tokens))), parents)

    def _ids(self, strings: Sequence[str]) -> numpy.ndarray:
        return self.vocab.lookup(strings, add=self.add_labels)

    def build(self) -> Forest:
        """Concatenate the documents into a Forest; the builder is emptied to free memory early."""
        offsets = numpy.zeros(len(self._sizes) + 1, dtype=numpy.int64)
        numpy.cumsum(self._sizes, out=offsets[1:])
        labels, parents = _joined(self._labels), _joined(self._parents)
        self._sizes, self._n = [], 0
        return Forest(labels, parents, None, offsets, self.vocab)


def _joined(parts: List[numpy.ndarray]) -> numpy.ndarray:
    """The arrays of `parts` concatenated; `parts` is emptied, so that each part is freed as soon as it is copied."""
    joined = numpy.concatenate(parts) if parts else numpy.zeros(0, numpy.int32)
    parts.clear()
    return joined


def release_pages(*arrays: numpy.ndarray) -> int:
    """Give back, in this (forked) process only, the pages wholly inside each C-contiguous array it will not read
    again (they then read as zeros). Linux only; RETURNS (int): the bytes released."""
    if not sys.platform.startswith("linux"):
        return 0
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    page, released = mmap.PAGESIZE, 0
    for array in arrays:
        if not array.flags.c_contiguous or array.nbytes < page:
            continue
        start = -(-array.ctypes.data // page) * page
        end = (array.ctypes.data + array.nbytes) // page * page
        if end > start and libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), mmap.MADV_DONTNEED) == 0:
            released += end - start
    return released


def preorder_depths(parents: numpy.ndarray) -> numpy.ndarray:
    """int32 depths from parent indices in preorder (-1 for roots); a ValueError where a parent follows its child."""
    parents = numpy.asarray(parents)
    if parents.dtype != numpy.int32:
        parents = parents.astype(numpy.int64)
    return _compiled_depths(numpy.ascontiguousarray(parents))
