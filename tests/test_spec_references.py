"""Every section of docs/algorithms.md that code, tests and benchmarks cite exists, and so does every test vector."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "algorithms.md"


def sources():
    for folder in ("spacy_treeboost", "tests", "bench"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".pyx", ".pxd", ".pyi") and path.is_file():
                yield path, path.read_text(encoding="utf8")


def headings():
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", SPEC.read_text(encoding="utf8"), flags=re.M))


def test_cited_sections_exist():
    cited = {}
    for path, text in sources():
        for number in re.findall(r"§(\d+(?:\.\d+)?)", text):
            cited.setdefault(number, path.name)
        for number in re.findall(r"docs/algorithms\.md,? sections? (\d+(?:\.\d+)?)", text):
            cited.setdefault(number, path.name)
    assert cited, "no file cites a section of docs/algorithms.md"
    missing = {n: f for n, f in cited.items() if n not in headings()}
    assert not missing, f"sections cited but not in docs/algorithms.md: {missing}"


def test_no_file_cites_the_old_name_and_every_test_vector_is_specified():
    spec = SPEC.read_text(encoding="utf8")
    old = "ALGORITHMS" + ".md"
    assert [p.name for p, text in sources() if old in text] == []
    for k in range(1, 10):
        assert f"**Test vector T{k}" in spec or f"| T{k} |" in spec, f"T{k}"
    assert {"1", "2.3", "2.5", "3.3", "3.6", "3.7", "3.9", "4"} <= headings()
