"""The fast tier starts no process: the guard in the root conftest.py refuses every way of starting one.

The guard's wrappers call the replaced functions through `process_guard.originals`; these tests replace that table
with functions that only record, so a guard that let a call through would start nothing either.
"""
import concurrent.futures
import multiprocessing
import multiprocessing.util
import os
import pty
import subprocess
import sys
from typing import Any, Callable, List

import pytest

REPLACED = ["Popen.__init__", "subprocess._fork_exec", "_posixsubprocess.fork_exec", "os.fork", "os.forkpty",
            "os.posix_spawn", "os.posix_spawnp", "os.system", "BaseProcess.start", "ProcessPoolExecutor.__init__"]


class StartedAnyway(Exception):
    pass


def nothing() -> None:
    pass


@pytest.fixture
def started(process_guard, monkeypatch) -> List[str]:
    """The replaced functions that were called (none, unless the guard fails): each records and raises."""
    assert_replaced(process_guard)
    calls: List[str] = []
    for name in list(process_guard.originals):
        def record(*args: Any, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            raise StartedAnyway(_name)
        monkeypatch.setitem(process_guard.originals, name, record)
    return calls


def assert_refused(guard, request, start: Callable[[], Any], what: str) -> None:
    with pytest.raises(AssertionError) as refused:
        start()
    message = str(refused.value)
    assert request.node.nodeid in message and what in message, message
    assert "mark the test @pytest.mark.slow, or test the logic in this process" in message
    assert guard.refused == [message]
    guard.refused.clear()


def assert_replaced(guard) -> None:
    missing = [name for name in REPLACED if name not in guard.originals]
    assert not missing, f"not replaced: {missing}"
    assert os.fork is not guard.originals["os.fork"] and os.system is not guard.originals["os.system"]


def test_the_guard_replaces_every_function_that_starts_a_process(process_guard):
    assert_replaced(process_guard)


@pytest.mark.parametrize("what,start", [
    ("subprocess.Popen(['true'])", lambda: subprocess.run(["true"])),
    ("subprocess.Popen(['true'])", lambda: subprocess.Popen(["true"])),
    ("subprocess.Popen('true')", lambda: os.popen("true")),
    ("os.system('true')", lambda: os.system("true")),
    ("os.fork()", lambda: os.fork()),
    ("os.fork()", lambda: os.spawnv(os.P_NOWAIT, "/bin/true", ["true"])),
    ("os.forkpty()", lambda: os.forkpty()),
    ("os.forkpty()", lambda: pty.fork()),
    ("os.posix_spawn('/bin/true'", lambda: os.posix_spawn("/bin/true", ["true"], os.environ)),
    ("os.posix_spawnp('true'", lambda: os.posix_spawnp("true", ["true"], os.environ)),
    ("_posixsubprocess.fork_exec(", lambda: multiprocessing.util.spawnv_passfds("/bin/true", ["true"], [])),
    ("start method fork", lambda: multiprocessing.get_context("fork").Process(target=nothing).start()),
    ("start method spawn", lambda: multiprocessing.get_context("spawn").Process(target=nothing).start()),
    ("start method forkserver", lambda: multiprocessing.get_context("forkserver").Process(target=nothing).start()),
    ("multiprocessing Process.start()", lambda: multiprocessing.Process(target=nothing).start()),
    ("start method fork", lambda: multiprocessing.get_context("fork").Pool(1)),
    ("concurrent.futures.ProcessPoolExecutor(max_workers=1)",
     lambda: concurrent.futures.ProcessPoolExecutor(max_workers=1)),
])
def test_a_fast_test_cannot_start_a_process(process_guard, started, request, what, start):
    assert_refused(process_guard, request, start, what)
    assert started == []


def test_spacy_cannot_start_worker_processes(process_guard, started, request):
    import spacy

    nlp = spacy.blank("en")
    assert_refused(process_guard, request, lambda: list(nlp.pipe(["a", "b"], n_process=2)), "Process.start()")
    assert started == []


def test_ray_cannot_start(process_guard, started, request):
    ray = pytest.importorskip("ray")
    assert "ray.init" in process_guard.originals
    assert_refused(process_guard, request, lambda: ray.init(num_cpus=1), "ray.init(num_cpus=1)")
    assert_refused(process_guard, request, lambda: ray.get(ray.remote(nothing).remote()), "ray.init()")
    assert started == []
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def refused_in_a_module_fixture(process_guard):
    """A fixture shared by several tests is set up in the setup phase of the first: it is guarded too."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(process_guard.originals, "os.fork", lambda: pytest.fail("os.fork was let through"))
        with pytest.raises(AssertionError) as refused:
            os.fork()
    process_guard.refused.clear()
    return str(refused.value)


def test_a_fixture_of_a_fast_test_cannot_start_a_process(refused_in_a_module_fixture, request):
    assert "os.fork()" in refused_in_a_module_fixture
    assert request.node.nodeid in refused_in_a_module_fixture


@pytest.mark.slow
def test_a_slow_test_may_start_a_process(process_guard, started):
    with pytest.raises(StartedAnyway):
        os.fork()
    with pytest.raises(StartedAnyway):
        subprocess.run([sys.executable, "-c", "pass"])
    assert started == ["os.fork", "Popen.__init__"]
    assert process_guard.refused == []
