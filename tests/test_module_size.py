"""The package stays readable in one sitting: no module over 500 lines (compiled kernels included) and no function
over 80 lines (docs/design.md, "Package layout")."""
import ast
import re
from pathlib import Path
from typing import Iterator, List, Sequence, Tuple

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spacy_treeboost"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
_CYTHON_DEF = re.compile(r"\s*(cdef|cpdef|def)\s+[^=]*\(")


def _modules() -> List[Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx", ".pxd"))


def _cython_functions(lines: Sequence[str]) -> Iterator[Tuple[str, int]]:
    """(name, length) of each def/cdef/cpdef: from its line to the next line indented no deeper."""
    for i, line in enumerate(lines):
        if not _CYTHON_DEF.match(line) or line.strip().startswith("cdef class"):
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        yield line.strip()[:60], j - i


def test_the_layout_checks_see_the_kernels() -> None:
    suffixes = {p.suffix for p in _modules()}
    assert {".py", ".pyx", ".pxd"} <= suffixes
    assert list(_cython_functions(["cdef int f(int a):", "    return a", "", "def g():", "    pass"])) == [
        ("cdef int f(int a):", 3), ("def g():", 2)]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_and_functions_are_small(path: Path) -> None:
    text = path.read_text(encoding="utf8")
    lines = text.splitlines()
    assert len(lines) <= MAX_MODULE_LINES, f"{path.name} has {len(lines)} lines: split it by concern"
    if path.suffix == ".py":
        functions = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    else:
        functions = list(_cython_functions(lines))
    long = [(name, n) for name, n in functions if n > MAX_FUNCTION_LINES]
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_LINES} lines: {long}"
