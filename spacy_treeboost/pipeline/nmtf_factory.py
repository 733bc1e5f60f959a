"""The `nmtf_sentiment` factory, apart from the component: creating a `Language` must import neither the NMTF
package nor scipy."""
from typing import TYPE_CHECKING, Any, Callable, Dict, Literal, Optional

from spacy.language import Language

from . import scoring  # noqa: F401  (registers the spacy_treeboost.nmtf_scorer scorers, picklable partials)

if TYPE_CHECKING:
    from .nmtf_sentiment import NMTFSentiment

DEFAULT_NMTF_SCORE_WEIGHTS = {**scoring.CATS_SCORE_WEIGHTS, "cats_log_loss": None, "cats_ece": None}
DEFAULT_CONFIG: Dict[str, Any] = {
    "positive_label": "positive", "negative_label": "negative",
    "learner": {"@learners": "spacy_treeboost.SSMFLKSelfTrained.v1"},
    "iterations_per_update": 10, "n_words": 5000, "norm": "l2", "word_norm": True, "token_attr": "LOWER",
    "stem": False, "scorer": {"@scorers": "spacy_treeboost.nmtf_scorer.v2"},
}


@Language.factory("nmtf_sentiment", assigns=["doc.cats"], default_config=DEFAULT_CONFIG,
                  default_score_weights=DEFAULT_NMTF_SCORE_WEIGHTS)
def make_nmtf_sentiment(nlp: Language, name: str, positive_label: str, negative_label: str, learner: Any,
                        iterations_per_update: int, n_words: int, norm: Literal["l1", "l2"], word_norm: bool,
                        token_attr: Literal["LOWER", "NORM", "LEMMA"], stem: bool,
                        scorer: Optional[Callable]) -> "NMTFSentiment":
    """Create an NMTFSentiment component (docs/nmtf.md).

    positive_label (str): The label written for positive polarity.
    negative_label (str): The label written for negative polarity.
    learner (MFLK): A registered learner: "spacy_treeboost.SSMFLKSelfTrained.v1" (default),
        "spacy_treeboost.SSMFLKNaiveBayes.v1", "spacy_treeboost.SSMFLK.v1" or "spacy_treeboost.MFLK.v1".
    iterations_per_update (int): Iterations between the checkpoints at which held-out labels choose the iterations.
    n_words (int): Vocabulary size (most document-frequent words, stop words removed).
    norm (str): Per-document normalization, "l2" or "l1".
    word_norm (bool): Scale every word of the training matrix to unit norm.
    token_attr (str): Token attribute used as the word: LOWER, NORM or LEMMA.
    stem (bool): Porter-stem the words and the lexicon alike.
    scorer (Optional[Callable]): The scoring method ("spacy_treeboost.nmtf_scorer.v2": spaCy's `cats_*` keys).
    """
    from .nmtf_sentiment import NMTFSentiment

    return NMTFSentiment(
        nlp.vocab, None, name, positive_label=positive_label, negative_label=negative_label, learner=learner,
        iterations_per_update=iterations_per_update, n_words=n_words, norm=norm, word_norm=word_norm,
        token_attr=token_attr, stem=stem, scorer=scorer)
