"""Explanations: which rules fired for a document, and where their subtrees occur in the text."""
import html
from typing import Any, Dict, List, Sequence, Set

import numpy

from .rules import RuleSet
from ..trees.forest import Forest


def fired_rules(rules: RuleSet, forest: Forest, doc_index: int = 0) -> List[Dict[str, Any]]:
    """The rules of every head whose subtree occurs in one document of `forest`.

    RETURNS (List[Dict[str, Any]]): Entries with label, rule index, pattern, code,
        count, threshold z, score and contribution, most influential first per label.
    """
    out = []
    for head, label in enumerate(rules.heads):
        entries = rules.contributions(forest, doc_index, head)
        for e in sorted(entries, key=lambda e: -abs(e["contribution"])):
            out.append({"label": label, **e})
    return out


def embeddings(code: Sequence, labels: Sequence[str], parents: numpy.ndarray) -> List[List[int]]:
    """All embeddings of a pattern code in one tree, as lists of node indices in pattern preorder.

    code (Sequence[Tuple[int, str]]): The pattern's (depth, label) pairs.
    labels (Sequence[str]): The tree's node labels in preorder.
    parents (numpy.ndarray): The tree's local parent indices.
    """
    n = len(labels)
    children: List[List[int]] = [[] for _ in range(n)]
    for v in range(1, n):
        children[int(parents[v])].append(v)
    partial = [[v] for v in range(n) if labels[v] == code[0][1]]
    for k in range(1, len(code)):
        depth, label = code[k]
        path: List[int] = []
        for j in range(k):
            del path[code[j][0]:]
            path.append(j)
        grown = []
        for emb in partial:
            parent = emb[path[depth - 1]]
            last_sibling = emb[path[depth]] if depth < len(path) else -1
            for c in children[parent]:
                if c > last_sibling and labels[c] == label:
                    grown.append(emb + [c])
        partial = grown
    return partial


def by_subtree(explanation: List[Dict[str, Any]], label: str) -> List[Dict[str, Any]]:
    """Fired rules of one label grouped by subtree: total contribution and number of rules."""
    groups: Dict[str, Dict[str, Any]] = {}
    for e in explanation:
        if e["label"] != label:
            continue
        g = groups.setdefault(e["pattern"], {"pattern": e["pattern"], "code": e["code"], "count": e["count"],
                                             "rules": 0, "contribution": 0.0})
        g["rules"] += 1
        g["contribution"] += e["contribution"]
    return sorted(groups.values(), key=lambda g: -abs(g["contribution"]))


def group_by_subtree(explanation: List[Dict[str, Any]], labels: Sequence[str]) -> List[Dict[str, Any]]:
    """Fired rules grouped by label and subtree, in the order of `labels`; see `by_subtree`."""
    return [{"label": label, **g} for label in labels for g in by_subtree(explanation, label)]


def render_html(doc, explanation: List[Dict[str, Any]], node_tokens: numpy.ndarray,
                node_labels: Sequence[str], parents: numpy.ndarray, label: str, *, max_rows: int = 12) -> str:
    """An HTML fragment that marks, in the text, the tokens of the subtrees of `label`'s fired rules.

    Rules are grouped by subtree. Each marked token carries the subtrees that
    cover it (`data-subtrees`); a net positive contribution is green, negative
    red. A table lists the `max_rows` most influential subtrees.
    """
    rows = by_subtree(explanation, label)[:max_rows]
    covering: Dict[int, Set[int]] = {}
    for i, g in enumerate(rows):
        for emb in embeddings(g["code"], node_labels, parents):
            for node in emb:
                tok = int(node_tokens[node])
                if tok >= 0:
                    covering.setdefault(tok, set()).add(i)
    parts = ['<div class="treeboost-explain" data-label="%s">' % html.escape(label),
             '<p class="treeboost-label">Subtrees of the rules that fired for the label <strong>%s</strong>: green '
             'pushes towards it, red away from it.</p>' % html.escape(label),
             '<p class="treeboost-text">']
    for tok in doc:
        text = html.escape(tok.text)
        if tok.i in covering:
            ids = sorted(covering[tok.i])
            total = sum(rows[i]["contribution"] for i in ids)
            polarity = "pos" if total >= 0 else "neg"
            color = "#c8f0c8" if total >= 0 else "#f6c6c6"
            title = "; ".join(f"{rows[i]['pattern']} {rows[i]['contribution']:+.3f}" for i in ids)
            parts.append(
                f'<mark class="treeboost-{polarity}" data-subtrees="{",".join(map(str, ids))}" '
                f'title="{html.escape(title)}" style="background:{color};padding:0 2px;border-radius:3px">{text}</mark>')
        else:
            parts.append(text)
        parts.append(html.escape(tok.whitespace_))
    parts.append("</p>")
    parts.append('<table class="treeboost-rules"><tr><th>#</th><th>subtree</th><th>count</th><th>rules</th>'
                 '<th>contribution</th></tr>')
    for i, g in enumerate(rows):
        parts.append(f'<tr data-subtree="{i}"><td>{i}</td><td><code>{html.escape(g["pattern"])}</code></td>'
                     f'<td>{g["count"]}</td><td>{g["rules"]}</td><td>{g["contribution"]:+.4f}</td></tr>')
    parts.append("</table></div>")
    return "".join(parts)
