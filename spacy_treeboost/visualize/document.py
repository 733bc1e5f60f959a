"""The document view: a doc's sentence trees with the subtrees that fired for one label drawn on them,
and the decomposition of the label's margin (bias + subtrees = score -> probability)."""
import html
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from spacy.tokens import Doc

from ..learning.classifier import cats_from_margins
from ..models.explain import EmbeddingTable
from ..trees.forest import DEPENDENCY_VIEW_PREFIX
from .trees import Overlay, Word, sentence_svg

DEFAULT_MAX_SUBTREES = 12


@lru_cache(maxsize=None)
def asset(name: str) -> str:
    """The text of a style sheet or script of `assets/`."""
    return (Path(__file__).parent / "assets" / name).read_text(encoding="utf8")


def standalone(title: str, body: str, css: str, js: str = "") -> str:
    """A whole HTML page with its style and script inlined; it loads nothing from the network."""
    script = f"<script>{js}</script>" if js else ""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{css}</style></head>"
            f"<body>{body}{script}</body></html>\n")


def head_bias(rules: Any, head: int) -> float:
    """The part of a head's margin that no subtree changes: its intercept, plus for stumps every rule's absent
    score (from which contributions are measured)."""
    bias = float(rules.intercepts[head])
    if rules.value == "stump":
        bias += float(rules.rule_arrays(head)[3].sum())
    return bias


class ExplanationView:
    """The explanation of one doc for one label: `fragment` is its HTML without style and script."""

    def __init__(self, fragment: str, title: str) -> None:
        self.fragment = fragment
        self.title = title

    def _repr_html_(self) -> str:
        return f"<style>{asset('view.css')}</style>{self.fragment}<script>{asset('view.js')}</script>"

    def page(self) -> str:
        """RETURNS (str): A standalone HTML page (everything inlined, nothing loaded from the network)."""
        return standalone(self.title, self.fragment, asset("view.css"), asset("view.js"))

    def to_disk(self, path: Union[str, Path]) -> None:
        """Write the standalone page to `path`."""
        Path(path).write_text(self.page(), encoding="utf8")


def explanation_view(textcat: Any, doc: Doc, label: Optional[str] = None, *,
                     max_subtrees: int = DEFAULT_MAX_SUBTREES, all_sentences: bool = False) -> ExplanationView:
    """Draw the subtrees that fired for `label` on the sentence trees of a doc processed by the components before the
    trained `textcat` (`TreeBoostTextCategorizer.explain_view`); `label` defaults to the predicted one (for the other
    label of a binary task, the same subtrees with opposite contributions)."""
    if isinstance(max_subtrees, bool) or not isinstance(max_subtrees, int) or max_subtrees < 1:
        raise ValueError(f"max_subtrees={max_subtrees!r} is invalid: use a whole number >= 1 "
                         f"(default {DEFAULT_MAX_SUBTREES}).")
    predictor = textcat._predictor()
    if predictor is None:
        raise ValueError(f"'{textcat.name}' is not trained yet: there is nothing to explain. Train it "
                         "(spacy train) or load a trained pipeline.")
    rules = predictor.rules_
    margins = textcat.predict([doc])
    cats = cats_from_margins(margins, predictor, textcat.labels)[0]
    label = max(textcat.labels, key=lambda name: cats.get(name, 0.0)) if label is None else label
    sign = 1.0
    if label not in rules.heads:
        if len(rules.heads) != 1 or label not in textcat.labels:
            raise ValueError(f"'{textcat.name}' has no rules for label {label!r}: its labels are "
                             f"{list(textcat.labels)}.")
        sign = -1.0
    head = rules.heads.index(label) if sign > 0 else 0
    grouped = [{**g, "label": label, "contribution": sign * g["contribution"]}
               for g in textcat.explain(doc) if g["label"] == rules.heads[head]]
    shown = grouped[:max_subtrees]
    trees = _DocTrees(doc, textcat._spec)
    overlays = trees.overlays(shown)
    parts = [f'<div class="tb-view" data-label="{html.escape(label)}" data-mode="{textcat._spec.tree_mode}">',
             f'<div class="tb-title">Why <strong>{html.escape(label)}</strong>: the subtrees that fired, '
             '<span class="tb-pos">green</span> towards the label, <span class="tb-neg">red</span> away from it. '
             'Hover or select a subtree to see every place it matched.</div><div class="tb-body"><div class="tb-trees">']
    for s, (start, end) in enumerate(trees.sentences):
        drawn = [overlays[s][k] for k in sorted(overlays[s])]
        if drawn or all_sentences:
            parts.append(f'<div class="tb-sentence">{sentence_svg(trees.words[s], sorted(trees.edges[s]), drawn)}</div>')
        else:
            parts.append(f'<p class="tb-plain">{html.escape(doc[start:end].text)}</p>')
    parts.append("</div>")
    parts.append(_margin_table(shown, grouped, sign * head_bias(rules, head), sign * float(margins[0, head]),
                               cats.get(label, 0.0), label))
    parts.append("</div></div>")
    return ExplanationView("".join(parts), f"Why {label}: {doc.text[:60]}")


class _DocTrees:
    """A doc's sentence trees as drawn: per sentence its words (with node and dependency labels) and arcs."""

    def __init__(self, doc: Doc, spec: Any) -> None:
        self.node_labels, self.parents, self.tokens = spec.node_labels(doc)
        self.dep_view = spec.doc_parts(doc)[3]
        self.below_view = spec.tree_mode == "chain+dependency"
        sents = doc.sents if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else [doc[:]]
        self.sentences = [(s.start, s.end) for s in sents] if len(doc) else []
        self.where = {t: (s, t - start) for s, (start, end) in enumerate(self.sentences) for t in range(start, end)}
        self.words: List[List[Word]] = [[Word(doc[t].text, None) for t in range(a, b)] for a, b in self.sentences]
        self.edges: List[set] = [set() for _ in self.sentences]
        has_dep = spec.tree_mode != "chain" and doc.has_annotation("DEP")
        for v in range(1, len(self.node_labels)):
            t = int(self.tokens[v])
            s, i = self.where[t]
            in_dep_view = self.dep_view is not None and bool(self.dep_view[v])
            if self.words[s][i].label is None or not in_dep_view:
                text = self.node_labels[v]
                self.words[s][i].label = text[len(DEPENDENCY_VIEW_PREFIX):] if in_dep_view else text
            if has_dep and (self.dep_view is None or in_dep_view):
                self.words[s][i].dep = doc[t].dep_
            e = self.edge(int(self.parents[v]), v) if self.parents[v] >= 0 else None
            if e is not None:
                self.edges[e[0]].add(e[1])

    def edge(self, parent: int, child: int) -> Optional[Tuple[int, Tuple[int, int, bool]]]:
        """The sentence and the drawn arc (head, dependent, below) of a tree arc; None across sentences."""
        tp, tc = int(self.tokens[parent]), int(self.tokens[child])
        if tp < 0 or tc < 0 or self.where[tp][0] != self.where[tc][0]:
            return None
        below = self.below_view and not bool(self.dep_view[child])
        return self.where[tc][0], (self.where[tp][1], self.where[tc][1], below)

    def overlays(self, shown: List[Dict[str, Any]]) -> List[Dict[int, Overlay]]:
        """Per sentence, the matches of each shown subtree that touches it, by the subtree's rank."""
        largest = max((abs(g["contribution"]) for g in shown), default=0.0) or 1.0
        overlays: List[Dict[int, Overlay]] = [{} for _ in self.sentences]
        for k, g in enumerate(shown):
            table = EmbeddingTable(g["code"], self.node_labels, self.parents)
            strength = 0.35 + 0.65 * abs(g["contribution"]) / largest

            def overlay(s: int) -> Overlay:
                return overlays[s].setdefault(k, Overlay(k, g["pattern"], g["contribution"], strength))

            for v in table.covered_nodes():
                t = int(self.tokens[v])
                if t >= 0:
                    overlay(self.where[t][0]).nodes.add(self.where[t][1])
            for parent, child in table.covered_arcs():
                e = self.edge(parent, child)
                if e is not None:
                    overlay(e[0]).edges.add(e[1])
        return overlays


def _margin_table(shown: List[Dict[str, Any]], grouped: List[Dict[str, Any]], bias: float, score: float,
                  probability: float, label: str) -> str:
    rest = grouped[len(shown):]
    rows = ['<table class="tb-margin"><caption>bias + subtrees = score &rarr; probability</caption>'
            '<tr><th></th><th>subtree</th><th>count</th><th>contribution</th></tr>',
            f'<tr class="tb-sum"><td></td><td>bias</td><td></td><td>{bias:+.4f}</td></tr>']
    for k, g in enumerate(shown):
        cls = "tb-pos" if g["contribution"] >= 0 else "tb-neg"
        rows.append(f'<tr class="tb-row" tabindex="0" data-subtree="{k}" data-pattern="{html.escape(g["pattern"])}" '
                    f'data-contribution="{g["contribution"]!r}"><td><span class="tb-swatch {cls}"></span></td>'
                    f'<td><code>{html.escape(g["pattern"])}</code></td><td>{g["count"]}</td>'
                    f'<td>{g["contribution"]:+.4f}</td></tr>')
    if rest:
        rows.append(f'<tr class="tb-sum"><td></td><td>{len(rest)} other subtrees</td><td></td>'
                    f'<td>{sum(g["contribution"] for g in rest):+.4f}</td></tr>')
    total = bias + sum(g["contribution"] for g in grouped)
    rows.append(f'<tr class="tb-total" data-score="{score!r}"><td></td><td>score (margin)</td><td></td>'
                f'<td>{total:+.4f}</td></tr>')
    rows.append(f'<tr class="tb-total" data-probability="{probability!r}"><td></td><td>P({html.escape(label)})</td>'
                f'<td></td><td>{probability:.4f}</td></tr></table>')
    return "".join(rows)


def find_textcat(pipeline: Any, name: Optional[str] = None) -> Any:
    """The treeboost_textcat component of a pipeline (by name, or the first one), or the component itself."""
    if getattr(pipeline, "factory", None) == "treeboost_textcat":
        return pipeline
    names = [n for n, p in pipeline.pipeline if getattr(p, "factory", None) == "treeboost_textcat"]
    if name is not None:
        if name not in names:
            raise ValueError(f"The pipeline has no treeboost_textcat component named {name!r}; it has {names or 'none'}.")
        return pipeline.get_pipe(name)
    if not names:
        raise ValueError(f"The pipeline ({', '.join(pipeline.pipe_names) or 'empty'}) has no treeboost_textcat "
                         "component to explain.")
    return pipeline.get_pipe(names[0])


def render(doc: Doc, textcat: Any, label: Optional[str] = None, *, page: bool = False,
           jupyter: Optional[bool] = None, max_subtrees: int = DEFAULT_MAX_SUBTREES,
           all_sentences: bool = False) -> Optional[str]:
    """Render `explanation_view` of a processed doc as `displacy.render` renders a parse.

    textcat (Union[Language, TreeBoostTextCategorizer]): The pipeline or its treeboost_textcat component.
    page (bool): A standalone HTML page instead of a fragment.
    jupyter (Optional[bool]): Display in Jupyter; by default when running in a notebook.
    RETURNS (Optional[str]): The HTML, or None when displayed in Jupyter.
    """
    from spacy.util import is_in_jupyter

    view = explanation_view(find_textcat(textcat), doc, label, max_subtrees=max_subtrees,
                            all_sentences=all_sentences)
    if jupyter or (jupyter is None and is_in_jupyter()):
        from IPython.display import HTML, display

        display(HTML(view._repr_html_()))
        return None
    return view.page() if page else view._repr_html_()
