"""Sentiment lexicons, read from the Hu & Liu word lists (`positive-words.txt`, `negative-words.txt`, ";" comments)
or from JSON lines `{"word": "good", "polarity": "positive"}`; words listed with both polarities are dropped."""
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
    """A set of positive and a set of negative words (lower-cased with `lowercase`); words given with both are left
    out, listed in `ambiguous`."""

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
        """RETURNS (Optional[str]): "positive", "negative", or None for a word that is not listed."""
        if word in self.positive:
            return "positive"
        if word in self.negative:
            return "negative"
        return None

    def to_dict(self) -> Dict[str, str]:
        """RETURNS (Dict[str, str]): word -> polarity, sorted by word."""
        return {w: self.polarity(w) for w in sorted(self.positive | self.negative)}  # type: ignore[misc]

    def map(self, func: Callable[[str], str]) -> "Lexicon":
        """The lexicon of the words' images under `func` (e.g. a stemmer); images of both polarities are dropped."""
        return Lexicon([func(w) for w in sorted(self.positive)], [func(w) for w in sorted(self.negative)])

    def sample(self, n_words: int, seed: int) -> "Lexicon":
        """A random sub-lexicon of `n_words` (1 to len(self)) words drawn without replacement with `seed`."""
        words = sorted(self.positive | self.negative)
        if not 1 <= n_words <= len(words):
            raise ValueError(f"n_words must be between 1 and {len(words)}, got {n_words}.")
        chosen = random.Random(seed).sample(words, n_words)
        return Lexicon([w for w in chosen if w in self.positive], [w for w in chosen if w in self.negative])


def read_hu_liu_word_list(path: Union[str, Path], encoding: str = "utf-8") -> List[str]:
    """The words of one Hu & Liu word list in file order, without ";" comments and blank lines."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Lexicon word list not found: {path}")
    words = []
    for number, line in _numbered_lines(path, encoding):
        text = line.strip()
        if not text or text.startswith(";"):
            continue
        if text.startswith("{"):
            raise LexiconFormatError(f"{path}, line {number}: found a JSON object, but a Hu & Liu word list has one "
                                     "word per line. Read JSON lines with `read_jsonl_lexicon` (reader "
                                     "spacy_treeboost.JsonlLexicon.v1).")
        if len(text.split()) != 1:
            raise LexiconFormatError(f"{path}, line {number}: expected one word (or a comment starting with ';'), "
                                     f"got {text[:60]!r}.")
        words.append(text)
    if not words:
        raise LexiconFormatError(f"{path}: no word found; expected one word per line after the ';' comment header.")
    return words


def read_hu_liu_lexicon(path: Union[str, Path], encoding: str = "utf-8", lowercase: bool = True) -> Lexicon:
    """Read the Hu & Liu opinion lexicon.

    path (Union[str, Path]): Folder with `positive-words.txt` and `negative-words.txt`.
    encoding (str): The files' encoding (the original distribution is "latin-1").
    lowercase (bool): Lower-case the words.
    """
    folder = Path(path)
    if folder.is_file():
        raise LexiconFormatError(f"{folder} is a file; pass the folder that holds {HU_LIU_POSITIVE_FILE} and "
                                 f"{HU_LIU_NEGATIVE_FILE}.")
    if not folder.is_dir():
        raise FileNotFoundError(f"Lexicon folder not found: {folder}")
    return Lexicon(read_hu_liu_word_list(folder / HU_LIU_POSITIVE_FILE, encoding),
                   read_hu_liu_word_list(folder / HU_LIU_NEGATIVE_FILE, encoding), lowercase=lowercase)


def read_jsonl_lexicon(path: Union[str, Path], lowercase: bool = True) -> Lexicon:
    """Read a `.jsonl` lexicon of lines `{"word": str, "polarity": "positive"|"negative"}` (blank lines skipped);
    `lowercase` lower-cases the words."""
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
            raise LexiconFormatError(f"{path}, line {number}: not valid JSON ({err.msg}); "
                                     f"expected {expected}.") from None
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
            raise LexiconFormatError(f"{path}, line {number}: \"polarity\" is {polarity!r}; expected \"positive\" or "
                                     "\"negative\".")
        words[polarity].append(word.strip())
    if not words["positive"] and not words["negative"]:
        raise LexiconFormatError(f"{path}: no record found; expected one {expected} per line.")
    return Lexicon(words["positive"], words["negative"], lowercase=lowercase)


def read_lexicon(path: Union[str, Path], encoding: str = "utf-8", lowercase: bool = True) -> Lexicon:
    """Read a Hu & Liu folder (files in `encoding`) or a JSON-lines file (UTF-8); `lowercase` lower-cases words."""
    path = Path(path)
    if path.is_dir():
        return read_hu_liu_lexicon(path, encoding=encoding, lowercase=lowercase)
    if path.is_file():
        return read_jsonl_lexicon(path, lowercase=lowercase)
    raise FileNotFoundError(f"Lexicon not found: {path} (expected a Hu & Liu folder with {HU_LIU_POSITIVE_FILE} and "
                            f"{HU_LIU_NEGATIVE_FILE}, or a .jsonl file).")


def _numbered_lines(path: Path, encoding: str) -> Iterator[Tuple[int, str]]:
    try:
        with path.open(encoding=encoding) as handle:
            yield from enumerate(handle, start=1)
    except UnicodeDecodeError as err:
        raise LexiconFormatError(f"{path} is not valid {encoding} text ({err.reason} at byte {err.start}). Pass the "
                                 "file's encoding, e.g. encoding='latin-1' for the original Hu & Liu files.") from None
