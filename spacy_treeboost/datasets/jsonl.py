"""JSON lines input without spaCy: `iter_jsonl` and its `CorpusFormatError`."""
import gzip
import json
import os
import stat
import sys
import zlib
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple, Union

PathLike = Union[str, Path]


class CorpusFormatError(ValueError):
    """A corpus file does not have the expected format."""


def check_input_file(path: PathLike) -> Path:
    """`path` as a Path, after checking that it is a regular file."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"JSONL file not found: {path}") from None
    except OSError as err:
        raise CorpusFormatError(f"cannot read {path}: {err.strerror}; give the path of a .jsonl or .jsonl.gz "
                                "file.") from None
    if not stat.S_ISREG(mode):
        raise CorpusFormatError(f"{path} is not a regular file; give the path of a .jsonl or .jsonl.gz file.")
    return path


def iter_jsonl(path: PathLike) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """The 1-based line number and object of each line of a JSONL file (plain or gzipped, UTF-8), blank lines
    skipped; a bad line raises a `CorpusFormatError` naming the file and line."""
    path = check_input_file(path)
    one_object = "Each line must be one JSON object, e.g. {\"text\": \"...\", \"label\": \"POS\"}."
    for line_no, raw in _binary_lines(path):
        where = f"{path}, line {line_no}"
        try:
            line = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
        except UnicodeDecodeError as err:
            raise CorpusFormatError(f"{where}: the bytes are not UTF-8 ({err.reason} at byte {err.start} of the "
                                    "line). Save the file as UTF-8.") from None
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise CorpusFormatError(f"{where}: invalid JSON ({err.msg} at column {err.colno}). {one_object}") from None
        except RecursionError:
            raise CorpusFormatError(f"{where}: the JSON nests lists or objects too deeply to be a record. "
                                    f"{one_object}") from None
        except ValueError as err:
            digits = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
            raise CorpusFormatError(
                f"{where}: a number has more than {digits} digits, more than Python reads from JSON; write it as a "
                "string (in quotes) or drop the field." if "digits" in str(err) else
                f"{where}: invalid JSON ({err}). Each line must be one JSON object.") from None
        if not isinstance(record, dict):
            raise CorpusFormatError(f"{where}: expected a JSON object, found {type(record).__name__}. Each line must "
                                    "be one JSON object with a \"text\" field.")
        yield line_no, record


_ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")


def _binary_lines(path: Path) -> Iterator[Tuple[int, bytes]]:
    """The lines of a plain or gzipped file as bytes, numbered from 1."""
    from ..files import MAX_LINE_ENV, max_line_mb

    with path.open("rb") as probe:
        magic = probe.read(2)
    if magic in _ZLIB_HEADERS:
        raise CorpusFormatError(
            f"{path} is a spaCy DocBin (a .spacy file), not JSON lines: read it with spaCy's reader "
            "(@readers = \"spacy.Corpus.v1\") or give the .jsonl file it was made from.")
    gzipped = magic == b"\x1f\x8b"
    limit_mb = max_line_mb(CorpusFormatError) if gzipped else None
    limit = None if limit_mb is None else limit_mb << 20
    line_no = 0
    try:
        with (gzip.open(path, "rb") if gzipped else path.open("rb")) as stream:
            while True:
                raw = stream.readline() if limit is None else stream.readline(limit + 1)
                if not raw:
                    return
                line_no += 1
                if limit is not None and len(raw) > limit and raw[-1:] != b"\n":
                    raise CorpusFormatError(
                        f"{path}, line {line_no}: the line inflates to more than {limit_mb} MiB, longer than any "
                        f"record this reader takes; split the record, or raise the limit by setting {MAX_LINE_ENV} "
                        f"(now {limit_mb}).")
                yield line_no, raw
    except (EOFError, gzip.BadGzipFile, zlib.error) as err:
        where = f"after line {line_no}" if line_no else "before its first complete line"
        raise CorpusFormatError(f"{path}: the gzip file is truncated or damaged {where} ({type(err).__name__}: "
                                f"{err}). Copy or download it again.") from None
