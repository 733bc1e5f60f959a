"""What a user pays for installing the plugin: spaCy imports every factory when a Language is created."""
import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Set

import pytest


@pytest.mark.slow
def test_blank_pipeline_imports_neither_scipy_nor_the_nmtf_package():
    code = ("import sys, spacy; nlp = spacy.blank('en'); "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'sklearn', "
            "'spacy_treeboost.nmtf'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_adding_the_components_still_imports_no_scipy():
    code = ("import sys, spacy; nlp = spacy.blank('en'); nlp.add_pipe('treeboost_textcat'); "
            "nlp.add_pipe('nmtf_sentiment'); print('scipy' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_use_params_works_through_the_pipeline():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    nlp.add_pipe("nmtf_sentiment")
    with nlp.use_params({"averaged": 1.0}):
        assert nlp.pipe_names == ["treeboost_textcat", "nmtf_sentiment"]


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _under_type_checking(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def import_graph(root: Path, packages: Sequence[str]) -> Dict[str, Set[str]]:
    """Module -> the modules of `packages` it imports, at module level or inside a function (imports only for
    the type checker excluded)."""
    files = {_module_name(root, p): p for pkg in packages for p in (root / pkg).rglob("*.py")
             if "tests" not in p.relative_to(root).parts}
    graph: Dict[str, Set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: Set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or _under_type_checking(node, parents):
                continue
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in files else base)
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One import cycle of `graph` (its modules in order, the first repeated at the end), or []."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> List[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start)
            if cycle:
                return cycle
    return []


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_cycles_in_the_package_or_the_benchmarks():
    root = Path(__file__).resolve().parents[1]
    graph = import_graph(root, ["spacy_treeboost", "bench"])
    assert "spacy_treeboost.learning.learner" in graph and graph["spacy_treeboost.pipeline.learners"]
    assert find_cycle(graph) == []
