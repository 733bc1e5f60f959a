"""Docs to trees: each sentence a dependency tree or a word chain under a virtual root, labeled by token attributes
(several joined by "|"). Skipped tokens leave chains; in a dependency tree their children attach to the nearest kept
ancestor. "chain+dependency" puts both views under the root, the dependency labels prefixed by "dep:"."""
import warnings
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple

import numpy

if TYPE_CHECKING:
    from spacy.strings import StringStore
    from spacy.tokens import Doc

from ..exceptions import InvalidSettingError
from .forest import DEPENDENCY_VIEW_PREFIX, ROOT_LABEL, Forest, LabelVocab

TREE_MODES = ("chain", "dependency", "chain+dependency")
NODE_ATTRS = ("ORTH", "LOWER", "NORM", "LEMMA", "POS", "TAG", "DEP", "ENT_TYPE", "SHAPE", "PREFIX", "SUFFIX")
LABEL_SEPARATOR = "|"
ANNOTATED_ATTRS = {
    "LEMMA": "a lemmatizer (with a tagger and an attribute_ruler before it)",
    "POS": "a tagger and an attribute_ruler, or a morphologizer",
    "TAG": "a tagger",
    "DEP": "a parser",
    "ENT_TYPE": "an entity recognizer (ner)",
}
SENTENCE_ENDS = (".", "!", "?")
DocParts = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, Optional[numpy.ndarray]]


def join_label(values: Sequence[str]) -> str:
    """One node label from several attribute values; "|" and "\\" inside a value are escaped by "\\"."""
    return LABEL_SEPARATOR.join(v.replace("\\", "\\\\").replace(LABEL_SEPARATOR, "\\" + LABEL_SEPARATOR) for v in values)


def split_label(label: str) -> List[str]:
    """Invert `join_label`: the attribute values of a node label."""
    parts: List[str] = []
    current: List[str] = []
    chars = iter(label)
    for ch in chars:
        if ch == "\\":
            current.append(next(chars, ""))
        elif ch == LABEL_SEPARATOR:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


class SingleChainWarning(UserWarning):
    """Chain mode sees no sentence boundaries: every document is one chain."""


class TreeSpec:
    """How docs become trees.

    tree_mode (str): "chain", "dependency" or "chain+dependency".
    node_attrs (Sequence[str]): Token attributes that label nodes, e.g. ["LOWER"].
    skip_flags (Sequence[str]): Boolean token attributes of tokens to leave out.
    """

    def __init__(self, tree_mode: str = "chain", node_attrs: Sequence[str] = ("LOWER",),
                 skip_flags: Sequence[str] = ("IS_SPACE",)) -> None:
        from spacy.attrs import IDS

        if tree_mode not in TREE_MODES:
            raise InvalidSettingError(f"tree_mode={tree_mode!r} is invalid: choose one of "
                                      f"{', '.join(map(repr, TREE_MODES))}", setting="tree_mode", value=tree_mode)
        if not node_attrs:
            raise InvalidSettingError("node_attrs is empty: name at least one token attribute, e.g. ['LOWER']",
                                      setting="node_attrs", value=node_attrs)
        for name in node_attrs:
            if name.upper() not in NODE_ATTRS:
                raise InvalidSettingError(f"node_attrs: {name!r} is not a string-valued token attribute; use any of "
                                          f"{', '.join(NODE_ATTRS)}", setting="node_attrs", value=node_attrs)
        for name in skip_flags:
            if name.upper() not in IDS or not name.upper().startswith(("IS_", "LIKE_")):
                raise InvalidSettingError(f"skip_flags: {name!r} is not a boolean token attribute (e.g. IS_PUNCT, "
                                          "IS_SPACE, IS_STOP, LIKE_NUM)", setting="skip_flags", value=skip_flags)
        self.tree_mode = tree_mode
        self.node_attrs = [a.upper() for a in node_attrs]
        self.skip_flags = [a.upper() for a in skip_flags]
        self._attr_ids = [IDS[a] for a in self.node_attrs]
        self._flag_ids = [IDS[a] for a in self.skip_flags]

    def check_docs(self, docs: Sequence, name: str, parse_source: str) -> None:
        """Refuse node attributes empty for most tokens of the training docs; warn when chain mode finds no sentence
        boundaries in docs of several sentences. `name` and `parse_source` are for the messages."""
        from spacy.attrs import IDS

        n_tokens = sum(len(doc) for doc in docs)
        for attr in self.node_attrs:
            if attr not in ANNOTATED_ATTRS or not n_tokens:
                continue
            filled = sum(int(numpy.count_nonzero(doc.to_array([IDS[attr]]))) for doc in docs if len(doc))
            limit = 1 if attr == "ENT_TYPE" else n_tokens / 2
            if filled < limit:
                source = ("" if parse_source == "pipeline" else
                          f" The training docs come from parse_source={parse_source!r}; with 'pipeline' the "
                          f"components before '{name}' annotate them.")
                raise ValueError(
                    f"'{name}' labels nodes with {attr}, but {n_tokens - filled} of the {n_tokens} tokens of the "
                    f"training docs have no {attr}, so most nodes would get an empty label. {attr} is set by "
                    f"{ANNOTATED_ATTRS[attr]}: put one before '{name}' in the pipeline (configs/"
                    f"dependency_lemma_sentiment.cfg sources them from an English pipeline), or remove {attr} from "
                    f"node_attrs.{source}")
        if self.tree_mode == "chain" and docs and not any(doc.has_annotation("SENT_START") for doc in docs):
            from spacy.strings import get_string_id

            end_ids = numpy.array([get_string_id(e) for e in SENTENCE_ENDS], dtype=numpy.uint64)
            inner_ends = sum(bool(numpy.isin(doc.to_array([IDS["ORTH"]])[:-1], end_ids).any()) for doc in docs)
            if inner_ends * 10 >= len(docs):
                warnings.warn(
                    f"'{name}' is in chain mode, but no training doc has sentence boundaries, so each doc is one "
                    f"chain and subtrees run across sentences ({inner_ends} of {len(docs)} docs have a '.', '!' or "
                    f"'?' before their end). Put a sentencizer (or a parser) before '{name}' in the pipeline.",
                    SingleChainWarning)

    def node_labels(self, doc: "Doc") -> Tuple[List[str], numpy.ndarray, numpy.ndarray]:
        """Label strings, local parents and token indices (-1 for the virtual root) of one doc's tree."""
        values, parents, tokens, dep_view = self.doc_parts(doc)
        strings, inverse = label_strings(values[1:], doc.vocab.strings, None if dep_view is None else dep_view[1:])
        return [ROOT_LABEL] + [strings[i] for i in inverse], parents, tokens

    def doc_parts(self, doc: "Doc") -> DocParts:
        """Label values (n_nodes, n_attrs), local parents and token indices of a doc's tree (the root first: values
        0, token -1) and, for "chain+dependency", a mask of the dependency view's nodes (else None)."""
        if self.tree_mode != "chain+dependency":
            return (*self._view_arrays(doc, self.tree_mode), None)
        c_values, c_parents, c_tokens = self._view_arrays(doc, "chain")
        d_values, d_parents, d_tokens = self._view_arrays(doc, "dependency")
        n = len(c_parents)
        d_parents = numpy.where(d_parents[1:] == 0, 0, d_parents[1:] + n - 1)
        dep_view = numpy.zeros(n + len(d_parents), dtype=bool)
        dep_view[n:] = True
        return (numpy.concatenate((c_values, d_values[1:])), numpy.concatenate((c_parents, d_parents)),
                numpy.concatenate((c_tokens, d_tokens[1:])), dep_view)

    def batch_arrays(self, docs: Sequence) -> Tuple[numpy.ndarray, Optional[numpy.ndarray], numpy.ndarray,
                                                    numpy.ndarray, numpy.ndarray]:
        """The trees of a batch of docs: the label values of the nodes below the roots, for "chain+dependency" a mask
        of the dependency view's among them (else None), their node indices, the int32 parents and int64 offsets."""
        if self.tree_mode == "chain":
            values, _, node, parents, offsets = self._chains(docs)
            return values, None, node, parents, offsets
        parts = [self.doc_parts(doc) for doc in docs]
        offsets = numpy.zeros(len(parts) + 1, dtype=numpy.int64)
        numpy.cumsum([len(p[1]) for p in parts], out=offsets[1:])
        if not parts:
            empty = numpy.zeros(0, numpy.int32)
            return numpy.zeros((0, len(self._attr_ids)), numpy.uint64), None, empty, empty, offsets
        parents = numpy.concatenate([p[1] + o for p, o in zip(parts, offsets[:-1])])
        parents[offsets[:-1]] = -1
        node = numpy.delete(numpy.arange(offsets[-1]), offsets[:-1])
        dep_view = None if parts[0][3] is None else numpy.concatenate([p[3] for p in parts])[node]
        return numpy.concatenate([p[0] for p in parts])[node], dep_view, node, parents.astype(numpy.int32), offsets

    def _view_arrays(self, doc: "Doc", tree_mode: str) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        from spacy.attrs import HEAD

        n_attrs = len(self._attr_ids)
        if tree_mode == "chain":
            kept_values, kept, node, parents, offsets = self._chains([doc])
            values = numpy.zeros((offsets[-1], n_attrs), numpy.uint64)
            values[node] = kept_values
            tokens = numpy.full(offsets[-1], -1, numpy.int64)
            tokens[node] = kept
            return values, parents.astype(numpy.int64), tokens
        if len(doc) == 0:
            return numpy.zeros((1, n_attrs), numpy.uint64), numpy.array([-1], numpy.int64), numpy.array([-1])
        if not doc.has_annotation("DEP"):
            raise ValueError(
                f"tree_mode={self.tree_mode!r} needs parsed docs, but a doc has no dependency parse. Put a parser before "
                "the component (e.g. source 'tok2vec' and 'parser' from an English pipeline, as "
                "configs/dependency_sentiment.cfg does), or set tree_mode='chain'. parse_source='reference' does "
                "not replace the parser: it only takes the training trees from a DocBin that stores parses, while "
                "evaluation and prediction parse with the pipeline.")
        from ._preorder import dependency_preorder

        arr = doc.to_array(self._attr_ids + [HEAD] + self._flag_ids)
        heads = arr[:, n_attrs].view(numpy.int64) + numpy.arange(len(doc))
        keep = numpy.logical_not(arr[:, n_attrs + 1:].any(axis=1)) if self._flag_ids else numpy.ones(len(doc), bool)
        heads = numpy.where(heads == numpy.arange(len(doc)), -1, heads)
        if not keep.all():
            heads = _skip_tokens(heads, keep)
        kept = numpy.flatnonzero(keep)
        remap = numpy.full(len(doc), -1, dtype=numpy.int64)
        remap[kept] = numpy.arange(len(kept))
        sub_heads = numpy.where(heads[kept] >= 0, remap[heads[kept]], -1)
        order_k, parents = dependency_preorder(sub_heads.astype(numpy.int32))
        order = kept[order_k]
        values = numpy.zeros((len(order) + 1, n_attrs), numpy.uint64)
        values[1:] = arr[order, :n_attrs]
        return values, parents.astype(numpy.int64), numpy.r_[-1, order]

    def _chains(self, docs: Sequence) -> Tuple[numpy.ndarray, ...]:
        """The chain trees of a batch of docs: the attribute values, token indices (into the docs concatenated) and
        node indices of the kept tokens, the parents of all nodes (a root first in each doc) and the docs' offsets."""
        from spacy.attrs import SENT_START

        n_attrs = len(self._attr_ids)
        lengths = numpy.array([len(doc) for doc in docs], dtype=numpy.int64)
        columns = self._attr_ids + [SENT_START] + self._flag_ids
        arr = (numpy.concatenate([doc.to_array(columns) for doc in docs if len(doc)])
               if lengths.sum() else numpy.zeros((0, len(columns)), numpy.uint64))
        doc_of = numpy.repeat(numpy.arange(len(docs)), lengths)
        starts = arr[:, n_attrs].view(numpy.int64) == 1
        first = numpy.cumsum(lengths) - lengths
        starts[first[lengths > 0]] = True
        keep = ~arr[:, n_attrs + 1:].astype(bool).any(axis=1) if self._flag_ids else numpy.ones(len(arr), bool)
        kept = numpy.flatnonzero(keep)
        sent = numpy.cumsum(starts)[kept]
        kept_doc = doc_of[kept]
        offsets = numpy.zeros(len(docs) + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.bincount(kept_doc, minlength=len(docs)) + 1, out=offsets[1:])
        node = numpy.arange(len(kept)) + kept_doc + 1
        new_sentence = numpy.ones(len(kept), dtype=bool)
        new_sentence[1:] = sent[1:] != sent[:-1]
        parents = numpy.full(offsets[-1], -1, dtype=numpy.int32)
        parents[node] = numpy.where(new_sentence, offsets[kept_doc], node - 1)
        return arr[kept, :n_attrs], kept, node, parents, offsets


def _skip_tokens(heads: numpy.ndarray, keep: numpy.ndarray) -> numpy.ndarray:
    """Re-attach every token to its nearest kept ancestor (-1 for the virtual root)."""
    out = heads.copy()
    bad = numpy.flatnonzero((out >= 0) & ~keep[numpy.maximum(out, 0)])
    while len(bad):
        out[bad] = out[out[bad]]
        bad = bad[(out[bad] >= 0) & ~keep[numpy.maximum(out[bad], 0)]]
    return out


def label_strings(values: numpy.ndarray, string_store: "StringStore",
                  dep_view: Optional[numpy.ndarray] = None) -> Tuple[List[str], numpy.ndarray]:
    """The unique labels of (n, n_attrs) attribute values (prefixed where `dep_view`), and each row's index."""
    rows = values if dep_view is None or not dep_view.any() else numpy.column_stack((values, dep_view))
    marked = rows.shape[1] > values.shape[1]
    if rows.shape[1] == 1:
        uniq, inverse = numpy.unique(rows[:, 0], return_inverse=True)
        uniq = uniq[:, None]
    else:
        uniq, inverse = numpy.unique(rows, axis=0, return_inverse=True)
    names = [[string_store[v] if v else "" for v in row] for row in uniq[:, :values.shape[1]].tolist()]
    strings = [row[0] if len(row) == 1 else join_label(row) for row in names]
    if marked:
        strings = [DEPENDENCY_VIEW_PREFIX + t if m else t for t, m in zip(strings, uniq[:, -1].tolist())]
    return strings, inverse.ravel()


def docs_to_forest(docs: Iterable, spec: TreeSpec, vocab: Optional[LabelVocab] = None) -> Forest:
    """Build a training forest; every label string is added to `vocab`."""
    docs = list(docs)
    values, dep_view, node, parents, offsets = spec.batch_arrays(docs)
    vocab = vocab if vocab is not None else LabelVocab()
    labels = numpy.zeros(len(parents), numpy.int32)
    if len(node):
        strings, inverse = label_strings(values, docs[0].vocab.strings, dep_view)
        labels[node] = vocab.lookup(strings)[inverse]
    return Forest(labels, parents, None, offsets, vocab)


def _row_keys(values: numpy.ndarray) -> numpy.ndarray:
    """One key per row of attribute values: the value itself for one attribute, else the row's bytes."""
    values = numpy.ascontiguousarray(values, dtype=numpy.uint64)
    if values.shape[1] == 1:
        return values[:, 0]
    return values.view(numpy.dtype((numpy.void, 8 * values.shape[1]))).ravel()


class _LabelTable:
    """Label ids of attribute-value rows, found by binary search."""

    def __init__(self, rows: numpy.ndarray, ids: Sequence[int]) -> None:
        keys = _row_keys(rows)
        order = numpy.argsort(keys, kind="stable")
        self._keys, self._ids = keys[order], numpy.asarray(ids, dtype=numpy.int32)[order]

    def __call__(self, values: numpy.ndarray) -> numpy.ndarray:
        """Each row's label id, or -1."""
        keys = _row_keys(values)
        if not len(self._keys):
            return numpy.full(len(keys), -1, dtype=numpy.int32)
        pos = numpy.minimum(numpy.searchsorted(self._keys, keys), len(self._keys) - 1)
        return numpy.where(self._keys[pos] == keys, self._ids[pos], -1).astype(numpy.int32)


class DocIndexer:
    """Docs to the preorder arrays a RuleSet matches, in its label ids (chains laid out a batch at a time)."""

    def __init__(self, spec: TreeSpec, label_strings: Sequence[str], string_store: "StringStore") -> None:
        self.spec = spec
        self._root_id = list(label_strings).index(ROOT_LABEL) if ROOT_LABEL in label_strings else -1
        two_views = spec.tree_mode == "chain+dependency"
        rows, ids = [], []
        for i, s in enumerate(label_strings):
            if s == ROOT_LABEL:
                continue
            view = two_views and s.startswith(DEPENDENCY_VIEW_PREFIX)
            s = s[len(DEPENDENCY_VIEW_PREFIX):] if view else s
            parts = split_label(s) if len(spec.node_attrs) > 1 else [s]
            if len(parts) == len(spec.node_attrs):
                rows.append([int(string_store[p]) if p else 0 for p in parts] + ([int(view)] if two_views else []))
                ids.append(i)
        # in two views, a last column tells the dependency view's labels from the chain's
        self._table = _LabelTable(numpy.array(rows, dtype=numpy.uint64).reshape(-1, len(spec.node_attrs) + two_views),
                                  ids)

    def arrays(self, docs: Sequence) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(labels, parents, offsets) of the docs' trees; unknown labels are -1."""
        values, dep_view, node, parents, offsets = self.spec.batch_arrays(docs)
        labels = numpy.full(offsets[-1], self._root_id, dtype=numpy.int32)
        labels[node] = self._table(values if dep_view is None else numpy.column_stack((values, dep_view)))
        return labels, parents, offsets
