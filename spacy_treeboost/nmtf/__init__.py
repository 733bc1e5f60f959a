"""Lexicon-guided non-negative matrix tri-factorization (MFLK, SSMFLK and their hybrids) and what it reads.
scipy is imported on first use, not with this package."""
from .common import N_CLASSES, NEGATIVE, POSITIVE, UNLABELLED
from .common import align_clusters, fold_in, kmeans_clusters, lexicon_classes, one_hot, unit_columns
from .factorization import BETA_SCALES, INITS, PRIOR_SCALES, UPDATES, MFLK, SSMFLK
from .hybrid import SSMFLKNaiveBayes, SSMFLKSelfTrained
from .text import ENGLISH_STOP_WORDS, build_vocabulary, document_term_matrix, lexicon_prior, normalize_columns
from .text import porter_stem, word_weights
