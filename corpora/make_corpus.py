"""Generate the embedded corpora: short English reviews (POS/NEG) and news topics.

    python corpora/make_corpus.py [--out corpora] [--seed 2013]

The output depends only on the seed: draws use `random.Random.random()`,
whose sequence Python keeps stable across versions, so the same seed writes
the same files byte for byte. Standard library only.

Reviews are built so that single words do not decide the label:
negation flips a clause ("not bad", "never boring", "hardly worth it"),
contrast takes the label from the clause after "but" or the main clause after
"although", negation can sit on a governing verb ("I don't think the plot was
good"), "okay" said once is neutral but said twice is faint praise, and about
3 % of the labels are flipped.
"""
import argparse
import json
import random
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

POS, NEG = "POS", "NEG"
OPPOSITE = {POS: NEG, NEG: POS}

ADJECTIVES = {
    POS: ["good", "great", "superb", "excellent", "brilliant", "clever", "charming", "impressive"],
    NEG: ["bad", "dull", "awful", "boring", "clumsy", "weak", "disappointing", "tedious"],
}
NEGATORS = [("not", 0.5), ("never", 0.2), ("hardly", 0.15), ("n't", 0.15)]

MOVIE_ASPECTS = ["plot", "acting", "script", "dialogue", "soundtrack", "ending", "pacing", "cast",
                 "direction", "humor", "story", "villain", "lead performance", "camera work", "editing"]
MOVIE_KINDS = ["movie", "film", "thriller", "comedy", "drama", "sequel", "documentary", "western"]
PRODUCTS = {
    "blender": ["motor", "jar", "lid", "noise level", "price"],
    "laptop": ["screen", "keyboard", "battery", "trackpad", "price"],
    "phone": ["screen", "battery", "camera", "speaker", "price"],
    "headset": ["sound", "microphone", "cushions", "cable", "price"],
    "kettle": ["handle", "lid", "heating time", "design", "price"],
    "vacuum cleaner": ["suction", "battery", "filter", "design", "price"],
    "coffee maker": ["carafe", "timer", "design", "manual", "price"],
    "tablet": ["screen", "battery", "case", "speaker", "price"],
}
OPENERS = {
    "movie": ["I watched this {kind} last weekend.", "We rented this {kind} on a rainy Sunday.",
              "My friends dragged me to this {kind}.", "I saw this {kind} at a late show.",
              "I had heard a lot about this {kind} before seeing it."],
    "product": ["I bought this {kind} a month ago.", "My sister gave me this {kind} for my birthday.",
                "I ordered this {kind} online.", "We have used this {kind} every day since March.",
                "I picked up this {kind} on sale."],
}
DETAILS = {
    "movie": ["It runs a little over two hours.", "The story is set in a small coastal town.",
              "It is based on a novel from the seventies.", "Most of it was shot in winter.",
              "The {aspect} is in black and white for the first act."],
    "product": ["It came in a plain cardboard box.", "It arrived two days after I ordered it.",
                "It comes in three colors.", "The {aspect} is made of plastic.",
                "It weighs less than I expected."],
}
VERDICTS = [
    ("I would recommend it to {who}.", "I would not recommend it to {who}."),
    ("It was worth every penny.", "It was hardly worth the money."),
    ("I would watch it again.", "I would never watch it again."),
    ("It was worth it.", "It was not worth it."),
]
PRODUCT_VERDICTS = [
    ("I would recommend it to {who}.", "I would not recommend it to {who}."),
    ("It is worth every penny.", "It is hardly worth the money."),
    ("I would buy it again.", "I would never buy it again."),
    ("It is worth it.", "It is not worth it."),
]
WHO = ["anyone", "my friends", "a friend", "my family"]
RAISING = ["I don't think the {aspect} {be} {adj}.", "I can't say the {aspect} {be} {adj}.",
           "Nobody would say the {aspect} {be} {adj}.", "I didn't find the {aspect} {adj}."]
OKAY = ["The {aspect} {be} okay.", "The {aspect} {be} okay, I guess.", "It {be} okay overall."]

TOPICS = ["HEALTH", "POLITICS", "SPORT", "TECH"]
TOPIC_SENTENCES = {
    "SPORT": ["The {team} beat their rivals {score} on {day}.", "The coach praised the defence after the match.",
              "The striker scored twice in the second half.", "Fans filled the stadium for the final.",
              "The {team} signed a new goalkeeper this season.", "The race was decided in the last lap.",
              "She set a new national record in the relay.", "The league will announce the schedule {day}."],
    "POLITICS": ["The minister announced a new budget on {day}.", "Parliament voted on the reform bill.",
                 "The opposition called for an early election.", "The senator met voters in {city}.",
                 "The government promised to cut taxes.", "The mayor of {city} resigned after the vote.",
                 "Coalition talks stalled over the new law.", "The president signed the treaty {day}."],
    "TECH": ["The company released a faster chip on {day}.", "Engineers fixed the security flaw in the app.",
             "The startup raised money to build cloud software.", "A new phone with a folding screen went on sale.",
             "Researchers trained a larger language model.", "The update makes the browser use less memory.",
             "Developers in {city} launched an open source database.", "The network outage lasted three hours."],
    "HEALTH": ["Doctors warned about the flu season on {day}.", "The hospital in {city} opened a new clinic.",
               "A study linked sleep to lower blood pressure.", "Nurses asked for more staff in the wards.",
               "The vaccine trial enrolled two thousand patients.", "Regular exercise lowers the risk of diabetes.",
               "The clinic offers free checks for children.", "Patients waited weeks for a specialist."],
}
BRIDGES = {
    frozenset({"SPORT", "HEALTH"}): ["The team doctor said the injury will keep him out for a month.",
                                     "Athletes must now pass a heart screening before the season."],
    frozenset({"SPORT", "POLITICS"}): ["The minister of sport promised money for a new stadium.",
                                       "Lawmakers debated a ban on betting ads during matches."],
    frozenset({"SPORT", "TECH"}): ["The league will use video software to check offside calls.",
                                   "Clubs now track players with wearable sensors."],
    frozenset({"POLITICS", "HEALTH"}): ["The health minister unveiled a plan to shorten waiting lists.",
                                        "Parliament approved more funding for hospitals."],
    frozenset({"POLITICS", "TECH"}): ["Regulators proposed new rules for social media platforms.",
                                      "The government will fund a national chip factory."],
    frozenset({"TECH", "HEALTH"}): ["A new app lets patients book appointments online.",
                                    "Hospitals are testing software that reads scans."],
}
FILL = {"team": ["home side", "visitors", "champions", "club", "national team"],
        "score": ["2-1", "3-0", "1-0", "4-2"],
        "day": ["Monday", "Tuesday", "Friday", "the weekend", "Thursday"],
        "city": ["Leeds", "Lyon", "Denver", "Osaka", "Porto", "Cork"]}


class Draw:
    """Random draws that use only `random()`, so they do not change across Python versions.

    seed (int): The seed.
    """

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def chance(self, p: float) -> bool:
        return self._rng.random() < p

    def index(self, n: int) -> int:
        return min(int(self._rng.random() * n), n - 1)

    def choice(self, items: Sequence):
        return items[self.index(len(items))]

    def weighted(self, weights: Sequence[Tuple[object, float]]):
        x = self._rng.random() * sum(w for _, w in weights)
        for item, w in weights:
            x -= w
            if x < 0:
                return item
        return weights[-1][0]

    def shuffle(self, items: List) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.index(i + 1)
            items[i], items[j] = items[j], items[i]


def _capitalize(sentence: str) -> str:
    return sentence[0].upper() + sentence[1:]


def _negate(be: str, negator: str) -> str:
    return f"{be}n't" if negator == "n't" else f"{be} {negator}"


def _clause(draw: Draw, polarity: str, aspect: str, be: str, p_negated: float = 0.5) -> str:
    """'the plot was superb' (POS) or 'the plot was never boring' (POS)."""
    if draw.chance(p_negated):
        adj = draw.choice(ADJECTIVES[OPPOSITE[polarity]])
        return f"the {aspect} {_negate(be, draw.weighted(NEGATORS))} {adj}"
    return f"the {aspect} {be} {draw.choice(ADJECTIVES[polarity])}"


def _evidence(draw: Draw, polarity: str, aspects: Sequence[str], be: str, verdicts, kind: str = "") -> str:
    kind = kind or draw.weighted([("clause", 0.5), ("contrast", 0.2), ("raising", 0.1), ("verdict", 0.2)])
    aspect = draw.choice(aspects)
    if kind == "clause":
        return _capitalize(_clause(draw, polarity, aspect, be)) + "."
    if kind == "contrast":
        other = draw.choice([a for a in aspects if a != aspect])
        first, second = _clause(draw, OPPOSITE[polarity], other, be), _clause(draw, polarity, aspect, be)
        form = draw.weighted([("but", 0.5), ("although", 0.25), ("even though", 0.25)])
        if form == "but":
            return _capitalize(f"{first}, but {second}.")
        if form == "although":
            return f"Although {first}, {second}."
        return _capitalize(f"{second}, even though {first}.")
    if kind == "raising":
        template = draw.choice(RAISING)
        adj = draw.choice(ADJECTIVES[OPPOSITE[polarity]])
        return template.format(aspect=aspect, be=be, adj=adj)
    positive, negative = draw.choice(verdicts)
    return (positive if polarity == POS else negative).format(who=draw.choice(WHO))


def make_review(draw: Draw, label: str) -> str:
    """Compose one review of 2-5 sentences whose meaning carries `label`.

    draw (Draw): The random source.
    label (str): "POS" or "NEG".
    RETURNS (str): The review text.
    """
    if draw.chance(0.5):
        domain, kind, be, verdicts = "movie", draw.choice(MOVIE_KINDS), "was", VERDICTS
        aspects: Sequence[str] = MOVIE_ASPECTS
    else:
        kind = draw.choice(sorted(PRODUCTS))
        domain, be, verdicts, aspects = "product", "is", PRODUCT_VERDICTS, PRODUCTS[kind]
    n_sentences = 2 + draw.index(4)
    neutral: List[str] = []
    if draw.chance(0.6):
        neutral.append(draw.choice(OPENERS[domain]).format(kind=kind))
    n_okay = draw.weighted([(0, 0.6), (1, 0.35), (2, 0.05)] if label == POS else [(0, 0.45), (1, 0.35), (2, 0.2)])
    okay = [draw.choice(OKAY).format(aspect=draw.choice(aspects), be=be) for _ in range(n_okay)]
    faint_praise = label == NEG and n_okay == 2 and draw.chance(0.5)
    n_evidence = max(0 if faint_praise else 1, n_sentences - len(neutral) - len(okay))
    evidence = [_evidence(draw, label, aspects, be, verdicts) for _ in range(n_evidence)]
    if n_evidence >= 3 and draw.chance(0.15):
        evidence[draw.index(n_evidence)] = _evidence(draw, OPPOSITE[label], aspects, be, verdicts, "clause")
    body = okay + evidence
    while len(neutral) + len(body) < 2:
        body.append(draw.choice(DETAILS[domain]).format(aspect=draw.choice(aspects)))
    draw.shuffle(body)
    return " ".join(neutral + body)


def make_topic_doc(draw: Draw, labels: List[str]) -> str:
    """Compose a news snippet of 2-4 sentences about the given topics.

    draw (Draw): The random source.
    labels (List[str]): One or two topics.
    RETURNS (str): The text.
    """
    sentences = []
    if len(labels) == 2 and draw.chance(0.6):
        sentences.append(draw.choice(BRIDGES[frozenset(labels)]))
    for topic in labels:
        sentences.append(draw.choice(TOPIC_SENTENCES[topic]))
    n_sentences = max(len(sentences), 2 + draw.index(3))
    while len(sentences) < n_sentences:
        sentence = draw.choice(TOPIC_SENTENCES[draw.choice(labels)])
        if sentence not in sentences:
            sentences.append(sentence)
    draw.shuffle(sentences)
    fill = {key: draw.choice(values) for key, values in FILL.items()}
    return " ".join(sentences).format(**fill)


def _unique_docs(n: int, make: Callable[[], Tuple[str, object]], seen: set) -> List[Tuple[str, object]]:
    docs = []
    while len(docs) < n:
        text, gold = make()
        if text not in seen:
            seen.add(text)
            docs.append((text, gold))
    return docs


def make_reviews(sizes: Dict[str, int], seed: int, noise: float = 0.015) -> Dict[str, List[dict]]:
    """Make balanced POS/NEG review splits with no text shared between splits.

    sizes (Dict[str, int]): Docs per split, e.g. {"train": 400}; each size must be even.
    seed (int): The seed.
    noise (float): Per class, this fraction of the split's size is flipped to the other
        class (at least one doc), so 2 * noise of the docs carry a wrong label.
    RETURNS (Dict[str, List[dict]]): `{"text", "label"}` records per split.
    """
    draw, seen, splits = Draw(seed), set(), {}
    for name, n in sizes.items():
        labels = [POS, NEG] * (n // 2)
        draw.shuffle(labels)
        queue = iter(labels)
        docs = _unique_docs(n, lambda: (lambda y: (make_review(draw, y), y))(next(queue)), seen)
        records = [{"text": text, "label": label} for text, label in docs]
        n_flip = max(1, round(noise * n))
        for label in (POS, NEG):
            indices = [i for i, r in enumerate(records) if r["label"] == label]
            draw.shuffle(indices)
            for i in indices[:n_flip]:
                records[i]["label"] = OPPOSITE[label]
        splits[name] = records
    return splits


def make_topics(sizes: Dict[str, int], seed: int) -> Dict[str, List[dict]]:
    """Make multi-label topic splits (1-2 of SPORT, POLITICS, TECH, HEALTH per doc).

    sizes (Dict[str, int]): Docs per split.
    seed (int): The seed.
    RETURNS (Dict[str, List[dict]]): `{"text", "labels"}` records per split.
    """
    draw, seen, splits = Draw(seed), set(), {}

    def make() -> Tuple[str, List[str]]:
        labels = [draw.choice(TOPICS)]
        if draw.chance(0.3):
            labels.append(draw.choice([t for t in TOPICS if t != labels[0]]))
        labels.sort()
        return make_topic_doc(draw, labels), labels

    for name, n in sizes.items():
        splits[name] = [{"text": text, "labels": labels} for text, labels in _unique_docs(n, make, seen)]
    return splits


def write_split(records: List[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    path.write_bytes(lines.encode("utf-8"))


def main(out: Path, seed: int = 2013) -> None:
    """Write `reviews/{train,dev,test}.jsonl` and `topics/{train,dev}.jsonl` under `out`.

    out (Path): The output folder.
    seed (int): The seed; the topics use `seed + 1`.
    """
    for name, records in make_reviews({"train": 400, "dev": 100, "test": 100}, seed).items():
        write_split(records, out / "reviews" / f"{name}.jsonl")
    for name, records in make_topics({"train": 300, "dev": 80}, seed + 1).items():
        write_split(records, out / "topics" / f"{name}.jsonl")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    parser.add_argument("--seed", type=int, default=2013)
    args = parser.parse_args()
    main(args.out, args.seed)
