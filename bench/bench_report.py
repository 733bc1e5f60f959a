"""How long the model report of a 1,000,000-rule model takes to write and to show its first screen.

    python -m bench.bench_report                    # 1,000,000 rules, 3 browser loads
    python -m bench.bench_report --rules 100000 --loads 1

A rule set of --rules rules over as many distinct subtrees (word chains of 1-3 words from a
5,000-word vocabulary, weights decreasing like a linear model's) is written to a report page
with the default top 300 subtrees per label. Then headless Chromium (offline) loads the page
--loads times; the page's script records `performance.now()` (milliseconds since navigation
started: reading and parsing the file, the inlined data and the first 50 rows drawn) in
`data-first-screen-ms` once the first screen is built, read back from `--dump-dom`. The wall
time of each Chromium process (browser start included) is given too. Writes
docs/bench_report.json, or --output.
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from spacy_treeboost.models.rules import RuleSet
from bench.browser import find_chromium, load_page
from spacy_treeboost.visualize.report import DEFAULT_TOP, rule_report

VOCABULARY = 5_000


def synthetic_rules(n_rules: int) -> RuleSet:
    """n_rules rules, one per distinct subtree, largest |weight| first (as the linear learner lists them)."""
    rules = RuleSet(["POS"], algorithm="linear-nb")
    for i in range(n_rules):
        a, b, c = i % VOCABULARY, (i // VOCABULARY) % VOCABULARY, i // (VOCABULARY * VOCABULARY)
        if i < VOCABULARY:
            code = ((0, f"w{a}"),)
        elif i < VOCABULARY * VOCABULARY:
            code = ((0, f"w{a}"), (1, f"w{b}"))
        else:
            code = ((0, f"w{a}"), (1, f"w{b}"), (2, f"w{c}"))
        rules.add(0, code, 1, (-1) ** i * 2.0 / (1.0 + i) ** 0.5, 0.0)
    rules.intercepts[0] = -0.01
    return rules


def chromium_version() -> str:
    result = subprocess.run([find_chromium(), "--version"], capture_output=True, text=True)
    return result.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=1_000_000)
    parser.add_argument("--top", type=int, default=DEFAULT_TOP)
    parser.add_argument("--loads", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "bench_report.json")
    args = parser.parse_args()
    if find_chromium() is None:
        sys.exit("no Chromium binary on PATH (Debian: apt-get install chromium)")
    start = time.perf_counter()
    rules = synthetic_rules(args.rules)
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    page = rule_report(rules, title=f"{args.rules:,} synthetic rules", top=args.top)
    write_s = time.perf_counter() - start
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.html"
        path.write_text(page, encoding="utf8")
        for _ in range(args.loads):
            start = time.perf_counter()
            run = load_page(path)
            wall = time.perf_counter() - start
            if run.console:
                sys.exit(f"the page logged to the console: {run.console}")
            first = float(re.search(r'data-first-screen-ms="([\d.]+)"', run.dom).group(1))
            rows = run.dom.count("data-weight=")
            loads.append({"first_screen_ms": first, "chromium_wall_s": round(wall, 3), "rows_drawn": rows})
    result = {
        "rules": len(rules), "distinct_subtrees": len(rules.patterns), "top": args.top,
        "page_bytes": len(page.encode("utf8")), "build_rules_s": round(build_s, 3),
        "write_report_s": round(write_s, 3), "loads": loads,
        "first_screen_ms_max": max(l["first_screen_ms"] for l in loads),
        "command": "python -m bench.bench_report" + "".join(f" {a}" for a in sys.argv[1:]),
        "machine": {"nproc": os.cpu_count(), "python": platform.python_version(), "chromium": chromium_version(),
                    "load_average_1min": round(os.getloadavg()[0], 2)},
    }
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
