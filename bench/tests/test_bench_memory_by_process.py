"""The memory-by-process benchmark's parsing, ratios, acceptance and extrapolation, on canned logs and records (no
process started)."""
import pytest

from bench import bench_memory_by_process as bench

SHARD_LOG = """INFO spacy_treeboost.learning.shard_files: mining the subtrees of up to 3 nodes in 1000 trees ...
bench-memory: worker 101 after read peak_kib 50000 rss_kib 40000
bench-memory: worker 102 after read peak_kib 60000 rss_kib 40000
bench-memory: worker 101 after mine peak_kib 150000 rss_kib 90000
bench-memory: worker 102 after mine peak_kib 140000 rss_kib 90000
INFO shard_files: kept 5000 subtrees of 1000 documents (training process's peak RSS 180.5 MB); building the shards
bench-memory: worker 101 after build peak_kib 200000 rss_kib 190000
bench-memory: worker 102 after build peak_kib 210000 rss_kib 190000
INFO spacy_treeboost.learning.shard_files: 4 shard files on 2 workers on 1 node(s)
INFO spacy_treeboost.learning.shard_files: peak RSS (MB): training process 300.0, workers 400.5, 350.0
learned 5000 rules over 5000 distinct subtrees (+1: presence, C=0.1) -> model.bin
model: 5,000 rules, 1.25 MB (12.0 % of the training files)
phases (CPU s): {"read": 0.0, "mine": 0.5, "fit": 6.8, "rules": 0.1, "write": 0.1}
bench-memory: driver end peak_kib 320000
"""
ONE_LOG = """learned 300 rules over 300 distinct subtrees (+1: presence, C=0.1) -> one.bin
model: 300 rules, 0.01 MB (0.1 % of the training file)
bench-memory: driver end peak_kib 500000
"""


def test_a_shard_log_gives_every_process_peak_in_bytes():
    got = bench.parse_learn_log(SHARD_LOG, sharded=True)
    assert got["driver_end_bytes"] == 320000 * 1024
    assert got["driver_after_fits_bytes"] == 300_000_000 and got["driver_after_merge_bytes"] == 180_500_000
    assert got["workers_bytes"] == [400_500_000, 350_000_000]
    assert got["kept_subtrees"] == 5000 and got["n_docs"] == 1000 and got["rules"] == 5000
    assert got["worker_phases_bytes"] == [{"read": 50000 * 1024, "mine": 150000 * 1024, "build": 200000 * 1024},
                                          {"read": 60000 * 1024, "mine": 140000 * 1024, "build": 210000 * 1024}]
    assert "ray_nodes" not in got
    ray = bench.parse_learn_log(SHARD_LOG + "2 shard holders on 2 Ray node(s): ab, cd\n", sharded=True)
    assert ray["ray_nodes"] == 2


def test_a_one_process_log_and_workers_in_this_process():
    assert bench.parse_learn_log(ONE_LOG, sharded=False) == {"driver_end_bytes": 500000 * 1024, "rules": 300}
    here = SHARD_LOG.replace("workers 400.5, 350.0", "workers in this process")
    assert bench.parse_learn_log(here, sharded=True)["workers_bytes"] == []


@pytest.mark.parametrize("line, names", [
    ("peak RSS (MB): training process", "peak RSS (MB): training process X"),
    ("bench-memory: driver end", "driver end peak_kib"),
    ("model: 5,000 rules", "model: N rules"),
])
def test_a_missing_line_fails_naming_it(line, names):
    text = "\n".join(x for x in SHARD_LOG.splitlines() if line not in x)
    with pytest.raises(bench.LogFormatError, match=names.replace("(", r"\(").replace(")", r"\)")):
        bench.parse_learn_log(text, sharded=True)


def test_fit_line_and_split_lines():
    a, b = bench.fit_line([(100, 1100.0), (400, 2300.0)])
    assert a == pytest.approx(700.0) and b == pytest.approx(4.0)
    assert bench.fit_line([(100, 500.0), (100, 700.0)]) == (0.0, 6.0)
    assert bench.split_lines(10, 4) == [0, 2, 5, 8, 10]
    assert bench.split_lines(3, 3) == [0, 1, 2, 3]


def run(backend, workers, driver, worker_peaks=(), sha="s", tree=None):
    row = {"backend": backend, "workers": workers, "repeat": 0, "cpu_seconds": 10.0, "wall_seconds": 20.0,
           "tree_peak_bytes": tree if tree is not None else driver, "driver_end_bytes": driver,
           "model_bytes": 1000, "model_sha256": sha, "rules": 10, "accuracy": 0.8}
    if backend != "one":
        row.update(workers_bytes=list(worker_peaks), driver_after_fits_bytes=driver,
                   driver_after_merge_bytes=driver // 2,
                   worker_phases_bytes=[{"read": 1, "mine": 2, "build": 3}])
    return row


def record(n, one, cells, shards=16):
    runs = [run("one", 1, one, sha="one")]
    runs += [run(backend, w, d, peaks) for backend, w, d, peaks in cells]
    return {"n": n, "shards": shards, "runs": runs, "provenance": {"commit": "abc", "machine": "m"}, "partial": False}


def test_ratios_acceptance_and_model_bytes():
    rec = record(1000, 1000, [("processes", 4, 200, [300, 350, 340, 100]), ("processes", 2, 400, [500, 700]),
                              ("ray", 2, 250, [550, 560])])
    by = {(c["backend"], c["workers"]): c for c in bench.cells(rec)}
    assert by[("processes", 4)]["worker_ratio"] == 0.35 and by[("processes", 4)]["driver_ratio"] == 0.2
    assert by[("processes", 4)]["worker_peaks"] == [350, 340, 300, 100]
    verdicts = {(a["backend"], a["workers"]): (a["worker_met"], a["driver_met"]) for a in bench.acceptance(rec)}
    assert verdicts == {("processes", 4): (True, True), ("processes", 2): (False, False), ("ray", 2): (True, True)}
    assert bench.same_models(rec) == {"shard_digests": ["s"], "one_process_same": False}
    rec["runs"][-1]["model_sha256"] = "other"
    assert len(bench.same_models(rec)["shard_digests"]) == 2


def test_a_failed_run_is_a_cell_with_its_error():
    rec = record(1000, 1000, [("processes", 2, 400, [500, 700])])
    figures = bench.partial_figures("\n".join(SHARD_LOG.splitlines()[:6]))
    assert figures == {"kept_subtrees": 5000, "driver_after_merge_bytes": 180_500_000,
                       "worker_after_read_bytes": 60000 * 1024, "worker_after_mine_bytes": 150000 * 1024}
    rec["runs"].append({"backend": "processes", "workers": 1, "repeat": 0, "error": "exit 1: MemoryError",
                        "before_the_end": figures})
    rec["runs"].append({"backend": "processes", "workers": 4, "repeat": 0, "error": "stopped: 10.1 GB"})
    by = {(c["backend"], c["workers"]): c for c in bench.cells(rec)}
    assert by[("processes", 1)]["error"] == "exit 1: MemoryError"
    assert bench.verdicts(rec).startswith("processes 4: **not measured** (stopped: 10.1 GB); processes 2: worker 0.70")
    assert "failed: exit 1: MemoryError (kept subtrees" not in bench.render({"command": "c", "sizes": [rec]})
    assert "failed: exit 1: MemoryError (driver after merge 180 MB, worker after read 61 MB" in bench.render(
        {"command": "c", "sizes": [rec]})


def test_the_extrapolation_separates_the_fixed_part_and_the_part_per_document():
    # workers: 100 MB + 1,000 B per document held; training process: 50 MB + 100 B per document
    small = record(100_000, 10**9, [("processes", w, 50e6 + 100 * 100_000, [100e6 + 1000 * 100_000 / w] * w)
                                    for w in (1, 2)])
    large = record(400_000, 4 * 10**9, [("processes", w, 50e6 + 100 * 400_000, [100e6 + 1000 * 400_000 / w] * w)
                                        for w in (1, 2)])
    ext = bench.extrapolate([small, large], 2_300_000, 2.5, 8)
    assert ext["equivalent_docs"] == 5_750_000 and ext["sizes"] == [100_000, 400_000]
    assert ext["worker"]["fixed_bytes"] == pytest.approx(100e6)
    assert ext["worker"]["bytes_per_doc"] == pytest.approx(1000)
    assert ext["worker"]["bytes"] == pytest.approx(100e6 + 1000 * 5_750_000 / 8)
    assert ext["driver"]["bytes"] == pytest.approx(50e6 + 100 * 5_750_000)
    assert ext["one"]["bytes_per_doc"] == pytest.approx(10_000)
    assert ext["head_node_bytes"] == pytest.approx(ext["driver"]["bytes"] + ext["worker"]["bytes"])
    page = bench.render({"command": "python -m bench.bench_memory_by_process", "sizes": [small, large],
                         "extrapolation": ext})
    assert "100 MB + 1,000 B x 718,750 = **0.8 GB**" in page
    assert "python -m bench.bench_memory_by_process" in page.splitlines()[2]
    assert len(page.splitlines()) <= 70 and "Partial" not in page
    large["partial"] = True
    assert "**Partial**" in bench.render({"command": "c", "sizes": [small, large]})
