"""The classic workflow on BACT files: learn, classify, rules."""
import json
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import typer

from .common import _check_new_file, _fail, _write_file, app
from ..models.rules import ModelFormatError
from ..trees.bact import BactFormatError, encode_label


def _load(model: Path) -> Any:
    from ..files import check_model_file
    from ..learning.classifier_files import classifier_from_bytes

    try:
        check_model_file(model, ModelFormatError, "spacy-treeboost model file")
        return classifier_from_bytes(model.read_bytes())
    except ModelFormatError as err:
        _fail(str(err) if str(err).startswith(("cannot read", str(model))) else f"{model}: {err}")
    except OSError as err:
        _fail(f"cannot read {model}: {err.strerror}")
    except Exception as err:
        _fail(f"{model} is not a usable spacy-treeboost model file ({type(err).__name__}: {err})")


@contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Fail with one line when `path` cannot be read or is not in the BACT format."""
    try:
        yield
    except OSError as err:
        _fail(f"cannot read {path}: {err.strerror}")
    except BactFormatError as err:
        _fail(str(err))


def _read_all(paths: List[Path]) -> Any:
    """The trees and classes of the files, in order, as one forest."""
    from ..learning.shard_files import TreeShards, read_shard_files
    from ..trees.bact import read_bact

    if len(paths) == 1:
        with _reading(paths[0]):
            return read_bact(paths[0])
    try:
        names = [str(p) for p in paths]
        return read_shard_files(TreeShards(names), names)[:2]
    except ValueError as err:
        _fail(str(err))


@app.command()
def learn(
    ctx: typer.Context,
    train: List[Path] = typer.Argument(..., help="Training examples, one 'LABEL (tree)' per line: one file, or several "
                                       "(or a quoted glob), each a shard read by a worker for linear"),
    model: Path = typer.Argument(..., help="Where to write the model"),
    learner_config: Optional[Path] = typer.Option(
        None, "--learner-config", help="A config file with a registered learner block, as in a training config "
        "([learner], or the first [components.NAME.learner]); replaces the algorithm options"),
    algorithm: str = typer.Option(
        "linear", help="bact | frequency (+FQ) | presence (-FQ) | corrective (boosted rules refitted) | linear "
        "(a linear model over all subtrees)"),
    criterion: str = typer.Option("iwakura", help="iwakura (published gain) | z (real AdaBoost Z)"),
    max_pattern_size: Optional[int] = typer.Option(
        None, "--max-pattern-size", "-L", help="Largest subtree in nodes (default: 3; linear: 2 for training documents "
        "of a sentence, 3 otherwise)"),
    min_support: Optional[int] = typer.Option(
        None, "--min-support", "-m", help="Smallest number of documents per subtree (default: 2 for linear, else 1)"),
    rounds: int = typer.Option(100, "--rounds", "-T", help="Boosting rounds"),
    boosting: str = typer.Option("adaboost", help="For bact: adaboost | arcgv"),
    smoothing: Optional[float] = typer.Option(None, help="Confidence smoothing epsilon (default 1/m)"),
    include_root_patterns: bool = typer.Option(False, help="Allow subtrees containing the root"),
    max_cache_mb: Optional[int] = typer.Option(
        None, help="Memory cap for the cached search space, in MiB (default: half of the machine's memory)"),
    booster: str = typer.Option("presence", help="For corrective: the boosting algorithm whose rules are refitted"),
    features: str = typer.Option("auto", help="For linear: auto (presence, nb or tf-idf, whichever the "
                                 "cross-validation folds prefer) | nb (naive Bayes scaled presence) | presence | tfidf "
                                 "(sublinear tf-idf, rows L2-normalized)"),
    loss: str = typer.Option("logistic", help="For linear: logistic | squared_hinge"),
    C: Optional[float] = typer.Option(None, "--C", help="For corrective/linear: inverse regularization (default: "
                                      "corrective chooses it by cross-validation, linear uses 1)"),
    choose_C: bool = typer.Option(False, "--choose-C", help="For linear: choose C by cross-validation among "
                                  "0.01-10 instead of using --C"),
    l1_ratio: float = typer.Option(0.0, help="For corrective/linear: share of L1 in the penalty"),
    cv: Optional[int] = typer.Option(None, help="For corrective/linear: folds for choosing C (and, for linear, the "
                                     "interpolation and the calibration); default 5 for corrective, 3 for linear"),
    n_workers: int = typer.Option(1, "--n-workers", help="Workers that share the subtree search (same rules for any "
                                  "number)"),
    backend: Optional[str] = typer.Option(None, help="Where the workers run: local | processes | ray (default: "
                                          "local for one worker, else processes)"),
    ray_address: Optional[str] = typer.Option(None, help="For ray: the cluster address (default: start a local Ray)"),
) -> None:
    """Learn subtree rules from BACT-format files: one, or several (or a quoted glob) read as one training set, by
    the workers themselves for the linear learner (each file a shard)."""
    paths = _training_paths(train, model, learner_config)
    if learner_config is not None:
        _learn_from_config(ctx, paths, model, learner_config)
        return
    from ..learning.learner import TreeBoostClassifier, default_max_cache_mb, resolve_min_support

    min_support = resolve_min_support(algorithm, min_support)
    size = {} if max_pattern_size is None else {"max_pattern_size": max_pattern_size}
    if max_cache_mb is None:
        max_cache_mb = default_max_cache_mb()
    settings = TreeBoostClassifier(
        booster if algorithm in ("linear", "corrective") else algorithm, criterion=criterion, n_rounds=rounds, **size,
        min_support=min_support, smoothing=smoothing, boosting=boosting, include_root_patterns=include_root_patterns,
        max_cache_mb=max_cache_mb, n_workers=n_workers, backend=backend, ray_address=ray_address)
    if algorithm in ("linear", "corrective"):
        try:
            settings.validate_params()
        except ValueError as err:
            _fail(str(err))
        _learn_linear(paths, model, algorithm, settings,
                      dict(features=features, loss=loss, C=C, choose_C=choose_C, l1_ratio=l1_ratio, cv=cv,
                           max_pattern_size=max_pattern_size))
        return
    _learn_boosting(settings, paths, model, rounds)


def _training_paths(train: List[Path], model: Path, learner_config: Optional[Path]) -> List[Path]:
    """`learn`'s training files (globs expanded), once its model is known to be writable and not one of its inputs."""
    from ..learning.shard_files import shard_paths

    try:
        paths = [Path(p) for p in shard_paths(train)]
    except ValueError as err:
        _fail(str(err))
    _check_new_file(model, "the model", "model.bin", *paths, learner_config)
    if not os.access(model.parent, os.W_OK) or (model.exists() and not os.access(model, os.W_OK)):
        _fail(f"cannot write {model}: permission denied")
    return paths


def _say_nodes(what: str, nodes: Optional[List[str]]) -> None:
    """The line that says on how many Ray nodes the workers run."""
    if nodes:
        typer.echo(f"{len(nodes)} {what} on {len(set(nodes))} Ray node(s): "
                   f"{', '.join(sorted(set(n[:12] for n in nodes)))}", err=True)


def _learn_boosting(clf: Any, paths: List[Path], model: Path, rounds: int) -> None:
    """Boost `clf` (a `TreeBoostClassifier`) for `rounds` rounds on the files, with a progress bar, and write it."""
    from tqdm import tqdm

    forest, classes = _read_all(paths)
    try:
        clf.start(forest, classes)
    except (ValueError, ImportError) as err:
        _fail(str(err))
    del forest
    _say_nodes("search workers", getattr(clf.space_, "node_ids", None))
    bar = tqdm(total=rounds, unit="round", disable=not sys.stderr.isatty(), file=sys.stderr)

    def progress(entry: Dict[str, Any]) -> None:
        if entry["head"] == clf.heads_[-1].name:
            bar.update(1)
            bar.set_postfix(gain=f"{entry['value']:.4f}", loss=f"{entry['loss']:.4f}")

    try:
        clf.boost(rounds, callback=progress)
    except (MemoryError, RuntimeError) as err:
        _fail(str(err))
    finally:
        bar.close()
        clf.space_.close()
    last = clf.trace_[-1] if clf.trace_ else None
    summary = f"learned {clf.n_rounds_} rounds, {clf.rules_.n_patterns} distinct subtrees"
    if last:
        summary += f", training error {last['error']:.4f}, loss {last['loss']:.4f}"
    _write_model(clf, model, paths, summary)
    for head in clf.heads_:
        if head.stopped:
            typer.echo(f"stopped early ({head.name}): {head.stopped}", err=True)


def learner_block(config: Any) -> Dict[str, Any]:
    """The learner block of a config: `[learner]`, else the first `[components.NAME.learner]`."""
    if "learner" in config:
        return {"learner": config["learner"]}
    for name, block in (config.get("components") or {}).items():
        if isinstance(block, dict) and "learner" in block:
            return {"learner": block["learner"]}
    raise ValueError("the config has no [learner] block and no [components.NAME.learner] block: add one, e.g.\n"
                     "[learner]\n@learners = \"spacy_treeboost.SubtreeLinear.v1\"")


def _learn_from_config(ctx: typer.Context, train: List[Path], model: Path, config_path: Path) -> None:
    """`learn` with the estimator of a config's registered learner block (the settings of a training config)."""
    from thinc.api import Config
    from spacy.util import registry

    from ..pipeline import learners  # noqa: F401  (registers the learners)

    given = [name for name in ctx.params if name not in ("train", "model", "learner_config")
             and getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"]
    if given:
        _fail(f"--learner-config sets every learner setting, but {', '.join('--' + g.replace('_', '-') for g in given)} "
              "was given too: put the setting in the config's learner block instead")
    try:
        config = Config().from_disk(config_path, interpolate=False)
        estimator = registry.resolve(Config(learner_block(config)), validate=True)["learner"]
    except OSError as err:
        _fail(f"cannot read {config_path}: {err.strerror or err}")
    except Exception as err:  # a config error: name the file and what spaCy's registry said
        _fail(f"{config_path}: the learner block cannot be built: {err}")
    from ..learning.classifier import RuleClassifier

    if not isinstance(estimator, RuleClassifier):
        _fail(f"{config_path}: the learner block does not build a subtree learner (got {type(estimator).__name__})")
    _fit_and_write(estimator, train, model)


def _write_model(clf: Any, model: Path, train: List[Path], summary: str) -> None:
    """Write the model file of `clf`, then say what was learned (`summary`), its number of rules and its size, also as
    a share of the training files'."""
    from ..learning.classifier_files import classifier_to_bytes

    _write_file(model, classifier_to_bytes(clf))
    size, train_size = model.stat().st_size, sum(p.stat().st_size for p in train)
    share = f" ({100.0 * size / train_size:.1f} % of the training file{'s' if len(train) > 1 else ''})" \
        if train_size else ""
    typer.echo(f"{summary} -> {model}", err=True)
    typer.echo(f"model: {len(clf.rules_):,} rules, {size / 1e6:.2f} MB{share}", err=True)


def _learn_linear(train: List[Path], model: Path, algorithm: str, booster: Any, opts: Dict[str, Any]) -> None:
    """Fit the subtree-linear model, or refit the rules of `booster` (whose settings are the shared ones)."""
    from ..learning.classifier import RuleClassifier
    from ..learning.corrective import CorrectiveBoostClassifier
    from ..learning.subtree_linear import SubtreeLinearClassifier

    clf: RuleClassifier
    if algorithm == "linear":
        shared = ("min_support", "include_root_patterns", "max_cache_mb", "n_workers", "backend", "ray_address")
        common = {k: getattr(booster, k) for k in shared}
        given = {k: opts[k] for k in ("C", "cv", "max_pattern_size") if opts[k] is not None}
        if opts["choose_C"]:
            given["C"] = None
        clf = SubtreeLinearClassifier(features=opts["features"], loss=opts["loss"], l1_ratio=opts["l1_ratio"],
                                      **common, **given)
    else:
        clf = CorrectiveBoostClassifier(booster, C=opts["C"], l1_ratio=opts["l1_ratio"],
                                        cv=5 if opts["cv"] is None else opts["cv"])
    _fit_and_write(clf, train, model, chosen=True)


def _fit_and_write(clf: Any, train: List[Path], model: Path, chosen: bool = False) -> None:
    """Fit `clf` on the training files (several files as shards, for the linear learner), write its model and say
    what was learned (with `chosen`: each head's C and features; else the learner) and the CPU time of each phase."""
    from ..learning.shard_files import TreeShards
    from ..learning.subtree_linear import SubtreeLinearClassifier

    clock = time.process_time()
    shards = len(train) > 1 and isinstance(clf, SubtreeLinearClassifier)
    data = (TreeShards([str(p) for p in train]), None) if shards else _read_all(train)
    read_seconds = time.process_time() - clock
    try:
        clf.fit(*data)
    except (ValueError, MemoryError, ImportError, RuntimeError) as err:
        _fail(str(err))
    _say_nodes("shard holders", getattr(clf, "shard_holders_", None))
    summary = f"learned {len(clf.rules_)} rules over {clf.rules_.n_patterns} distinct subtrees"
    if chosen:
        info = clf.fit_info_ if isinstance(clf, SubtreeLinearClassifier) else clf.refit_info_
        summary += " (" + ", ".join(f"{i['head']}: " + (f"{i['features']}, " if "features" in i else "") +
                                    f"C={i['C']}" for i in info) + ")"
    else:
        summary += f" with {type(clf).__name__}"
    clock = time.process_time()
    _write_model(clf, model, train, summary)
    phases = {"read": read_seconds, **getattr(clf, "timings_", {}), "write": time.process_time() - clock}
    typer.echo(f"phases (CPU s): {json.dumps({k: round(v, 3) for k, v in phases.items()})}", err=True)


# Documents per batch of `classify`: small enough that the allocator reuses a batch's arrays for the next batch
# instead of mapping fresh pages for each
CLASSIFY_BATCH = 100


def _stream(path: Path, vocab: Any, add_labels: bool) -> Iterator[Any]:
    """Batches of (forest, gold labels) read from `path`."""
    from ..trees import iter_bact

    with _reading(path):
        yield from iter_bact(path, vocab, add_labels=add_labels, batch_size=CLASSIFY_BATCH)


@app.command()
def classify(
    test: Path = typer.Argument(..., help="Examples, one 'LABEL (tree)' per line"),
    model: Path = typer.Argument(..., help="A model written by 'learn'"),
) -> None:
    """Print 'label score' per example in input order (labels escaped as in the file), and the accuracy on stderr.

    The input is read and classified in batches, so memory does not grow with its size.
    """
    from ..trees import LabelVocab

    clf = _load(model)
    rules = getattr(clf, "rules_", None)
    vocab = LabelVocab(rules.label_strings) if rules is not None else LabelVocab()
    known = {str(c) for c in clf.classes_}
    unknown: Counter = Counter()
    n_docs = correct = 0
    out = sys.stdout
    for forest, gold in _stream(test, vocab, add_labels=rules is None):
        F = clf.decision_function(forest)
        pred = clf.predict_from_margins(F)
        out.write("".join(f"{encode_label(str(p))} {(F[i] if F.ndim == 1 else F[i].max()):.6f}\n"
                          for i, p in enumerate(pred)))
        n_docs += len(pred)
        correct += sum(str(p) == g for p, g in zip(pred, gold))
        unknown.update(g for g in gold if g not in known)
    if n_docs and not clf.multilabel_:
        if unknown:
            shown = ", ".join(f"{encode_label(g)} ({n})" for g, n in unknown.most_common(5))
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            known_list = ", ".join(encode_label(str(c)) for c in clf.classes_)
            typer.echo(f"warning: {sum(unknown.values())} of {n_docs} test labels are not classes of the model "
                       f"({known_list}): {shown}{more}; they count as errors in the accuracy", err=True)
        typer.echo(f"accuracy {correct / n_docs:.4f} ({correct}/{n_docs})", err=True)


@app.command()
def rules(model: Path = typer.Argument(..., help="A model written by 'learn'")) -> None:
    """List the learned rules in order."""
    typer.echo(_load(model).rules_.listing())
