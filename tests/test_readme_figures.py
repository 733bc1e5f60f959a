"""The accuracy figures of the README and the documentation pages come from the generated results they link to,
not from memory."""
import json
import re
from pathlib import Path
from typing import Set

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\((?:docs/)?((?:partial_\w+/)?)results_linear\.md\)")
PERCENT = re.compile(r"(?<![\d.])(\d{2}\.\d{2}) %")


def reported(folder: str) -> Set[str]:
    """Every accuracy of the report in docs/<folder>: test means, pooled and dev means, as `NN.NN`."""
    data = json.loads((ROOT / "docs" / folder / "results_linear.json").read_text(encoding="utf8"))  # folder "" is docs/
    out = set()
    for corpus in data["corpora"].values():
        for summary in corpus["summary"].values():
            for key in ("accuracy", "pooled", "dev"):
                value = summary.get(key)
                value = value.get("mean") if isinstance(value, dict) else value
                if isinstance(value, (int, float)):
                    out.add(f"{100 * value:.2f}")
    return out


PAGES = ["README.md"] + [f"docs/{name}" for name in ("settings.md", "parser.md", "performance.md", "training.md")]


def test_every_percentage_beside_a_results_link_is_in_that_report():
    text = "\n\n".join((ROOT / page).read_text(encoding="utf8") for page in PAGES)
    paragraphs = re.split(r"\n\s*\n", text)
    checked = 0
    for paragraph in paragraphs:
        for line in paragraph.splitlines() if paragraph.startswith("|") else [paragraph]:
            folders = set(LINK.findall(line))
            if not folders:
                continue
            known = set().union(*(reported(f) for f in folders))
            for figure in PERCENT.findall(line):
                assert figure in known, f"README figure {figure} % is in none of {sorted(folders)}: {line[:200]}"
                checked += 1
    assert checked >= 8


def test_every_ratio_of_the_scale_out_page_is_in_the_generated_scale_report():
    page = (ROOT / "docs" / "scale_out.md").read_text(encoding="utf8")
    names = ("bench_scale.md", "bench_apply.md", "bench_memory_by_process.md")
    reports = {name: (ROOT / "docs" / name).read_text(encoding="utf8") for name in names}
    ratios = re.findall(r"(?<![\d.])(\d+\.\d\d)×", page)
    assert len(ratios) >= 8
    for ratio in ratios:  # as "0.61x" in the scale reports, as a table cell "0.26 " in the memory report
        assert any(re.search(rf"(?<![\d.]){re.escape(ratio)}[x ]", report) for report in reports.values()), \
            f"docs/scale_out.md: {ratio}× is in none of {sorted(reports)}"
