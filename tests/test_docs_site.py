"""The documentation: the README is a landing page whose links resolve, and the MkDocs site builds strictly."""
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAV_PAGE = re.compile(r"^\s+(?:- )?[^:\n]+: ([\w/]+\.md)$", flags=re.M)


def test_the_readme_is_a_landing_page_whose_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(((?!https?:)[^)#]+)\)", text)
    assert len(links) >= 15
    for link in links:
        assert (ROOT / link).exists(), link


def test_every_page_of_the_site_is_in_the_nav_or_a_report_it_links_to():
    nav = set(NAV_PAGE.findall((ROOT / "mkdocs.yml").read_text(encoding="utf8")))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - nav == set(), "add these pages to the nav in mkdocs.yml"
    assert nav - pages == set(), "these pages of the nav are missing from docs/"


@pytest.mark.slow
def test_mkdocs_builds_the_site_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("MkDocs is not installed: pip install -e \".[docs]\"")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "shipping" / "index.html").is_file()
    warnings = [line for line in result.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings == []
