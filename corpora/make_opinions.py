"""Generate the embedded opinion corpus for the lexicon model: short English movie reviews (POS/NEG) whose opinion
words decide the label.

    python corpora/make_opinions.py [--out corpora/opinions] [--seed 2026]

Unlike `reviews/` (built around negation and contrast, which a bag of words cannot read), every opinion
sentence here states its polarity plainly ("The plot was gripping.", "A real letdown."): no negation, no
contrast. About half of the opinion words are in the shipped lexicon `lexicons/sentiment_small.jsonl`; the
others ("riveting", "clunky", "gem", "letdown") are not, so a model must learn them from the documents they
share with lexicon words. A review with three or more opinion sentences sometimes has one of the other
polarity, which the majority outweighs, and 2 % of the labels are flipped. All reviews are about films: with
two domains of equal size (films and products) the two-class factorization follows the domains rather than
the polarity. Only a quarter of the training
reviews carry a label; the others are unlabelled documents (no "label" key).

Draws use only `random.Random.random()` (via `make_corpus.Draw`), so the same seed writes the same files byte
for byte. Standard library only.
"""
import argparse
import sys
from pathlib import Path
from typing import Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_corpus import (  # noqa: E402
    MOVIE_ASPECTS, MOVIE_KINDS, NEG, OPENERS, OPPOSITE, POS, Draw, _capitalize, write_split)

LEXICON_WORDS = {
    POS: ["great", "superb", "brilliant", "excellent", "wonderful", "gripping", "charming", "clever", "fun",
          "lovely", "solid", "moving", "witty", "delightful", "impressive", "memorable"],
    NEG: ["awful", "boring", "dull", "terrible", "tedious", "clumsy", "weak", "sloppy", "silly", "shallow",
          "horrible", "poor", "disappointing", "mediocre", "lame", "pointless"],
}
OTHER_WORDS = {
    POS: ["riveting", "stunning", "heartfelt", "hilarious", "flawless", "inspired", "terrific", "splendid",
          "dazzling", "tender", "rousing", "sublime"],
    NEG: ["clunky", "wooden", "cheesy", "grating", "shoddy", "tacky", "bloated", "dreary", "murky", "plodding",
          "stale", "hokey"],
}
VERDICTS = {
    POS: ["A real gem.", "Money well spent.", "A {w} {kind}.", "Highly {rec}.", "I {feel} it.",
          "Easily one of the best I have had.", "Five stars."],
    NEG: ["A real letdown.", "Money down the drain.", "A {w} {kind}.", "Avoid it.", "I {feel} it.",
          "Easily one of the worst I have had.", "One star."],
}
RECOMMENDED = {POS: ["recommended", "praised"], NEG: ["overrated", "overhyped"]}
FEELINGS = {POS: ["loved", "enjoyed", "liked"], NEG: ["hated", "disliked", "regretted"]}
SIZES = {"train": 600, "dev": 200, "test": 200}
LABELLED_SHARE = {"train": 0.25, "dev": 1.0, "test": 1.0}


def _word(draw: Draw, polarity: str) -> str:
    return draw.choice(LEXICON_WORDS[polarity] if draw.chance(0.5) else OTHER_WORDS[polarity])


def _opinion(draw: Draw, polarity: str, aspects: Sequence[str], be: str, kind: str) -> str:
    if draw.chance(0.7):
        return f"The {draw.choice(aspects)} {be} {_word(draw, polarity)}."
    template = draw.choice(VERDICTS[polarity])
    return template.format(w=_word(draw, polarity), kind=kind, rec=draw.choice(RECOMMENDED[polarity]),
                           feel=draw.choice(FEELINGS[polarity]))


def make_opinion_review(draw: Draw, label: str) -> str:
    """Compose one review of 2-5 sentences whose opinion words carry `label`.

    draw (Draw): The random source.
    label (str): "POS" or "NEG".
    RETURNS (str): The review text.
    """
    domain, kind, be, aspects = "movie", draw.choice(MOVIE_KINDS), "was", MOVIE_ASPECTS
    n_opinions = 1 + draw.index(3)
    polarities = [label] * n_opinions
    if n_opinions == 3 and draw.chance(0.3):
        polarities[draw.index(3)] = OPPOSITE[label]
    sentences = [_opinion(draw, p, aspects, be, kind) for p in polarities]
    if draw.chance(0.3):
        sentences.insert(0, draw.choice(OPENERS[domain]).format(kind=kind))
    return " ".join(_capitalize(s) for s in sentences)


def make_opinions(seed: int, noise: float = 0.02) -> Dict[str, List[dict]]:
    """The three splits: balanced labels, `noise` of each split's labels flipped, no text in two splits.

    seed (int): The seed.
    noise (float): Share of flipped labels per split.
    RETURNS (Dict[str, List[dict]]): Records by split name.
    """
    draw = Draw(seed)
    seen: set = set()
    out: Dict[str, List[dict]] = {}
    for split, n in SIZES.items():
        records: List[dict] = []
        while len(records) < n:
            label = POS if len(records) % 2 == 0 else NEG
            text = make_opinion_review(draw, label)
            if text in seen:
                continue
            seen.add(text)
            records.append({"text": text, "label": label})
        flips = max(1, round(noise * n / 2))
        for cls in (POS, NEG):
            members = [i for i, r in enumerate(records) if r["label"] == cls]
            for i in members[:flips]:
                records[i]["label"] = OPPOSITE[cls]
        draw.shuffle(records)
        n_labelled = round(LABELLED_SHARE[split] * n)
        out[split] = [r if i < n_labelled else {"text": r["text"]} for i, r in enumerate(records)]
    return out


def main(out: Path, seed: int = 2026) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for split, records in make_opinions(seed).items():
        write_split(records, out / f"{split}.jsonl")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "opinions")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    main(args.out, args.seed)
