"""A copy of the repository and the environment that runs commands in it."""
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

ROOT = Path(__file__).resolve().parents[1]


def fresh_clone(dest: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    files = [f for f in listed.stdout.decode().split("\0") if f] if listed.returncode == 0 else []
    if not files:
        files = [str(p.relative_to(ROOT)) for d in ("configs", "corpora") for p in (ROOT / d).rglob("*") if p.is_file()]
        files.append("README.md")
    for name in files:
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def installed_env() -> Dict[str, str]:
    """The environment of a command run in a copy of the repository: `python` is this interpreter, and the copy
    (which holds the sources without the compiled kernels) imports the installed package, since PYTHONSAFEPATH
    keeps the working directory off sys.path."""
    import spacy_treeboost

    code = Path(spacy_treeboost.__file__).resolve().parents[1]
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")]),
                PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
                COLUMNS="200", PYTHONIOENCODING="utf8", PYTHONSAFEPATH="1")
