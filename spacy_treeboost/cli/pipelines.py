"""Commands on spaCy pipelines and corpora: convert, apply, explain, report, init-config."""
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from .common import _check_new_file, _check_output, _fail, _write_file, app


@app.command()
def convert(
    input_path: Path = typer.Argument(..., help="JSONL with 'text' and 'label' or 'labels'"),
    output_path: Path = typer.Argument(..., help="Where to write the .spacy DocBin"),
    model: Optional[str] = typer.Option(None, help="A spaCy pipeline to parse the texts with"),
    n_process: int = typer.Option(1, help="Processes for parsing"),
    batch_size: int = typer.Option(64, help="Docs per batch"),
    max_length: Optional[int] = typer.Option(None, help="The longest text in characters (default: the pipeline's "
                                             "nlp.max_length, 1,000,000 for spaCy's pipelines)"),
    shard_documents: Optional[int] = typer.Option(
        None, "--shard-documents", help="Write DocBins of at most N docs: OUTPUT-00000.spacy, OUTPUT-00001.spacy, ... "
        "(shard files for training where the data lives, docs/ray_cluster.md)"),
) -> None:
    """Convert a JSONL corpus to a spaCy DocBin (or to DocBin shards), optionally parsed."""
    from ..datasets.convert import OutputError, PipelineNotFoundError, convert_jsonl, shard_path
    from ..datasets.jsonl import CorpusFormatError

    if output_path.is_dir():
        _fail(f"{output_path} is a directory; give the DocBin a file name, e.g. {output_path / 'train.spacy'}")
    _check_output(output_path, input_path, model)
    if min(n_process, batch_size, max_length or 1, shard_documents or 1) < 1:
        _fail(f"--n-process, --batch-size, --max-length and --shard-documents must be at least 1, got {n_process}, "
              f"{batch_size}, {max_length} and {shard_documents}")
    try:
        n = convert_jsonl(input_path, output_path, model=model, n_process=n_process, batch_size=batch_size,
                          max_length=max_length, shard_documents=shard_documents)
    except (PipelineNotFoundError, CorpusFormatError, OutputError) as err:
        _fail(str(err))
    except OSError as err:
        _fail(str(err) if err.filename is None else f"cannot read {err.filename}: {err.strerror}")
    if shard_documents is None:
        typer.echo(f"wrote {n} docs -> {output_path}", err=True)
    else:
        shards = max(1, -(-n // shard_documents))
        typer.echo(f"wrote {n} docs -> {shards} shards, {shard_path(output_path, 0)} to "
                   f"{shard_path(output_path, shards - 1).name}", err=True)


@app.command()
def apply(
    model: str = typer.Argument(..., help="A spaCy pipeline (directory or package) with a text classifier"),
    input_path: Path = typer.Argument(..., help="JSONL (or .jsonl.gz) with a 'text' per line"),
    output_path: Path = typer.Argument(..., help="Where to write each input line with its 'cats' (.gz compresses)"),
    n_workers: int = typer.Option(1, "--n-workers", help="Processes that run the pipeline (this one and N - 1 "
                                  "worker processes)"),
    batch_size: int = typer.Option(256, "--batch-size", help="Texts per batch"),
) -> None:
    """Classify a stream of texts: one output line per input line, in order, with the pipeline's 'cats'."""
    from ..learning.tasks import WorkerDiedError
    from ..streaming import apply_stream

    if n_workers < 1 or batch_size < 1:
        _fail("--n-workers and --batch-size must be at least 1")
    _check_output(output_path, input_path, model)

    def started(pids: List[int]) -> None:
        typer.echo(f"classifying in this process and {len(pids)} worker process{'es' if len(pids) > 1 else ''} "
                   f"({', '.join(map(str, pids))})", err=True)

    try:
        n = apply_stream(model, input_path, output_path, n_workers=n_workers, batch_size=batch_size,
                         progress=sys.stderr.isatty(), on_start=started)
    except (OSError, ValueError, WorkerDiedError) as err:
        _fail(str(err))
    except KeyboardInterrupt:
        typer.echo(f"interrupted: the workers were stopped and {output_path} was not written", err=True)
        raise typer.Exit(130)
    typer.echo(f"classified {n} texts -> {output_path}", err=True)


def _write_page(output: Path, what: str, pipeline: str, page: Callable[[Any], str],
                data: Optional[Path] = None) -> None:
    """Write the HTML page that `page` makes of the loaded pipeline, after checking that `output` destroys nothing."""
    from ..datasets.convert import load_pipeline

    _check_new_file(output, "the page", "page.html", pipeline, data)
    try:
        html = page(load_pipeline(pipeline))
    except (ValueError, FileNotFoundError) as err:
        _fail(str(err))
    _write_file(output, html.encode("utf8"))
    typer.echo(f"wrote the {what} -> {output}", err=True)


@app.command()
def explain(
    pipeline: str = typer.Argument(..., help="A trained spaCy pipeline (directory or package) with treeboost_textcat"),
    text: str = typer.Option(..., "--text", help="The text to classify and explain"),
    output: Path = typer.Option(..., "--output", "-o", help="Where to write the HTML page"),
    label: Optional[str] = typer.Option(None, "--label", help="The label to explain (default: the predicted one)"),
    component: Optional[str] = typer.Option(None, "--component", help="The component's name (default: the first "
                                            "treeboost_textcat)"),
    max_subtrees: int = typer.Option(12, "--max-subtrees", help="How many fired subtrees to draw"),
    all_sentences: bool = typer.Option(False, "--all-sentences", help="Draw every sentence's tree"),
) -> None:
    """Write a page that draws the doc's sentence trees with the subtrees that fired for a label."""
    from ..visualize.document import explanation_view, find_textcat

    def page(nlp: Any) -> str:
        view = explanation_view(find_textcat(nlp, component), nlp(text), label, max_subtrees=max_subtrees,
                                all_sentences=all_sentences)
        return view.page()

    _write_page(output, "explanation", pipeline, page)


@app.command()
def report(
    pipeline: str = typer.Argument(..., help="A trained spaCy pipeline (directory or package) with treeboost_textcat"),
    output: Path = typer.Option(..., "--output", "-o", help="Where to write the HTML page"),
    data: Optional[Path] = typer.Option(None, "--data", help="Training or dev data (.spacy or .jsonl) for document "
                                        "frequencies, snippets and scores"),
    component: Optional[str] = typer.Option(None, "--component", help="The component's name (default: the first "
                                            "treeboost_textcat)"),
    top: int = typer.Option(300, "--top", help="How many subtrees of each label to list"),
) -> None:
    """Write a report of a trained component: per label its top subtrees, where they fire, settings and scores."""
    from ..visualize.report import read_examples, report_page

    def page(nlp: Any) -> str:
        return report_page(nlp, None if data is None else read_examples(nlp, data), name=component, top=top)

    _write_page(output, "report", pipeline, page, data)


@app.command("init-config")
def init_config(
    output: Path = typer.Argument(..., help="Where to write the config"),
    multilabel: bool = typer.Option(False, "--multilabel", help="Several labels per document (exclusive_classes = "
                                    "false, model-best selected by macro F)"),
    lang: str = typer.Option("en", "--lang", help="The language of the blank pipeline"),
) -> None:
    """Write a complete training config: a sentencizer, treeboost_textcat, the JSONL reader and one training step."""
    from spacy.util import get_lang_class

    from ..pipeline.starter_config import starter_config

    _check_new_file(output, "the config", "config.cfg")
    try:
        get_lang_class(lang)
    except ImportError:
        _fail(f"--lang {lang!r} is not a language of spaCy: give a code of spacy.lang, e.g. en, de, fr, or xx for "
              "a multi-language pipeline")
    try:
        config = starter_config(lang, exclusive_classes=not multilabel)
    except (ImportError, ValueError) as err:
        _fail(f"cannot make a config for --lang {lang!r}: {err}")
    text = config.to_str()
    header = ("# Written by python -m spacy_treeboost init-config. Train on JSON lines ({\"text\": ..., \"label\": ...}"
              " per line):\n"
              f"# python -m spacy train {output} --output training --paths.train train.jsonl --paths.dev dev.jsonl\n")
    _write_file(output, (header + text).encode("utf8"))
    typer.echo(f"wrote the config -> {output}", err=True)
