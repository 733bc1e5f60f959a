"""The JSONL corpus reader of `spacy train`: a line holds `text` and either `label` or `labels` (a list); each
example's `reference.cats` holds every label of the label set (1.0 or 0.0)."""
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..config_errors import DataError, reporting
from ..exceptions import InvalidSettingError
from ..files import CommandLineError
from ..params import Boolean, Constraint, Interval, invalid_setting, rule, validate_params
from .jsonl import CorpusFormatError, check_input_file, iter_jsonl

Fold = Union[int, str]


class CorpusReadError(DataError, CorpusFormatError, CommandLineError):
    """A corpus line that `spacy train` cannot read, printed without a traceback."""

    def __init__(self, message: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("title", "The corpus cannot be read")
        super().__init__(message, **kwargs)
        self._set_message(message)


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


FIELD = Constraint(_is_name, "use the name of a field, a non-empty string")
OR_NULL = "use the name of a field (a non-empty string) or null"
SETTINGS = {
    "limit": rule(Interval("int", 0, None), hint="use a whole number of examples >= 0 (0 reads all)"),
    "text_field": rule(FIELD), "fold_field": rule(FIELD),
    "label_field": rule(None, FIELD, hint=OR_NULL), "labels_field": rule(None, FIELD, hint=OR_NULL),
    "skip_unlabeled": rule(Boolean()),
    "unlabeled": rule(Boolean()),
    "labels": rule(None, Constraint(lambda v: isinstance(v, (list, tuple)) and all(_is_name(label) for label in v),
                                    "use a list of labels, each a non-empty string")),
    "folds": rule(None, Constraint(lambda v: isinstance(v, (list, tuple, set)) and all(
        isinstance(f, (int, str)) and not isinstance(f, bool) for f in v),
        "use a list of fold values, each a whole number or a string")),
    "label_map": rule(None, Constraint(lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and _is_name(x) for k, x in v.items()),
        "use a mapping from labels to new labels, each a non-empty string, e.g. {\"pos\": \"POS\"}")),
}


class JsonlCorpus:
    """Labeled documents from a JSONL file, re-read on every call: the reader `spacy_treeboost.JsonlCorpus.v1`.

    path (Union[str, Path]): The JSONL file (`.jsonl` or gzipped `.jsonl.gz`).
    labels (Optional[List[str]]): The label set; None collects it from the whole file (sorted) on the first call.
    limit (int): Yield at most this many examples per call; 0 for all.
    text_field (str): The field holding the text.
    label_field (Optional[str]): The field holding one label; None to ignore it.
    labels_field (Optional[str]): The field holding a list of labels; None to ignore it.
    fold_field (str): The field that `folds` filters on.
    folds (Optional[Sequence[Union[int, str]]]): Keep only lines whose `fold_field` is one of these values.
    label_map (Optional[Dict[str, str]]): Rename labels as they are read, e.g. {"pos": "POS"}.
    skip_unlabeled (bool): Skip lines whose label field is missing, null or an empty list instead of raising.
    unlabeled (bool): Yield such lines as unlabeled examples (`reference.cats` is `{}`) instead of raising.
    """

    def __init__(self, path: Union[str, Path], *, labels: Optional[List[str]] = None, limit: int = 0,
                 text_field: str = "text", label_field: Optional[str] = "label",
                 labels_field: Optional[str] = "labels", fold_field: str = "fold",
                 folds: Optional[Sequence[Fold]] = None, label_map: Optional[Dict[str, str]] = None,
                 skip_unlabeled: bool = False, unlabeled: bool = False) -> None:
        if path is None:
            raise InvalidSettingError("spacy_treeboost.JsonlCorpus.v1 needs a path; set it in the [corpora] block.",
                                      setting="path", value=path)
        validate_params(dict(labels=labels, limit=limit, text_field=text_field, label_field=label_field,
                             labels_field=labels_field, fold_field=fold_field, folds=folds, label_map=label_map,
                             skip_unlabeled=skip_unlabeled, unlabeled=unlabeled), SETTINGS)
        if label_field is None and labels_field is None:
            raise InvalidSettingError("label_field and labels_field cannot both be None: one must name the label "
                                      "field.", setting="label_field", value=None)
        if skip_unlabeled and unlabeled:
            raise InvalidSettingError("skip_unlabeled and unlabeled cannot both be true: unlabeled lines are either "
                                      "skipped or kept.", setting="skip_unlabeled", value=True)
        if labels is not None and len(set(labels)) != len(labels):
            raise invalid_setting("labels", list(labels), "a label is repeated; list each label once")
        self.path = Path(path)
        self.labels: Optional[List[str]] = list(labels) if labels is not None else None
        self.limit = limit
        self.text_field = text_field
        self.label_field = label_field
        self.labels_field = labels_field
        self.fold_field = fold_field
        self.folds = set(folds) if folds is not None else None
        self.label_map = dict(label_map or {})
        self.skip_unlabeled = skip_unlabeled
        self.unlabeled = unlabeled
        check_input_file(self.path)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        """One example per selected line, its `predicted` doc made by `nlp`'s tokenizer."""
        try:
            for text, cats in self.iter_cats():
                yield Example.from_dict(nlp.make_doc(text), {"cats": cats})
        except CorpusFormatError as err:
            raise CorpusReadError(str(err)) from None

    def iter_cats(self) -> Iterator[Tuple[str, Dict[str, float]]]:
        """`(text, cats)` for each selected line, the cats over the whole label set."""
        if self.labels is None:
            self.labels = sorted({label for _, _, gold, _ in self._read() for label in gold or ()})
        label_set = set(self.labels)
        n = 0
        seen_folds: Set[Union[int, str]] = set()
        for line_no, text, gold, fold in self._read():
            if self.folds is not None and fold not in self.folds:
                if len(seen_folds) < 20 and isinstance(fold, (int, str)):
                    seen_folds.add(fold)
                continue
            unknown = sorted(set(gold or ()) - label_set)
            if unknown:
                raise CorpusFormatError(f"{self.path}, line {line_no}: label {unknown[0]!r} is not in the label set "
                                        f"{self.labels}. Add it to `labels`, or map it with `label_map`.")
            yield text, {} if gold is None else {label: 1.0 if label in gold else 0.0 for label in self.labels}
            n += 1
            if self.limit and n >= self.limit:
                break
        if n == 0 and self.folds is None:
            raise CorpusFormatError(
                f"{self.path}: the corpus has no document to read (the file is empty or blank"
                f"{', or every line is unlabeled and skip_unlabeled is set' if self.skip_unlabeled else ''}). "
                "Give a file with one JSON object per line, e.g. {\"text\": \"...\", \"label\": \"POS\"}.")
        if n == 0 and self.folds is not None:
            raise CorpusFormatError(
                f"{self.path}: no line has {self.fold_field!r} in {sorted(self.folds, key=repr)}; "
                f"values found include {sorted(seen_folds, key=repr)}. Check `fold_field` and `folds` "
                "(JSON numbers and strings differ: 0 is not \"0\").")

    def _read(self) -> Iterator[Tuple[int, str, Optional[List[str]], Any]]:
        kind: Optional[str] = None
        for line_no, record in iter_jsonl(self.path):
            where = f"{self.path}, line {line_no}"
            text = record.get(self.text_field)
            if not isinstance(text, str):
                problem = "has no" if text is None else "has a non-string"
                raise CorpusFormatError(f"{where}: the record {problem} {self.text_field!r} field; "
                                        f"every line needs a text, e.g. {{\"{self.text_field}\": \"...\"}}.")
            single = record.get(self.label_field) if self.label_field else None
            multi = record.get(self.labels_field) if self.labels_field else None
            if single is not None and multi is not None:
                raise CorpusFormatError(f"{where}: the record has both {self.label_field!r} and {self.labels_field!r}; "
                                        f"use {self.label_field!r} for one label or {self.labels_field!r} for a list.")
            if single is None and (multi is None or ((self.skip_unlabeled or self.unlabeled) and not multi)):
                if self.skip_unlabeled:
                    continue
                if self.unlabeled:
                    yield line_no, text, None, record.get(self.fold_field)
                    continue
                raise CorpusFormatError(f"{where}: the record has neither {self.label_field!r} nor "
                                        f"{self.labels_field!r}; add one, set skip_unlabeled = true to skip unlabeled "
                                        "lines, or unlabeled = true to read them as unlabeled examples.")
            line_kind = "single" if single is not None else "multi"
            if kind is not None and line_kind != kind:
                raise CorpusFormatError(f"{where}: the file mixes {self.label_field!r} (one label) and "
                                        f"{self.labels_field!r} (a list) lines; use one kind per file.")
            kind = line_kind
            gold = [single] if single is not None else multi
            if not isinstance(gold, list) or not all(isinstance(label, str) for label in gold):
                raise CorpusFormatError(f"{where}: labels must be a string ({self.label_field!r}) or a list of strings "
                                        f"({self.labels_field!r}), found {gold!r}.")
            if not all(label.strip() for label in gold):
                raise CorpusFormatError(f"{where}: a label is empty or blank ({gold!r}); give every label a name, or drop "
                                        "the line (a document without a label needs skip_unlabeled or unlabeled).")
            gold = [self.label_map.get(label, label) for label in gold]
            yield line_no, text, gold, record.get(self.fold_field)


read_jsonl_corpus = reporting(JsonlCorpus, "spacy_treeboost.JsonlCorpus.v1")
registry.readers.register("spacy_treeboost.JsonlCorpus.v1", func=read_jsonl_corpus)
