"""What every command shares: the Typer app, one-line failures and the checks and atomic writes of outputs."""
from pathlib import Path
from typing import Any, NoReturn

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Command line: the classic learn / classify / rules workflow on BACT files, and corpus conversion.")


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _check_output(output: Path, *inputs: Any) -> None:
    """Fail when writing `output` would destroy one of the `inputs` (`files.check_output`); a str input is a pipeline,
    read from its directory."""
    from ..files import OutputError, check_output, pipeline_source

    try:
        check_output(output, [pipeline_source(i) if isinstance(i, str) else i for i in inputs])
    except OutputError as err:
        _fail(str(err))


def _write_file(path: Path, data: bytes) -> None:
    """Write atomically (a failed write leaves the previous file as it was)."""
    from ..files import OutputError, write_bytes_atomic

    try:
        write_bytes_atomic(path, data)
    except OutputError as err:
        _fail(str(err))


def _check_new_file(path: Path, what: str, example: str, *inputs: Any) -> None:
    """`_check_output`, after failing when `path` is a directory (suggesting the file name `example` for `what`) or
    its directory does not exist."""
    if path.is_dir():
        _fail(f"{path} is a directory; give {what} a file name, e.g. {path / example}")
    if not path.parent.is_dir():
        _fail(f"cannot write {path}: the directory {path.parent} does not exist (create it first)")
    _check_output(path, *inputs)


def main() -> None:
    app()
