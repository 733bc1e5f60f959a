"""Atomic writes, refusal of outputs that would destroy something (`check_output`), and sealed model files: a
msgpack envelope of format name, version, the payload's SHA-256 and the payload, so that a damaged file is refused."""
import errno
import gc
import hashlib
import importlib.util
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Tuple, Type, Union

import srsly
import typer


CLICK_EXCEPTION: Type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class CommandLineError(CLICK_EXCEPTION):  # type: ignore[misc,valid-type]  # a class found at import
    """An exception that a typer command line prints as one line; a subclass calls `_set_message` in `__init__`."""

    def _set_message(self, message: str) -> None:
        self.message = message
        self.show_color = None


class ModelFormatError(ValueError, CommandLineError):
    """A model or settings file that is corrupt, foreign, or of another format version (printed as one line by
    `spacy evaluate` or `spacy package`)."""

    def __init__(self, message: str = "") -> None:
        ValueError.__init__(self, message)
        self._set_message(message)


class OutputError(OSError):
    """An output path that cannot or must not be written: `path`, `reason` (why, and the fix) and an errno `code`."""

    def __init__(self, path: Union[str, Path], reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, str(path))

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"

    def __reduce__(self) -> Any:
        return (type(self), (self.filename, self.strerror, self.errno))


CHECKSUM_KEY = "sha256"
PAYLOAD_KEY = "payload"
MAX_LINE_ENV = "SPACY_TREEBOOST_MAX_LINE_MB"
DEFAULT_MAX_LINE_MB = 64

_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))


def max_line_mb(error: Type[Exception] = ValueError) -> int:
    """The longest line read from a gzip file, in MiB: SPACY_TREEBOOST_MAX_LINE_MB, else `DEFAULT_MAX_LINE_MB`."""
    value = os.environ.get(MAX_LINE_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_LINE_MB
    if not value.isdigit() or int(value) < 1:
        raise error(f"{MAX_LINE_ENV}={value!r} is invalid: use a whole number of MiB >= 1")
    return int(value)


def _identity(path: Union[str, Path]) -> Optional[Tuple[int, int]]:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _inside(path: Path, directory: Path) -> bool:
    """Whether `path` (resolved) lies in `directory`, by resolved path or by the identity of an ancestor."""
    real, top = os.path.realpath(path), os.path.realpath(directory)
    if os.path.commonpath([real, top]) == top:
        return True
    target = _identity(directory)
    return target is not None and any(_identity(ancestor) == target for ancestor in Path(real).parents)


def check_output(path: Union[str, Path], inputs: Iterable[Union[str, Path, None]] = ()) -> None:
    """Refuse an output path whose writing would destroy something: a node that is not a regular file, a link
    loop, one of the `inputs` (also through a link) or a path inside an input directory.

    path (Union[str, Path]): The output path; it need not exist.
    inputs (Iterable[Union[str, Path, None]]): The files and directories the command reads; None is skipped.
    """
    path = Path(path)
    try:
        mode: Optional[int] = os.stat(path).st_mode
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise OutputError(path, "it is a symbolic link loop; remove the link or give another path",
                              errno.ELOOP) from None
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(path, "it is a directory; give the path of a file (e.g. a new file inside it)", errno.EISDIR)
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise OutputError(path, f"it is {kind}, not a regular file, and writing the output would replace it; give "
                                "the path of a new or regular file", errno.EEXIST)
    for source in (Path(s) for s in inputs if s is not None):
        if os.path.isdir(source):
            if _inside(path, source):
                raise OutputError(path, f"it lies in the directory {source} that this command reads (a pipeline), "
                                        "and writing there would change it; give a path outside it")
        elif os.path.realpath(path) == os.path.realpath(source) or (mode is not None
                                                                     and _identity(path) == _identity(source)):
            raise OutputError(path, f"it is the input {source}, and writing it would destroy the input; give "
                                    "another output path")


def pipeline_source(model: str) -> Optional[Path]:
    """The directory a pipeline is read from: `model` when it is a path, else its installed package's, or None."""
    if Path(model).exists():
        return Path(model)
    try:
        spec = importlib.util.find_spec(model) if model.isidentifier() else None
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def create_temp_beside(path: Union[str, Path]) -> Tuple[int, Path]:
    """A new temporary file beside `path` (after `check_output`), with the permissions of a new file.

    RETURNS (Tuple[int, Path]): The open file descriptor and the temporary file's path.
    """
    path = Path(path)
    check_output(path)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        parent = path.parent
        if err.errno == errno.ENOENT:
            reason = f"the directory {parent} does not exist (create it first)"
        elif err.errno == errno.ENOTDIR:
            reason = f"{parent} is not a directory"
        else:
            reason = f"{err.strerror or err} in the directory {parent}"
            if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                reason += " (make it writable or give a path in another directory)"
        raise OutputError(path, reason, err.errno or errno.EIO) from None
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    return fd, Path(name)


def write_bytes_atomic(path: Union[str, Path], data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk and rename it over `path`; a failure raises
    an `OutputError`, and the previous file stays as it was."""
    fd, tmp = create_temp_beside(path)
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise OutputError(path, f"{err.strerror or err}; the previous file, if any, is unchanged",
                          err.errno or errno.EIO) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def msgpack_loads_safe(data: bytes) -> Any:
    """`srsly.msgpack_loads` that leaves the garbage collector enabled or not as it was, also for damaged data."""
    enabled = gc.isenabled()
    try:
        return srsly.msgpack_loads(data)
    finally:
        (gc.enable if enabled else gc.disable)()


def seal(payload: Any, format_name: str, version: int, *, version_key: str = "version") -> bytes:
    """The msgpack bytes of a sealed model file holding `payload` (msgpack-serializable)."""
    body = srsly.msgpack_dumps(payload)
    return srsly.msgpack_dumps({"format": format_name, version_key: version,
                                CHECKSUM_KEY: hashlib.sha256(body).hexdigest(), PAYLOAD_KEY: body})


def unseal(data: bytes, format_name: str, version: int, *, error: Type[Exception], what: str,
           version_key: str = "version") -> Any:
    """The payload of a sealed model file, after checking its format, version and checksum.

    error (Type[Exception]): The exception raised for a file that is refused.
    what (str): What the file is, for messages, e.g. "classifier file".
    """
    try:
        outer = msgpack_loads_safe(data)
    except Exception as err:
        raise error(f"The {what} is unreadable msgpack (truncated, damaged, or not a spacy-treeboost model: "
                    f"{type(err).__name__}); restore it from a copy or retrain the model.") from None
    return open_seal(outer, format_name, version, error=error, what=what, version_key=version_key)


def open_seal(outer: Any, format_name: str, version: int, *, error: Type[Exception], what: str,
              version_key: str = "version") -> Any:
    """`unseal` for a file whose envelope is already unpacked."""
    if not isinstance(outer, dict) or outer.get("format") != format_name:
        raise error(f"This is not a spacy-treeboost {what} (expected the format {format_name!r}).")
    found = outer.get(version_key)
    if isinstance(found, int) and not isinstance(found, bool) and found > version:
        raise error(f"The {what}'s format version {found} was written by a newer spacy-treeboost (this one reads "
                    f"version {version}); upgrade spacy-treeboost or retrain the model.")
    if found != version or isinstance(found, bool):
        raise error(f"The {what}'s format version {found!r} is not supported (this spacy-treeboost reads version "
                    f"{version}); retrain the model with this spacy-treeboost.")
    body, checksum = outer.get(PAYLOAD_KEY), outer.get(CHECKSUM_KEY)
    if not isinstance(body, bytes) or not isinstance(checksum, str) or set(outer) != {"format", version_key,
                                                                                      CHECKSUM_KEY, PAYLOAD_KEY}:
        raise error(f"The {what} (format version {version}) is damaged: its payload or checksum entry is missing "
                    "or malformed; restore it from a copy or retrain the model.")
    if hashlib.sha256(body).hexdigest() != checksum:
        raise error(f"The {what} is damaged: its content does not match its SHA-256 checksum. Restore it from a "
                    "copy or retrain the model.")
    try:
        return msgpack_loads_safe(body)
    except Exception as err:
        raise error(f"The {what}'s payload is not msgpack ({type(err).__name__}) although its checksum matches; "
                    "it was not written by spacy-treeboost.") from None


def check_model_file(path: Union[str, Path], error: Type[Exception], what: str) -> None:
    """Raise `error`, naming the path, when `path` cannot be a model file: not a regular file, empty, or not
    starting as a msgpack map does."""
    path = Path(path)
    if not path.exists():
        raise error(f"cannot read {path}: it does not exist.")
    if path.is_dir():
        raise error(f"cannot read {path}: it is a directory, not a {what}.")
    if not path.is_file():
        raise error(f"cannot read {path}: it is not a regular file, so it cannot be a {what}.")
    with path.open("rb") as f:
        head = f.read(1)
    if not head or not (0x80 <= head[0] <= 0x8F or head[0] in (0xDE, 0xDF)):
        raise error(f"{path} is not a {what} ({'it is empty' if not head else 'it does not start as one does'}).")


def settings_digest(cfg: Dict[str, Any]) -> str:
    """The SHA-256 of settings as canonical JSON, which ties a component's model file to its cfg."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, separators=(",", ":")).encode("utf8")).hexdigest()


def load_cfg_json(data: bytes, source: str) -> Any:
    """Parse a component's cfg (UTF-8 JSON, a BOM allowed) from `source`, raising a `ModelFormatError` naming it."""
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        return json.loads(text)
    except UnicodeDecodeError as err:
        raise ModelFormatError(f"{source}: the settings file is not UTF-8 (byte {err.start}); restore it from a copy "
                               "or save the pipeline again.") from None
    except ValueError as err:
        raise ModelFormatError(f"{source}: the settings file is not valid JSON (truncated or damaged: {err}); "
                               "restore it from a copy or save the pipeline again.") from None
    except RecursionError:
        raise ModelFormatError(f"{source}: the settings file nests lists or objects too deeply to be a "
                               "spacy-treeboost cfg (damaged or not one); restore it from a copy or save the pipeline "
                               "again.") from None
