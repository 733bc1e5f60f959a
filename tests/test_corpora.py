"""Tests for the original-format corpus readers (corpora/readers.py), JSONL I/O and the embedded corpora."""
import gzip
import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from spacy_treeboost.datasets.jsonl import CorpusFormatError, iter_jsonl

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
_spec = importlib.util.spec_from_file_location("corpus_readers", CORPORA / "readers.py")
readers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readers)
read_movie_review_polarity = readers.read_movie_review_polarity
read_multi_domain_reviews = readers.read_multi_domain_reviews
read_reuters21578 = readers.read_reuters21578
read_sentence_polarity = readers.read_sentence_polarity
write_jsonl = readers.write_jsonl


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_movie_review_polarity_labels_folds_and_order(tmp_path):
    root = tmp_path / "review_polarity" / "txt_sentoken"
    _write(root / "pos" / "cv999_13106.txt", b"a fine film .\nreally .\n")
    _write(root / "pos" / "cv000_29590.txt", b"great fun .\n")
    _write(root / "neg" / "cv114_19501.txt", b"a dull mess .\n")
    _write(root / "neg" / "README", b"ignored")
    for path in (root, root.parent):
        records = list(read_movie_review_polarity(path))
        assert [(r["id"], r["label"], r["fold"]) for r in records] == [
            ("cv114_19501.txt", "neg", 1),
            ("cv000_29590.txt", "pos", 0),
            ("cv999_13106.txt", "pos", 9),
        ]
        assert records[2]["text"] == "a fine film .\nreally .\n"


def test_movie_review_polarity_bad_name_and_missing_folder(tmp_path):
    _write(tmp_path / "pos" / "review1.txt", b"x")
    (tmp_path / "neg").mkdir()
    with pytest.raises(CorpusFormatError, match=r"review1\.txt.*cvNNN_NNNNN\.txt"):
        list(read_movie_review_polarity(tmp_path))
    with pytest.raises(FileNotFoundError, match="txt_sentoken"):
        list(read_movie_review_polarity(tmp_path / "nowhere"))


def test_sentence_polarity_latin1_crlf_and_nel(tmp_path):
    _write(tmp_path / "rt-polarity.pos", "caf\xe9 charm , pure joy . \r\nwitty\x85and warm . \r\n".encode("latin-1"))
    _write(tmp_path / "rt-polarity.neg", b"simplistic , silly and tedious . \r\n\r\n")
    records = list(read_sentence_polarity(tmp_path))
    assert records == [
        {"text": "simplistic , silly and tedious .", "label": "neg", "id": "rt-polarity.neg:1"},
        {"text": "caf\xe9 charm , pure joy .", "label": "pos", "id": "rt-polarity.pos:1"},
        {"text": "witty and warm .", "label": "pos", "id": "rt-polarity.pos:2"},
    ]


REVIEW_BLOCK = """<review>
<unique_id>
{uid}
</unique_id>
<unique_id>
17
</unique_id>
<rating>
{rating}
</rating>
<title>
{title}
</title>
<review_text>
{text}
</review_text>
</review>
"""


def test_multi_domain_reviews_pseudo_xml(tmp_path):
    domain = tmp_path / "sorted_data" / "kitchen_&_housewares"
    pos = REVIEW_BLOCK.format(uid="B1:great:ann", rating="5.0", title="Love it", text="Works well & <cheap> too")
    neg = REVIEW_BLOCK.format(uid="B2:meh:bob", rating="1.0", title="Broke", text="It broke &amp; leaked")
    unlabeled = "".join(
        REVIEW_BLOCK.format(uid=f"B{i}", rating=r, title="t", text=f"text {i}")
        for i, r in ((3, "4.0"), (4, "3.0"), (5, "2.0"))
    )
    truncated = "<review>\n<rating>\n1.0\n</rating>\n<review_text>\nlast one\n</review_text>\n"
    _write(domain / "positive.review", pos.encode("latin-1"))
    _write(domain / "negative.review", (neg + truncated).encode("latin-1"))
    _write(domain / "unlabeled.review", unlabeled.encode("latin-1"))
    records = list(read_multi_domain_reviews(domain))
    assert [(r["text"], r.get("label"), r["source"]) for r in records] == [
        ("It broke & leaked", "neg", "negative.review"),
        ("last one", "neg", "negative.review"),
        ("Works well & <cheap> too", "pos", "positive.review"),
        ("text 3", "pos", "unlabeled.review"),
        ("text 5", "neg", "unlabeled.review"),
    ]
    assert records[0]["id"] == "B2:meh:bob"
    assert records[0]["domain"] == "kitchen_&_housewares"
    assert records[0]["rating"] == 1.0
    with_neutral = list(read_multi_domain_reviews(domain / "unlabeled.review", skip_unlabeled=False))
    assert [r.get("label") for r in with_neutral] == ["pos", None, "neg"]
    titled = next(read_multi_domain_reviews(domain / "positive.review", include_title=True))
    assert titled["text"] == "Love it\nWorks well & <cheap> too"


def test_multi_domain_reviews_errors(tmp_path):
    broken = _write(tmp_path / "positive.review", b"<review>\n<rating>\n5.0\n</rating>\n</review>\n")
    with pytest.raises(CorpusFormatError, match=r"positive\.review, line 1: .*review_text"):
        list(read_multi_domain_reviews(broken))
    not_reviews = _write(tmp_path / "d" / "negative.review", b"hello")
    with pytest.raises(CorpusFormatError, match="no <review> element"):
        list(read_multi_domain_reviews(not_reviews))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="sorted_data/books"):
        list(read_multi_domain_reviews(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="file or folder not found"):
        list(read_multi_domain_reviews(tmp_path / "missing"))


def _reuters(newid: str, topics_attr: str, split: str, topics, body: str, *, kind: str = "") -> str:
    d_topics = "".join(f"<D>{t}</D>" for t in topics)
    if kind == "UNPROC":
        text = f'<TEXT TYPE="UNPROC">&#2;\n{body}\n&#3;</TEXT>'
    else:
        text = f"<TEXT>&#2;\n<TITLE>TITLE {newid} &amp; CO</TITLE>\n<DATELINE>X, May 1 - </DATELINE><BODY>{body}\n Reuter\n&#3;</BODY></TEXT>"
    return (
        f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" OLDID="5" NEWID="{newid}">\n'
        f"<DATE>26-FEB-1987 15:01:01.79</DATE>\n<TOPICS>{d_topics}</TOPICS>\n<PLACES><D>usa</D></PLACES>\n"
        f"{text}\n</REUTERS>\n"
    )


def test_reuters21578_sgml_and_modapte(tmp_path):
    first = '<!DOCTYPE lewis SYSTEM "lewis.dtd">\n' + _reuters("1", "YES", "TRAIN", ["earn", "acq"], "Profit of &lt;ACME> up 5 pct")
    first += _reuters("2", "YES", "TEST", [], "Nothing \xfc new")
    second = _reuters("3", "NO", "TRAIN", ["grain"], "Wheat", kind="UNPROC")
    second += _reuters("4", "YES", "NOT-USED", ["crude"], "Oil")
    _write(tmp_path / "reut2-000.sgm", first.encode("latin-1"))
    _write(tmp_path / "reut2-001.sgm", second.encode("latin-1"))
    records = list(read_reuters21578(tmp_path))
    assert [(r["id"], r["labels"], r["modapte"]) for r in records] == [
        ("1", ["earn", "acq"], "train"),
        ("2", [], "test"),
        ("3", ["grain"], "unused"),
        ("4", ["crude"], "unused"),
    ]
    assert records[0]["text"] == "TITLE 1 & CO\nProfit of <ACME> up 5 pct"
    assert records[0]["body"].endswith("Reuter")
    assert records[1]["text"] == "TITLE 2 & CO\nNothing \xfc new"
    assert records[2]["text"] == "Wheat"
    assert records[0]["places"] == ["usa"]
    assert [r["id"] for r in read_reuters21578(tmp_path, split="train")] == ["1"]
    assert [r["id"] for r in read_reuters21578(tmp_path / "reut2-000.sgm", split="test")] == ["2"]
    assert [r["id"] for r in read_reuters21578(tmp_path, require_topics=True)] == ["1", "3", "4"]


def test_reuters21578_truncated_file(tmp_path):
    data = _reuters("1", "YES", "TRAIN", ["earn"], "x") + '<REUTERS TOPICS="YES" NEWID="2">\n<TEXT>'
    _write(tmp_path / "reut2-009.sgm", data.encode("latin-1"))
    with pytest.raises(CorpusFormatError, match=r"reut2-009\.sgm: 2 <REUTERS> tags but 1"):
        list(read_reuters21578(tmp_path))
    with pytest.raises(ValueError, match="split must be"):
        list(read_reuters21578(tmp_path, split="training"))


@pytest.mark.parametrize("name", ["out.jsonl", "out.jsonl.gz"])
def test_write_jsonl_round_trip_and_determinism(tmp_path, name):
    records = [{"text": "na\xefve \u2014 fine", "label": "POS"}, {"text": "x", "labels": ["A", "B"], "fold": 3}]
    path = tmp_path / name
    assert write_jsonl(records, path) == 2
    first = path.read_bytes()
    write_jsonl(iter(records), path)
    assert path.read_bytes() == first
    assert [record for _, record in iter_jsonl(path)] == records
    if name.endswith(".gz"):
        assert gzip.decompress(first).decode("utf-8").count("\n") == 2


def test_iter_jsonl_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n\n{"text": oops}\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"bad\.jsonl, line 3: invalid JSON"):
        list(iter_jsonl(path))
    path.write_text('["text"]\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"line 1: expected a JSON object, found list"):
        list(iter_jsonl(path))
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        list(iter_jsonl(tmp_path / "missing.jsonl"))


@pytest.mark.parametrize(
    "relpath,label_field,folds_field",
    [
        ("movie_review_polarity_v2/movie_review_polarity_v2.jsonl", "label", "fold"),
        ("sentence_polarity_v1/sentence_polarity_v1.jsonl", "label", None),
        ("reuters21578/reuters21578.jsonl.gz", "topics", "modapte"),
    ],
)
def test_shared_jsonl_has_the_fields_the_readers_expect(shared_data, relpath, label_field, folds_field):
    path = shared_data / relpath
    if not path.is_file():
        pytest.skip(f"{path} not present")
    seen = 0
    for _, record in iter_jsonl(path):
        assert isinstance(record["text"], str)
        value = record[label_field]
        assert isinstance(value, list) if label_field == "topics" else value in ("pos", "neg")
        if folds_field == "fold":
            assert record["fold"] in range(10)
        elif folds_field == "modapte":
            assert record["modapte"] in ("train", "test", "unused")
            assert record["r8_label"] is None or isinstance(record["r8_label"], str)
            assert isinstance(record["r10"], list)
        seen += 1
        if seen == 500:
            break
    assert seen == 500


def _load_generator():
    spec = importlib.util.spec_from_file_location("make_corpus", CORPORA / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _split(kind: str, name: str):
    return [record for _, record in iter_jsonl(CORPORA / kind / f"{name}.jsonl")]


def _n_sentences(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s])


def test_generator_rewrites_the_committed_files_byte_for_byte(tmp_path):
    _load_generator().main(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.jsonl"))
    assert [str(p) for p in written] == [
        "reviews/dev.jsonl", "reviews/test.jsonl", "reviews/train.jsonl", "topics/dev.jsonl", "topics/train.jsonl",
    ]
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (CORPORA / relative).read_bytes(), relative
    total = sum((CORPORA / relative).stat().st_size for relative in written)
    assert total < 1_000_000


def test_reviews_are_balanced_short_and_disjoint():
    splits = {name: _split("reviews", name) for name in ("train", "dev", "test")}
    assert {name: len(records) for name, records in splits.items()} == {"train": 400, "dev": 100, "test": 100}
    texts = set()
    for records in splits.values():
        assert Counter(r["label"] for r in records) == {"POS": len(records) // 2, "NEG": len(records) // 2}
        assert all(set(r) == {"text", "label"} for r in records)
        assert all(2 <= _n_sentences(r["text"]) <= 5 for r in records)
        split_texts = {r["text"] for r in records}
        assert not split_texts & texts
        texts |= split_texts


def test_review_cues_need_structure():
    records = [r for name in ("train", "dev", "test") for r in _split("reviews", name)]
    for cue in (r"\bnot (bad|dull|boring)\b", r"\bnever boring\b", r"\bhardly worth\b", r", but the\b", r"^Although\b"):
        assert any(re.search(cue, r["text"]) for r in records), cue
    okay = Counter((r["label"], min(len(re.findall(r"\bokay\b", r["text"])), 2)) for r in records)
    assert abs(okay["POS", 1] - okay["NEG", 1]) < 0.25 * (okay["POS", 1] + okay["NEG", 1])
    assert okay["NEG", 2] > 3 * okay["POS", 2]
    for word in ("good", "bad", "boring", "recommend", "worth"):
        by_label = Counter(r["label"] for r in records if re.search(rf"\b{word}\b", r["text"]))
        assert min(by_label.values()) > 0.25 * sum(by_label.values()), (word, by_label)


def test_bigrams_beat_unigrams_on_reviews():
    pytest.importorskip("sklearn")
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    records = _split("reviews", "train") + _split("reviews", "dev")
    texts, labels = [r["text"] for r in records], [r["label"] for r in records]
    accuracy = {}
    for ngrams in ((1, 1), (1, 2)):
        model = make_pipeline(CountVectorizer(ngram_range=ngrams), LogisticRegression(max_iter=2000))
        accuracy[ngrams] = cross_val_score(model, texts, labels, cv=5).mean()
    assert accuracy[1, 2] > accuracy[1, 1] + 0.08, accuracy
    assert accuracy[1, 2] > 0.7, accuracy


def test_topics_are_multi_label():
    for name, size in (("train", 300), ("dev", 80)):
        records = _split("topics", name)
        assert len(records) == size
        assert all(1 <= len(r["labels"]) <= 2 and len(set(r["labels"])) == len(r["labels"]) for r in records)
        assert {label for r in records for label in r["labels"]} == {"HEALTH", "POLITICS", "SPORT", "TECH"}
        assert any(len(r["labels"]) == 2 for r in records)
        assert all(2 <= _n_sentences(r["text"]) <= 4 for r in records)


@pytest.mark.skipif(importlib.util.find_spec("sklearn") is None, reason="scikit-learn is not installed")
def test_readme_accuracy_table_is_what_the_baselines_script_prints():
    spec = importlib.util.spec_from_file_location("corpora_baselines", CORPORA / "baselines.py")
    baselines = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(baselines)
    lines = baselines.table()
    assert len(lines) == 8
    assert "\n".join(lines) + "\n" in (CORPORA / "README.md").read_text(encoding="utf8")
