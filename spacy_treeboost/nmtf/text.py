"""Documents to the document-term matrix of the NMTF models, the lexicon prior, and the Porter stemmer."""
from __future__ import annotations

import functools
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np

from .common import N_CLASSES, NEGATIVE, POSITIVE, sp

# NLTK's English stop list (negations included, as in the paper's bag-of-words setting).
ENGLISH_STOP_WORDS = frozenset("""
    i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
    himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this
    that that'll these those am is are was were be been being have has had having do does did doing a an the and but
    if or because as until while of at by for with about against between into through during before after above
    below to from up down in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can will just don don't
    should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn
    wasn't weren weren't won won't wouldn wouldn't 's n't 're 've 'll 'd 'm
""".split())


@functools.lru_cache(maxsize=200_000)
def porter_stem(word: str) -> str:
    """The Porter (1980) stem of a lower-case word by `snowballstemmer`, e.g. "generalizations" -> "gener"; words of
    one or two letters and words with a character outside a-z are returned unchanged."""
    if len(word) <= 2 or not (word.isascii() and word.isalpha() and word.islower()):
        return word
    import snowballstemmer

    return snowballstemmer.stemmer("porter").stemWord(word)


def build_vocabulary(documents: Iterable[Sequence[str]], max_words: int = 5000,
                     stop_words: Optional[Iterable[str]] = ENGLISH_STOP_WORDS) -> List[str]:
    """The `max_words` words with a letter of the highest document frequency, most frequent first, ties in
    alphabetical order.

    documents (Iterable[Sequence[str]]): One token list per document.
    stop_words (Optional[Iterable[str]]): Words to leave out.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}.")
    stop = frozenset(stop_words or ())
    df: Counter = Counter()
    n_docs = 0
    for n_docs, tokens in enumerate(documents, start=1):
        df.update(set(tokens))
    if n_docs == 0:
        raise ValueError("Cannot build a vocabulary from an empty corpus: pass at least one document.")
    candidates = sorted((-count, word) for word, count in df.items()
                        if word not in stop and any(c.isalpha() for c in word))
    if not candidates:
        raise ValueError(f"No word of the {n_docs} documents is left for the vocabulary after removing stop words "
                         "and tokens without a letter.")
    return [word for _, word in candidates[:max_words]]


def document_term_matrix(documents: Iterable[Sequence[str]], vocabulary: Sequence[str], norm: Optional[str] = "l2",
                         word_weights: Optional[np.ndarray] = None) -> sp.csr_matrix:
    """The counts of the vocabulary words (columns) in each document (rows).

    documents (Iterable[Sequence[str]]): One token list per document.
    vocabulary (Sequence[str]): The words, in column order.
    norm (Optional[str]): "l2" or "l1" scales every non-empty document to unit norm; None keeps counts.
    word_weights (Optional[numpy.ndarray]): One factor per word, applied after the normalization.
    """
    if norm not in ("l1", "l2", None):
        raise ValueError(f"norm must be 'l1', 'l2' or None, got {norm!r}.")
    index: Dict[str, int] = {word: i for i, word in enumerate(vocabulary)}
    if len(index) != len(vocabulary):
        raise ValueError("The vocabulary lists a word twice; pass distinct words.")
    counts = [Counter(index[t] for t in tokens if t in index) for tokens in documents]
    words = [i for c in counts for i in c]
    docs = np.repeat(np.arange(len(counts)), [len(c) for c in counts])
    values = np.array([v for c in counts for v in c.values()], dtype=np.float64)
    X = sp.csc_matrix((values, (np.array(words, dtype=np.int64), docs)), shape=(len(vocabulary), len(counts)))
    if norm is not None:
        X = normalize_columns(X, norm)
    X = X.T.tocsr()
    if word_weights is not None:
        weights = np.asarray(word_weights, dtype=np.float64)
        if weights.shape != (len(vocabulary),) or not np.isfinite(weights).all() or (weights < 0).any():
            raise ValueError(f"word_weights must hold one finite non-negative factor per vocabulary word "
                             f"({len(vocabulary)}), got shape {weights.shape}.")
        X.data *= weights[X.indices]
        X.eliminate_zeros()
    return X


def word_weights(X: sp.spmatrix) -> np.ndarray:
    """Factors giving every word (column) of X unit L2 norm, so that frequent words do not dominate the fit; 1 for
    words without any occurrence."""
    return 1.0 / _column_norms(sp.csc_matrix(X, dtype=np.float64), "l2")


def normalize_columns(X: sp.spmatrix, norm: str = "l2") -> sp.csc_matrix:
    """A CSC copy of X with each non-empty column scaled to unit `norm` ("l1" or "l2")."""
    X = sp.csc_matrix(X, dtype=np.float64, copy=True)
    X.data /= np.repeat(_column_norms(X, norm), np.diff(X.indptr))
    return X


def _column_norms(X: sp.csc_matrix, norm: str) -> np.ndarray:
    """The `norm` of every column of X, 1 for an empty column."""
    if norm == "l2":
        sizes = np.sqrt(np.asarray(X.multiply(X).sum(axis=0)).ravel())
    elif norm == "l1":
        sizes = np.asarray(abs(X).sum(axis=0)).ravel()
    else:
        raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}.")
    return np.where(sizes > 0, sizes, 1.0)


def lexicon_prior(vocabulary: Sequence[str], positive: Iterable[str], negative: Iterable[str]) -> np.ndarray:
    """F0, shape (len(vocabulary), 2): row i is (1, 0) for a positive word, (0, 1) for a negative one, else 0."""
    pos, neg = set(positive), set(negative)
    both = pos & neg
    if both:
        raise ValueError(f"{len(both)} words are both positive and negative (e.g. {sorted(both)[:3]}); "
                         "drop them first.")
    F0 = np.zeros((len(vocabulary), N_CLASSES))
    F0[:, POSITIVE] = [word in pos for word in vocabulary]
    F0[:, NEGATIVE] = [word in neg for word in vocabulary]
    return F0
