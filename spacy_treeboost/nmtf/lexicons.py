"""Sentiment lexicons: word lists with a positive or negative polarity.

Two formats are read:
- the Hu & Liu opinion lexicon: `positive-words.txt` and `negative-words.txt`,
  one word per line after a header of comment lines starting with ";";
- JSON lines: `{"word": "good", "polarity": "positive"}`, one object per line.

Words listed with both polarities are dropped, because they carry no prior. `read_hu_liu_lexicon`,
`read_jsonl_lexicon` and `read_lexicon` (either format) are the readers `spacy_treeboost.HuLiuLexicon.v1`,
`spacy_treeboost.JsonlLexicon.v1` and `spacy_treeboost.Lexicon.v1` (registered by `pipeline.nmtf_sentiment`).
"""
import json
import random
from pathlib import Path
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Tuple, Union

POLARITIES = ("positive", "negative")
HU_LIU_POSITIVE_FILE = "positive-words.txt"
HU_LIU_NEGATIVE_FILE = "negative-words.txt"


class LexiconFormatError(ValueError):
    """A lexicon file is not in the expected format."""


class Lexicon:
    """A set of positive and a set of negative words; words given with both are left out, listed in `ambiguous`.

    positive (Iterable[str]): The positive words.
    negative (Iterable[str]): The negative words.
    lowercase (bool): Lower-case every word.
    """

    __slots__ = ("positive", "negative", "ambiguous")

    def __init__(self, positive: Iterable[str], negative: Iterable[str], lowercase: bool = False) -> None:
        pos = {w.lower() if lowercase else w for w in positive}
        neg = {w.lower() if lowercase else w for w in negative}
        self.ambiguous: FrozenSet[str] = frozenset(pos & neg)
        self.positive: FrozenSet[str] = frozenset(pos - self.ambiguous)
        self.negative: FrozenSet[str] = frozenset(neg - self.ambiguous)
        if not self.positive and not self.negative:
            raise ValueError("The lexicon is empty: it has no word with a single polarity.")

    def __len__(self) -> int:
        return len(self.positive) + len(self.negative)

    def __contains__(self, word: object) -> bool:
        return word in self.positive or word in self.negative

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lexicon) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"Lexicon({len(self.positive)} positive, {len(self.negative)} negative)"

    def __reduce__(self) -> Tuple:
        return (Lexicon, (sorted(self.positive), sorted(self.negative)))

    def polarity(self, word: str) -> Union[str, None]:
        """The polarity of a word.

        word (str): The word.
        RETURNS (Optional[str]): "positive", "negative", or None if it is not listed.
        """
        if word in self.positive:
            return "positive"
        if word in self.negative:
            return "negative"
        return None

    def to_dict(self) -> Dict[str, str]:
        """RETURNS (Dict[str, str]): word -> polarity, sorted by word."""
        return {w: self.polarity(w) for w in sorted(self.positive | self.negative)}  # type: ignore[misc]

    def map(self, func: Callable[[str], str]) -> "Lexicon":
        """The lexicon of the words' images under `func` (e.g. the stemmer applied to the documents); an image of
        words of both polarities is dropped, like a word listed with both.

        func (Callable[[str], str]): The word mapping.
        RETURNS (Lexicon): The mapped lexicon.
        """
        return Lexicon([func(w) for w in sorted(self.positive)], [func(w) for w in sorted(self.negative)])

    def sample(self, n_words: int, seed: int) -> "Lexicon":
        """A random sub-lexicon of `n_words` words, drawn without replacement.

        n_words (int): Size of the sample; at most len(self).
        seed (int): Seed of the draw.
        RETURNS (Lexicon): The sample.
        """
        words = sorted(self.positive | self.negative)
        if not 1 <= n_words <= len(words):
            raise ValueError(f"n_words must be between 1 and {len(words)}, got {n_words}.")
        chosen = random.Random(seed).sample(words, n_words)
        return Lexicon([w for w in chosen if w in self.positive], [w for w in chosen if w in self.negative])


def read_hu_liu_word_list(path: Union[str, Path], encoding: str = "utf-8") -> List[str]:
    """Read one Hu & Liu word list: comment lines start with ";", blank lines are skipped.

    path (Union[str, Path]): The `.txt` file.
    encoding (str): The file's encoding (the original distribution is "latin-1").
    RETURNS (List[str]): The words, in file order.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Lexicon word list not found: {path}")
    words = []
    for number, line in _numbered_lines(path, encoding):
        text = line.strip()
        if not text or text.startswith(";"):
            continue
        if text.startswith("{"):
            raise LexiconFormatError(
                f"{path}, line {number}: found a JSON object, but a Hu & Liu word list has one word per line. "
                "Read JSON lines with `read_jsonl_lexicon` (reader spacy_treeboost.JsonlLexicon.v1)."
            )
        if len(text.split()) != 1:
            raise LexiconFormatError(
                f"{path}, line {number}: expected one word (or a comment starting with ';'), got {text[:60]!r}."
            )
        words.append(text)
    if not words:
        raise LexiconFormatError(f"{path}: no word found; expected one word per line after the ';' comment header.")
    return words


def read_hu_liu_lexicon(path: Union[str, Path], encoding: str = "utf-8", lowercase: bool = True) -> Lexicon:
    """Read the Hu & Liu opinion lexicon from the folder holding its two word lists.

    path (Union[str, Path]): Folder with `positive-words.txt` and `negative-words.txt`.
    encoding (str): The files' encoding.
    lowercase (bool): Lower-case the words.
    RETURNS (Lexicon): The lexicon, without words listed in both files.
    """
    folder = Path(path)
    if folder.is_file():
        raise LexiconFormatError(
            f"{folder} is a file; pass the folder that holds {HU_LIU_POSITIVE_FILE} and {HU_LIU_NEGATIVE_FILE}."
        )
    if not folder.is_dir():
        raise FileNotFoundError(f"Lexicon folder not found: {folder}")
    positive = read_hu_liu_word_list(folder / HU_LIU_POSITIVE_FILE, encoding)
    negative = read_hu_liu_word_list(folder / HU_LIU_NEGATIVE_FILE, encoding)
    return Lexicon(positive, negative, lowercase=lowercase)


def read_jsonl_lexicon(path: Union[str, Path], lowercase: bool = True) -> Lexicon:
    """Read a lexicon of JSON lines `{"word": str, "polarity": "positive"|"negative"}`.

    path (Union[str, Path]): The `.jsonl` file; blank lines are skipped.
    lowercase (bool): Lower-case the words.
    RETURNS (Lexicon): The lexicon, without words listed with both polarities.
    """
    path = Path(path)
    if path.is_dir():
        raise LexiconFormatError(f"{path} is a folder; pass the .jsonl file.")
    if not path.is_file():
        raise FileNotFoundError(f"Lexicon file not found: {path}")
    words: Dict[str, List[str]] = {p: [] for p in POLARITIES}
    expected = 'a JSON object {"word": ..., "polarity": "positive" or "negative"}'
    for number, line in _numbered_lines(path, "utf-8"):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise LexiconFormatError(f"{path}, line {number}: not valid JSON ({err.msg}); expected {expected}.") from None
        except RecursionError:
            raise LexiconFormatError(f"{path}, line {number}: JSON nested too deeply; expected {expected}.") from None
        if not isinstance(record, dict):
            raise LexiconFormatError(f"{path}, line {number}: expected {expected}, got {type(record).__name__}.")
        word, polarity = record.get("word"), record.get("polarity")
        if not isinstance(word, str) or not word.strip():
            raise LexiconFormatError(f"{path}, line {number}: missing or empty \"word\"; expected {expected}.")
        if "polarity" not in record:
            raise LexiconFormatError(f"{path}, line {number}: missing \"polarity\"; expected {expected}.")
        if polarity not in POLARITIES:
            raise LexiconFormatError(
                f"{path}, line {number}: \"polarity\" is {polarity!r}; expected \"positive\" or \"negative\"."
            )
        words[polarity].append(word.strip())
    if not words["positive"] and not words["negative"]:
        raise LexiconFormatError(f"{path}: no record found; expected one {expected} per line.")
    return Lexicon(words["positive"], words["negative"], lowercase=lowercase)


def read_lexicon(path: Union[str, Path], encoding: str = "utf-8", lowercase: bool = True) -> Lexicon:
    """Read either format: a folder is a Hu & Liu lexicon, a file a JSON-lines lexicon.

    path (Union[str, Path]): The Hu & Liu folder or the `.jsonl` file.
    encoding (str): The Hu & Liu files' encoding (JSON lines are UTF-8).
    lowercase (bool): Lower-case the words.
    RETURNS (Lexicon): The lexicon.
    """
    path = Path(path)
    if path.is_dir():
        return read_hu_liu_lexicon(path, encoding=encoding, lowercase=lowercase)
    if path.is_file():
        return read_jsonl_lexicon(path, lowercase=lowercase)
    raise FileNotFoundError(
        f"Lexicon not found: {path} (expected a Hu & Liu folder with {HU_LIU_POSITIVE_FILE} and "
        f"{HU_LIU_NEGATIVE_FILE}, or a .jsonl file)."
    )


def _numbered_lines(path: Path, encoding: str) -> Iterator[Tuple[int, str]]:
    try:
        with path.open(encoding=encoding) as handle:
            yield from enumerate(handle, start=1)
    except UnicodeDecodeError as err:
        raise LexiconFormatError(
            f"{path} is not valid {encoding} text ({err.reason} at byte {err.start}). "
            "Pass the file's encoding, e.g. encoding='latin-1' for the original Hu & Liu files."
        ) from None
