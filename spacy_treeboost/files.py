"""Writing files so that a failure never leaves a half-written file or destroys the previous one."""
import os
from pathlib import Path
from typing import Union


def write_bytes_atomic(path: Union[str, Path], data: bytes) -> None:
    """Write `data` to a temporary file beside `path`, flush it to disk, and rename it over `path`.

    RAISES (OSError): When the write fails; `path` is then as it was.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
