"""One sentence's tree as SVG: words in rows (each its own `<svg>`), arcs from heads to dependents above them (in
"chain+dependency" mode the chain hangs below), and each fired subtree as a `<g>` in every row it touches: its
matched nodes a bar in its lane under the words, its matched arcs drawn again, thick, in its colour."""
import html
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Set, Tuple

CHAR_WIDTH = 8.4
WORD_PAD = 18
MIN_WORD = 36
LEVEL_HEIGHT = 20
BASE_HEIGHT = 22
MAX_LEVELS = 12
ROW_WIDTH = 860
LANE_HEIGHT = 5
LANE_GAP = 3
POSITIVE = "#1a9850"
NEGATIVE = "#d73027"

Edge = Tuple[int, int, bool]


@dataclass
class Word:
    """A token: its text, its node label (None when the tree skips it) and its dependency label."""

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


def _rows(widths: Sequence[float], row_width: float) -> List[Tuple[int, int]]:
    """The words of each row, [start, end), filled greedily up to `row_width` pixels (a wider word is a row)."""
    rows, start, used = [], 0, 0.0
    for i, width in enumerate(widths):
        if i > start and used + width > row_width:
            rows.append((start, i))
            start, used = i, 0.0
        used += width
    if len(widths):
        rows.append((start, len(widths)))
    return rows


def sentence_svg(words: Sequence[Word], edges: Sequence[Edge], overlays: Sequence[Overlay], *,
                 row_width: float = ROW_WIDTH) -> str:
    """The SVG of one sentence, one `<svg>` per row of words at most `row_width` pixels wide; an arc between rows is
    two halves with the same `data-arc`, leaving at the right edge of one row and entering the next at the left.

    edges (Sequence[Tuple[int, int, bool]]): (head, dependent, below) word positions of the tree's arcs.
    overlays (Sequence[Overlay]): The fired subtrees to draw, in lane order.
    """
    widths = [max(MIN_WORD, CHAR_WIDTH * max(len(w.text), len(_shown_label(w) or "")) + WORD_PAD) for w in words]
    return "".join(_Row(words, widths, start, end, edges, overlays).svg() for start, end in _rows(widths, row_width))


class _Row:
    """The words [start, end) of a sentence: where its arcs, words, labels and lanes go, and its `<svg>`."""

    def __init__(self, words: Sequence[Word], widths: Sequence[float], start: int, end: int, edges: Sequence[Edge],
                 overlays: Sequence[Overlay]) -> None:
        self.words, self.widths, self.start, self.end = words, widths, start, end
        self.centers, x = {}, 8.0
        for i in range(start, end):
            self.centers[i] = x + widths[i] / 2
            x += widths[i]
        self.width = x + 8
        pieces = {edge: self._piece(edge[0], edge[1]) for edge in edges}
        self.pieces = {edge: p for edge, p in pieces.items() if p is not None}
        self.levels = {side: {n: min(i + 1, MAX_LEVELS) for i, n in enumerate(sorted(
            {p[2] for edge, p in self.pieces.items() if edge[2] == side}))} for side in (False, True)}
        above = max(self.levels[False].values(), default=0)
        below_levels = max(self.levels[True].values(), default=0)
        self.shown = [o for o in overlays if any(start <= i < end for i in o.nodes) or any(e in self.pieces for e in o.edges)]
        self.lanes = [o for o in self.shown if any(start <= i < end for i in o.nodes)]
        top = 8 + (0.75 * (BASE_HEIGHT + LEVEL_HEIGHT * (above - 1)) + 14 if above else 0)
        self.y_arc, self.y_word = top + 2, top + 18
        self.y_label = self.y_word + 15
        self.y_lanes = self.y_label + 8
        self.y_under = self.y_lanes + len(self.lanes) * (LANE_HEIGHT + LANE_GAP) + 4
        self.bottom = self.y_under + (0.75 * (BASE_HEIGHT + LEVEL_HEIGHT * (below_levels - 1)) + 8 if below_levels
                                      else 0)

    def _piece(self, head: int, dep: int) -> Optional[Tuple[float, float, int, str]]:
        """Where the arc runs in this row: its left and right x, its length in words for the levels, and whether it
        is "whole", leaves to the right ("out") or comes from the left ("in"); None when it misses the row."""
        left, right = sorted((head, dep))
        if right < self.start or left >= self.end or (left < self.start and right >= self.end):
            return None
        if left >= self.start and right < self.end:
            return self.centers[left], self.centers[right], right - left, "whole"
        if left >= self.start:
            return self.centers[left], self.width, self.end - left, "out"
        return 0.0, self.centers[right], right - self.start + 1, "in"

    def _height(self, edge: Edge) -> float:
        return BASE_HEIGHT + LEVEL_HEIGHT * (self.levels[edge[2]][self.pieces[edge][2]] - 1)

    def _path(self, edge: Edge) -> str:
        x1, x2, _, kind = self.pieces[edge]
        below = edge[2]
        y, h = (self.y_under if below else self.y_arc), self._height(edge)
        sign = 1 if below else -1
        if kind == "whole":
            return f"M{x1:.1f},{y:.1f} C{x1:.1f},{y + sign * h:.1f} {x2:.1f},{y + sign * h:.1f} {x2:.1f},{y:.1f}"
        peak = y + sign * 0.75 * h
        if kind == "out":
            return f"M{x1:.1f},{y:.1f} C{x1:.1f},{y + sign * h:.1f} {(x1 + x2) / 2:.1f},{peak:.1f} {x2:.1f},{peak:.1f}"
        return f"M{x1:.1f},{peak:.1f} C{(x1 + x2) / 2:.1f},{peak:.1f} {x2:.1f},{y + sign * h:.1f} {x2:.1f},{y:.1f}"

    def svg(self) -> str:
        """RETURNS (str): The row's `<svg>` element."""
        height = self.bottom + 6
        parts = [f'<svg class="tb-tree" xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" '
                 f'height="{height:.0f}" viewBox="0 0 {self.width:.0f} {height:.0f}">']
        parts += self._arcs() + self._words() + self._matches()
        parts.append("</svg>")
        return "".join(parts)

    def _arcs(self) -> List[str]:
        parts = []
        for edge in sorted(self.pieces):
            head, dep, below = edge
            x1, x2, _, kind = self.pieces[edge]
            y, h = (self.y_under if below else self.y_arc), self._height(edge)
            parts.append(f'<path class="tb-arc" data-arc="{head}-{dep}" d="{self._path(edge)}"/>')
            if not self.start <= dep < self.end:
                continue
            xd, wing = self.centers[dep], y + (7 if below else -7)
            parts.append(f'<path class="tb-arrow" d="M{xd - 3:.1f},{wing:.1f} L{xd:.1f},{y:.1f} '
                         f'L{xd + 3:.1f},{wing:.1f}"/>')
            if self.words[dep].dep:
                ly = y + (0.75 * h + 10 if below else -0.75 * h - 3)
                lx = (x1 + x2) / 2 if kind == "whole" else xd
                parts.append(f'<text class="tb-dep" x="{lx:.1f}" y="{ly:.1f}">{html.escape(self.words[dep].dep)}</text>')
        return parts

    def _words(self) -> List[str]:
        parts = []
        for i in range(self.start, self.end):
            w, x = self.words[i], self.centers[i]
            cls = "tb-word" if w.label is not None else "tb-word tb-skipped"
            parts.append(f'<text class="{cls}" x="{x:.1f}" y="{self.y_word:.1f}">{html.escape(w.text)}</text>')
            label = _shown_label(w)
            if label:
                parts.append(f'<text class="tb-label" x="{x:.1f}" y="{self.y_label:.1f}">{html.escape(label)}</text>')
        return parts

    def _matches(self) -> List[str]:
        parts = []
        for overlay in self.shown:
            style = f'stroke:{overlay.color};fill:{overlay.color};opacity:{overlay.strength:.3f}'
            parts.append(f'<g class="tb-match" data-subtree="{overlay.key}" '
                         f'data-pattern="{html.escape(overlay.pattern)}" '
                         f'data-contribution="{overlay.contribution!r}" style="{style}">'
                         f'<title>{html.escape(overlay.pattern)} {overlay.contribution:+.4f}</title>')
            for edge in sorted(e for e in overlay.edges if e in self.pieces):
                parts.append(f'<path class="tb-hit-arc" data-arc="{edge[0]}-{edge[1]}" d="{self._path(edge)}"/>')
            if overlay in self.lanes:
                y = self.y_lanes + self.lanes.index(overlay) * (LANE_HEIGHT + LANE_GAP)
                for i in sorted(i for i in overlay.nodes if self.start <= i < self.end):
                    parts.append(f'<rect class="tb-hit-node" x="{self.centers[i] - self.widths[i] / 2 + 3:.1f}" '
                                 f'y="{y:.1f}" width="{self.widths[i] - 6:.1f}" height="{LANE_HEIGHT}" rx="2"/>')
            parts.append("</g>")
        return parts


def _shown_label(word: Word) -> Optional[str]:
    """The node label when it says more than the word itself."""
    if word.label is None or word.label in (word.text, word.text.lower()):
        return None
    return word.label
