"""Draw the explanation of a text (its sentence trees with the fired subtrees) and take a screenshot with
headless Chromium, offline.

    python -m bench.explain_screenshot MODEL_DIR "some text" docs/explain.png [--label L] [--size 1100x440]

MODEL_DIR is a trained pipeline (e.g. training/chain/model-best from the README's quick start).
"""
import argparse
import sys
import tempfile
from pathlib import Path

import spacy

from spacy_treeboost.visualize import explanation_view, find_textcat
from bench.browser import screenshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("text")
    parser.add_argument("target", type=Path)
    parser.add_argument("--label", default=None)
    parser.add_argument("--size", default="1100x440", help="window WIDTHxHEIGHT in pixels")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    nlp = spacy.load(args.model)
    view = explanation_view(find_textcat(nlp), nlp(args.text), args.label)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "explain.html"
        view.to_disk(page)
        console = screenshot(page, args.target, width=width, height=height)
    if console:
        sys.exit(f"the page logged to the console: {console}")
    print(f"wrote {args.target}")


if __name__ == "__main__":
    main()
