"""Small trained treeboost_textcat pipelines shared by the tests."""
import spacy

from textcat_data import TRAIN, make_examples


def boost(**params):
    """A boosting learner block (+FQ by default)."""
    return {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "frequency", **params}


def trained_nlp(config=None, rounds=30):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": boost(), "rounds_per_update": rounds, **(config or {})})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    return nlp, pipe


TEXTS = [t for t, _ in TRAIN]
BOOST = "spacy_treeboost.SubtreeBoost.v1"


def learner_block(kind, booster="presence", **params):
    """The learner sub-config: "linear", "corrective" (over `booster`) or a boosting algorithm."""
    if kind == "linear":
        return {"@learners": "spacy_treeboost.SubtreeLinear.v1", "max_pattern_size": 2, "min_support": 1, "cv": 2,
                **params}
    estimator = {"@learners": BOOST, "algorithm": booster, "max_pattern_size": 2, "min_support": 1, "n_rounds": 10000}
    if kind == "corrective":
        return {"@learners": "spacy_treeboost.CorrectiveBoost.v1", "cv": 2, **params, "estimator": estimator}
    return {**estimator, "algorithm": kind, **params}


def trained(kind, rounds=20, **params):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": learner_block(kind, **params),
                                                     "rounds_per_update": rounds})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    return nlp, pipe


def saved_boosting_pipeline(path):
    """A +FQ pipeline trained for 10 rounds on TRAIN and saved to `path`; RETURNS the trained pipeline."""
    nlp, _ = trained_nlp(rounds=10)
    nlp.to_disk(path)
    return nlp
