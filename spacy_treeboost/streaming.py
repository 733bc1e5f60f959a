"""Classify a JSONL stream of texts with a trained pipeline in bounded memory (`apply_stream`, the `apply` command):
this process reads and writes in order, batches are classified here and in worker processes or Ray actors."""
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


class PipelineBatchClassifier:
    """Classify a batch of texts; for Ray Data's `map_batches` (the pipeline loads once per worker).

    model (str): A spaCy pipeline directory or package name.
    batch_size (int): Texts per `nlp.pipe` batch.
    nlp (Optional[Language]): The pipeline `model` names, if already loaded.
    """

    def __init__(self, model: str, batch_size: int = 256, nlp: Any = None) -> None:
        import spacy

        self.nlp = spacy.load(model) if nlp is None else nlp
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


Batch = TypeVar("Batch")


def in_input_order(batches: Iterable[Batch], n_workers: int, send: Callable[[int, Batch], None],
                   receive: Callable[[bool], Optional[Tuple[int, Any]]], local: Optional[Callable[[Batch], Any]] = None,
                   depth: int = 2) -> Generator[Tuple[Batch, Any], None, None]:
    """Each batch with its reply, in input order. A batch goes to the worker with the fewest batches in flight (at
    most `depth` each); with `local`, this process computes the next batch while the reply due next has not come.

    n_workers (int): The workers 0 ... n_workers - 1 (0: every batch runs here, with `local`).
    send (Callable[[int, Batch], None]): Gives a batch to a worker.
    receive (Callable[[bool], Optional[Tuple[int, Any]]]): The next (worker, reply), waiting if its argument is
        true, else None when none has come; a worker replies in order.
    local (Optional[Callable[[Batch], Any]]): A batch's reply, computed in this process.
    """
    if n_workers < 1 and local is None:
        raise ValueError("in_input_order needs a worker or a local function")
    source = iter(batches)
    pending: Deque[List[Any]] = deque()  # [batch, reply] in input order; the reply is `waiting` until it comes
    queues: List[Deque[List[Any]]] = [deque() for _ in range(n_workers)]
    limit = depth * (n_workers + (local is not None))
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
        work_here = local is not None and more and len(pending) < limit
        got = receive(not work_here) if any(queues) else None
        if got is not None:
            queues[got[0]].popleft()[1] = got[1]
        elif work_here:
            batch = next(source, waiting)
            more = batch is not waiting
            if more:
                pending.append([batch, local(batch)])  # type: ignore[misc]


Records = List[Dict[str, Any]]


def _ray_batches(model: str, path: Path, n_workers: int, batch_size: int, address: Optional[str],
                 timeout: float) -> Generator[Tuple[Records, Any], None, None]:
    """The batches of records with their cats, by `n_workers` Ray actors in input order (two batches per actor in
    flight)."""
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
        pending: Deque[Tuple[int, int, Any]] = deque()

        def send(i: int, batch: Records) -> None:
            pending.append((i, len(batch), actors[i].classify.remote([r["text"] for r in batch])))

        def receive(block: bool) -> Tuple[int, Any]:
            i, size, ref = pending.popleft()
            try:
                return i, ray.get(ref, timeout=timeout)
            except ray.exceptions.GetTimeoutError:
                raise TimeoutError(f"a Ray worker returned no batch of {size} texts within {timeout:g} s: the "
                                   f"cluster may be overloaded or a node lost; raise --timeout to wait longer") from None

        yield from in_input_order(minibatch(read_records(path), batch_size), n_workers, send, receive)
    finally:
        for a in actors:
            ray.kill(a)


def apply_stream(model: str, input_path: Path, output_path: Path, *, n_workers: int = 1, backend: str = "processes",
                 batch_size: int = 256, ray_address: Optional[str] = None, progress: bool = False,
                 timeout: float = 300.0, on_start: Optional[Callable[[List[int]], None]] = None) -> int:
    """Write every input record with its "cats", in input order; the output appears whole when done.

    model (str): A spaCy pipeline directory or package name.
    input_path (Path): JSONL (or .jsonl.gz) with a "text" per line.
    output_path (Path): Where to write the records with their "cats" (.gz: compressed).
    n_workers (int): The processes that classify (this one and `n_workers - 1` others) or Ray actors.
    backend (str): "processes" or "ray".
    ray_address (Optional[str]): For "ray": the cluster address; None starts a local Ray.
    timeout (float): For "ray": the longest wait, in seconds, for the workers to start or a batch to come back.
    on_start (Optional[Callable[[List[int]], None]]): For "processes": called with the worker processes' ids.
    RETURNS (int): The number of texts classified.
    """
    from tqdm import tqdm

    input_path, output_path = check_input_file(input_path), Path(output_path)
    pairs: Generator[Tuple[Records, Any], None, None]
    with contextlib.ExitStack() as stack:
        # the partial output exists, and is removed on any way out, before a worker starts (or Ctrl-C could leave it)
        fd, partial = create_temp_beside(output_path)
        stack.callback(partial.unlink, missing_ok=True)
        raw = stack.enter_context(open(fd, "wb"))
        if backend == "ray":
            if not timeout > 0:
                raise ValueError(f"timeout={timeout!r} is invalid: use a positive number of seconds")
            pairs = _ray_batches(model, input_path, n_workers, batch_size, ray_address, timeout)
        else:
            nlp = load_pipeline(model)
            # forked workers and worker 0 (this process) share the loaded pipeline; spawned ones load `model`
            workers = ProcessWorkers(n_workers, lambda i, forked: (PipelineBatchClassifier, (model, batch_size),
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
                                   receive, local=lambda batch: here.classify([r["text"] for r in batch]))
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
