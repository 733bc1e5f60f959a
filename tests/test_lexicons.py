"""Lexicon readers: Hu & Liu word lists and JSONL records."""
import json
import pickle
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spacy_treeboost.nmtf.lexicons import Lexicon, LexiconFormatError, read_hu_liu_lexicon, read_jsonl_lexicon

HEADER = ";;;;;;\n; Opinion Lexicon: Positive\n;\n;;;;;;\n\n"


def write_hu_liu(folder, positive, negative, header=HEADER):
    folder.mkdir(exist_ok=True)
    (folder / "positive-words.txt").write_text(header + "\n".join(positive) + "\n", encoding="utf-8")
    (folder / "negative-words.txt").write_text(header + "\n".join(negative) + "\n", encoding="utf-8")
    return folder


def test_hu_liu_reader_skips_comments_and_drops_ambiguous_words(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ["good", "Great", "envious", "naïve"], ["bad", "envious", "", "awful"])
    lexicon = read_hu_liu_lexicon(folder)
    assert lexicon.positive == {"good", "great", "naïve"}
    assert lexicon.negative == {"bad", "awful"}
    assert lexicon.ambiguous == {"envious"}
    assert lexicon.polarity("great") == "positive" and lexicon.polarity("movie") is None
    assert len(lexicon) == 5 and "bad" in lexicon


def test_jsonl_reader_matches_hu_liu_reader(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ["good", "envious"], ["bad", "envious"])
    records = [{"word": "good", "polarity": "positive"}, {"word": "envious", "polarity": "positive"},
               {"word": "bad", "polarity": "negative"}, {"word": "envious", "polarity": "negative"}]
    path = tmp_path / "lex.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    assert read_jsonl_lexicon(path) == read_hu_liu_lexicon(folder)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["good", "bad", "Fine", "fine", "odd", "dear"]), st.sampled_from(["positive", "negative"])), min_size=1))
def test_lexicon_equals_brute_force_set_logic(pairs):
    polarities = {}
    for word, polarity in pairs:
        polarities.setdefault(word.lower(), set()).add(polarity)
    expected = {w: next(iter(p)) for w, p in sorted(polarities.items()) if len(p) == 1}
    positive, negative = [w for w, p in pairs if p == "positive"], [w for w, p in pairs if p == "negative"]
    if not expected:
        with pytest.raises(ValueError, match="lexicon is empty"):
            Lexicon(positive, negative, lowercase=True)
        return
    assert Lexicon(positive, negative, lowercase=True).to_dict() == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["love", "loved", "loving", "hate", "hated", "good", "goods", "bad"]), unique=True),
       st.lists(st.sampled_from(["lovely", "hateful", "hater", "badly", "goody"]), unique=True))
def test_map_drops_images_of_both_polarities(positive, negative):
    stem = lambda w: w[:4]  # noqa: E731  (a crude stemmer: the first four letters)
    assume(positive or negative)
    images = {}
    for words, polarity in ((positive, "positive"), (negative, "negative")):
        for w in words:
            images.setdefault(stem(w), set()).add(polarity)
    expected = {img: next(iter(p)) for img, p in sorted(images.items()) if len(p) == 1}
    lexicon = Lexicon(positive, negative)
    if not expected:
        with pytest.raises(ValueError, match="lexicon is empty"):
            lexicon.map(stem)
        return
    mapped = lexicon.map(stem)
    assert mapped.to_dict() == expected
    assert mapped.ambiguous == {img for img, p in images.items() if len(p) == 2}


def test_sample_is_a_deterministic_subset():
    lexicon = Lexicon(["a", "b", "c", "d"], ["e", "f", "g"])
    sample = lexicon.sample(4, seed=1)
    assert len(sample) == 4 and sample == lexicon.sample(4, seed=1)
    assert sample.positive <= lexicon.positive and sample.negative <= lexicon.negative
    with pytest.raises(ValueError, match="between 1 and 7"):
        lexicon.sample(8, seed=1)


def test_lexicon_pickles():
    lexicon = Lexicon(["good"], ["bad"])
    assert pickle.loads(pickle.dumps(lexicon)) == lexicon


@pytest.mark.slow
def test_import_does_not_load_spacy():
    code = "import sys, spacy_treeboost.nmtf.lexicons; print('spacy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_real_hu_liu_lexicon(shared_data):
    folder = shared_data / "lexicons" / "hu_liu_opinion_lexicon"
    lexicon = read_hu_liu_lexicon(folder)
    assert lexicon.ambiguous == {"envious", "enviously", "enviousness"}
    assert (len(lexicon.positive), len(lexicon.negative)) == (2006 - 3, 4783 - 3)
    assert read_jsonl_lexicon(folder / "hu_liu_opinion_lexicon.jsonl") == lexicon


# ---- wrong formats -----------------------------------------------------------------------------


def test_word_list_with_two_words_on_a_line(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ["good", "very good"], ["bad"])
    with pytest.raises(LexiconFormatError, match=r"positive-words.txt, line 7: expected one word"):
        read_hu_liu_lexicon(folder)


def test_word_list_that_is_jsonl(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ['{"word": "good", "polarity": "positive"}'], ["bad"], header="")
    with pytest.raises(LexiconFormatError, match=r"line 1: found a JSON object.*JsonlLexicon"):
        read_hu_liu_lexicon(folder)


def test_word_list_without_words(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", [";only a comment"], ["bad"])
    with pytest.raises(LexiconFormatError, match="no word found"):
        read_hu_liu_lexicon(folder)


def test_word_list_in_another_encoding(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ["good"], ["bad"])
    (folder / "positive-words.txt").write_bytes("na\u00efve\n".encode("latin-1"))
    with pytest.raises(LexiconFormatError, match="not valid utf-8.*latin-1"):
        read_hu_liu_lexicon(folder)
    assert read_hu_liu_lexicon(folder, encoding="latin-1").positive == {"naïve"}


def test_hu_liu_reader_given_a_file_or_missing_folder(tmp_path):
    folder = write_hu_liu(tmp_path / "lex", ["good"], ["bad"])
    with pytest.raises(LexiconFormatError, match="pass the folder"):
        read_hu_liu_lexicon(folder / "positive-words.txt")
    with pytest.raises(FileNotFoundError, match="Lexicon folder not found"):
        read_hu_liu_lexicon(tmp_path / "missing")
    (folder / "negative-words.txt").unlink()
    with pytest.raises(FileNotFoundError, match="negative-words.txt"):
        read_hu_liu_lexicon(folder)


@pytest.mark.parametrize(
    "line,message",
    [
        ("good positive", r"line 2: not valid JSON"),
        ('["good", "positive"]', r"line 2: expected a JSON object"),
        ('{"polarity": "positive"}', r"line 2: missing or empty \"word\""),
        ('{"word": "good"}', r"line 2: missing \"polarity\""),
        ('{"word": "good", "polarity": "neutral"}', r"line 2: \"polarity\" is 'neutral'; expected \"positive\" or \"negative\""),
    ],
)
def test_jsonl_reader_names_the_bad_line(tmp_path, line, message):
    path = tmp_path / "lex.jsonl"
    path.write_text('{"word": "bad", "polarity": "negative"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(LexiconFormatError, match=message):
        read_jsonl_lexicon(path)


def test_jsonl_reader_on_an_empty_file_or_folder(tmp_path):
    path = tmp_path / "lex.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(LexiconFormatError, match="no record found"):
        read_jsonl_lexicon(path)
    with pytest.raises(LexiconFormatError, match="is a folder"):
        read_jsonl_lexicon(tmp_path)


def test_lexicon_with_only_ambiguous_words():
    with pytest.raises(ValueError, match="lexicon is empty"):
        Lexicon(["odd"], ["odd"])


def test_read_lexicon_tells_the_formats_apart(tmp_path):
    """`spacy_treeboost.Lexicon.v1` (the NMTF config's reader): a folder is Hu & Liu, a file JSON lines."""
    from spacy_treeboost.nmtf.lexicons import read_lexicon

    folder = tmp_path / "hu_liu"
    folder.mkdir()
    write_hu_liu(folder, ["good", "great"], ["bad"])
    jsonl = tmp_path / "lexicon.jsonl"
    jsonl.write_text("".join(json.dumps({"word": w, "polarity": p}) + "\n"
                             for w, p in (("good", "positive"), ("great", "positive"), ("bad", "negative"))))
    assert read_lexicon(folder) == read_hu_liu_lexicon(folder) == read_lexicon(jsonl)
    with pytest.raises(FileNotFoundError, match="Hu & Liu folder .* or a .jsonl file"):
        read_lexicon(tmp_path / "missing")


@pytest.mark.slow
def test_nmtf_config_reads_either_lexicon_format(tmp_path):
    """`spacy debug config` of the NMTF config passes with the shipped .jsonl lexicon and with a Hu & Liu folder."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / "hu_liu"
    folder.mkdir()
    write_hu_liu(folder, ["good", "great"], ["bad"])
    for lexicon in (root / "corpora" / "lexicons" / "sentiment_small.jsonl", folder):
        result = subprocess.run([sys.executable, "-m", "spacy", "debug", "config", "configs/nmtf_sentiment.cfg",
                                 "--paths.lexicon", str(lexicon)], cwd=root, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0 and "Config is valid" in result.stdout, result.stdout + result.stderr
