"""The experiment runner: subtree boosting (BOW, N-gram, Tree; +FQ, -FQ, BACT) and peers on
movie review polarity, sentence polarity and Reuters-21578 (R8, R10).

    python -m bench.experiments.run [--quick] [--data ../shared/data]

Modules: `config` (the quick and full settings), `data` (corpora, splits, cached parses and
forests), `systems` (every system's fit with dev-chosen settings), `stats` (metrics and
McNemar's test), `rules` (rule examples from a trained model), `report` (results JSON to
docs/results.md and plots), `run` (the entry point).
"""
