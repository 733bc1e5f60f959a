"""Classify streams of texts with a trained pipeline: JSONL in, JSONL with "cats" out, in bounded memory.

`apply_stream` backs the `apply` command; `PipelineBatchClassifier` is the class to give
Ray Data's `map_batches`, which loads the pipeline once per worker.
"""
import gzip
import io
import json
import os
from pathlib import Path
from typing import IO, Any, Dict, Iterator, Optional

import numpy

from .datasets.corpora import CorpusFormatError, iter_jsonl
from .files import create_temp_beside


def open_output(raw: IO[bytes], gz: bool) -> IO[str]:
    """A UTF-8 text stream writing to the binary file `raw`, gzip-compressed when `gz` is true (with no name or
    time stamp in the header, so the same records give the same bytes)."""
    return io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if gz else raw,
                            encoding="utf8")


def load_pipeline(model: str) -> Any:
    """`spacy.load(model)`, with any failure (also of a package that is not a pipeline) as one ValueError."""
    import spacy

    try:
        return spacy.load(model)
    except Exception as err:
        raise ValueError(f"cannot load the pipeline {model!r} ({type(err).__name__}: {err}); pass a pipeline "
                         "directory written by spacy train or nlp.to_disk, or an installed pipeline package") from None


def read_records(path: Path) -> Iterator[Dict[str, Any]]:
    """The JSON objects of a JSONL (or .jsonl.gz) file, one at a time; each needs a "text" string."""
    for number, record in iter_jsonl(path):
        if not isinstance(record.get("text"), str):
            raise CorpusFormatError(f'{path}, line {number}: each line needs a "text" string, e.g. {{"text": "..."}}')
        yield record


def count_records(path: Path) -> Optional[int]:
    """The number of non-blank lines of an uncompressed JSONL file, read in one quick pass; None for a
    compressed file, whose size is not known without decompressing it."""
    if Path(path).suffix == ".gz":
        return None
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


class PipelineBatchClassifier:
    """Classify a batch of texts; for Ray Data's `map_batches` (the pipeline loads once per worker).

    model (str): A spaCy pipeline directory or package name.
    batch_size (int): Texts per `nlp.pipe` batch.
    """

    def __init__(self, model: str, batch_size: int = 256) -> None:
        import spacy

        self.nlp = spacy.load(model)
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, Any]:
        """Add a "cats" column: each text's categories as a JSON string."""
        texts = [str(t) for t in batch["text"]]
        cats = [json.dumps(doc.cats) for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]
        return {**batch, "cats": numpy.array(cats, dtype=object)}


def _plain(value: Any) -> Any:
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _ray_records(model: str, path: Path, n_workers: int, batch_size: int, address: Optional[str]) -> Iterator[Dict[str, Any]]:
    from .learning._ray_backend import connect_ray

    ray = connect_ray(address)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    dataset = ray.data.read_json(str(path), lines=True) if path.suffix != ".gz" else ray.data.read_json(
        str(path), lines=True, arrow_open_stream_args={"compression": "gzip"})
    cpus = ray.cluster_resources().get("CPU", 1.0)
    classified = dataset.map_batches(PipelineBatchClassifier, fn_constructor_args=(model, batch_size),
                                     batch_size=batch_size, concurrency=n_workers,
                                     num_cpus=min(1.0, cpus / (2 * n_workers)))
    for row in classified.iter_rows():
        record = dict(row)
        record["cats"] = json.loads(record["cats"])
        yield record


def apply_stream(model: str, input_path: Path, output_path: Path, *, n_workers: int = 1, backend: str = "processes",
                 batch_size: int = 256, ray_address: Optional[str] = None, progress: bool = False) -> int:
    """Write every input record with its "cats", in input order; the output appears whole when done.

    RETURNS (int): The number of texts classified.
    """
    from tqdm import tqdm

    input_path, output_path = Path(input_path), Path(output_path)
    if not input_path.is_file():
        raise ValueError(f"{input_path} is not a file (give a JSONL file with a \"text\" per line)")
    if backend == "ray":
        records = _ray_records(model, input_path, n_workers, batch_size, ray_address)
    else:
        nlp = load_pipeline(model)
        pairs = nlp.pipe(((r["text"], r) for r in read_records(input_path)), as_tuples=True, batch_size=batch_size,
                         n_process=n_workers)
        records = (dict(record, cats=doc.cats) for doc, record in pairs)
    fd, partial = create_temp_beside(output_path)
    n = 0
    try:
        with open(fd, "wb") as raw, open_output(raw, output_path.suffix == ".gz") as out, \
                tqdm(total=count_records(input_path) if progress else None, unit="doc", disable=not progress) as bar:
            for record in records:
                out.write(json.dumps(record, default=_plain) + "\n")
                n += 1
                bar.update(1)
        os.replace(partial, output_path)
    finally:
        partial.unlink(missing_ok=True)
    return n
