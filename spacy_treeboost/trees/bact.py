"""The BACT / FREQT text format: per line a class label, a space and a strict S-expression, e.g.
`+1 (ROOT(a(b))(c))`; labels percent-encode `%`, brackets and white space (the empty label is a lone `%`)."""
import os
import re
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ..files import MAX_LINE_ENV, max_line_mb
from .forest import ROOT_LABEL, ROOT_TEXT, Forest, LabelVocab

if TYPE_CHECKING:
    from ._bact import BactParser

PathOrLines = Union[str, Path, Iterable[str]]

_ESCAPE_RE = re.compile(r"[%()\s]")
_BAD_ESCAPE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def encode_label(label: str) -> str:
    """Percent-encode `%`, brackets and white space for the BACT format; the empty label is `%`."""
    if not label:
        return "%"
    return _ESCAPE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf8")), label)


def decode_label(text: str) -> str:
    """Invert `encode_label`; a BactFormatError for a `%` not followed by two hex digits or escapes not UTF-8."""
    if "%" not in text:
        return text
    if text == "%":
        return ""
    bad = _BAD_ESCAPE_RE.search(text)
    if bad:
        raise BactFormatError(f"the label {text!r} has a '%' not followed by two hex digits (at character "
                              f"{bad.start() + 1}); write a literal % as %25")
    try:
        return re.sub(r"(?:%[0-9A-Fa-f]{2})+", lambda m: bytes.fromhex(m.group().replace("%", "")).decode("utf8"), text)
    except UnicodeDecodeError:
        raise BactFormatError(f"the percent escapes in {text!r} are not UTF-8") from None


def code_to_sexpr(code: Iterable[Tuple[int, str]]) -> str:
    """Write (depth, label) nodes in preorder as a strict S-expression, e.g. `(not(good))`."""
    parts: List[str] = []
    prev = -1
    for depth, label in code:
        parts.append(")" * (prev - depth + 1))
        parts.append("(" + (ROOT_TEXT if label == ROOT_LABEL else encode_label(label)))
        prev = depth
    parts.append(")" * (prev + 1))
    return "".join(parts)


def tree_to_sexpr(forest: Forest, i: int) -> str:
    """Write document i as a strict S-expression (`(ROOT(a(b))(c))`)."""
    lo, hi = int(forest.offsets[i]), int(forest.offsets[i + 1])
    return code_to_sexpr((int(d), forest.vocab[int(v)]) for d, v in zip(forest.depths[lo:hi], forest.labels[lo:hi]))


class BactFormatError(ValueError):
    pass


_CHUNK_BYTES = 1 << 20
_BOM = b"\xef\xbb\xbf"


def _parser(vocab: Optional[LabelVocab], add_labels: bool) -> Tuple[LabelVocab, "BactParser"]:
    from ._bact import BactParser

    vocab = vocab if vocab is not None else LabelVocab()
    return vocab, BactParser(vocab, add_labels, decode_label, BactFormatError)


def _forest_of(parser: "BactParser", vocab: LabelVocab, more: bool = False) -> Tuple[Forest, List[str]]:
    labels, parents, offsets, classes = parser.take(more)
    return Forest(labels, parents, None, offsets, vocab), classes


def _parse_source(parser: "BactParser", source: PathOrLines) -> Iterator[None]:
    """Feed `source` to `parser`, yielding after each block of lines."""
    if isinstance(source, (str, Path)):
        prefix = f"{source}: "
        with open(source, "rb") as f:
            limit_mb = None if stat.S_ISREG(os.fstat(f.fileno()).st_mode) else max_line_mb(BactFormatError)
            rest = f.read(len(_BOM))
            rest, lineno = (b"" if rest == _BOM else rest), 1
            while True:
                block = f.read(_CHUNK_BYTES)
                buf = rest + block
                if not block:
                    if buf:
                        parser.parse_lines(buf, prefix, lineno)
                        yield
                    return
                # a CR at the end may be the first half of a CR LF
                cut = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1)) + 1
                if not cut:
                    if limit_mb is not None and len(buf) > limit_mb << 20:
                        raise BactFormatError(
                            f"{source}, line {lineno}: no line break in the first {limit_mb} MiB of the line, and "
                            f"{source} is not a regular file (a pipe or a device), so the line may never end. Save "
                            f"the input to a file first, or raise the limit by setting {MAX_LINE_ENV} "
                            f"(now {limit_mb}).")
                    rest = buf
                    continue
                lineno += parser.parse_lines(memoryview(buf)[:cut], prefix, lineno)
                rest = buf[cut:]
                yield
    else:
        for lineno, line in enumerate(source, 1):
            if lineno == 1 and line.startswith("\ufeff"):
                line = line[1:]
            try:
                data = line.encode("utf8")
            except UnicodeEncodeError as err:
                raise BactFormatError(f"line {lineno}: {err.reason} at column {err.start + 1}") from None
            # one item is one line: a line break inside it is white space
            parser.parse_lines(data.replace(b"\n", b" ").replace(b"\r", b" "), "", lineno)
            if parser.n_docs >= 1024:
                yield
        yield


def read_bact(source: PathOrLines, vocab: Optional[LabelVocab] = None, *, add_labels: bool = True) -> Tuple[Forest, List[str]]:
    """Read examples in the BACT format (UTF-8, a byte order mark skipped; lines end in LF, CRLF or CR) from a path or
    lines; a BactFormatError names the file and line of a malformed one.

    add_labels (bool): Add unseen node labels to `vocab` (else they map to -1).
    RETURNS (Tuple[Forest, List[str]]): The trees and their class labels.
    """
    vocab, parser = _parser(vocab, add_labels)
    for _ in _parse_source(parser, source):
        pass
    return _forest_of(parser, vocab)


def iter_bact(source: PathOrLines, vocab: LabelVocab, *, add_labels: bool = False, batch_size: int = 1000
              ) -> Iterator[Tuple[Forest, List[str]]]:
    """Read BACT examples as `read_bact` does, in batches (of `batch_size` documents, or one block of input more)
    sharing `vocab`, in memory bounded by a batch and a block."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    vocab, parser = _parser(vocab, add_labels)
    for _ in _parse_source(parser, source):
        if parser.n_docs >= batch_size:
            yield _forest_of(parser, vocab, more=True)
    if parser.n_docs:
        yield _forest_of(parser, vocab)


def write_bact(target: Union[str, Path, IO[str]], forest: Forest, classes: Sequence[str]) -> None:
    """Write examples in the BACT format read by `read_bact`."""
    if len(classes) != len(forest):
        raise ValueError(f"Got {len(classes)} class labels for {len(forest)} trees.")
    lines = (f"{encode_label(str(c))} {tree_to_sexpr(forest, i)}\n" for i, c in enumerate(classes))
    if isinstance(target, (str, Path)):
        with open(target, "w", encoding="utf8") as f:
            f.writelines(lines)
    else:
        target.writelines(lines)
