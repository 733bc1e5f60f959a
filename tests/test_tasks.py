"""The task runner: every backend and number of workers gives the results of running each task alone."""
import os
import threading

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from one_shard import fit_on_row_shards
from reference import random_trees
from spacy_treeboost.learning import tasks
from spacy_treeboost.learning.classifier_files import classifier_to_bytes
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.threads import Threads
from spacy_treeboost.trees import Forest


class Squares:
    """A task runner: task k's result is k squared (an error for a negative k), with where it ran."""

    def __init__(self, threads=1):
        self.threads = threads

    def run(self, task):
        if task < 0:
            raise ValueError(f"task {task} fails")
        return task * task, os.getpid()


def task_builder(i, forked):
    return Squares, (), {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10**6), unique=True, max_size=30), st.integers(1, 5))
def test_local_workers_give_every_task_its_result_in_task_order(items, n_workers):
    workers = tasks.LocalWorkers(n_workers, task_builder)
    done = tasks.schedule(workers, items)
    assert list(done) == items and all(done[k][0] == k * k for k in items)
    assert tasks.run_tasks(Squares, (), items, n_workers, backend="local") == done


class InProcessRemote(tasks.LocalWorkers):
    """Worker 0 here, the others 'remote' (fed by the scheduler's second thread), all in this process."""

    here = (0,)

    def __init__(self, n, builder):
        super().__init__(n, builder)
        self.here = (0,)


class Watched(Threads):
    """Threads whose rise to `target` sets an event."""

    def __init__(self, target):
        self.risen, self.target = threading.Event(), target
        super().__init__(1)

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, value):
        self._value = value
        if value >= self.target:
            self.risen.set()


class WaitsForCores:
    """Task 0 waits until its threads rise (the other workers idle, the queue empty); the others return at once.
    Each returns where it ran and its threads when it started and when it ended."""

    def __init__(self, threads=1):
        self.threads = threads

    def run(self, task):
        start = int(self.threads)
        if task == 0:
            assert isinstance(self.threads, Watched) and self.threads.risen.wait(timeout=60)
        return os.getpid(), start, int(self.threads)


def test_the_first_task_runs_here_and_gets_the_idle_workers_cores_once_the_queue_is_empty(monkeypatch):
    monkeypatch.setattr(tasks.os, "cpu_count", lambda: 8)
    lent = Watched(3)
    workers = InProcessRemote(3, lambda i, _: (WaitsForCores, (lent if i == 0 else 1,), {}))
    done = tasks.schedule(workers, [0, 1, 2, 3, 4], lent=lent)
    assert done[0][2] == 3 and int(lent) == 1
    assert all(done[k][1:] == (1, 1) for k in range(1, 5))


def test_a_failed_task_stops_the_others_and_raises_its_error():
    with pytest.raises(ValueError, match="task -1 fails"):
        tasks.schedule(tasks.LocalWorkers(2, task_builder), [1, -1, 2])
    workers = InProcessRemote(2, task_builder)
    with pytest.raises(ValueError, match="task -3 fails"):
        tasks.schedule(workers, [1, 2, -3, 4, 5, 6])


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend='threads' is invalid"):
        tasks.make_workers("threads", 2, task_builder)


def labelled_forest(seed, n_docs=40, n_classes=3):
    trees, _ = random_trees(seed, min_docs=n_docs, max_docs=n_docs, max_labels=6)
    y = [str(v) for v in numpy.random.default_rng(seed).integers(0, n_classes, size=n_docs)]
    return Forest.from_trees(trees), y


FIT = dict(max_pattern_size=2, min_support=1, C=None, Cs=[0.3, 3.0], cv=2, cv_documents=None)


@pytest.mark.parametrize("features", ["auto", "nb"])
def test_the_fit_tasks_on_several_workers_in_this_process_give_the_model_of_one(monkeypatch, features):
    """The scheduler's path for worker processes, its workers in this process: the same model file."""
    f, y = labelled_forest(4)
    one = classifier_to_bytes(SubtreeLinearClassifier(**FIT, features=features).fit(f, y))
    monkeypatch.setattr(tasks, "ProcessWorkers", tasks.LocalWorkers)
    for n_workers in (2, 3):
        many = SubtreeLinearClassifier(**FIT, features=features, n_workers=n_workers).fit(f, y)
        assert classifier_to_bytes(many) == one


@pytest.mark.slow
@pytest.mark.parametrize("rows", [None, 9])
def test_spawned_workers_fit_the_model_of_one_worker(monkeypatch, rows):
    """Spawned workers (where a fork is unsafe, or on a platform without fork) receive the job, its shards (one of
    the whole matrices, or of `rows` rows each) included, over their pipes: the same model file as one worker's."""
    if rows is not None:
        fit_on_row_shards(monkeypatch, rows)
    f, y = labelled_forest(7)
    one = classifier_to_bytes(SubtreeLinearClassifier(**FIT).fit(f, y))
    started = []
    real = tasks.ProcessWorkers.__init__

    def recorded(self, *args, **kwargs):
        real(self, *args, **kwargs)
        started.append(self.start_method)

    monkeypatch.setattr(tasks, "start_method", lambda: "spawn")
    monkeypatch.setattr(tasks.ProcessWorkers, "__init__", recorded)
    many = SubtreeLinearClassifier(**FIT, n_workers=2).fit(f, y)
    assert classifier_to_bytes(many) == one
    assert started and set(started) == {"spawn"}


@pytest.mark.slow
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_worker_processes_run_the_tasks_after_the_first_and_lend_their_cores(monkeypatch, method):
    monkeypatch.setattr(tasks, "start_method", lambda: method)
    monkeypatch.setattr(tasks.os, "cpu_count", lambda: 8)
    lent = Watched(2)
    workers = tasks.ProcessWorkers(2, lambda i, _: (WaitsForCores, (lent if i == 0 else 1,), {}))
    try:
        done = tasks.schedule(workers, [0, 1, 2], lent=lent)
    finally:
        workers.close()
    assert done[0][0] == os.getpid() and done[0][2] == 2
    assert {done[1][0], done[2][0]} == {workers.pids[0]} != {os.getpid()}
    with pytest.raises(ValueError, match="task -2 fails"):
        tasks.run_tasks(Squares, (), [1, -2, 3, 4], 2)
