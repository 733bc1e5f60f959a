import concurrent.futures.process
import importlib.abc
import importlib.util
import multiprocessing.process
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import _posixsubprocess
import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a run's result depends only on the code;
# `python -m pytest --hypothesis-profile=explore` draws fresh examples.
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile("deterministic")

SHARED_DATA = Path(__file__).resolve().parents[1] / "shared" / "data"


class ProcessRefused(AssertionError):
    """A test of the fast tier tried to start a process."""


class ProcessGuard:
    """Refuse every way of starting a process while a test that is not marked slow runs (its fixtures included).

    The functions that start a process are replaced once, for the whole run, by wrappers that ask which test is
    running: `pytest_runtest_setup`, `_call` and `_teardown` name it for the time of each phase, so a fixture of
    any scope is covered by the test whose setup or teardown runs it. Outside a fast test (collection, slow
    tests) the wrappers call the original at once. A refusal that the code under test catches still fails
    the test.

    originals (dict): The replaced functions, by name; the wrappers call them through this table.
    test (str | None): The node id of the fast test that is running, or None.
    refused (list): The refusals of the current phase, as messages.
    """

    def __init__(self) -> None:
        self.originals: dict[str, Callable[..., Any]] = {}
        self.test: str | None = None
        self.refused: list[str] = []

    def check(self, what: str) -> None:
        """Raise ProcessRefused if a fast test is running.

        what (str): What the test tried, e.g. "os.fork()".
        """
        if self.test is None:
            return
        message = (f"{self.test} starts a process ({what}); the fast tier starts none: mark the test "
                   "@pytest.mark.slow, or test the logic in this process (the in-process backend, the task "
                   "functions called directly)")
        self.refused.append(message)
        raise ProcessRefused(message)

    def replace(self, owner: Any, attr: str, describe: Callable[..., str]) -> None:
        """Replace owner.attr by a wrapper that checks first.

        owner: A module or class.
        attr (str): The attribute to replace.
        describe (Callable): Called with the call's arguments; says what the call does.
        """
        name = f"{getattr(owner, '__name__', owner)}.{attr}"
        if not hasattr(owner, attr) or name in self.originals:
            return
        self.originals[name] = getattr(owner, attr)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            self.check(describe(*args, **kwargs))
            return self.originals[name](*args, **kwargs)

        guarded.__name__ = guarded.__qualname__ = attr
        guarded.__doc__ = self.originals[name].__doc__
        setattr(owner, attr, guarded)

    def install(self) -> None:
        """Replace the functions that start a process; Ray's `init` is replaced when `ray` is imported."""
        def call(name: str) -> Callable[..., str]:
            return lambda *args, **kwargs: f"{name}({_shorten(args, kwargs)})"

        self.replace(subprocess.Popen, "__init__", lambda popen, args, *rest, **kw: f"subprocess.Popen({args!r})")
        self.replace(subprocess, "_fork_exec", call("subprocess fork_exec"))
        self.replace(_posixsubprocess, "fork_exec", call("_posixsubprocess.fork_exec"))
        for attr in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            self.replace(os, attr, call(f"os.{attr}"))
        self.replace(multiprocessing.process.BaseProcess, "start",
                     lambda proc: f"multiprocessing {type(proc).__name__}.start(), start method "
                                  f"{getattr(proc, '_start_method', None) or 'default'}, target {proc._target!r}")
        self.replace(concurrent.futures.process.ProcessPoolExecutor, "__init__",
                     lambda pool, *args, **kwargs: f"concurrent.futures.ProcessPoolExecutor({_shorten(args, kwargs)})")
        if "ray" in sys.modules:
            self.guard_ray(sys.modules["ray"])
        elif importlib.util.find_spec("ray") is not None:
            sys.meta_path.insert(0, _OnImport("ray", self.guard_ray))

    def guard_ray(self, ray: ModuleType) -> None:
        """Replace `ray.init` (called directly, and by a task or actor started without it)."""
        self.replace(ray, "init", lambda *args, **kwargs: f"ray.init({_shorten(args, kwargs)})")

    def running(self, item: pytest.Item) -> "_Phase":
        """The context of one phase of a test: guarded unless the test is marked slow."""
        return _Phase(self, None if item.get_closest_marker("slow") else item.nodeid)


class _Phase:
    def __init__(self, guard: ProcessGuard, test: str | None) -> None:
        self.guard, self.test = guard, test

    def __enter__(self) -> None:
        self.guard.test = self.test
        self.guard.refused.clear()

    def __exit__(self, *exc: Any) -> None:
        self.guard.test = None


class _OnImport(importlib.abc.MetaPathFinder):
    """Call `then(module)` once the module `name` is imported."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        exec_module, then = spec.loader.exec_module, self.then

        def exec_then(module: ModuleType) -> None:
            exec_module(module)
            then(module)

        spec.loader.exec_module = exec_then  # type: ignore[method-assign]
        return spec


def _shorten(args: tuple, kwargs: dict) -> str:
    text = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    return text if len(text) <= 120 else text[:117] + "..."


GUARD = ProcessGuard()


def pytest_configure(config: pytest.Config) -> None:
    GUARD.install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with GUARD.running(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with GUARD.running(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with GUARD.running(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A phase that passed although a process was refused (the code caught the refusal) fails."""
    outcome = yield
    report = outcome.get_result()
    if report.passed and GUARD.refused:
        report.outcome = "failed"
        report.longrepr = "\n".join(GUARD.refused)


def pytest_collection_modifyitems(config, items):
    """Tests that read the real corpora belong to the slow tier."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def process_guard() -> ProcessGuard:
    """The guard that refuses a process in the fast tier (to test it)."""
    return GUARD


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The directory of real corpora beside the checkout, or skip."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real corpora not found at {SHARED_DATA} (they sit in ../shared/data beside the checkout)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def ray_session():
    """A new local Ray with 2 CPUs, started once per test session (skipped without the ray extra)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, log_to_driver=False)  # a new local Ray, even beside a running cluster
    return ray
