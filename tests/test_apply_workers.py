"""`apply --n-workers N`: batches classified here and in worker processes, written in input order; the workers stop
with the command (Ctrl-C, a killed command, a killed worker)."""
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacy_treeboost.streaming import in_input_order
from textcat_pipes import saved_boosting_pipeline

TEXTS = ["good fun", "boring plot", "", "not good , not fun", "a film — with “quotes” and ünïcode"]


@st.composite
def schedules(draw):
    """A number of batches, of workers, a depth, and the choices that decide which worker replies next and whether a
    reply has come when one is not waited for."""
    return (draw(st.integers(0, 30)), draw(st.integers(0, 4)), draw(st.integers(1, 3)),
            draw(st.lists(st.integers(0, 1000), min_size=200, max_size=200)))


@given(schedules())
def test_in_input_order_yields_every_batch_with_its_reply_in_input_order(schedule):
    n_batches, n_workers, depth, choices = schedule
    queues = [deque() for _ in range(n_workers)]
    draws = iter(choices * 100)
    read = []

    def batches():
        for b in range(n_batches):
            read.append(b)
            yield b

    def send(worker, batch):
        assert len(queues[worker]) < depth
        queues[worker].append(batch)

    def receive(block):
        busy = [w for w in range(n_workers) if queues[w]]
        assert busy, "receive was called with no batch in flight"
        if not block and next(draws) % 3 == 0:
            return None
        worker = busy[next(draws) % len(busy)]
        return worker, ("reply", queues[worker].popleft())

    def work_here(batch):
        return ("reply", batch)

    out = []
    for batch, reply in in_input_order(batches(), n_workers, send, receive, work_here, depth):
        assert reply == ("reply", batch)
        assert len(read) - len(out) <= depth * (n_workers + 1)
        out.append(batch)
    assert out == list(range(n_batches))
    assert not any(queues)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipeline") / "model"
    saved_boosting_pipeline(path)
    return path


def write_texts(path: Path, n: int) -> Path:
    with open(path, "w", encoding="utf8") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "text": f"{TEXTS[i % len(TEXTS)]} w{i % 97}"}) + "\n")
    return path


def command(*args):
    return [sys.executable, "-m", "spacy_treeboost", *map(str, args)]


def start(*args):
    """The command, started in its own session (as a terminal's foreground job), Ctrl-C not ignored; and the process
    ids of its workers, from the line it writes once they have started."""
    proc = subprocess.Popen(command(*args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    line = proc.stderr.readline()
    assert line.startswith("classifying in this process and"), line + proc.stderr.read()
    pids = [int(p) for p in line.rsplit("(", 1)[1].rstrip(")\n").split(", ")]
    return proc, pids


def wait_for_exit(pids, timeout):
    """Whether every process of `pids` ended within `timeout` seconds (waiting on pidfds, not polling)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                return False
        finally:
            os.close(fd)
    return True


@pytest.mark.slow
def test_apply_writes_the_same_bytes_for_any_number_of_workers(tmp_path, pipeline):
    source = write_texts(tmp_path / "in.jsonl", 3000)
    outputs = []
    for n in (1, 2, 3):
        result = subprocess.run(command("apply", pipeline, source, tmp_path / f"out{n}.jsonl", "--n-workers", n,
                                        "--batch-size", 64), capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        assert ("worker process" in result.stderr) == (n > 1)
        outputs.append((tmp_path / f"out{n}.jsonl").read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert [json.loads(line)["id"] for line in outputs[0].splitlines()] == list(range(3000))
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a process that is not a child needs pidfd_open")
def test_the_workers_die_with_a_killed_apply(tmp_path, pipeline):
    source = write_texts(tmp_path / "in.jsonl", 200_000)
    proc, pids = start("apply", pipeline, source, tmp_path / "out.jsonl", "--n-workers", 3)
    assert len(pids) == 2
    proc.kill()
    proc.wait()
    assert wait_for_exit(pids, timeout=10)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a process that is not a child needs pidfd_open")
def test_ctrl_c_stops_apply_and_its_workers_within_two_seconds_and_leaves_no_file(tmp_path, pipeline):
    source = write_texts(tmp_path / "in.jsonl", 200_000)
    out = tmp_path / "out" / "cats.jsonl"
    out.parent.mkdir()
    proc, pids = start("apply", pipeline, source, out, "--n-workers", 2, "--batch-size", 64)
    os.killpg(proc.pid, signal.SIGINT)
    interrupted = time.monotonic()
    proc.wait(timeout=30)
    stopped = wait_for_exit(pids, timeout=30)
    elapsed = time.monotonic() - interrupted
    stderr = proc.stderr.read()
    assert stopped and elapsed <= 2.0, elapsed
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "interrupted" in stderr and f"{out} was not written" in stderr
    assert list(out.parent.iterdir()) == []


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waiting on a process that is not a child needs pidfd_open")
def test_a_killed_worker_stops_apply_with_a_one_line_error(tmp_path, pipeline):
    source = write_texts(tmp_path / "in.jsonl", 200_000)
    proc, pids = start("apply", pipeline, source, tmp_path / "out.jsonl", "--n-workers", 3)
    os.kill(pids[1], signal.SIGKILL)
    proc.wait(timeout=60)
    stderr = proc.stderr.read()
    assert proc.returncode == 2, stderr
    assert f"error: apply worker 2 (process {pids[1]}) died (signal 9) while classifying" in stderr
    assert "Traceback" not in stderr
    assert wait_for_exit(pids, timeout=10)
    assert not (tmp_path / "out.jsonl").exists() and not list(tmp_path.glob(".*.tmp"))
