"""Classify a JSONL stream of texts with a trained pipeline in bounded memory (`apply_stream`, the `apply` command):
this process reads and writes in order, batches are classified here and in worker processes."""
import contextlib
import gzip
import io
import json
import os
from collections import deque
from pathlib import Path
from typing import Any, Callable, Deque, Dict, Generator, Iterable, Iterator, List, Optional, Tuple, TypeVar

import numpy
from spacy.util import minibatch

from .datasets.convert import load_pipeline
from .datasets.jsonl import CorpusFormatError, check_input_file, iter_jsonl
from .files import create_temp_beside
from .learning.tasks import ProcessWorkers


def read_records(path: Path) -> Iterator[Dict[str, Any]]:
    """The JSON objects of a JSONL (or .jsonl.gz) file, one at a time; each needs a "text" string."""
    for number, record in iter_jsonl(path):
        if not isinstance(record.get("text"), str):
            raise CorpusFormatError(f'{path}, line {number}: each line needs a "text" string, e.g. {{"text": "..."}}')
        yield record


def count_records(path: Path) -> Optional[int]:
    """The number of non-blank lines of an uncompressed JSONL file; None for a compressed one."""
    if Path(path).suffix == ".gz":
        return None
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


class BatchClassifier:
    """The categories of batches of texts (an `apply` worker's object).

    model (str): A spaCy pipeline directory or package name, loaded unless `nlp` is given.
    batch_size (int): Texts per `nlp.pipe` batch.
    """

    def __init__(self, model: str, batch_size: int = 256, nlp: Any = None) -> None:
        self.nlp = load_pipeline(model) if nlp is None else nlp
        self.batch_size = batch_size

    def classify(self, texts: List[str]) -> List[Dict[str, float]]:
        """The categories of each text, in order."""
        return [doc.cats for doc in self.nlp.pipe(texts, batch_size=self.batch_size)]


def _plain(value: Any) -> Any:
    if isinstance(value, (numpy.generic, numpy.ndarray)):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


Batch = TypeVar("Batch")


def in_input_order(batches: Iterable[Batch], n_workers: int, send: Callable[[int, Batch], None],
                   receive: Callable[[bool], Optional[Tuple[int, Any]]], local: Callable[[Batch], Any],
                   depth: int = 2) -> Generator[Tuple[Batch, Any], None, None]:
    """Each batch with its reply, in input order. A batch goes to the worker with the fewest batches in flight (at
    most `depth` each); this process computes the next batch with `local` while the reply due next has not come.

    n_workers (int): The workers 0 ... n_workers - 1 (0: every batch runs here).
    send (Callable[[int, Batch], None]): Gives a batch to a worker.
    receive (Callable[[bool], Optional[Tuple[int, Any]]]): The next (worker, reply), waiting if its argument is
        true, else None when none has come; a worker replies in order.
    """
    source = iter(batches)
    pending: Deque[List[Any]] = deque()  # [batch, reply] in input order; the reply is `waiting` until it comes
    queues: List[Deque[List[Any]]] = [deque() for _ in range(n_workers)]
    limit = depth * (n_workers + 1)
    waiting: Any = object()
    more = True
    while more or pending:
        while more and n_workers and len(pending) < limit:
            worker = min(range(n_workers), key=lambda w: len(queues[w]))
            if len(queues[worker]) >= depth:
                break
            batch = next(source, waiting)
            more = batch is not waiting
            if not more:
                break
            pending.append([batch, waiting])
            queues[worker].append(pending[-1])
            send(worker, batch)
        if pending and pending[0][1] is not waiting:
            batch, reply = pending.popleft()
            yield batch, reply
            continue
        work_here = more and len(pending) < limit
        got = receive(not work_here) if any(queues) else None
        if got is not None:
            queues[got[0]].popleft()[1] = got[1]
        elif work_here:
            batch = next(source, waiting)
            more = batch is not waiting
            if more:
                pending.append([batch, local(batch)])


def apply_stream(model: str, input_path: Path, output_path: Path, *, n_workers: int = 1, batch_size: int = 256,
                 progress: bool = False, on_start: Optional[Callable[[List[int]], None]] = None) -> int:
    """Write every input record with its "cats", in input order; the output appears whole when done.

    model (str): A spaCy pipeline directory or package name.
    input_path (Path): JSONL (or .jsonl.gz) with a "text" per line.
    output_path (Path): Where to write the records with their "cats" (.gz: compressed).
    n_workers (int): The processes that classify: this one and `n_workers - 1` others.
    on_start (Optional[Callable[[List[int]], None]]): Called with the worker processes' ids, if there are any.
    RETURNS (int): The number of texts classified.
    """
    from tqdm import tqdm

    input_path, output_path = check_input_file(input_path), Path(output_path)
    with contextlib.ExitStack() as stack:
        # the partial output exists, and is removed on any way out, before a worker starts (or Ctrl-C could leave it)
        fd, partial = create_temp_beside(output_path)
        stack.callback(partial.unlink, missing_ok=True)
        raw = stack.enter_context(open(fd, "wb"))
        nlp = load_pipeline(model)
        # forked workers and worker 0 (this process) share the loaded pipeline; spawned ones load `model`
        workers = ProcessWorkers(n_workers, lambda i, forked: (BatchClassifier, (model, batch_size),
                                                               {"nlp": nlp} if forked or i == 0 else {}),
                                 name="apply worker", stopped="no output was written",
                                 lower="--n-workers or --batch-size")
        stack.push(lambda kind, value, traceback: workers.close(kill=kind is not None))
        workers.when, here = "while classifying", workers.objects[0]
        if on_start is not None and n_workers > 1:
            on_start(workers.pids)

        def receive(block: bool) -> Optional[Tuple[int, Any]]:
            ready = workers.ready(range(1, n_workers), None if block else 0)
            return (ready[0] - 1, workers.receive(ready[0])) if ready else None

        pairs = in_input_order(minibatch(read_records(input_path), batch_size), n_workers - 1,
                               lambda i, batch: workers.send(i + 1, "classify", ([r["text"] for r in batch],)),
                               receive, lambda batch: here.classify([r["text"] for r in batch]))
        stack.enter_context(contextlib.closing(pairs))
        n = 0
        with tqdm(total=count_records(input_path) if progress else None, unit="doc", disable=not progress) as bar:
            # gzip without name or time stamp, so that equal outputs are equal files
            gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if output_path.suffix == ".gz" else raw
            with io.TextIOWrapper(gz, encoding="utf8") as out:
                for batch, cats in pairs:
                    out.writelines(json.dumps(dict(r, cats=c), default=_plain) + "\n" for r, c in zip(batch, cats))
                    n += len(batch)
                    bar.update(len(batch))
        os.replace(partial, output_path)
    return n
