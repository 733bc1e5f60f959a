"""Lexicon-guided non-negative matrix tri-factorization for sentiment.

MFLK and SSMFLK (Li, Zhang & Sindhwani, ACL 2009) factorize the term-document
matrix X (words x documents) as X ~ F S G^T with F, S, G >= 0 and two classes:
column 0 is the positive polarity, column 1 the negative one. A lexicon prior
F0 pulls the rows of F for known words towards their polarity (weight alpha);
SSMFLK also pulls the rows of G for labelled documents towards their labels
(weight beta).

Matrices follow the paper's orientation: X has one row per vocabulary word and
one column per document. Everything is computed with thin products, so the
n x n matrix G G^T and the m x m matrix F F^T are never formed; an iteration
costs O(z k + (m + n) k^2) for z non-zeros.

The printed algorithm (docs/algorithms.md, section 4, test vector T8) stays
reachable with `update="sqrt"` or `"as_printed"`, `init="kmeans"` and
`prior_scale="one"`. The defaults deviate from it on four documented points
(docs/nmtf_results.md, "Deviations from the printed algorithm"):

- `update="monotone"`: multiplicative rules whose fixed points are exactly the
  KKT conditions the paper states for its objective (its eq. 10, with
  F S G^T G S^T rather than F F^T X G S^T in the denominator), square-root
  damped. They never increase J, unlike the printed orthogonal rules.
- `prior_scale="unit"`: F0 and G0 are put on the scale of the factors: their
  columns, like the initial F and G, have unit L2 norm (F^T F = I, the
  paper's orthogonality motivation). With 0/1 entries the prior asks for
  lexicon rows of F about 20 times larger than unit-norm columns allow.
- `init="lexicon"`: G starts at the documents' lexicon classes (the class of
  F0 whose words carry more of the document's weight) instead of k-means
  clusters, which carry no polarity and which multiplicative updates barely
  leave.
- terms on a common scale: `word_weights` (applied by `term_document_matrix`)
  give every vocabulary word a unit-norm row, so that the fit weighs each word
  as equally as the prior does. This belongs to the representation, not to
  the estimator.

SSMFLK's defaults differ on two more points (issue 15); `beta_scale="one"`,
`label_start=0` restore the printed label weight and start:

- `beta_scale="fit"`: beta is relative. The weight used in J is
  `beta_ = beta * (||X||^2 / n) / mean ||G0_j||^2` over the labelled rows j, so
  beta = 1 makes a labelled document whose row of G is 0 cost as much as an
  average document's share of the fit term. With unit-scale G0 rows of
  1/sqrt(n_k) the printed beta = 1 was thousands of times weaker than that.
- `label_start=0.05`: F starts leaning towards the class sums of the labelled
  documents (words of at least `label_min_docs` of them), and the unlabelled
  rows of G start at the classes this F implies.
"""
from __future__ import annotations

from collections import Counter
from importlib import import_module
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from .params import Params


class _Lazy:
    """A module imported on first use: spaCy imports every factory of every plugin when a `Language`
    is created, and scipy should load only when an NMTF model is fitted or used."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)


sp = _Lazy("scipy.sparse")

N_CLASSES = 2
POSITIVE, NEGATIVE = 0, 1
UNLABELLED = -1

# NLTK's English stop list; negations ("not", "no", "nor") are stop words too,
# as in the usual bag-of-words setting of the paper.
ENGLISH_STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you you're you've you'll you'd your yours
    yourself yourselves he him his himself she she's her hers herself it it's its
    itself they them their theirs themselves what which who whom this that that'll
    these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down
    in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so
    than too very s t can will just don don't should should've now d ll m o re ve
    y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn
    hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't
    shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't 's n't 're 've 'll 'd 'm
    """.split()
)

UPDATES = ("monotone", "sqrt", "as_printed")
INITS = ("lexicon", "kmeans")
PRIOR_SCALES = ("unit", "one")
BETA_SCALES = ("fit", "one")

_OFFSET_EPS = 1e-10
_FLOOR = 1e-16


def build_vocabulary(
    documents: Iterable[Sequence[str]],
    max_words: int = 5000,
    stop_words: Optional[Iterable[str]] = ENGLISH_STOP_WORDS,
    min_df: int = 1,
    alphabetic_only: bool = True,
) -> List[str]:
    """Choose the words with the highest document frequency.

    documents (Iterable[Sequence[str]]): One token list per document (lower-cased
        words, lemmas, or whatever the caller chooses).
    max_words (int): The vocabulary size m.
    stop_words (Optional[Iterable[str]]): Words to leave out.
    min_df (int): Leave out words found in fewer documents.
    alphabetic_only (bool): Leave out tokens without any letter (punctuation, numbers).
    RETURNS (List[str]): The words, most document-frequent first; ties in
        alphabetical order.
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, got {max_words}.")
    if min_df < 1:
        raise ValueError(f"min_df must be at least 1, got {min_df}.")
    stop = frozenset(stop_words or ())
    df: Counter = Counter()
    n_docs = 0
    for tokens in documents:
        n_docs += 1
        df.update(set(tokens))
    if n_docs == 0:
        raise ValueError("Cannot build a vocabulary from an empty corpus: pass at least one document.")
    candidates = [
        (-count, word)
        for word, count in df.items()
        if count >= min_df and word not in stop and (not alphabetic_only or any(c.isalpha() for c in word))
    ]
    if not candidates:
        raise ValueError(
            f"No word of the {n_docs} documents is left for the vocabulary after removing stop words, "
            f"non-alphabetic tokens and words in fewer than {min_df} documents."
        )
    candidates.sort()
    return [word for _, word in candidates[:max_words]]


def term_document_matrix(
    documents: Iterable[Sequence[str]],
    vocabulary: Sequence[str],
    norm: Optional[str] = "l2",
    word_weights: Optional[np.ndarray] = None,
) -> sp.csr_matrix:
    """Count the vocabulary words of each document, one column per document.

    documents (Iterable[Sequence[str]]): One token list per document.
    vocabulary (Sequence[str]): The words, in row order.
    norm (Optional[str]): "l2" (default) or "l1" scales every non-empty column to
        unit norm; None keeps raw counts.
    word_weights (Optional[numpy.ndarray]): One factor per vocabulary word,
        applied to its row after the column normalization, e.g. the
        `word_weights` of the training matrix, so that new documents are
        represented like the training documents.
    RETURNS (scipy.sparse.csr_matrix): X, shape (len(vocabulary), n_documents).
    """
    if norm not in ("l1", "l2", None):
        raise ValueError(f"norm must be 'l1', 'l2' or None, got {norm!r}.")
    index: Dict[str, int] = {word: i for i, word in enumerate(vocabulary)}
    if len(index) != len(vocabulary):
        raise ValueError("The vocabulary lists a word twice; pass distinct words.")
    rows: List[int] = []
    cols: List[int] = []
    vals: List[float] = []
    n_docs = 0
    for j, tokens in enumerate(documents):
        n_docs += 1
        counts = Counter(index[t] for t in tokens if t in index)
        rows.extend(counts.keys())
        cols.extend([j] * len(counts))
        vals.extend(counts.values())
    X = sp.csc_matrix(
        (np.asarray(vals, dtype=np.float64), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(len(vocabulary), n_docs),
    )
    if norm is not None:
        X = normalize_columns(X, norm)
    X = X.tocsr()
    if word_weights is not None:
        weights = np.asarray(word_weights, dtype=np.float64)
        if weights.shape != (len(vocabulary),) or not np.isfinite(weights).all() or (weights < 0).any():
            raise ValueError(
                f"word_weights must hold one finite non-negative factor per vocabulary word "
                f"({len(vocabulary)}), got shape {weights.shape}."
            )
        X = sp.csr_matrix(sp.diags(weights) @ X)
    return X


def word_weights(X: sp.spmatrix) -> np.ndarray:
    """Factors that give every non-empty row (word) of X unit L2 norm.

    The lexicon prior treats every lexicon word alike (a 0/1 row of F0), while
    the squared loss weighs a word by the squared norm of its row, so frequent
    words dominate the fit and the ~1,000 lexicon words of a 5,000-word
    vocabulary carry a few percent of it. Unit-norm word rows put the fit on
    the prior's per-word scale. Computed once on the training matrix and
    reused for new documents.

    X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
    RETURNS (numpy.ndarray): Shape (m,); 1 for words without any occurrence.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    sizes = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return 1.0 / np.where(sizes > 0, sizes, 1.0)


def normalize_columns(X: sp.spmatrix, norm: str = "l2") -> sp.csc_matrix:
    """Scale each non-empty column of X to unit L1 or L2 norm.

    X (scipy.sparse.spmatrix): The matrix.
    norm (str): "l1" or "l2".
    RETURNS (scipy.sparse.csc_matrix): The scaled copy.
    """
    X = sp.csc_matrix(X, dtype=np.float64, copy=True)
    if norm == "l2":
        sizes = np.sqrt(np.asarray(X.multiply(X).sum(axis=0)).ravel())
    elif norm == "l1":
        sizes = np.asarray(abs(X).sum(axis=0)).ravel()
    else:
        raise ValueError(f"norm must be 'l1' or 'l2', got {norm!r}.")
    sizes[sizes == 0] = 1.0
    X.data /= np.repeat(sizes, np.diff(X.indptr))
    return X


def lexicon_prior(
    vocabulary: Sequence[str], positive: Iterable[str], negative: Iterable[str]
) -> np.ndarray:
    """Build F0: row i is (1, 0) for a positive word, (0, 1) for a negative one, else 0.

    vocabulary (Sequence[str]): The words, in row order.
    positive (Iterable[str]): The positive words of the lexicon.
    negative (Iterable[str]): The negative words of the lexicon.
    RETURNS (numpy.ndarray): F0, shape (len(vocabulary), 2).
    """
    pos, neg = set(positive), set(negative)
    both = pos & neg
    if both:
        raise ValueError(f"{len(both)} words are both positive and negative (e.g. {sorted(both)[:3]}); drop them first.")
    F0 = np.zeros((len(vocabulary), N_CLASSES))
    for i, word in enumerate(vocabulary):
        if word in pos:
            F0[i, POSITIVE] = 1.0
        elif word in neg:
            F0[i, NEGATIVE] = 1.0
    return F0


def one_hot(labels: np.ndarray) -> np.ndarray:
    """Rows (1, 0) for class 0, (0, 1) for class 1 and zeros for UNLABELLED (-1).

    labels (numpy.ndarray): Class indices in {-1, 0, 1}.
    RETURNS (numpy.ndarray): Shape (len(labels), 2).
    """
    labels = np.asarray(labels)
    out = np.zeros((len(labels), N_CLASSES))
    known = labels != UNLABELLED
    out[np.flatnonzero(known), labels[known].astype(np.int64)] = 1.0
    return out


def align_clusters(X: sp.spmatrix, F0: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Swap two cluster ids if the swap agrees better with the lexicon.

    The permutation P maximizing trace(F0^T X G P) is kept, where G is the
    one-hot cluster matrix; for two clusters compare M11 + M22 with M12 + M21.

    X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
    F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
    clusters (numpy.ndarray): Cluster id (0 or 1) per document.
    RETURNS (numpy.ndarray): The cluster ids, swapped or not.
    """
    clusters = np.asarray(clusters, dtype=np.int64)
    M = F0.T @ np.asarray(X @ one_hot(clusters))
    if M[0, 1] + M[1, 0] > M[0, 0] + M[1, 1]:
        return 1 - clusters
    return clusters


def lexicon_classes(X: sp.spmatrix, F0: np.ndarray) -> np.ndarray:
    """Class of each document under the prior alone: argmax_k (X^T F0)_jk.

    Negative when the document's negative lexicon words carry more of its
    (normalized) term weight than its positive ones, positive otherwise; ties,
    e.g. documents without lexicon words, go to positive, as in `MFLK.predict`.

    X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
    F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
    RETURNS (numpy.ndarray): 0 or 1 per document.
    """
    score = np.asarray(sp.csr_matrix(X).T @ np.asarray(F0, dtype=np.float64))
    return np.argmax(score, axis=1).astype(np.int64)


def unit_columns(M: np.ndarray) -> np.ndarray:
    """Scale every non-zero column of a dense matrix to unit L2 norm.

    M (numpy.ndarray): The matrix.
    RETURNS (numpy.ndarray): The scaled copy.
    """
    sizes = np.linalg.norm(M, axis=0)
    return M / np.where(sizes > 0, sizes, 1.0)


def kmeans_clusters(
    X: sp.spmatrix, seed: int, max_dense: int = 20_000_000, n_components: int = 100, n_init: int = 1
) -> np.ndarray:
    """Two-means clustering of the documents (columns of X) with scipy's kmeans2.

    kmeans2 needs dense data. When the dense document matrix would exceed
    `max_dense` entries, the documents are first projected on their leading
    `n_components` singular vectors, which keeps the distances within that
    subspace, so memory stays bounded on large corpora. With `n_init` > 1 the
    clustering with the smallest within-cluster sum of squares is kept; the
    first restart is the one `n_init = 1` runs.

    X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
    seed (int): Seed of the k-means++ initializations.
    max_dense (int): Largest number of dense entries clustered directly.
    n_components (int): Rank of the projection for larger inputs.
    n_init (int): Number of k-means++ restarts.
    RETURNS (numpy.ndarray): Cluster id (0 or 1) per document.
    """
    m, n = X.shape
    if n < N_CLASSES:
        raise ValueError(f"k-means needs at least {N_CLASSES} documents, got {n}.")
    if n_init < 1:
        raise ValueError(f"n_init must be at least 1, got {n_init}.")
    if m * n <= max_dense:
        data = np.asarray(X.T.todense(), dtype=np.float64)
    else:
        rank = min(n_components, min(m, n) - 1)
        v0 = np.random.default_rng(seed).uniform(size=min(m, n))
        from scipy.sparse.linalg import svds

        u, s, vt = svds(sp.csr_matrix(X.T), k=rank, v0=v0, random_state=seed)
        data = u * s
    from scipy.cluster.vq import kmeans2

    rng = np.random.default_rng(seed)
    best, best_cost = None, np.inf
    for _ in range(n_init):
        centroids, clusters = kmeans2(data, N_CLASSES, iter=30, minit="++", seed=rng)
        cost = float(np.sum((data - centroids[clusters]) ** 2))
        if cost < best_cost:
            best, best_cost = clusters, cost
    return np.asarray(best, dtype=np.int64)


def fold_in(B: np.ndarray, X_new: sp.spmatrix) -> np.ndarray:
    """Solve min_{g >= 0} ||x - B g||^2 for every column x of X_new, with k = 2.

    The optimum of a two-variable non-negative least-squares problem is one of
    its active-set candidates: the unconstrained solution (if non-negative),
    each single-column solution clipped at 0, or 0. All are computed for all
    documents at once and the feasible one with the smallest residual wins.

    B (numpy.ndarray): The fixed basis F S, shape (m, 2).
    X_new (scipy.sparse.spmatrix): Documents as columns, shape (m, n_new).
    RETURNS (numpy.ndarray): g per document, shape (n_new, 2).
    """
    BtB = B.T @ B
    Btx = np.asarray(sp.csr_matrix(X_new).T @ B)
    n_new = Btx.shape[0]
    candidates = [np.zeros((n_new, 2))]
    for k in range(N_CLASSES):
        single = np.zeros((n_new, 2))
        if BtB[k, k] > 0:
            single[:, k] = np.maximum(Btx[:, k] / BtB[k, k], 0.0)
        candidates.append(single)
    det = BtB[0, 0] * BtB[1, 1] - BtB[0, 1] * BtB[1, 0]
    if det > 1e-12 * max(BtB[0, 0] * BtB[1, 1], 1e-300):
        both = np.linalg.solve(BtB, Btx.T).T
        both[(both < 0).any(axis=1)] = 0.0
        candidates.append(both)
    # residual up to the constant ||x||^2: g^T BtB g - 2 g^T Btx
    costs = np.stack([np.einsum("ij,jk,ik->i", g, BtB, g) - 2 * np.einsum("ij,ij->i", g, Btx) for g in candidates])
    best = np.argmin(costs, axis=0)
    return np.stack(candidates)[best, np.arange(n_new)]


class MFLK(Params):
    """Matrix factorization with lexical knowledge (unsupervised, lexicon prior only).

    alpha (float): Weight of the lexicon prior; 0 gives plain tri-factor NMF (TNMF).
    update (str): "monotone" (default; square-root damped multiplicative rules of
        the stated objective, J never increases), "sqrt" (the printed orthogonal
        rules, square-root damped) or "as_printed" (the paper's rules, which can
        oscillate).
    init (str): Start of G: "lexicon" (default; each document's lexicon class,
        see `lexicon_classes`) or "kmeans" (the paper's Algorithm 1: 2-means
        clusters, aligned to the lexicon).
    prior_scale (str): "unit" (default): F0, G0 and the initial F and G get
        unit-norm columns, the scale of orthogonal factors; "one": 0/1 priors and
        starts as printed.
    max_iter (int): Largest number of iterations run by `fit`.
    tol (float): Stop when ||G_t - G_{t-1}||_F <= tol * ||G_{t-1}||_F.
    offset (float): Added to the initial F0 and one-hot G (before any scaling).
    n_init (int): k-means restarts when k-means is used (lowest within-cluster
        sum of squares wins); each restart of the dense 2,000 x 5,000 movie-review
        matrix costs ~14 CPU seconds.
    random_state (int): Seed of the k-means initialization.
    """

    def __init__(
        self,
        alpha: float = 0.5,
        update: str = "monotone",
        init: str = "lexicon",
        prior_scale: str = "unit",
        max_iter: int = 100,
        tol: float = 1e-4,
        offset: float = 0.2,
        n_init: int = 1,
        random_state: int = 0,
    ) -> None:
        self.alpha = alpha
        self.update = update
        self.init = init
        self.prior_scale = prior_scale
        self.max_iter = max_iter
        self.tol = tol
        self.offset = offset
        self.n_init = n_init
        self.random_state = random_state

    _beta = 0.0
    _beta_scale = "one"
    _label_start = 0.0
    _label_min_docs = 1

    def fit(self, X: sp.spmatrix, F0: np.ndarray, init_clusters: Optional[np.ndarray] = None) -> "MFLK":
        """Factorize X until G stops changing or `max_iter` iterations have run.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m words, n documents).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2), 0/1 rows; zero rows are
            words outside the lexicon.
        init_clusters (Optional[numpy.ndarray]): Initial class (0/1) per document
            instead of `init`; it is still aligned to the lexicon.
        RETURNS (MFLK): The fitted estimator.
        """
        self.initialize(X, F0, init_clusters=init_clusters)
        return self.iterate(self.max_iter)

    def fit_predict(self, X: sp.spmatrix, F0: np.ndarray) -> np.ndarray:
        """Fit and return the transductive class of every training document.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
        RETURNS (numpy.ndarray): 0 (positive) or 1 (negative) per document.
        """
        return self.fit(X, F0).labels_

    def initialize(
        self,
        X: sp.spmatrix,
        F0: np.ndarray,
        y: Optional[np.ndarray] = None,
        init_clusters: Optional[np.ndarray] = None,
    ) -> "MFLK":
        """Set F, G and S to their starting values and keep X for `iterate`.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2), 0/1 rows.
        y (Optional[numpy.ndarray]): Document labels in {-1, 0, 1} (SSMFLK only).
        init_clusters (Optional[numpy.ndarray]): Classes replacing `init`.
        RETURNS (MFLK): self.
        """
        self._check_params()
        X = _check_matrix(X)
        m, n = X.shape
        F0 = np.asarray(F0, dtype=np.float64)
        if F0.shape != (m, N_CLASSES):
            raise ValueError(f"F0 must have shape ({m}, 2) for {m} words, got {F0.shape}.")
        if (F0 < 0).any() or not np.isfinite(F0).all():
            raise ValueError("F0 must be finite and non-negative.")
        c1 = F0.sum(axis=1) > 0
        if self.alpha > 0 and not c1.any():
            raise ValueError(
                "No lexicon word is in the vocabulary, so the lexicon prior is empty. Check that the "
                "lexicon and the documents use the same tokens (lower case, lemmas, stems), or use alpha=0."
            )
        G0, c2 = self._document_prior(y, n)
        if init_clusters is not None:
            init_clusters = np.asarray(init_clusters, dtype=np.int64)
            if init_clusters.shape != (n,) or not np.isin(init_clusters, (0, 1)).all():
                raise ValueError(f"init_clusters must hold 0 or 1 for each of the {n} documents.")
        if c1.any():
            F = F0 + self.offset
        else:
            # No lexicon (alpha = 0, plain TNMF): a constant F would keep its two
            # columns equal forever, so start from a clustering of the words.
            F = one_hot(kmeans_clusters(sp.csr_matrix(X.T), self.random_state)) + self.offset
        label_start = self._label_start if c2.any() else 0.0
        if label_start > 0:
            # SSMFLK's labelled start: F also leans towards the words of the labelled
            # documents of each class (their class sums X_L G0_L over the words found in
            # at least `label_min_docs` labelled documents, each column given
            # `label_start` times the norm of F's column), and the unlabelled rows of
            # G start at the classes this F implies (argmax X^T F) instead of the
            # lexicon's.
            sums = np.asarray(X[:, c2] @ G0[c2])
            # With unit-norm word rows a word seen once weighs as much as a frequent one, so
            # the words of a single labelled document would dominate the sums: they count
            # from `label_min_docs` labelled documents on.
            sums[np.asarray((X[:, c2] > 0).sum(axis=1)).ravel() < self._label_min_docs] = 0.0
            F = F + label_start * unit_columns(sums) * np.linalg.norm(F, axis=0)
        if init_clusters is not None:
            clusters = init_clusters
        elif self.init == "lexicon" and c1.any():
            if label_start > 0:
                clusters = np.argmax(np.asarray(X.T @ unit_columns(F)), axis=1).astype(np.int64)
            else:
                clusters = lexicon_classes(X, F0)
        else:
            clusters = kmeans_clusters(X, self.random_state, n_init=self.n_init)
        if c1.any():
            clusters = align_clusters(X, F0, clusters)
        elif c2.any():
            agree = (one_hot(clusters) * G0).sum()
            if agree < (one_hot(1 - clusters) * G0).sum():
                clusters = 1 - clusters
        G = one_hot(clusters) + self.offset
        G[c2] = G0[c2] + self.offset
        F0_target, G0_target = F0, G0
        if self.prior_scale == "unit":
            # Orthogonal factors (F^T F = I, G^T G = I) have unit-norm columns, so
            # entries of about 1/sqrt(column support). The priors and the starts
            # are put on that scale: F0's columns to unit norm; G0's rows to
            # 1/sqrt(n_k), with the class sizes n_k estimated from the label
            # proportions.
            F0_target = unit_columns(F0)
            if c2.any():
                share = G0[c2].mean(axis=0)
                G0_target = G0 / np.sqrt(np.maximum(share * n, 1.0))
            F, G = unit_columns(F), unit_columns(G)
        S = np.maximum(_least_squares_S(X, F, G), 1e-9)
        self._X = X
        self._Xt = X.T.tocsr()
        self._sq_norm_X = float(X.multiply(X).sum())
        # The weight of the document-label term actually used (beta_ in J).
        self.beta_ = self._beta
        if self._beta_scale == "fit" and c2.any():
            # beta = 1: each labelled document's label term, with its row of G at 0,
            # costs as much as an average document's share of the fit at F S G^T = 0.
            self.beta_ = self._beta * (self._sq_norm_X / n) / float(np.mean(np.sum(G0_target[c2] ** 2, axis=1)))
        self._F0, self._c1, self._G0, self._c2 = F0_target, c1, G0_target, c2
        self.F_, self.S_, self.G_ = F, S, G
        self.objective_ = [self._objective()]
        self.n_iter_ = 0
        self.converged_ = False
        return self

    def iterate(self, n_iter: int) -> "MFLK":
        """Run up to `n_iter` more multiplicative iterations (fewer once converged).

        Each iteration updates G, then F, then S (Algorithm 1's order), each with
        the latest values of the others.

        n_iter (int): Number of iterations.
        RETURNS (MFLK): self.
        """
        if not hasattr(self, "_X"):
            raise RuntimeError("Call `initialize` (or `fit`) before `iterate`.")
        monotone = self.update == "monotone"
        root = self.update in ("sqrt", "monotone")
        X, Xt, F, S, G = self._X, self._Xt, self.F_, self.S_, self.G_
        alpha, beta = self.alpha, self.beta_
        aF0 = alpha * (self._c1[:, None] * self._F0)
        c1 = self._c1[:, None].astype(np.float64)
        c2 = self._c2[:, None].astype(np.float64)
        bG0 = beta * (self._c2[:, None] * self._G0)
        for _ in range(n_iter):
            if self.converged_:
                break
            G_old = G
            Bm = Xt @ (F @ S)
            num = Bm + bG0
            if monotone:
                # gradient of J in G: -2 X^T F S + 2 G S^T F^T F S + 2 beta C2 (G - G0)
                den = G @ (S.T @ (F.T @ F) @ S) + beta * c2 * G
            else:
                den = G @ (G.T @ Bm) + G @ (G.T @ bG0)
            G = _multiply(G, num, den, root)
            XG = X @ G
            A = XG @ S.T
            num = A + aF0
            if monotone:
                # the paper's KKT condition (its eq. 10): F S G^T G S^T in the denominator
                den = F @ (S @ (G.T @ G) @ S.T) + alpha * c1 * F
            else:
                den = F @ (F.T @ A) + alpha * c1 * F
            F = _multiply(F, num, den, root)
            num = F.T @ XG
            den = (F.T @ F) @ S @ (G.T @ G)
            S = _multiply(S, num, den, root)
            self.F_, self.S_, self.G_ = F, S, G
            self.n_iter_ += 1
            self.objective_.append(self._objective())
            if np.linalg.norm(G - G_old) <= self.tol * np.linalg.norm(G_old):
                self.converged_ = True
        return self

    @property
    def labels_(self) -> np.ndarray:
        """Transductive class (0 positive, 1 negative) of each training document."""
        return np.argmax(self.G_, axis=1)

    def predict_proba(self, X: sp.spmatrix) -> np.ndarray:
        """Fold new documents in with F and S fixed and normalize g.

        X (scipy.sparse.spmatrix): Documents as columns, shape (m, n_new),
            normalized like the training matrix.
        RETURNS (numpy.ndarray): Shape (n_new, 2); (0.5, 0.5) for a document
            without any vocabulary word.
        """
        g = self.fold_in(X)
        total = g.sum(axis=1, keepdims=True)
        return np.where(total > 0, g / np.where(total > 0, total, 1.0), 0.5)

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """Positive-minus-negative fold-in coefficient g_pos - g_neg per document.

        X (scipy.sparse.spmatrix): Documents as columns, shape (m, n_new).
        RETURNS (numpy.ndarray): Shape (n_new,); > 0 means positive.
        """
        g = self.fold_in(X)
        return g[:, POSITIVE] - g[:, NEGATIVE]

    def predict(self, X: sp.spmatrix) -> np.ndarray:
        """Class of each new document: 0 (positive) or 1 (negative); ties go to positive.

        X (scipy.sparse.spmatrix): Documents as columns, shape (m, n_new).
        RETURNS (numpy.ndarray): Shape (n_new,).
        """
        return np.argmax(self.fold_in(X), axis=1)

    def fold_in(self, X: sp.spmatrix) -> np.ndarray:
        """Non-negative coefficients g of new documents on the basis F S.

        X (scipy.sparse.spmatrix): Documents as columns, shape (m, n_new).
        RETURNS (numpy.ndarray): Shape (n_new, 2).
        """
        if not hasattr(self, "F_"):
            raise RuntimeError("This model is not fitted yet: call `fit` first.")
        X = _check_matrix(X, allow_empty=True)
        if X.shape[0] != self.F_.shape[0]:
            raise ValueError(f"X must have one row per vocabulary word ({self.F_.shape[0]}), got {X.shape[0]}.")
        return fold_in(self.F_ @ self.S_, X)

    def word_polarity(self) -> np.ndarray:
        """Learned class of each vocabulary word: argmax of its row of F.

        RETURNS (numpy.ndarray): 0 (positive) or 1 (negative) per word.
        """
        return np.argmax(self.F_, axis=1)

    def _check_params(self) -> None:
        if self.update not in UPDATES:
            raise ValueError(f"update must be one of {', '.join(map(repr, UPDATES))}, got {self.update!r}.")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}, got {self.init!r}.")
        if self.prior_scale not in PRIOR_SCALES:
            raise ValueError(f"prior_scale must be one of {', '.join(map(repr, PRIOR_SCALES))}, got {self.prior_scale!r}.")
        if self._beta_scale not in BETA_SCALES:
            raise ValueError(f"beta_scale must be one of {', '.join(map(repr, BETA_SCALES))}, got {self._beta_scale!r}.")
        if not (isinstance(self._label_start, (int, float, np.integer, np.floating)) and np.isfinite(self._label_start)
                and self._label_start >= 0):
            raise ValueError(f"label_start must be a finite number >= 0, got {self._label_start!r}.")
        if not (isinstance(self._label_min_docs, (int, np.integer)) and not isinstance(self._label_min_docs, bool)
                and self._label_min_docs >= 1):
            raise ValueError(f"label_min_docs must be an integer >= 1, got {self._label_min_docs!r}.")
        if not (isinstance(self.n_init, (int, np.integer)) and self.n_init >= 1):
            raise ValueError(f"n_init must be an integer >= 1, got {self.n_init!r}.")
        for name in ("alpha", "_beta", "offset"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name.lstrip('_')} must be a finite number >= 0, got {value!r}.")
        if self.offset == 0:
            raise ValueError("offset must be > 0: a multiplicative update cannot move a factor entry that starts at 0.")
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 0):
            raise ValueError(f"max_iter must be an integer >= 0, got {self.max_iter!r}.")
        if not (np.isfinite(self.tol) and self.tol >= 0):
            raise ValueError(f"tol must be a finite number >= 0, got {self.tol!r}.")

    def _document_prior(self, y: Optional[np.ndarray], n: int) -> Tuple[np.ndarray, np.ndarray]:
        if y is None:
            return np.zeros((n, N_CLASSES)), np.zeros(n, dtype=bool)
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValueError(f"y must hold one label per document ({n}), got shape {y.shape}.")
        if not np.isin(y, (UNLABELLED, POSITIVE, NEGATIVE)).all():
            bad = sorted(set(np.unique(y).tolist()) - {UNLABELLED, POSITIVE, NEGATIVE})
            raise ValueError(f"y must hold 0 (positive), 1 (negative) or -1 (unlabelled); found {bad[:5]}.")
        return one_hot(y), y != UNLABELLED

    def _objective(self) -> float:
        F, S, G = self.F_, self.S_, self.G_
        XG = self._X @ G
        fit = self._sq_norm_X - 2 * np.sum(S * (F.T @ XG)) + np.sum(((F.T @ F) @ S @ (G.T @ G)) * S)
        prior_F = self.alpha * np.sum(((F - self._F0) ** 2)[self._c1])
        prior_G = self.beta_ * np.sum(((G - self._G0) ** 2)[self._c2])
        return float(fit + prior_F + prior_G)


class SSMFLK(MFLK):
    """Semi-supervised MFLK: the lexicon prior plus a prior on labelled documents.

    alpha (float): Weight of the lexicon prior.
    beta (float): Weight of the document-label prior. With `beta_scale="fit"`
        (default) it is relative: beta = 1 makes each labelled document's
        label term, with its row of G at 0, cost as much as an average
        document's share of the fit term at F S G^T = 0 (||X||^2 / n); the
        weight used in J is `beta_` = beta * (||X||^2 / n) / mean ||G0_j||^2 over
        the labelled rows j. With `beta_scale="one"` beta is used as printed.
    update (str): "monotone" (default), "sqrt" or "as_printed".
    init (str): Start of the unlabelled rows of G: "lexicon" (default) or "kmeans".
    prior_scale (str): "unit" (default) or "one".
    max_iter (int): Largest number of iterations run by `fit`.
    tol (float): Relative change in G below which iteration stops.
    offset (float): Added to the initial F0, one-hot G and labelled rows.
    n_init (int): k-means restarts when k-means is used.
    random_state (int): Seed of the k-means initialization.
    beta_scale (str): "fit" (default; beta relative to the fit per labelled
        document, see beta) or "one" (beta used as is, as printed).
    label_start (float): Weight of the labelled documents in the start of F
        (default 0.05): F starts at F0 + offset plus `label_start` times the
        labelled documents' class sums X_L G0_L (each column scaled to the norm
        of F's column), and with init="lexicon" the unlabelled rows of G start
        at the classes argmax X^T F of that F. 0 gives the start of MFLK
        (and of the printed algorithm).
    label_min_docs (int): Words found in fewer labelled documents are left out
        of those class sums (default 2: a word seen in one labelled document
        would weigh as much as a frequent one, given unit-norm word rows).
    """

    def __init__(
        self,
        alpha: float = 0.5,
        beta: float = 1.0,
        update: str = "monotone",
        init: str = "lexicon",
        prior_scale: str = "unit",
        max_iter: int = 100,
        tol: float = 1e-4,
        offset: float = 0.2,
        n_init: int = 1,
        random_state: int = 0,
        beta_scale: str = "fit",
        label_start: float = 0.05,
        label_min_docs: int = 2,
    ) -> None:
        super().__init__(
            alpha=alpha,
            update=update,
            init=init,
            prior_scale=prior_scale,
            max_iter=max_iter,
            tol=tol,
            offset=offset,
            n_init=n_init,
            random_state=random_state,
        )
        self.beta = beta
        self.beta_scale = beta_scale
        self.label_start = label_start
        self.label_min_docs = label_min_docs

    @property
    def _beta(self) -> float:  # type: ignore[override]
        return self.beta

    @property
    def _beta_scale(self) -> str:  # type: ignore[override]
        return self.beta_scale

    @property
    def _label_start(self) -> float:  # type: ignore[override]
        return self.label_start

    @property
    def _label_min_docs(self) -> int:  # type: ignore[override]
        return self.label_min_docs

    def fit(  # type: ignore[override]
        self, X: sp.spmatrix, F0: np.ndarray, y: np.ndarray, init_clusters: Optional[np.ndarray] = None
    ) -> "SSMFLK":
        """Factorize X with the lexicon prior and the labels of some documents.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
        y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
        init_clusters (Optional[numpy.ndarray]): Cluster ids replacing k-means.
        RETURNS (SSMFLK): The fitted estimator.
        """
        self.initialize(X, F0, y, init_clusters=init_clusters)
        return self.iterate(self.max_iter)  # type: ignore[return-value]

    def fit_predict(self, X: sp.spmatrix, F0: np.ndarray, y: np.ndarray) -> np.ndarray:  # type: ignore[override]
        """Fit and return the transductive class of every document.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
        y (numpy.ndarray): 0, 1 or -1 (unlabelled) per document.
        RETURNS (numpy.ndarray): 0 (positive) or 1 (negative) per document.
        """
        return self.fit(X, F0, y).labels_


def _least_squares_S(X: sp.csr_matrix, F: np.ndarray, G: np.ndarray) -> np.ndarray:
    # pinv equals (F^T F)^-1 F^T when F has full column rank, and stays defined when
    # k-means leaves a cluster empty.
    return np.linalg.pinv(F) @ np.asarray(X @ G) @ np.linalg.pinv(G.T @ G)


def _multiply(factor: np.ndarray, num: np.ndarray, den: np.ndarray, root: bool) -> np.ndarray:
    ratio = num / (den + _OFFSET_EPS)
    if root:
        ratio = np.sqrt(ratio)
    return np.maximum(factor * ratio, _FLOOR)


def _check_matrix(X: sp.spmatrix, allow_empty: bool = False) -> sp.csr_matrix:
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        raise TypeError(f"X must be a scipy.sparse matrix or numpy array, got {type(X).__name__}.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("X must be two-dimensional (words x documents).")
    if not allow_empty and (X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(f"X is empty (shape {X.shape}): pass at least one word and one document.")
    if not allow_empty and X.nnz == 0:
        raise ValueError("X has no non-zero entry: no document contains a vocabulary word.")
    if X.nnz and ((X.data < 0).any() or not np.isfinite(X.data).all()):
        raise ValueError("X must be finite and non-negative (a term-document matrix of counts or frequencies).")
    return X


# ---- Porter (1980) stemmer -----------------------------------------------------------------------
# M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980: the original
# algorithm, without the later extensions of Porter's own C code. The paper stems
# both the corpus and the lexicon; `porter_stem` with `Lexicon.map` does the same.


def _is_consonant(word: str, i: int) -> bool:
    c = word[i]
    if c in "aeiou":
        return False
    if c == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]: the number of vowel-consonant sequences."""
    m, previous_vowel = 0, False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _double_consonant(stem: str) -> bool:
    return len(stem) >= 2 and stem[-1] == stem[-2] and _is_consonant(stem, len(stem) - 1)


def _cvc(stem: str) -> bool:
    """*o: the stem ends consonant-vowel-consonant, the last not w, x or y."""
    n = len(stem)
    return (
        n >= 3
        and _is_consonant(stem, n - 3)
        and not _is_consonant(stem, n - 2)
        and _is_consonant(stem, n - 1)
        and stem[-1] not in "wxy"
    )


def _porter_step1a(w: str) -> str:
    for suffix, repl in (("sses", "ss"), ("ies", "i"), ("ss", "ss"), ("s", "")):
        if w.endswith(suffix):
            return w[: len(w) - len(suffix)] + repl
    return w


def _porter_step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _double_consonant(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _cvc(w):
                return w + "e"
            return w
    return w


def _porter_step1c(w: str) -> str:
    return w[:-1] + "i" if w.endswith("y") and _has_vowel(w[:-1]) else w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
    ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
    ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
    ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
)
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)


def _replace_longest(w: str, rules: Sequence[Tuple[str, str]], min_measure: int) -> str:
    # Only the longest matching suffix counts; if its condition fails, nothing changes.
    matches = [(suffix, repl) for suffix, repl in rules if w.endswith(suffix)]
    if not matches:
        return w
    suffix, repl = max(matches, key=lambda rule: len(rule[0]))
    stem = w[: len(w) - len(suffix)]
    return stem + repl if _measure(stem) > min_measure else w


def _porter_step2(w: str) -> str:
    return _replace_longest(w, _STEP2, 0)


def _porter_step3(w: str) -> str:
    return _replace_longest(w, _STEP3, 0)


def _porter_step4(w: str) -> str:
    matches = [suffix for suffix in _STEP4 if w.endswith(suffix)]
    if not matches:
        return w
    suffix = max(matches, key=len)
    stem = w[: len(w) - len(suffix)]
    if _measure(stem) <= 1 or (suffix == "ion" and not stem.endswith(("s", "t"))):
        return w
    return stem


def _porter_step5a(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            return stem
    return w


def _porter_step5b(w: str) -> str:
    return w[:-1] if _measure(w) > 1 and _double_consonant(w) and w.endswith("l") else w


def porter_stem(word: str) -> str:
    """Stem a lower-case word with Porter's (1980) suffix-stripping algorithm.

    Words of one or two letters and words with a character outside a-z are
    returned unchanged.

    word (str): The word, lower case.
    RETURNS (str): The stem, e.g. "generalizations" -> "gener".
    """
    if len(word) <= 2 or not word.isascii() or not word.isalpha() or not word.islower():
        return word
    for step in (_porter_step1a, _porter_step1b, _porter_step1c, _porter_step2, _porter_step3,
                 _porter_step4, _porter_step5a, _porter_step5b):
        word = step(word)
    return word
