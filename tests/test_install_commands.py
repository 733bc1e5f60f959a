"""Every install command of the README and of docs/ works as written: in a fresh clone of the repository, in a fresh
virtual environment without the system's site packages.

The fenced commands that run `pip install` are collected from README.md and docs/*.md (docs/shipping.md's are run
by test_shipping.py), each once, and resolved with `pip install --dry-run`, which builds the package's metadata and
finds every requirement of the extras named, without installing them (CI's own `pip install -e ".[test,ray,docs]"`
builds and installs the package, and test_shipping.py installs its wheel into a fresh environment and imports it). A command that fails while the package
index it needs cannot be reached is skipped with the reason.
"""
import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Dict, List

import pytest
from clone_env import fresh_clone

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "shipping.md")]
SEGMENT = re.compile(r"\s*(?:&&|\|\||;)\s*")


def install_commands(pages: List[Path] = PAGES) -> Dict[str, List[str]]:
    """Each `pip install ...` of a fenced block of `pages` (a command joined to others by `&&` or `;` gives its
    own part), with the pages that show it, in order of first appearance."""
    found: Dict[str, List[str]] = {}
    for page in pages:
        for body in re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf8"), flags=re.S | re.M):
            for line in body.replace("\\\n", " ").splitlines():
                for part in SEGMENT.split(line.strip().removeprefix("$ ")):
                    if part.startswith("pip install "):
                        command = part.split(" #", 1)[0].strip()
                        found.setdefault(command, []).append(page.name)
    return found


def test_the_install_commands_are_found_and_none_names_the_package_on_an_index():
    commands = install_commands()
    assert 'pip install -e ".[test]"' in commands and 'pip install ".[ray]"' in commands, commands
    assert commands['pip install ".[ray]"'] == ["ray_cluster.md", "scale_out.md"]
    assert not [c for c in commands if "spacy-treeboost" in c or "spacy_treeboost" in c], commands


def index_reachable(env: Dict[str, str]) -> bool:
    """Whether pip's main package index answers."""
    config = subprocess.run([sys.executable, "-m", "pip", "config", "list"], env=env, capture_output=True, text=True)
    url = next((line.split("=", 1)[1].strip("'\"") for line in config.stdout.splitlines()
                if line.split("=", 1)[0].endswith(".index-url")), "https://pypi.org/simple/")
    try:
        urllib.request.urlopen(url, timeout=15).close()
    except OSError:
        return False
    return True


def extra_requirements(extras: List[str]) -> List[str]:
    """The names of the requirements that the extras add on this Python."""
    import tomllib

    from packaging.requirements import Requirement

    optional = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf8"))["project"]["optional-dependencies"]
    names = []
    for extra in extras:
        for spec in optional[extra]:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate():
                names.append(requirement.name.lower().replace("_", "-"))
    return names


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="reads pyproject.toml with tomllib (Python >= 3.11)")
def test_every_install_command_works_in_a_fresh_venv(tmp_path):
    commands = list(install_commands())
    clone = fresh_clone(tmp_path / "clone")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "VIRTUAL_ENV"}
    env.update(PATH=os.pathsep.join([str(venv / "bin"), env["PATH"]]), VIRTUAL_ENV=str(venv))
    unreachable = []
    for i, command in enumerate(commands):
        report = tmp_path / f"report{i}.json"
        run = command.replace("pip install ", f"pip install --dry-run --report {report} ", 1)
        result = subprocess.run(["bash", "-c", run], cwd=clone, env=env, capture_output=True, text=True, timeout=1800)
        if result.returncode != 0 and not index_reachable(env):
            unreachable.append(command)
            continue
        assert result.returncode == 0, f"{command} (shown in {install_commands()[command]}) failed:\n" \
                                       f"{(result.stdout + result.stderr)[-3000:]}"
        extras = re.findall(r"\[([\w,-]+)\]", command)
        wanted = extra_requirements([e for group in extras for e in group.split(",")])
        resolved = {p["metadata"]["name"].lower().replace("_", "-") for p in json.loads(report.read_text())["install"]}
        assert "spacy-treeboost" in resolved, f"{command} does not install the package"
        assert set(wanted) <= resolved, f"{command} does not install {sorted(set(wanted) - resolved)}"
    if unreachable:
        pytest.skip(f"the package index could not be reached, so these commands were not checked: {unreachable}")
