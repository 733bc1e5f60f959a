"""Readers of public text-classification corpora in their original formats, and `write_jsonl` to store what they
yield: dicts with `text` and `label` or `labels`, plus the corpus' own identifiers. Tools for building corpora
(corpora/README.md), not part of the package; they import nothing from spaCy."""
import gzip
import html
import json
import re
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from spacy_treeboost import CorpusFormatError

PathLike = Union[str, Path]

_POLARITY_NAME = re.compile(r"^cv(\d{3})_\d+\.txt$")
_REVIEW = re.compile(r"<review>(.*?)(?:</review>|(?=<review>)|\Z)", re.DOTALL)
_REVIEW_FIELD = "<{0}>(.*?)</{0}>"
_REUTERS = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.DOTALL)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_CONTROL_ENTITY = re.compile(r"&#(?:[1-9]|[12]\d|3[01]|127);")
_SIGN_OFF = re.compile(r"\s*reuter\s*$", re.IGNORECASE)


def write_jsonl(records: Iterable[Dict[str, Any]], path: PathLike) -> int:
    """Write records as JSONL, gzipped without a time stamp for a `.gz` name. RETURNS (int): The number written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(record, ensure_ascii=False) + "\n" for record in records]
    data = "".join(lines).encode("utf-8")
    if path.suffix == ".gz":
        with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as stream:
            stream.write(data)
    else:
        path.write_bytes(data)
    return len(lines)


def read_movie_review_polarity(path: PathLike, *, encoding: str = "utf-8") -> Iterator[Dict[str, Any]]:
    """Read the movie review polarity dataset v2.0 (Pang & Lee 2004) from the `txt_sentoken` folder or its parent:
    `{"text", "label": "pos"|"neg", "id", "fold"}`, negative files first, `fold` 0-9 from `cvNNN_` (NNN // 100)."""
    root = Path(path)
    if not (root / "pos").is_dir() and (root / "txt_sentoken").is_dir():
        root = root / "txt_sentoken"
    for label in ("neg", "pos"):
        folder = root / label
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} not found: pass the txt_sentoken folder of review_polarity.tar.gz, "
                                    "which holds the pos/ and neg/ folders.")
        for file in sorted(folder.iterdir()):
            if file.suffix != ".txt":
                continue
            match = _POLARITY_NAME.match(file.name)
            if match is None:
                raise CorpusFormatError(f"{file}: file name does not match cvNNN_NNNNN.txt, so its fold is unknown. "
                                        "Keep the original file names of review_polarity.tar.gz.")
            text = file.read_bytes().decode(encoding)
            yield {"text": text, "label": label, "id": file.name, "fold": int(match.group(1)) // 100}


def read_sentence_polarity(path: PathLike, *, encoding: str = "latin-1") -> Iterator[Dict[str, Any]]:
    """Read the sentence polarity dataset v1.0 from the `rt-polaritydata` folder, as NLTK's copy reads it:
    `{"text", "label": "pos"|"neg", "id": "rt-polarity.neg:LINE"}`, negative lines first."""
    root = Path(path)
    for label in ("neg", "pos"):
        file = root / f"rt-polarity.{label}"
        if not file.is_file():
            raise FileNotFoundError(f"{file} not found: pass the rt-polaritydata folder of rt-polaritydata.tar.gz.")
        text = file.read_bytes().decode(encoding)
        for line_no, line in enumerate(text.split("\n"), start=1):
            line = line.replace("\x85", " ").rstrip()
            if line:
                yield {"text": line, "label": label, "id": f"{file.name}:{line_no}"}


def _review_field(block: str, name: str) -> Optional[str]:
    match = re.search(_REVIEW_FIELD.format(re.escape(name)), block, re.DOTALL)
    return html.unescape(match.group(1).strip()) if match else None


def read_multi_domain_reviews(path: PathLike, *, include_title: bool = False, skip_unlabeled: bool = True,
                              encoding: str = "latin-1") -> Iterator[Dict[str, Any]]:
    """Read the multi-domain sentiment dataset (Blitzer et al. 2007), unprocessed `.review` files: `{"text",
    "label": "pos"|"neg", "id", "domain", "rating", "title", "source"}`, the label from the file name, or for
    `unlabeled.review` from `<rating>` (above 3 "pos", below 3 "neg").

    path (PathLike): A `.review` file, or a domain folder (e.g. `sorted_data/books`).
    include_title (bool): Put the review title and a newline before the text.
    skip_unlabeled (bool): Skip reviews without a label; if False they are yielded without a `label` key.
    """
    path = Path(path)
    if path.is_dir():
        names = ("negative.review", "positive.review", "unlabeled.review")
        files = [path / name for name in names if (path / name).is_file()]
        if not files:
            raise FileNotFoundError(f"no positive.review, negative.review or unlabeled.review in {path}: pass a "
                                    "domain folder of the unprocessed dataset, e.g. sorted_data/books.")
    elif path.is_file():
        files = [path]
    else:
        raise FileNotFoundError(f"multi-domain sentiment file or folder not found: {path}")
    for file in files:
        yield from _read_review_file(file, include_title, skip_unlabeled, encoding)


def _read_review_file(file: Path, include_title: bool, skip_unlabeled: bool, encoding: str) -> Iterator[Dict[str, Any]]:
    fixed_label = {"positive": "pos", "negative": "neg"}.get(file.name.split(".")[0])
    data = file.read_bytes().decode(encoding)
    if "<review>" not in data:
        raise CorpusFormatError(f"{file}: no <review> element found; is this a .review file?")
    for match in _REVIEW.finditer(data):
        block = match.group(1)
        text = _review_field(block, "review_text")
        if text is None:
            line_no = data.count("\n", 0, match.start()) + 1
            raise CorpusFormatError(f"{file}, line {line_no}: <review> without a closed <review_text> element.")
        rating_text = _review_field(block, "rating")
        try:
            rating: Optional[float] = float(rating_text) if rating_text else None
        except ValueError:
            rating = None
        label = fixed_label
        if label is None and rating is not None and rating != 3:
            label = "pos" if rating > 3 else "neg"
        if label is None and skip_unlabeled:
            continue
        title = _review_field(block, "title") or ""
        record: Dict[str, Any] = {"text": f"{title}\n{text}" if include_title and title else text}
        if label is not None:
            record["label"] = label
        yield {**record, "id": _review_field(block, "unique_id") or "", "domain": file.parent.name, "rating": rating,
               "title": title, "source": file.name}


def _reuters_list(block: str, tag: str) -> List[str]:
    match = re.search(f"<{tag}>(.*?)</{tag}>", block, re.DOTALL)
    return re.findall(r"<D>(.*?)</D>", match.group(1), re.DOTALL) if match else []


def _reuters_text(value: str) -> str:
    value = _CONTROL_ENTITY.sub("", value)
    return value.replace("&lt;", "<").replace("&amp;", "&").strip()


def _reuters_element(block: str, tag: str) -> str:
    match = re.search(f"<{tag}>(.*?)</{tag}>", block, re.DOTALL)
    return _reuters_text(match.group(1)) if match else ""


def read_reuters21578(path: PathLike, *, split: Optional[str] = None,
                      require_topics: bool = False) -> Iterator[Dict[str, Any]]:
    """Read Reuters-21578 SGML (a `.sgm` file or the folder of `reut2-*.sgm`): `{"text", "labels": [topics], "id":
    NEWID, "title", "body", "places", "lewissplit", "topics_attr", "modapte"}`, `text` the title and the body
    without the "Reuter" sign-off.

    split (Optional[str]): Keep only this ModApte part ("train", "test" or "unused").
    require_topics (bool): Skip documents without TOPICS categories.
    """
    if split not in (None, "train", "test", "unused"):
        raise ValueError(f"split must be 'train', 'test', 'unused' or None, not {split!r}")
    path = Path(path)
    files = sorted(path.glob("reut2-*.sgm")) if path.is_dir() else [path]
    if not files or not files[0].is_file():
        raise FileNotFoundError(f"no reut2-*.sgm files at {path}: pass the reuters21578 folder or one .sgm file")
    for file in files:
        for record in _read_reuters_file(file):
            if split is not None and record["modapte"] != split:
                continue
            if require_topics and not record["labels"]:
                continue
            yield record


def _read_reuters_file(file: Path) -> Iterator[Dict[str, Any]]:
    data = file.read_bytes().decode("latin-1")
    n_open = len(re.findall(r"<REUTERS\b", data))
    n_read = 0
    for match in _REUTERS.finditer(data):
        n_read += 1
        attrs = dict(_ATTR.findall(match.group(1)))
        block = match.group(2)
        line_no = data.count("\n", 0, match.start()) + 1
        if "NEWID" not in attrs:
            raise CorpusFormatError(f"{file}, line {line_no}: <REUTERS> tag without a NEWID attribute.")
        text_match = re.search(r"<TEXT\b([^>]*)>(.*?)</TEXT>", block, re.DOTALL)
        if text_match is None:
            raise CorpusFormatError(f"{file}, line {line_no}: <REUTERS> element without a <TEXT> element.")
        inner = text_match.group(2)
        if 'TYPE="UNPROC"' in text_match.group(1):
            title, body = "", _reuters_text(inner)
        else:
            title, body = _reuters_element(inner, "TITLE"), _reuters_element(inner, "BODY")
        text = _SIGN_OFF.sub("", "\n".join(part for part in (title, body) if part))
        topics_attr, lewissplit = attrs.get("TOPICS", ""), attrs.get("LEWISSPLIT", "")
        modapte = lewissplit.lower() if topics_attr == "YES" and lewissplit in ("TRAIN", "TEST") else "unused"
        yield {"text": text, "labels": _reuters_list(block, "TOPICS"), "id": attrs["NEWID"], "title": title,
               "body": body, "places": _reuters_list(block, "PLACES"), "lewissplit": lewissplit,
               "topics_attr": topics_attr, "modapte": modapte}
    if n_read != n_open:
        raise CorpusFormatError(f"{file}: {n_open} <REUTERS> tags but {n_read} complete elements; the file is "
                                "truncated or a </REUTERS> tag is missing.")
