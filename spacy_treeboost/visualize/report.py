"""The model report: per label of a trained component its top subtrees by contribution (their rules, and from data
their document frequency and snippets), the training settings and the run's scores."""
import html
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly

from ..models.explain import EmbeddingTable
from ..models.rules import RuleSet
from ..trees.bact import code_to_sexpr
from .document import asset, find_textcat, head_bias, standalone

DEFAULT_TOP = 300
SNIPPETS = 3
SNIPPET_CONTEXT = 8


@dataclass
class DataSummary:
    """What data say about the rules: per pattern its document frequency, per head each pattern's summed
    contribution and, for "tfidf", each rule's typical value; per top pattern its snippets."""

    docs: Dict[int, int]
    totals: List[Dict[int, float]]
    typical: List[Optional[numpy.ndarray]]
    snippets: Dict[int, List[Dict[str, Any]]] = field(default_factory=dict)


def summarize_data(rules: RuleSet, docs: Sequence[Any], spec: Any, gold: Sequence[str], top: int) -> DataSummary:
    """The `DataSummary` of processed docs. A tf-idf rule's typical value is the mean of its normalized tf-idf where
    its subtree occurs, else its idf times the median tf-idf / idf of the fired rules."""
    from ..trees.doc_trees import docs_to_forest

    forest = docs_to_forest(docs, spec)
    doc_i, pat_i, _ = rules.match_counts(forest)
    patterns, frequency = numpy.unique(pat_i, return_counts=True)
    summary = DataSummary(dict(zip(patterns.tolist(), frequency.tolist())), [], [])
    for h in range(len(rules.heads)):
        pid, _, _, idf = rules.rule_arrays(h)
        _, rule, _, value, _, contribution = rules.fired_rules(forest, h)
        keys, inverse = numpy.unique(numpy.asarray(pid)[rule], return_inverse=True)
        sums = numpy.bincount(inverse.ravel(), weights=contribution, minlength=len(keys))
        summary.totals.append(dict(zip(keys.tolist(), sums.tolist())))
        if rules.value != "tfidf":
            summary.typical.append(None)
            continue
        idf = numpy.asarray(idf, dtype=numpy.float64)
        seen = numpy.bincount(rule, minlength=len(pid))
        per_idf = float(numpy.median(value / idf[rule])) if len(rule) else 1.0
        mean = numpy.bincount(rule, weights=value, minlength=len(pid)) / numpy.maximum(seen, 1)
        summary.typical.append(numpy.where(seen > 0, mean, idf * per_idf))
    ids = {p for h in range(len(rules.heads)) for p, _, _ in top_subtrees(rules, h, top, summary.typical[h])[0]}
    trees: Dict[int, Tuple[Any, ...]] = {}
    for d, p in sorted(zip(doc_i.tolist(), pat_i.tolist())):
        if p in ids and len(summary.snippets.setdefault(p, [])) < SNIPPETS:
            node_labels, parents, tokens = trees[d] = trees.get(d) or spec.node_labels(docs[d])
            nodes = EmbeddingTable(rules.pattern(p), node_labels, parents).covered_nodes()
            marked = sorted({int(tokens[v]) for v in nodes} - {-1})
            summary.snippets[p].append({"doc": d, "gold": gold[d] if d < len(gold) else "",
                                        "segments": _snippet(docs[d], marked)})
    return summary


def top_subtrees(rules: RuleSet, head: int, top: int, typical: Optional[numpy.ndarray] = None
                 ) -> Tuple[List[Tuple[int, float, List[int]]], float, int]:
    """The `top` subtrees of a head by the absolute sum of their rules' contributions when present once, as `explain`
    gives them (ties: the first rule first), as (pattern id, total, rule indices); the sum of every subtree's |total|;
    the number of subtrees. A "tfidf" rule contributes a times its `typical` value from `summarize_data`, or without
    data a * idf (at norm 1)."""
    pid, z, a, b = (numpy.asarray(column, dtype=numpy.float64) for column in rules.rule_arrays(head))
    if rules.value == "tfidf":
        value = a * (b if typical is None else typical)
    else:
        value = numpy.where(z <= 1, a, -a) - b
    if not len(pid):
        return [], 0.0, 0
    patterns, first, inverse = numpy.unique(pid.astype(numpy.int64), return_index=True, return_inverse=True)
    totals = numpy.bincount(inverse.ravel(), weights=value, minlength=len(patterns))
    order = numpy.lexsort((first, -numpy.abs(totals)))[:top].tolist()
    ranked = [(int(patterns[o]), float(totals[o]), numpy.flatnonzero(inverse == o).tolist()) for o in order]
    return ranked, float(numpy.abs(totals).sum()), len(patterns)


def rule_report_data(rules: RuleSet, *, top: int = DEFAULT_TOP,
                     fired: Optional[DataSummary] = None) -> List[Dict[str, Any]]:
    """Per head, its summary and the rows of its `top` subtrees (with what the data say, `fired`)."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top={top!r} is invalid: use a whole number >= 1 (default {DEFAULT_TOP}).")
    out = []
    for h, label in enumerate(rules.heads):
        chosen, magnitude, n_subtrees = top_subtrees(rules, h, top, None if fired is None else fired.typical[h])
        rows: List[Dict[str, Any]] = [{"rank": rank, "pattern": code_to_sexpr(rules.pattern(p)), "weight": total,
            "rules": [rules.describe(h, r) for r in members], "docs": None if fired is None else fired.docs.get(p, 0),
            "data_contribution": None if fired is None else fired.totals[h].get(p, 0.0),
            "snippets": [] if fired is None else fired.snippets.get(p, [])}
            for rank, (p, total, members) in enumerate(chosen, 1)]
        shown = sum(abs(total) for _, total, _ in chosen)
        out.append({"label": label, "rules": rules.n_rules(h), "subtrees": n_subtrees, "bias": head_bias(rules, h),
                    "shown": len(rows), "shown_share": float(shown / magnitude) if magnitude else 1.0, "rows": rows})
    return out


def _snippet(doc: Any, marked: List[int]) -> List[List[Any]]:
    """The text around the marked tokens of the first one's sentence, as [text, marked] segments."""
    if not marked:
        return [[doc.text[:200], False]]
    first = doc[marked[0]]
    sent = first.sent if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else doc[:]
    in_sent = [t for t in marked if sent.start <= t < sent.end]
    start = max(sent.start, in_sent[0] - SNIPPET_CONTEXT)
    end = min(sent.end, in_sent[-1] + SNIPPET_CONTEXT + 1)
    chosen = set(in_sent)
    pieces = [piece for token in doc[start:end] for piece in (
        (token.text, token.i in chosen),
        (token.whitespace_ if token.i < end - 1 else "", token.i in chosen and token.i + 1 in chosen)) if piece[0]]
    segments = [["".join(text for text, _ in group), is_marked]
                for is_marked, group in itertools.groupby(pieces, key=lambda piece: piece[1])]
    return ([["… ", False]] if start > sent.start else []) + segments + ([[" …", False]] if end < sent.end else [])


def _table(title: str, items: Sequence[Tuple[str, Any]], *, folded: bool = False) -> str:
    rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_format(v))}</td></tr>" for k, v in items)
    table = f'<table class="tb-kv">{rows}</table>'
    if folded:
        return (f'<section class="tb-box"><details><summary><h2>{html.escape(title)} ({len(items)})</h2></summary>'
                f'{table}</details></section>')
    return f'<section class="tb-box"><h2>{html.escape(title)}</h2>{table}</section>'


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_format(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    return str(value)


def rule_report(rules: RuleSet, *, title: str, settings: Sequence[Tuple[str, Any]] = (),
                scores: Sequence[Tuple[str, Sequence[Tuple[str, Any]]]] = (), top: int = DEFAULT_TOP,
                fired: Optional[DataSummary] = None) -> str:
    """The report page (standalone HTML) of a rule set.

    settings (Sequence[Tuple[str, Any]]): The training settings to show.
    scores (Sequence[Tuple[str, Sequence[Tuple[str, Any]]]]): Score tables, each a title and (name, value) pairs.
    top (int): How many subtrees of each label to inline.
    fired (Optional[DataSummary]): What the data say, see `summarize_data`.
    """
    heads = rule_report_data(rules, top=top, fired=fired)
    boxes = [_table("Training settings", settings, folded=True)] if settings else []
    boxes += [_table(name, items) for name, items in scores if items]
    if rules.value != "tfidf":
        scale = " (as explain gives it for one occurrence)"
    elif fired is not None:
        scale = " (weight × the subtree's mean tf-idf where it occurs in the data, as explain gives it)"
    else:
        scale = (" (weight × idf: tf-idf contributions are divided by each document's norm, so give data (--data) "
                 "for the scale of explain)")
    summary = (f"{len(rules)} rules over {rules.n_patterns} distinct subtrees, {len(rules.to_bytes()) / 1e6:.2f} MB "
               f"as a file ({rules.algorithm}, {len(rules.heads)} label{'s' if len(rules.heads) != 1 else ''}). "
               f"Each label lists its top {top} subtrees by contribution when present{scale}"
               + ("; document frequency, total contribution and snippets come from the data given." if fired is not None
                  else "; give data (--data) for document frequency, total contribution and snippets."))
    # "<" escaped, so that no string in the data can close the script element
    data = srsly.json_dumps({"heads": heads, "value": rules.value}, sort_keys=True).replace("<", "\\u003c")
    body = (f'<main class="tb-report"><h1>{html.escape(title)}</h1><p class="tb-summary">{html.escape(summary)}</p>'
            f'<div class="tb-boxes">{"".join(boxes)}</div><div id="tb-labels"></div></main>'
            f'<script type="application/json" id="tb-report-data">{data}</script>')
    return standalone(title, body, asset("report.css"), asset("report.js"))


def read_examples(nlp: Any, path: Union[str, Path]) -> List[Any]:
    """Examples from a .spacy DocBin or a .jsonl corpus (text with label or labels), for the report."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"cannot read {path}: no such file")
    if path.suffix == ".spacy":
        from spacy.training import Corpus

        return list(Corpus(path)(nlp))
    if path.suffix in (".jsonl", ".gz"):
        from ..datasets.readers import JsonlCorpus

        return list(JsonlCorpus(path)(nlp))
    raise ValueError(f"{path}: use a .spacy DocBin (python -m spacy_treeboost convert) or a .jsonl corpus.")


def report_page(nlp: Any, examples: Optional[Iterable[Any]] = None, *, name: Optional[str] = None,
                top: int = DEFAULT_TOP) -> str:
    """The report page (standalone HTML) of a trained pipeline's treeboost_textcat component (by `name`, or the first).

    examples (Optional[Iterable[Example]]): Examples whose texts the pipeline processes to find where the top
        subtrees fire; those with cats are scored.
    top (int): How many subtrees of each label to inline.
    """
    from spacy.training import Example

    textcat = find_textcat(nlp, name)
    predictor = textcat._predictor()
    if predictor is None:
        raise ValueError(f"'{textcat.name}' is not trained yet: it has no rules to report.")
    rules = predictor.rules_
    settings: List[Tuple[str, Any]] = [("pipeline", ", ".join(nlp.pipe_names))]
    settings += [(k, v) for k, v in textcat.cfg.items() if k != "learner"]
    settings += [(f"learner.{k}", v) for k, v in textcat.cfg["learner"].items()]
    for info in getattr(predictor, "fit_info_", None) or []:
        settings.append((f"fitted {info.get('head', '')}", {k: v for k, v in info.items() if k != "head"}))
    training = nlp.config.interpolate().get("training", {})
    settings += [(f"training.{k}", training[k]) for k in ("seed", "max_steps", "max_epochs", "patience",
                                                          "eval_frequency") if k in training]
    performance = (getattr(nlp, "meta", None) or {}).get("performance") or {}
    scores = [("Scores of the training run (dev)", _score_items(performance))]
    fired = None
    if examples is not None:
        examples = list(examples)
        docs = list(nlp.pipe(eg.predicted for eg in examples))
        gold = [_gold(eg.reference.cats) for eg in examples]
        fired = summarize_data(rules, docs, textcat._spec, gold, top)
        if any(eg.reference.cats for eg in examples):
            scored = textcat.score([Example(d, eg.reference) for d, eg in zip(docs, examples)])
            scores.append((f"Scores on the data ({len(examples)} docs)", _score_items(scored)))
    title = f"{textcat.name}: {nlp.meta.get('name', 'pipeline')} {nlp.meta.get('version', '')}".strip()
    return rule_report(rules, title=title, settings=settings, scores=scores, top=top, fired=fired)


def _gold(cats: Dict[str, float]) -> str:
    return ", ".join(label for label, value in cats.items() if value >= 0.5)


def _score_items(scores: Dict[str, Any]) -> List[Tuple[str, Any]]:
    return [(k, v) for k, v in sorted(scores.items()) if k.startswith("cats_") and v is not None
            and (isinstance(v, (int, float)) or isinstance(v, dict))]
