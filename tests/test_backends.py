"""Search backends: every backend and number of workers learns byte-identical model files."""
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

import numpy
import pytest
import srsly
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import forests, random_trees
from spacy_treeboost.learning.backends import (SearchWorker, WorkerDiedError, assign_root_labels,
                                               pack_occurrences)
from spacy_treeboost.learning.tasks import LocalWorkers
from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import classifier_to_dict
from spacy_treeboost.trees import Forest, read_bact

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SYNTHETIC = Path(__file__).resolve().parent / "data" / "synthetic_120.tree"

LEARNERS = [
    dict(algorithm="bact", boosting="adaboost"),
    dict(algorithm="bact", boosting="arcgv"),
    dict(algorithm="frequency", criterion="iwakura"),
    dict(algorithm="frequency", criterion="z"),
    dict(algorithm="presence", criterion="iwakura"),
    dict(algorithm="presence", criterion="z"),
]


def model_bytes(clf) -> bytes:
    return srsly.msgpack_dumps(classifier_to_dict(clf))


def task_labels(kind: str, n: int, seed: int):
    rng = numpy.random.default_rng(seed)
    if kind == "binary":
        y = [str(v) for v in rng.choice(["+1", "-1"], n)]
        y[0], y[-1] = "+1", "-1"
    elif kind == "multiclass":
        y = [str(v) for v in rng.choice(["a", "b", "c"], n)]
        y[:3] = ["a", "b", "c"]
    else:
        y = [[c for c in ("x", "y", "z") if rng.random() < 0.5] for _ in range(n)]
        y[0] = ["x", "y", "z"]
    return y


def fit_bytes(forest, y, n_workers, backend, **settings_):
    clf = TreeBoostClassifier(n_workers=n_workers, backend=backend, **settings_).fit(forest, y)
    try:
        return model_bytes(clf), [e["pattern"] for e in clf.trace_]
    finally:
        clf.space_.close()


@pytest.mark.determinism
@settings(SETTINGS, max_examples=40)
@given(st.one_of(forests(st, max_docs=8, max_nodes=9), st.integers(0, 2**32 - 1).map(lambda s: random_trees(s, max_docs=8))),
       st.sampled_from(LEARNERS), st.sampled_from(["binary", "multiclass", "multilabel"]), st.integers(1, 3),
       st.sampled_from([1, 1, 2]), st.booleans(), st.sampled_from([2, 3, 4, 50]), st.integers(0, 2**32 - 1),
       st.booleans())
def test_split_search_learns_the_same_model_as_one_worker(data, learner, task, k, minsup, include_root, n_workers, seed,
                                                          winners_asked):
    f = Forest.from_trees(data[0])
    y = task_labels(task, len(f), seed)
    assume(len(f) >= 3)
    settings_ = dict(learner, n_rounds=6, max_pattern_size=k, min_support=minsup, include_root_patterns=include_root)
    try:
        reference = fit_bytes(f, y, 1, None, **settings_)
    except ValueError:
        assume(False)
    # winners_asked: no candidate rides on its search reply, so the coordinator asks each round's owners for them
    with mock.patch.object(SearchWorker, "_may_win", return_value=False) if winners_asked else nullcontext():
        assert fit_bytes(f, y, n_workers, "local", **settings_) == reference


def test_the_round_winner_rides_on_its_search_reply(synthetic):
    forest, y, _ = synthetic
    settings_ = dict(algorithm="frequency", n_rounds=30)
    reference = fit_bytes(forest, y, 1, None, **settings_)
    asked = []
    send, init = LocalWorkers.send, SearchWorker.__init__

    def counting(self, i, method, args, **kwargs):
        asked.extend([method] if method == "winners" else [])
        return send(self, i, method, args, **kwargs)

    with mock.patch.object(LocalWorkers, "send", counting):
        assert fit_bytes(forest, y, 2, "local", **settings_) == reference
    assert asked == []
    # without shared best values, a candidate in more documents than REPLY_DOCUMENTS is asked of its worker
    unshared = mock.patch.object(SearchWorker, "__init__", autospec=True,
                                 side_effect=lambda self, *a, **kw: init(self, *a, **dict(kw, shared_best=None)))
    with mock.patch.object(LocalWorkers, "send", counting), unshared, \
            mock.patch("spacy_treeboost.learning.backends.REPLY_DOCUMENTS", 0):
        assert fit_bytes(forest, y, 2, "local", **settings_) == reference
    assert asked.count("winners") == settings_["n_rounds"]


@given(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(1, 2**31 - 1)), max_size=30),
       st.sampled_from([2**8, 2**16, 2**31]))
def test_packed_occurrences_come_back_unchanged_in_the_narrowest_types(pairs, cap):
    docs = numpy.array([d % cap for d, _ in pairs], dtype=numpy.int32)
    counts = numpy.array([c % cap for _, c in pairs], dtype=numpy.int32)
    packed = pack_occurrences(docs, counts)
    for original, narrow in zip((docs, counts), packed):
        largest = int(original.max()) if len(original) else 0
        assert narrow.dtype.itemsize == next(size for size in (1, 2, 4) if largest < 2 ** (8 * size))
    assert all(numpy.array_equal(b.astype(numpy.int32), a) for a, b in zip((docs, counts), packed))


def test_every_root_label_is_owned_by_exactly_one_worker_largest_first():
    labels = numpy.array([0, 1, 1, 1, 2, 2, 3, 0, 4, 4, 4, 4], dtype=numpy.int32)
    parents = numpy.array([-1, 0, 0, 0, 0, 0, 0, -1, 7, 7, 7, 7], dtype=numpy.int32)
    owner = assign_root_labels(labels, parents, 6, 2, include_root=False)
    # sizes: label 4: 4, label 1: 3, label 2: 2, label 3: 1 (roots excluded); label 0 and 5 own nothing.
    assert owner[4] == 0 and owner[1] == 1 and owner[2] == 1 and owner[3] == 0
    assert assign_root_labels(labels, parents, 6, 2, include_root=True)[0] == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=60), st.integers(1, 5))
def test_label_assignment_is_the_greedy_largest_first_schedule(labels, n_workers):
    labels = numpy.array(labels, dtype=numpy.int32)
    parents = numpy.zeros(len(labels), dtype=numpy.int32)
    owner = assign_root_labels(labels, parents, 10, n_workers, include_root=False)
    sizes = numpy.bincount(labels, minlength=10)
    loads = [0] * n_workers
    for label in sorted(range(10), key=lambda l: (-sizes[l], l)):
        if sizes[label]:
            target = min(range(n_workers), key=lambda w: (loads[w], w))
            assert owner[label] == target
            loads[target] += sizes[label]
    assert max(loads) <= sum(loads) / n_workers + sizes.max()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=60), st.booleans())
def test_label_sizes_count_the_labels_of_non_root_nodes_as_bincount_does(nodes, include_root):
    from spacy_treeboost.learning._patterns import label_sizes

    labels = numpy.array([label for label, _ in nodes], dtype=numpy.int32)
    parents = numpy.array([-1 if root else 0 for _, root in nodes], dtype=numpy.int32)
    keep = numpy.ones(len(nodes), dtype=bool) if include_root else parents >= 0
    expected = numpy.bincount(labels[keep], minlength=8)
    got = label_sizes(labels, parents, 8, include_root)
    assert got.dtype == numpy.int64 and numpy.array_equal(got, expected)


def test_label_sizes_refuse_labels_outside_the_vocabulary_and_mismatched_arrays():
    from spacy_treeboost.learning._patterns import label_sizes

    with pytest.raises(ValueError, match="label id 5 at node 1 is outside"):
        label_sizes(numpy.array([0, 5], dtype=numpy.int32), numpy.array([-1, 0], dtype=numpy.int32), 5, False)
    with pytest.raises(ValueError, match="differ in length"):
        label_sizes(numpy.array([0, 1], dtype=numpy.int32), numpy.array([-1], dtype=numpy.int32), 5, False)


def test_owned_root_labels_partition_the_search():
    from spacy_treeboost.learning._mine import SearchSpace

    trees, _ = random_trees(5, min_docs=8, max_docs=8)
    f = Forest.from_trees(trees)
    rank = _label_rank(f.vocab.to_list())
    rng = numpy.random.default_rng(0)
    w = rng.uniform(0.1, 1, len(f))
    w /= w.sum()
    y = numpy.where(rng.random(len(f)) < 0.5, 1, -1).astype(numpy.int8)
    full = SearchSpace(f.labels, f.parents, f.offsets, rank).best_rule(w, y)
    n_labels = len(rank)
    values = []
    for part in range(2):
        space = SearchSpace(f.labels, f.parents, f.offsets, rank)
        owned = numpy.arange(n_labels) % 2 == part
        assert space.own_root_labels(owned) <= int(owned.sum())
        best = space.best_rule(w, y)
        if best["node"] >= 0:
            values.append(best["value"])
            assert owned[space.pattern_code(best["node"])[0][1]]
    assert max(values) == full["value"]
    with pytest.raises(ValueError, match="one entry per label id"):
        SearchSpace(f.labels, f.parents, f.offsets, rank).own_root_labels(numpy.ones(n_labels + 1))


@pytest.mark.determinism
def test_corrective_learner_boosts_the_same_rules_on_any_number_of_workers():
    trees, _ = random_trees(21, min_docs=8, max_docs=8)
    f = Forest.from_trees(trees)
    y = task_labels("binary", len(f), 3)
    out = []
    for n_workers in (1, 2, 3):
        booster = TreeBoostClassifier("presence", n_rounds=6, n_workers=n_workers, backend="local")
        out.append(model_bytes(CorrectiveBoostClassifier(booster, C=1.0, refit_every=2).fit(f, y)))
    assert out[0] == out[1] == out[2]


@pytest.fixture(scope="module")
def synthetic():
    """120 documents of the synthetic workload (gen_synth_trees.py --n-train 120 --sents 5 --words 7 --seed 13)."""
    return read_bact(SYNTHETIC) + (SYNTHETIC,)


@pytest.mark.determinism
@pytest.mark.parametrize("backend", ["local", pytest.param("processes", marks=pytest.mark.slow)])
@pytest.mark.parametrize("task", ["binary", "multiclass"])
def test_workers_learn_the_same_model_on_the_synthetic_corpus(synthetic, task, backend):
    forest, y, _ = synthetic
    if task == "multiclass":
        y = [c if i % 3 else "other" for i, c in enumerate(y)]
    settings_ = dict(algorithm="frequency", n_rounds=30, include_root_patterns=task == "multiclass")
    reference = fit_bytes(forest, y, 1, None, **settings_)
    for n_workers in (1, 2, 3):
        assert fit_bytes(forest, y, n_workers, backend, **settings_) == reference


def test_execution_settings_are_parameters_but_not_part_of_the_model(synthetic):
    forest, y, _ = synthetic
    clf = TreeBoostClassifier("bact", n_rounds=3, n_workers=2, backend="local")
    assert clf.get_params()["n_workers"] == 2 and clf.get_params()["backend"] == "local"
    assert clf.set_params(ray_address="auto").ray_address == "auto"
    data = classifier_to_dict(clf.set_params(ray_address=None).fit(forest, y))
    assert not {"n_workers", "backend", "ray_address"} & set(data["params"])
    for bad, match in [(dict(n_workers=0), "n_workers"), (dict(n_workers=True), "n_workers"),
                       (dict(backend="threads"), "backend")]:
        with pytest.raises(ValueError, match=match):
            TreeBoostClassifier(**bad).fit(forest, y)


@pytest.mark.slow
def test_the_processes_backend_runs_worker_0_here_and_starts_the_others(synthetic):
    forest, y, _ = synthetic
    alone = TreeBoostClassifier("frequency", n_rounds=5, n_workers=1, backend="processes").fit(forest, y)
    assert alone.space_.workers.processes == [] and alone.space_.stats()[0]["pid"] == os.getpid()
    three = TreeBoostClassifier("frequency", n_rounds=5, n_workers=3, backend="processes").fit(forest, y)
    try:
        pids = [w["pid"] for w in three.space_.stats()]
        assert pids[0] == os.getpid() and pids[1:] == three.space_.workers.pids and len(set(pids)) == 3
        assert classifier_to_dict(three) == classifier_to_dict(alone)
    finally:
        three.space_.close()
        alone.space_.close()
    with pytest.raises(RuntimeError, match="search workers were stopped"):
        alone.space_.search([0], 6)


@pytest.mark.slow
def test_a_killed_worker_raises_an_error_naming_the_worker_and_round(synthetic):
    forest, y, _ = synthetic
    clf = TreeBoostClassifier("frequency", n_rounds=10, n_workers=2, backend="processes").start(forest, y)
    clf.boost(2)
    assert len(clf.space_.workers.processes) == 1  # worker 0 runs in this process
    victim = clf.space_.workers.processes[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(timeout=10)
    with pytest.raises(WorkerDiedError, match=r"worker 1 \(process \d+\) died \(signal 9\) in boosting round 3"):
        clf.boost(3)
    assert not any(p.is_alive() for p in clf.space_.workers.processes)


@pytest.mark.parametrize("backend", ["local", pytest.param("processes", marks=pytest.mark.slow)])
def test_a_rule_a_worker_cannot_apply_stops_the_next_round_with_its_error(synthetic, backend):
    """Rules go to the workers without a reply; an error in applying one comes back with the next search."""
    forest, y, _ = synthetic
    clf = TreeBoostClassifier("frequency", n_rounds=3, n_workers=2, backend=backend).start(forest, y)
    try:
        clf.boost(1)
        with pytest.raises(IndexError):
            clf.space_.update(7, numpy.array([0]), numpy.array([1]), 1, 0.5, -0.5)
            clf.space_.search([0], 2)
    finally:
        clf.space_.close()


@pytest.mark.slow
def test_ctrl_c_stops_every_worker(tmp_path, synthetic):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(f"""
        import signal
        import sys
        from spacy_treeboost.learning.learner import TreeBoostClassifier
        from spacy_treeboost.trees import read_bact
        if __name__ == "__main__":
            signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell's background jobs inherit SIG_IGN
            forest, y = read_bact({str(synthetic[2])!r})
            clf = TreeBoostClassifier("frequency", n_rounds=10**6, n_workers=3, backend="processes").start(forest, y)
            print(*clf.space_.workers.pids, flush=True)
            while True:
                clf.boost(1000)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True, start_new_session=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "KeyboardInterrupt" in err
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.slow
@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_a_script_without_the_main_guard_trains_with_forked_workers_and_gets_an_error_not_a_hang_with_spawned_ones(
        tmp_path, start):
    """Spawned workers import the main script; one that trains at import time makes each worker die while it
    starts. The forest (megabytes here, more than a pipe holds) must not be stuck in a pipe nobody reads. Forked
    workers (Linux, a single-threaded training process) do not import it, and the script trains."""
    if start == "fork" and not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    (tmp_path / "train.tree").write_text(SYNTHETIC.read_text(encoding="utf8") * 40, encoding="utf8")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(f"""
        from spacy_treeboost.learning import tasks
        from spacy_treeboost.learning.learner import TreeBoostClassifier
        from spacy_treeboost.trees import read_bact
        tasks.start_method = lambda: {start!r}
        forest, y = read_bact({str(tmp_path / "train.tree")!r})
        assert len(forest.labels) * 8 > 2 ** 20
        clf = TreeBoostClassifier("frequency", n_rounds=5, n_workers=2, backend="processes").fit(forest, y)
        print(clf.space_.workers.start_method, len(clf.rules_))
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    if start == "fork":
        assert proc.returncode == 0 and proc.stdout.split() == ["fork", "5"], proc.stderr
        return
    assert proc.returncode == 1
    assert "WorkerDiedError: Search worker 1" in proc.stderr and "while starting" in proc.stderr
    assert 'if __name__ == "__main__":' in proc.stderr


@pytest.mark.determinism
@pytest.mark.slow
def test_forked_workers_learn_the_rules_of_one_worker(synthetic):
    """A fresh single-threaded process on Linux forks its workers from its index of the forest: the same rules."""
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    code = textwrap.dedent(f"""
        from spacy_treeboost.learning.classifier_files import classifier_to_dict
        from spacy_treeboost.learning.learner import TreeBoostClassifier
        from spacy_treeboost.trees import read_bact
        forest, y = read_bact({str(synthetic[2])!r})
        fits = [TreeBoostClassifier("frequency", n_rounds=8, n_workers=n, backend="processes").fit(forest, y)
                for n in (1, 2, 3)]
        print(fits[1].space_.workers.start_method, fits[2].space_.workers.start_method,
              all(classifier_to_dict(f) == classifier_to_dict(fits[0]) for f in fits))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["fork", "fork", "True"]


@pytest.mark.slow
def test_a_forked_worker_does_not_keep_a_second_copy_of_the_forest_arrays():
    """A forked worker searches its inherited index of the forest, which reads the training process's label array
    (shared, resident in both) and gives back the pages of the parents and offsets: in the worker, none of their
    whole pages is resident."""
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    code = textwrap.dedent("""
        import mmap
        import numpy
        from spacy_treeboost.learning.learner import TreeBoostClassifier
        from spacy_treeboost.trees.forest import Forest, LabelVocab

        def resident_pages(pid, array):
            first, last = array.ctypes.data // mmap.PAGESIZE, (array.ctypes.data + array.nbytes) // mmap.PAGESIZE
            with open(f"/proc/{pid}/pagemap", "rb") as f:
                f.seek(8 * first)
                entries = numpy.frombuffer(f.read(8 * (last - first + 1)), dtype=numpy.uint64)
            return int((entries >> numpy.uint64(63)).sum())

        rng = numpy.random.default_rng(0)
        n_docs, size = 5000, 101
        parents = numpy.arange(-1, n_docs * size - 1, dtype=numpy.int32)
        parents[::size] = -1
        labels = rng.integers(1, 500, n_docs * size).astype(numpy.int32)
        labels[::size] = 0
        forest = Forest(labels, parents, None, numpy.arange(n_docs + 1) * size,
                        LabelVocab(f"w{i}" for i in range(1, 500)))
        y = ["+1" if v else "-1" for v in rng.integers(0, 2, n_docs)]
        clf = TreeBoostClassifier("frequency", n_rounds=1, n_workers=2, backend="processes", max_pattern_size=1)
        clf.start(forest, y)
        worker = clf.space_.workers.pids[0]
        arrays = (forest.labels, forest.parents, forest.offsets)
        print(clf.space_.workers.start_method, *(resident_pages("self", a) for a in arrays),
              *(resident_pages(worker, a) for a in arrays), *(a.nbytes // mmap.PAGESIZE for a in arrays))
        clf.space_.close()
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    method, *pages = proc.stdout.split()
    here, worker, sizes = (list(map(int, pages[k:k + 3])) for k in (0, 3, 6))
    assert method == "fork"
    assert all(h >= s for h, s in zip(here, sizes))
    assert worker[0] >= sizes[0]
    assert worker[1] <= 2 and worker[2] <= 2


@pytest.mark.slow
def test_workers_are_spawned_while_this_process_runs_other_threads(synthetic):
    """Forking a process with other threads can deadlock the child: the workers are spawned then, and learn the same
    rules."""
    import threading

    forest, y, _ = synthetic
    # this test process may run other threads already (Ray's, from earlier tests)
    alone = "fork" if sys.platform.startswith("linux") and threading.active_count() == 1 else "spawn"
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        spawned = TreeBoostClassifier("frequency", n_rounds=5, n_workers=2, backend="processes").fit(forest, y)
    finally:
        stop.set()
        other.join()
    forked = TreeBoostClassifier("frequency", n_rounds=5, n_workers=2, backend="processes").fit(forest, y)
    try:
        assert spawned.space_.workers.start_method == "spawn"
        assert forked.space_.workers.start_method == alone
        assert classifier_to_dict(spawned) == classifier_to_dict(forked)
    finally:
        spawned.space_.close()
        forked.space_.close()


@pytest.mark.slow
def test_forked_workers_stop_when_the_training_process_is_killed(tmp_path, synthetic):
    """A forked worker holds only its own end of its pipe (the parent's ends it inherited are closed), so it sees
    the pipe end when the training process dies and exits rather than waiting forever."""
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(f"""
        from spacy_treeboost.learning.learner import TreeBoostClassifier
        from spacy_treeboost.trees import read_bact
        forest, y = read_bact({str(synthetic[2])!r})
        clf = TreeBoostClassifier("frequency", n_rounds=10**6, n_workers=3, backend="processes").start(forest, y)
        assert clf.space_.workers.start_method == "fork"
        print(*clf.space_.workers.pids, flush=True)
        while True:
            clf.boost(1000)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        exits = [_exit_of(pid) for pid in pids]
        proc.kill()
        proc.wait(timeout=30)
        for pid, exit_ in zip(pids, exits):
            if exit_ is not None:
                exited = select.select([exit_], [], [], 30)[0]
                os.close(exit_)
                assert exited, f"worker {pid} still runs 30 s after the training process was killed"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _exit_of(pid):
    """A file descriptor that becomes readable when process pid exits, or None if it has exited already."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


@pytest.mark.slow
def test_learn_command_takes_the_worker_settings(tmp_path, synthetic):
    _, _, train = synthetic
    models = []
    for extra in ([], ["--n-workers", "2", "--backend", "processes"], ["--n-workers", "3", "--backend", "local"]):
        model = tmp_path / f"model{len(models)}.bin"
        result = subprocess.run([sys.executable, "-m", "spacy_treeboost", "learn", str(train), str(model), "--algorithm",
                                 "frequency", "--rounds", "15", *extra], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        models.append(model.read_bytes())
    assert models[0] == models[1] == models[2]
    result = subprocess.run([sys.executable, "-m", "spacy_treeboost", "learn", str(train), str(tmp_path / "x.bin"),
                             "--algorithm", "frequency", "--n-workers", "0"], capture_output=True, text=True)
    assert result.returncode == 2 and "n_workers=0 is invalid" in result.stderr


def test_missing_ray_names_the_extra(monkeypatch, synthetic):
    forest, y, _ = synthetic
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'from a clone of the repository: pip install "\.\[ray\]"'):
        TreeBoostClassifier(n_workers=2, backend="ray").fit(forest, y)


def _kill_and_wait(ray, actor, timeout: float = 120.0) -> None:
    """Kill a Ray actor and return once Ray reports it dead.

    `ray.kill` goes through the cluster's control plane, while method calls go straight to the actor, so a call made
    right after the kill can still be served; the test must not depend on which arrives first.
    """
    ray.kill(actor)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=10)
        except ray.exceptions.RayActorError:
            return
        except ray.exceptions.GetTimeoutError:
            continue
        time.sleep(0.05)
    pytest.fail(f"the Ray actor was still alive {timeout:.0f} s after ray.kill")


@pytest.mark.determinism
@pytest.mark.slow
def test_ray_learns_the_same_model_and_reports_a_lost_worker(synthetic, ray_session):
    forest, y, _ = synthetic
    y3 = [c if i % 3 else "other" for i, c in enumerate(y)]
    settings_ = dict(algorithm="bact", n_rounds=20)
    reference = fit_bytes(forest, y3, 1, None, **settings_)
    for n_workers in (2, 3):
        assert fit_bytes(forest, y3, n_workers, "ray", **settings_) == reference
    clf = TreeBoostClassifier(n_workers=2, backend="ray", n_rounds=5).start(forest, y)
    clf.boost(1)
    _kill_and_wait(ray_session, clf.space_.workers.actors[0])
    with pytest.raises(WorkerDiedError, match=r"worker 0 \(Ray actor\) died in boosting round 2"):
        clf.boost(1)
