"""Streaming inference: the `apply` command and the Ray Data recipe."""
import gzip
import json
import subprocess
import sys

import pytest

from spacy_treeboost.streaming import PipelineBatchClassifier, apply_stream, count_records
from textcat_pipes import saved_boosting_pipeline

TEXTS = ["good fun", "boring plot", "", "not good , not fun", "a film — with “quotes” and ünïcode"] * 7


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipeline") / "model"
    nlp = saved_boosting_pipeline(path)
    return path, {t: nlp(t).cats for t in TEXTS}


def write_input(path, records):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")


def read_output(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf8") as f:
        return [json.loads(line) for line in f]


def run(*args):
    return subprocess.run([sys.executable, "-m", "spacy_treeboost", *map(str, args)], capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_apply_writes_each_line_with_its_cats_in_order(tmp_path, pipeline, suffix):
    model, expected = pipeline
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    write_input(source, [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    result = run("apply", model, source, target, "--batch-size", 4)
    assert result.returncode == 0, result.stderr
    assert f"classified {len(TEXTS)} texts" in result.stderr
    rows = read_output(target)
    assert [r["id"] for r in rows] == list(range(len(TEXTS))) and [r["text"] for r in rows] == TEXTS
    assert all(r["cats"] == expected[r["text"]] for r in rows)
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_apply_on_two_processes_gives_the_same_output(tmp_path, pipeline):
    model, _ = pipeline
    source = tmp_path / "in.jsonl"
    write_input(source, [{"text": t} for t in TEXTS])
    assert apply_stream(str(model), source, tmp_path / "one.jsonl", batch_size=3) == len(TEXTS)
    assert apply_stream(str(model), source, tmp_path / "two.jsonl", batch_size=3, n_workers=2) == len(TEXTS)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


@pytest.mark.parametrize("line, message", [
    ('{"txt": "x"}', 'line 2: each line needs a "text" string'),
    ("not json", "line 2: invalid JSON"),
])
@pytest.mark.slow
def test_apply_names_the_bad_line_and_keeps_no_partial_output(tmp_path, pipeline, line, message):
    model, _ = pipeline
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text('{"text": "good"}\n' + line + "\n", encoding="utf8")
    result = run("apply", model, source, target)
    assert result.returncode == 2 and message in result.stderr
    assert not target.exists() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_apply_rejects_a_missing_input_and_a_bad_backend(tmp_path, pipeline):
    model, _ = pipeline
    result = run("apply", model, tmp_path / "missing.jsonl", tmp_path / "out.jsonl")
    assert result.returncode == 2 and "JSONL file not found" in result.stderr
    (tmp_path / "in.jsonl").write_text('{"text": "good"}\n', encoding="utf8")
    result = run("apply", model, tmp_path / "in.jsonl", tmp_path / "out.jsonl", "--backend", "threads")
    assert result.returncode == 2 and "choose processes or ray" in result.stderr


def test_the_progress_bar_knows_the_total_of_a_plain_file_only(tmp_path, pipeline, capsys):
    model, _ = pipeline
    records = [{"id": i, "text": t} for i, t in enumerate(TEXTS)]
    write_input(tmp_path / "in.jsonl", records)
    (tmp_path / "in.jsonl").write_text((tmp_path / "in.jsonl").read_text() + "\n\n", encoding="utf8")
    assert count_records(tmp_path / "in.jsonl") == len(TEXTS)
    apply_stream(str(model), tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=True)
    bar = capsys.readouterr().err
    assert f"{len(TEXTS)}/{len(TEXTS)}" in bar and "<00:00" in bar
    write_input(tmp_path / "in.jsonl.gz", records)
    assert count_records(tmp_path / "in.jsonl.gz") is None
    apply_stream(str(model), tmp_path / "in.jsonl.gz", tmp_path / "out.jsonl", progress=True)
    assert f"{len(TEXTS)}/{len(TEXTS)}" not in capsys.readouterr().err


def test_batch_classifier_adds_cats_as_json(pipeline):
    model, expected = pipeline
    out = PipelineBatchClassifier(str(model))({"text": TEXTS[:5], "id": list(range(5))})
    assert out["id"] == list(range(5))
    assert [json.loads(c) for c in out["cats"]] == [expected[t] for t in TEXTS[:5]]



class InProcessRay:
    """What `apply --backend ray` uses of Ray, run in this process: a remote call returns a reference, and an
    actor runs its calls in the order they were made when one's result is first asked for; the actors start
    (`wait` returns them ready) only if `started`."""

    class exceptions:
        class RayActorError(Exception):
            pass

        class GetTimeoutError(Exception):
            pass

    def __init__(self, cpus=2.0, started=True):
        self.cpus, self.started = cpus, started
        self.actors, self.killed, self.outstanding, self.most_outstanding = [], [], set(), 0

    def cluster_resources(self):
        return {"CPU": self.cpus}

    def remote(self, **options):
        self.options = options
        ray = self

        class Handle:
            def __init__(self, *args):
                self.args, self.instance, self.calls, self.results = args, None, [], []
                ray.actors.append(self)
                self.__ray_ready__ = self.method(lambda: None)
                self.classify = self.method(lambda texts: self.instance.classify(texts))

            def method(self, call):
                def remote(*args):
                    ref = (self, len(self.calls))
                    self.calls.append(lambda: call(*args))
                    ray.outstanding.add(ref)
                    ray.most_outstanding = max(ray.most_outstanding, len(ray.outstanding))
                    return ref
                return type("Method", (), {"remote": staticmethod(remote)})

            def result(self, i):
                if self.instance is None:
                    self.instance = PipelineBatchClassifier(*self.args)
                while len(self.results) <= i:
                    self.results.append(self.calls[len(self.results)]())
                return self.results[i]

        return lambda cls: type("Actor", (), {"remote": staticmethod(Handle)})

    def wait(self, refs, num_returns, timeout):
        assert num_returns == len(refs) and timeout > 0
        return (refs, []) if self.started else ([], refs)

    def get(self, ref, timeout=None):
        actor, i = ref
        self.outstanding.discard(ref)
        return actor.result(i)

    def kill(self, actor):
        self.killed.append(actor)


@pytest.mark.parametrize("n_workers, batch_size", [(1, 4), (2, 3), (3, 1)])
def test_apply_on_ray_keeps_the_input_order_with_two_batches_per_worker_in_flight(tmp_path, pipeline, monkeypatch,
                                                                                   n_workers, batch_size):
    """The driver's scheduling (order, batches in flight, stopping the actors), with Ray's calls run here."""
    from spacy_treeboost.learning import tasks as _ray_backend

    model, expected = pipeline
    ray = InProcessRay()
    monkeypatch.setattr(_ray_backend, "connect_ray", lambda address: ray)
    source = tmp_path / "in.jsonl"
    write_input(source, [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    n = apply_stream(str(model), source, tmp_path / "out.jsonl", backend="ray", n_workers=n_workers,
                     batch_size=batch_size)
    out = read_output(tmp_path / "out.jsonl")
    assert n == len(TEXTS) and [r["id"] for r in out] == list(range(len(TEXTS)))
    assert all(r["cats"] == expected[r["text"]] for r in out)
    assert ray.options == {"num_cpus": min(1.0, 2 / n_workers), "max_restarts": 0}
    assert ray.most_outstanding == 2 * n_workers and not ray.outstanding
    assert len(ray.actors) == n_workers and ray.killed == ray.actors
    assert [len(a.calls) - 1 for a in ray.actors] == [len(range(w, -(-len(TEXTS) // batch_size), n_workers))
                                                      for w in range(n_workers)]


def test_apply_on_ray_stops_with_an_error_when_the_workers_do_not_start(tmp_path, pipeline, monkeypatch):
    from spacy_treeboost.learning import tasks as _ray_backend

    model, _ = pipeline
    ray = InProcessRay(started=False)
    monkeypatch.setattr(_ray_backend, "connect_ray", lambda address: ray)
    source = tmp_path / "in.jsonl"
    write_input(source, [{"text": t} for t in TEXTS])
    with pytest.raises(TimeoutError, match=r"2 of 2 Ray workers did not start within 3 s .*lower --n-workers"):
        apply_stream(str(model), source, tmp_path / "out.jsonl", backend="ray", n_workers=2, timeout=3)
    assert ray.killed == ray.actors and len(ray.actors) == 2
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.slow
def test_ray_data_recipe_and_apply_on_ray(tmp_path, pipeline, ray_session):
    model, expected = pipeline
    ray = ray_session
    # The README recipe.
    ds = ray.data.from_items([{"text": t} for t in TEXTS])
    ds = ds.map_batches(PipelineBatchClassifier, fn_constructor_args=(str(model),), batch_size=8, concurrency=2,
                        num_cpus=0.5)
    rows = ds.take_all()
    assert sorted((r["text"], r["cats"]) for r in rows) == sorted((t, json.dumps(expected[t])) for t in TEXTS)
    source = tmp_path / "in.jsonl"
    write_input(source, [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    n = apply_stream(str(model), source, tmp_path / "out.jsonl", backend="ray", n_workers=2, batch_size=8)
    out = read_output(tmp_path / "out.jsonl")
    assert n == len(TEXTS) and [r["id"] for r in out] == list(range(len(TEXTS)))
    assert all(r["cats"] == expected[r["text"]] for r in out)


@pytest.mark.slow
def test_apply_on_a_two_cpu_ray_with_two_workers_writes_what_one_process_writes(tmp_path, pipeline, ray_session):
    model, _ = pipeline
    source = tmp_path / "in.jsonl"
    write_input(source, [{"id": i, "text": f"{TEXTS[i % len(TEXTS)]} w{i % 97}"} for i in range(20_000)])
    assert ray_session.cluster_resources().get("CPU") == 2
    apply_stream(str(model), source, tmp_path / "one.jsonl", n_workers=1, batch_size=256)
    n = apply_stream(str(model), source, tmp_path / "ray.jsonl", backend="ray", n_workers=2, batch_size=256,
                     timeout=120)
    assert n == 20_000
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()


@pytest.mark.slow
def test_apply_on_ray_stops_with_an_error_when_the_workers_cannot_start(tmp_path, pipeline, ray_session):
    model, _ = pipeline
    ray = ray_session
    source = tmp_path / "in.jsonl"
    write_input(source, [{"text": t} for t in TEXTS])

    @ray.remote(num_cpus=2)
    class Holder:
        pass

    holder = Holder.remote()
    ray.get(holder.__ray_ready__.remote())
    try:
        with pytest.raises(TimeoutError, match=r"2 of 2 Ray workers did not start within 3 s .*lower --n-workers"):
            apply_stream(str(model), source, tmp_path / "out.jsonl", backend="ray", n_workers=2, timeout=3)
    finally:
        ray.kill(holder)
    assert not (tmp_path / "out.jsonl").exists()
