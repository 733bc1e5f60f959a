"""Render a treeboost explanation as HTML and take a screenshot with headless Chromium.

    python bench/explain_screenshot.py MODEL_DIR "some text" docs/explain.png

MODEL_DIR is a trained pipeline (e.g. training/chain/model-best from the README's quick start).
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import spacy

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>
body {{ font-family: 'DejaVu Sans', sans-serif; margin: 24px; font-size: 18px; }}
table {{ border-collapse: collapse; margin-top: 16px; font-size: 14px; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: left; }}
h3 {{ margin: 0 0 8px 0; }}
</style></head><body><h3>{title}</h3>{body}</body></html>"""


def main() -> None:
    model, text, target = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    nlp = spacy.load(model)
    doc = nlp(text)
    pipe = nlp.get_pipe("treeboost_textcat")
    label = pipe._learner.rules_.heads[0]
    cats = ", ".join(f"{k} {v:.2f}" for k, v in doc.cats.items())
    html = PAGE.format(title=f"Rules for {label} (doc.cats: {cats})", body=pipe.explain_html(doc, label))
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "explain.html"
        page.write_text(html, encoding="utf8")
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--screenshot={target.resolve()}", "--window-size=1000,400", page.as_uri()],
                       check=True, capture_output=True)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
