"""A real two-node Ray cluster on this machine (`ray start --head` and a second `ray start --address`): `learn
--backend ray --ray-address` writes the model of one worker, boosting (with search workers on both nodes) and the
default learner (also on document shards held on both nodes)."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
TRAIN = Path(__file__).parent / "data" / "synthetic_small.tree"
RAY = [sys.executable, "-m", "ray.scripts.scripts"]
START_SECONDS = 180


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    """Stop a `ray start --block` and the Ray processes it started (its own process group)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


@pytest.fixture
def two_node_cluster():
    """The address of a head and a second node, 1 CPU each, stopped at teardown whatever the test did."""
    pytest.importorskip("ray")
    temp = tempfile.mkdtemp(prefix="rtb", dir="/tmp")
    # RAY_TMPDIR keeps every node's files, and the address file that `ray start` leaves for later `ray.init()`
    # calls on this machine, in the temp dir
    env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0", RAY_TMPDIR=temp)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    procs = []
    logs = []
    try:
        for i, args in enumerate([["--head", "--port", str(port), "--temp-dir", temp, "--include-dashboard", "false"],
                                  ["--address", address]]):
            log = open(Path(temp) / f"node{i}.log", "wb")
            logs.append(log)
            procs.append(subprocess.Popen(RAY + ["start", "--num-cpus", "1", "--block", *args], env=env, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True))
            deadline = time.monotonic() + START_SECONDS
            while True:
                status = subprocess.run(RAY + ["status", "--address", address], env=env, capture_output=True,
                                        text=True)
                if re.search(rf"/{i + 1}\.0 CPU", status.stdout):
                    break
                for p in procs:
                    if p.poll() is not None:
                        pytest.fail(f"ray start exited with {p.returncode}: "
                                    f"{(Path(temp) / f'node{procs.index(p)}.log').read_text()[-2000:]}")
                if time.monotonic() > deadline:
                    pytest.fail(f"the cluster did not reach {i + 1} CPUs in {START_SECONDS} s: {status.stdout[-2000:]}")
                time.sleep(2)
        yield address, env
    finally:
        for p in reversed(procs):
            _stop(p)
        for log in logs:
            log.close()
        shutil.rmtree(temp, ignore_errors=True)


def learn(train, model, env, *args):
    result = subprocess.run([sys.executable, "-m", "spacy_treeboost", "learn", str(train), str(model),
                             *map(str, args)], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stderr


def test_learn_on_a_two_node_cluster_writes_the_one_worker_models(tmp_path, two_node_cluster):
    address, env = two_node_cluster
    ray = ("--n-workers", 2, "--backend", "ray", "--ray-address", address)
    boosting = ("--algorithm", "frequency", "--rounds", 15)
    learn(TRAIN, tmp_path / "one.bin", env, *boosting)
    report = learn(TRAIN, tmp_path / "ray.bin", env, *boosting, *ray)
    assert "2 search workers on 2 Ray node(s)" in report, report[-3000:]
    assert (tmp_path / "ray.bin").read_bytes() == (tmp_path / "one.bin").read_bytes()
    linear = ("--algorithm", "linear", "--choose-C")
    learn(TRAIN, tmp_path / "linear_one.bin", env, *linear)
    learn(TRAIN, tmp_path / "linear_ray.bin", env, *linear, *ray)
    assert (tmp_path / "linear_ray.bin").read_bytes() == (tmp_path / "linear_one.bin").read_bytes()
    files_on_the_cluster(tmp_path, address, env)


# a driver that fails on opening a shard file itself (its Ray actors, other processes, read them)
GUARDED_FIT = """
import hashlib, os, sys
shards = {os.path.realpath(p) for p in sys.argv[2:]}

def guard(event, args):
    if event == "open" and isinstance(args[0], str) and os.path.realpath(args[0]) in shards:
        raise PermissionError("the training process opened " + args[0])

sys.addaudithook(guard)
from spacy_treeboost.learning.classifier_files import classifier_to_bytes
from spacy_treeboost.learning.shard_files import TreeShards
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
model = SubtreeLinearClassifier(max_pattern_size=2, n_workers=2, backend="ray", ray_address=sys.argv[1])
model.fit(TreeShards(sys.argv[2:]))
print(len(set(model.shard_holders_)), hashlib.sha256(classifier_to_bytes(model)).hexdigest())
"""


def files_on_the_cluster(tmp_path, address, env):
    """Shard files read by Ray actors on both nodes: `learn` on a glob writes the model of one worker in this
    process, and a driver that may not open the files trains the same model."""
    import hashlib

    lines = TRAIN.read_text(encoding="utf8").splitlines(keepends=True)
    paths = []
    for k, lo in enumerate(range(0, len(lines), 40)):
        paths.append(tmp_path / f"part{k}.tree")
        paths[-1].write_text("".join(lines[lo:lo + 40]), encoding="utf8")
    files = ("--max-pattern-size", 2)
    learn(tmp_path / "part*.tree", tmp_path / "files_one.bin", env, *files)
    report = learn(tmp_path / "part*.tree", tmp_path / "files_ray.bin", env, *files, "--n-workers", 2, "--backend",
                   "ray", "--ray-address", address)
    assert "2 shard holders on 2 Ray node(s)" in report, report[-3000:]
    assert (tmp_path / "files_ray.bin").read_bytes() == (tmp_path / "files_one.bin").read_bytes()
    result = subprocess.run([sys.executable, "-c", GUARDED_FIT, address, *map(str, paths)], env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    from spacy_treeboost.learning.classifier_files import classifier_to_bytes
    from spacy_treeboost.learning.shard_files import TreeShards
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    here = SubtreeLinearClassifier(max_pattern_size=2).fit(TreeShards([str(p) for p in paths]))
    assert result.stdout.split() == ["2", hashlib.sha256(classifier_to_bytes(here)).hexdigest()]
