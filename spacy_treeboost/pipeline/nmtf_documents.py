"""What `nmtf_sentiment` reads from documents: the words of a Doc, the class of a gold `cats`, extra unlabelled
documents."""
import functools
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..nmtf import NEGATIVE, POSITIVE, UNLABELLED, build_vocabulary, document_term_matrix, porter_stem, word_weights
from ..nmtf.common import sp


def doc_words(doc: Doc, token_attr: str, stem: bool, name: str) -> List[str]:
    """The words of a document as the component counts them (no whitespace tokens).

    doc (Doc): The document.
    token_attr (str): LOWER, NORM or LEMMA (lower-cased).
    stem (bool): Porter-stem the words.
    name (str): The component's name, for messages.
    RETURNS (List[str]): The words, in order.
    """
    if token_attr == "LEMMA":
        if len(doc) and not doc.has_annotation("LEMMA"):
            raise ValueError(
                f"{name} uses token_attr = LEMMA, but a document has no lemmas. Put a "
                f"lemmatizer before it (and in [training] annotating_components), or use LOWER.")
        words = [t.lemma_.lower() for t in doc if not t.is_space]
    elif token_attr == "NORM":
        words = [t.norm_ for t in doc if not t.is_space]
    else:
        words = [t.lower_ for t in doc if not t.is_space]
    return [_stem(w) for w in words] if stem else words


def gold_class(cats: Dict[str, float], labels: Tuple[str, str], index: int, name: str) -> int:
    """POSITIVE or NEGATIVE for a labelled example's cats, UNLABELLED for empty cats.

    cats (Dict[str, float]): The reference doc's cats.
    labels (Tuple[str, str]): The positive and the negative label.
    index (int): The example's position, for messages.
    name (str): The component's name, for messages.
    RETURNS (int): The class.
    """
    if not cats:
        return UNLABELLED
    positive, negative = labels
    unknown = sorted(set(cats) - {positive, negative})
    if unknown:
        raise ValueError(
            f"Training example {index} has the label {unknown[0]!r}, but {name} knows only "
            f"{positive!r} and {negative!r}. Set positive_label and negative_label in "
            f"[components.{name}] to the corpus's labels, or map the corpus labels.")
    p_pos, p_neg = cats.get(positive, 0.0), cats.get(negative, 0.0)
    if p_pos == p_neg:
        raise ValueError(
            f"Training example {index} has cats {dict(cats)}: exactly one of {positive!r} and "
            f"{negative!r} must be the larger (give an unlabeled document empty cats).")
    return POSITIVE if p_pos > p_neg else NEGATIVE


def as_doc(item: Any, nlp: Optional[Language]) -> Doc:
    """An unlabelled document given as an Example, a Doc or a text."""
    if isinstance(item, Example):
        return item.predicted
    if isinstance(item, Doc):
        return item
    if isinstance(item, str) and nlp is not None:
        return nlp.make_doc(item)
    raise TypeError(f"Unlabeled documents must be Examples, Docs or texts, got {type(item).__name__}.")


def training_matrix(tokens: Sequence[Sequence[str]], n_words: int, norm: str,
                    word_norm: bool) -> Tuple[List[str], "sp.csr_matrix", Optional[np.ndarray]]:
    """The vocabulary, the document-term matrix of the training documents and its word weights.

    tokens (Sequence[Sequence[str]]): The words of each training document.
    n_words (int): Vocabulary size (most document-frequent words, stop words removed).
    norm (str): Per-document normalization, "l2" or "l1".
    word_norm (bool): Scale every word's column to unit norm (the weights are kept for new documents).
    RETURNS (Tuple[List[str], scipy.sparse.csr_matrix, Optional[numpy.ndarray]]): Vocabulary, X and weights.
    """
    vocabulary = build_vocabulary(tokens, max_words=n_words)
    X = document_term_matrix(tokens, vocabulary, norm=norm)
    weights = word_weights(X) if word_norm else None
    if weights is not None:
        X = document_term_matrix(tokens, vocabulary, norm=norm, word_weights=weights)
    return vocabulary, X, weights


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return porter_stem(word)
