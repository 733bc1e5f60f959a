import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so a run's result depends only on the code;
# `python -m pytest --hypothesis-profile=explore` draws fresh examples.
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile("deterministic")

SHARED_DATA = Path(__file__).resolve().parents[1] / "shared" / "data"


def pytest_collection_modifyitems(config, items):
    """Tests that read the real corpora belong to the slow tier."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def fast_tests_start_no_process(request, monkeypatch):
    """The fast tier starts no process: a test that runs a command (spacy train, the CLI, a script) is marked slow."""
    if request.node.get_closest_marker("slow") is not None:
        return

    def refuse(self, args, *rest, **kwargs):
        raise AssertionError(f"{request.node.nodeid} starts a process ({args!r}): mark it @pytest.mark.slow, "
                             "or test the function in this process")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)


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
