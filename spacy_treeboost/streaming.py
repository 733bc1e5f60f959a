"""Classify streams of texts with a trained pipeline: JSONL in, JSONL with "cats" out, in bounded memory.

`apply_stream` backs the `apply` command; `PipelineBatchClassifier` loads the pipeline once per Ray
worker: `apply --backend ray` sends it batches read on the driver, and it is the class to give Ray Data's
`map_batches`.
"""
import gzip
import io
import json
import os
from collections import deque
from pathlib import Path
from typing import IO, Any, Deque, Dict, Iterator, List, Optional, Tuple

import numpy

from .datasets.convert import load_pipeline
from .datasets.corpora import CorpusFormatError, check_input_file, iter_jsonl
from .files import create_temp_beside


def open_output(raw: IO[bytes], gz: bool) -> IO[str]:
    """A UTF-8 text stream writing to the binary file `raw`, gzip-compressed when `gz` is true (with no name or
    time stamp in the header, so the same records give the same bytes)."""
    return io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if gz else raw,
                            encoding="utf8")


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
        cats = [json.dumps(c) for c in self.classify([str(t) for t in batch["text"]])]
        return {**batch, "cats": numpy.array(cats, dtype=object)}

    def classify(self, texts: List[str]) -> List[Dict[str, float]]:
        """The categories of each text, in order."""
        return [doc.cats for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]


def _plain(value: Any) -> Any:
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _batches(records: Iterator[Dict[str, Any]], size: int) -> Iterator[List[Dict[str, Any]]]:
    batch: List[Dict[str, Any]] = []
    for record in records:
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _ray_records(model: str, path: Path, n_workers: int, batch_size: int, address: Optional[str],
                 timeout: float) -> Iterator[Dict[str, Any]]:
    """Records read here (the driver needs no cluster CPU for reading) and classified by `n_workers` Ray actors,
    batch by batch in input order, with at most two batches per actor in flight."""
    from .learning.tasks import connect_ray

    ray = connect_ray(address)
    cpus = ray.cluster_resources().get("CPU", 1.0)
    actor = ray.remote(num_cpus=min(1.0, cpus / n_workers), max_restarts=0)(PipelineBatchClassifier)
    actors = [actor.remote(model, batch_size) for _ in range(n_workers)]
    try:
        ready = [a.__ray_ready__.remote() for a in actors]
        done, waiting = ray.wait(ready, num_returns=len(ready), timeout=timeout)
        if waiting:
            raise TimeoutError(
                f"{len(waiting)} of {n_workers} Ray workers did not start within {timeout:g} s (the cluster has "
                f"{cpus:g} CPUs; each worker needs {min(1.0, cpus / n_workers):g} and other jobs may hold them): "
                f"lower --n-workers, free the cluster's CPUs, or raise --timeout")
        for ref in done:
            try:
                ray.get(ref)
            except ray.exceptions.RayActorError as err:
                raise ValueError(f"a Ray worker could not load the pipeline {model!r} (it must be a path or "
                                 f"package that exists on every node): {err}") from None
        pending: Deque[Tuple[List[Dict[str, Any]], Any]] = deque()
        batches = _batches(read_records(path), batch_size)
        turn = 0
        while True:
            while len(pending) < 2 * n_workers:
                batch = next(batches, None)
                if batch is None:
                    break
                pending.append((batch, actors[turn % n_workers].classify.remote([r["text"] for r in batch])))
                turn += 1
            if not pending:
                return
            batch, ref = pending.popleft()
            try:
                cats = ray.get(ref, timeout=timeout)
            except ray.exceptions.GetTimeoutError:
                raise TimeoutError(f"a Ray worker returned no batch of {len(batch)} texts within {timeout:g} s: the "
                                   f"cluster may be overloaded or a node lost; raise --timeout to wait longer") from None
            for record, c in zip(batch, cats):
                yield dict(record, cats=c)
    finally:
        for a in actors:
            ray.kill(a)


def apply_stream(model: str, input_path: Path, output_path: Path, *, n_workers: int = 1, backend: str = "processes",
                 batch_size: int = 256, ray_address: Optional[str] = None, progress: bool = False,
                 timeout: float = 300.0) -> int:
    """Write every input record with its "cats", in input order; the output appears whole when done.

    model (str): A spaCy pipeline directory or package name.
    input_path (Path): JSONL (or .jsonl.gz) with a "text" per line.
    output_path (Path): Where to write the records with their "cats" (.gz: compressed).
    n_workers (int): Processes (`nlp.pipe(n_process=...)`) or Ray actors.
    backend (str): "processes" or "ray" (the input is read here and batches go to the actors).
    batch_size (int): Texts per batch.
    ray_address (Optional[str]): For "ray": the cluster address; None starts a local Ray.
    progress (bool): Show a progress bar of the texts written.
    timeout (float): For "ray": the longest wait, in seconds, for the workers to start or for a batch to come
        back, after which a TimeoutError says what to change.
    RETURNS (int): The number of texts classified.
    """
    from tqdm import tqdm

    input_path, output_path = check_input_file(input_path), Path(output_path)
    if backend == "ray":
        if not timeout > 0:
            raise ValueError(f"timeout={timeout!r} is invalid: use a positive number of seconds")
        records = _ray_records(model, input_path, n_workers, batch_size, ray_address, timeout)
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
