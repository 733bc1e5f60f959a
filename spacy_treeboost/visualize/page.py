"""Self-contained HTML: the style sheets and scripts of `assets/` inlined, data embedded as JSON."""
import html
from functools import lru_cache
from pathlib import Path
from typing import Any

import srsly

ASSETS = Path(__file__).parent / "assets"


@lru_cache(maxsize=None)
def asset(name: str) -> str:
    """The text of one file of `assets/`."""
    return (ASSETS / name).read_text(encoding="utf8")


def json_script(element_id: str, data: Any) -> str:
    """A `<script type="application/json">` element holding `data`; "<" is escaped so that no string in
    the data can close the element."""
    text = srsly.json_dumps(data, sort_keys=True).replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def standalone(title: str, body: str, css: str, js: str = "") -> str:
    """A whole HTML page with its style and script inlined; it loads nothing from the network."""
    script = f"<script>{js}</script>" if js else ""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{css}</style></head>"
            f"<body>{body}{script}</body></html>\n")
