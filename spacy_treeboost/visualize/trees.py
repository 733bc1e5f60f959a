"""One sentence's tree as SVG: words in a row, arcs from heads to dependents, fired subtrees drawn over them.

Arcs above the words are the dependency tree (or the word chain in chain mode); in
"chain+dependency" mode the chain hangs below. Each fired subtree is one `<g>` with
its matched nodes (a bar in the subtree's own lane under the words) and its matched
arcs (the arc drawn again, thick, in the subtree's colour).
"""
import html
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

CHAR_WIDTH = 8.4
WORD_PAD = 18
MIN_WORD = 36
LEVEL_HEIGHT = 20
BASE_HEIGHT = 22
MAX_LEVELS = 12
LANE_HEIGHT = 5
LANE_GAP = 3
POSITIVE = "#1a9850"
NEGATIVE = "#d73027"

Edge = Tuple[int, int, bool]


@dataclass
class Word:
    """A token of the sentence: its text and its node label (None when the tree skips the token)."""

    text: str
    label: Optional[str]
    dep: str = ""


@dataclass
class Overlay:
    """The matches of one fired subtree in one sentence."""

    key: int
    pattern: str
    contribution: float
    strength: float
    nodes: Set[int] = field(default_factory=set)
    edges: Set[Edge] = field(default_factory=set)

    @property
    def color(self) -> str:
        return POSITIVE if self.contribution >= 0 else NEGATIVE


def _attrs(overlay: Overlay) -> str:
    return (f'data-subtree="{overlay.key}" data-pattern="{html.escape(overlay.pattern)}" '
            f'data-contribution="{overlay.contribution!r}"')


def _arc(x1: float, x2: float, y: float, height: float, below: bool) -> str:
    sign = 1 if below else -1
    return f"M{x1:.1f},{y:.1f} C{x1:.1f},{y + sign * height:.1f} {x2:.1f},{y + sign * height:.1f} {x2:.1f},{y:.1f}"


def sentence_svg(words: Sequence[Word], edges: Sequence[Edge], overlays: Sequence[Overlay]) -> str:
    """The SVG of one sentence.

    words (Sequence[Word]): The sentence's tokens in order.
    edges (Sequence[Tuple[int, int, bool]]): (head, dependent, below) word positions of the tree's arcs.
    overlays (Sequence[Overlay]): The fired subtrees to draw, in lane order.
    RETURNS (str): The `<svg>` element.
    """
    widths = [max(MIN_WORD, CHAR_WIDTH * max(len(w.text), len(_shown_label(w) or "")) + WORD_PAD) for w in words]
    centers, x = [], 8.0
    for width in widths:
        centers.append(x + width / 2)
        x += width
    total_width = x + 8
    lengths: Dict[bool, List[int]] = {False: [], True: []}
    for head, dep, below in edges:
        lengths[below].append(abs(head - dep))
    levels = {side: {n: min(i + 1, MAX_LEVELS) for i, n in enumerate(sorted(set(ns)))} for side, ns in lengths.items()}
    above = max(levels[False].values(), default=0)
    below_levels = max(levels[True].values(), default=0)

    def height(head: int, dep: int, below: bool) -> float:
        return BASE_HEIGHT + LEVEL_HEIGHT * (levels[below][abs(head - dep)] - 1)

    top = 8 + (0.75 * (BASE_HEIGHT + LEVEL_HEIGHT * (above - 1)) + 14 if above else 0)
    y_arc = top + 2
    y_word = top + 18
    y_label = y_word + 15
    y_lanes = y_label + 8
    y_under = y_lanes + len(overlays) * (LANE_HEIGHT + LANE_GAP) + 4
    bottom = y_under + (0.75 * (BASE_HEIGHT + LEVEL_HEIGHT * (below_levels - 1)) + 8 if below_levels else 0)

    def arc_y(below: bool) -> float:
        return y_under if below else y_arc

    parts = [f'<svg class="tb-tree" xmlns="http://www.w3.org/2000/svg" width="{total_width:.0f}" '
             f'height="{bottom + 6:.0f}" viewBox="0 0 {total_width:.0f} {bottom + 6:.0f}">']
    for head, dep, below in edges:
        x1, x2 = sorted((centers[head], centers[dep]))
        h = height(head, dep, below)
        y = arc_y(below)
        parts.append(f'<path class="tb-arc" d="{_arc(x1, x2, y, h, below)}"/>')
        xd, wing = centers[dep], y + (7 if below else -7)
        parts.append(f'<path class="tb-arrow" d="M{xd - 3:.1f},{wing:.1f} L{xd:.1f},{y:.1f} L{xd + 3:.1f},{wing:.1f}"/>')
        if words[dep].dep:
            ly = y + (0.75 * h + 10 if below else -0.75 * h - 3)
            parts.append(f'<text class="tb-dep" x="{(x1 + x2) / 2:.1f}" y="{ly:.1f}">{html.escape(words[dep].dep)}</text>')
    for i, w in enumerate(words):
        cls = "tb-word" if w.label is not None else "tb-word tb-skipped"
        parts.append(f'<text class="{cls}" x="{centers[i]:.1f}" y="{y_word:.1f}">{html.escape(w.text)}</text>')
        shown = _shown_label(w)
        if shown:
            parts.append(f'<text class="tb-label" x="{centers[i]:.1f}" y="{y_label:.1f}">{html.escape(shown)}</text>')
    for lane, overlay in enumerate(overlays):
        style = f'stroke:{overlay.color};fill:{overlay.color};opacity:{overlay.strength:.3f}'
        parts.append(f'<g class="tb-match" {_attrs(overlay)} style="{style}">'
                     f'<title>{html.escape(overlay.pattern)} {overlay.contribution:+.4f}</title>')
        for head, dep, below in sorted(overlay.edges):
            x1, x2 = sorted((centers[head], centers[dep]))
            parts.append(f'<path class="tb-hit-arc" d="{_arc(x1, x2, arc_y(below), height(head, dep, below), below)}"/>')
        y = y_lanes + lane * (LANE_HEIGHT + LANE_GAP)
        for i in sorted(overlay.nodes):
            parts.append(f'<rect class="tb-hit-node" x="{centers[i] - widths[i] / 2 + 3:.1f}" y="{y:.1f}" '
                         f'width="{widths[i] - 6:.1f}" height="{LANE_HEIGHT}" rx="2"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _shown_label(word: Word) -> Optional[str]:
    """The node label when it says more than the word itself."""
    if word.label is None or word.label in (word.text, word.text.lower()):
        return None
    return word.label
