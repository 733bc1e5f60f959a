"""The pure-Python BACT reader: the reference the compiled reader is tested against."""
import re
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from spacy_treeboost.trees.forest import ForestBuilder, LabelVocab

from spacy_treeboost.trees.bact import BactFormatError, PathOrLines, decode_label

_TOKEN_RE = re.compile(r"\(([^()\s]*)|(\))|(\S)")


def parse_sexpr(text: str, where: str = "") -> Tuple[List[str], List[int], List[int]]:
    """Parse one strict S-expression into preorder labels, local parent indices and depths."""
    labels: List[str] = []
    parents: List[int] = []
    depths: List[int] = []
    stack: List[int] = []
    for m in _TOKEN_RE.finditer(text):
        label, close, junk = m.groups()
        if junk is not None:
            raise BactFormatError(f"{where}unexpected {junk!r} at column {m.start() + 1}; node labels follow '('")
        if close is not None:
            if not stack:
                raise BactFormatError(f"{where}unbalanced ')' at column {m.start() + 1}")
            stack.pop()
            continue
        if not label:
            raise BactFormatError(f"{where}empty node label at column {m.start() + 1}; write every node as '(label...)'")
        if labels and not stack:
            raise BactFormatError(f"{where}a second tree starts at column {m.start() + 1}; one tree per line")
        parents.append(stack[-1] if stack else -1)
        depths.append(len(stack))
        stack.append(len(labels))
        try:
            labels.append(decode_label(label) if "%" in label else label)
        except BactFormatError as err:
            raise BactFormatError(f"{where}{err}") from None
    if not labels:
        raise BactFormatError(f"{where}no tree; expected '(label(child)...)'")
    if stack:
        raise BactFormatError(f"{where}{len(stack)} unclosed '(' at end of line")
    return labels, parents, depths


def _lines(source: PathOrLines) -> Iterator[str]:
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf8") as f:
            yield from f
    else:
        yield from source


def read_bact_reference(source: PathOrLines, vocab: Optional[LabelVocab] = None, *, add_labels: bool = True):
    """Read `label (tree)` lines with the regular-expression parser above."""
    builder = ForestBuilder(vocab, add_labels=add_labels)
    classes: List[str] = []
    name = f"{source}: " if isinstance(source, (str, Path)) else ""
    for lineno, line in enumerate(_lines(source), 1):
        line = line.strip()
        if not line:
            continue
        where = f"{name}line {lineno}: "
        head, sep, rest = line.partition(" ")
        if not sep or not rest.lstrip().startswith("("):
            raise BactFormatError(f"{where}expected 'LABEL (tree)', e.g. '+1 (ROOT(a(b)))', got {line[:60]!r}")
        try:
            classes.append(decode_label(head))
        except BactFormatError as err:
            raise BactFormatError(f"{where}{err}") from None
        builder.add_labeled(*parse_sexpr(rest, where)[:2])
    return builder.build(), classes
