"""Explanations: which rules fired for a document, and where a subtree occurs in a tree."""
import bisect
from typing import Any, Dict, List, Sequence, Set, Tuple

import numpy

from .rules import RuleSet
from ..trees.forest import Forest


def fired_rules(rules: RuleSet, forest: Forest, doc_index: int = 0) -> List[Dict[str, Any]]:
    """The `RuleSet.contributions` of every head for one document, labelled, most influential first per label."""
    return [{"label": label, **e} for head, label in enumerate(rules.heads)
            for e in sorted(rules.contributions(forest, doc_index, head), key=lambda e: -abs(e["contribution"]))]


class EmbeddingTable:
    """The embeddings of a pattern's code ((depth, label) pairs) in a tree (preorder labels, local parents), counted
    without listing them in O(pattern size x tree size): per pattern node q and tree node v, the embeddings of q's
    subtree mapping q to v, and the children of v that can take each child of q."""

    def __init__(self, code: Sequence, labels: Sequence[str], parents: numpy.ndarray) -> None:
        if not code or code[0][0] != 0:
            raise ValueError(f"The pattern code {code!r} is invalid: it must start at depth 0.")
        self.code = [(int(d), l) for d, l in code]
        self.pattern_children: List[List[int]] = [[] for _ in self.code]
        path: List[int] = []
        for q, (depth, _) in enumerate(self.code):
            if q and not 1 <= depth <= len(path):
                raise ValueError(f"The pattern code {code!r} is invalid: depths must satisfy 1 <= d <= previous + 1.")
            del path[depth:]
            if path:
                self.pattern_children[path[-1]].append(q)
            path.append(q)
        n = len(labels)
        tree_children: List[List[int]] = [[] for _ in range(n)]
        self.tree_parents = [int(p) for p in parents]
        for v in range(1, n):
            tree_children[self.tree_parents[v]].append(v)
        nodes_of: Dict[str, List[int]] = {}
        for v in range(n):
            nodes_of.setdefault(labels[v], []).append(v)
        self.counts: List[Dict[int, int]] = [{} for _ in self.code]
        self.options: Dict[Tuple[int, int], List[List[int]]] = {}
        for q in range(len(self.code) - 1, -1, -1):
            kids = self.pattern_children[q]
            for v in nodes_of.get(self.code[q][1], []):
                if not kids:
                    self.counts[q][v] = 1
                    continue
                ways = [1] + [0] * len(kids)
                options: List[List[int]] = [[] for _ in kids]
                for c in tree_children[v]:
                    for i in range(len(kids), 0, -1):
                        n_sub = self.counts[kids[i - 1]].get(c, 0)
                        if n_sub:
                            ways[i] += ways[i - 1] * n_sub
                            options[i - 1].append(c)
                if ways[-1]:
                    self.counts[q][v] = ways[-1]
                    self.options[(q, v)] = options

    @property
    def total(self) -> int:
        """The number of embeddings of the pattern in the tree."""
        return sum(self.counts[0].values())

    def _bounds(self, q: int, v: int) -> Tuple[List[int], List[int]]:
        """Per child i of q, the first and the last child of v it can take with the other children fitting."""
        options = self.options[(q, v)]
        earliest: List[int] = []
        latest, low, high = [0] * len(options), -1, len(self.tree_parents)
        for opts in options:
            low = opts[bisect.bisect_right(opts, low)]
            earliest.append(low)
        for i in range(len(options) - 1, -1, -1):
            latest[i] = high = options[i][bisect.bisect_left(options[i], high) - 1]
        return earliest, latest

    def covered_nodes(self) -> Set[int]:
        """The tree nodes that at least one embedding uses."""
        return set().union(*self.images())

    def covered_arcs(self) -> Set[Tuple[int, int]]:
        """The tree arcs (parent, child) onto which at least one embedding maps an arc of the pattern."""
        images = self.images()
        return {(self.tree_parents[c], c) for q in range(1, len(self.code)) for c in images[q]}

    def images(self) -> List[Set[int]]:
        """images[q]: the tree nodes that pattern node q takes in at least one embedding."""
        images: List[Set[int]] = [set() for _ in self.code]
        images[0] = set(self.counts[0])
        for q, kids in enumerate(self.pattern_children):
            for v in images[q]:
                if not kids:
                    continue
                earliest, latest = self._bounds(q, v)
                for i, kid in enumerate(kids):
                    low = earliest[i - 1] if i else -1
                    high = latest[i + 1] if i + 1 < len(kids) else len(self.tree_parents)
                    images[kid].update(c for c in self.options[(q, v)][i] if low < c < high)
        return images


def group_by_subtree(explanation: List[Dict[str, Any]], labels: Sequence[str]) -> List[Dict[str, Any]]:
    """Fired rules summed per label (in the order of `labels`) and subtree, by decreasing |contribution|."""
    out = []
    for label in labels:
        groups: Dict[str, Dict[str, Any]] = {}
        for e in explanation:
            if e["label"] == label:
                g = groups.setdefault(e["pattern"], {"label": label, "pattern": e["pattern"], "code": e["code"],
                                                     "count": e["count"], "rules": 0, "contribution": 0.0})
                g["rules"] += 1
                g["contribution"] += e["contribution"]
        out += sorted(groups.values(), key=lambda g: -abs(g["contribution"]))
    return out
