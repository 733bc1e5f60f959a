"""Memory by process: the default learner trained from shard files, peak RSS of the training process and of each
worker, against the one-process fit: docs/bench_memory_by_process.{json,md}.

    python -m bench.bench_memory_by_process                  # 128k and 512k (long: run it niced, in the background)
    python -m bench.bench_memory_by_process --sizes 16000 --no-ray --out bench/_out/memory_quick
    python -m bench.bench_memory_by_process --render-only    # rebuild the page from the JSON
    python -m bench.bench_memory_by_process --merge A.json B.json   # sizes run apart, into one page

Workload: the shared generator (`../shared/bench/gen_synth_trees.py --n-train N --n-test 4000 --words 20 --sents 3`,
its default seed) into `bench/_out/words60_N/`, the training file cut into `--shards` files of consecutive lines. At
each size, in turn:

- `learn train.tree MODEL`, the default learner in one process: its whole-process peak RSS is the reference;
- `learn 'shards/*.tree' MODEL --n-workers W --backend processes` for each `--workers` W;
- the same with `--backend ray --ray-address` on a two-node Ray cluster started on 127.0.0.1 by the script (`ray start
  --head` and a second `ray start --address`, 1 CPU each; stopped at the end, also on error) for each `--ray-workers`.

Every `learn` runs as `python -m bench.bench_memory_by_process child learn ...`: the product's CLI with its INFO log on
stderr (the training process's peak RSS once the subtrees are merged and after the fits, every worker's peak), the
training process's own peak at its exit, and, where the workers are forked from it (processes), each worker's peak
after reading, mining and building its matrices. `bench.harness.run_child` measures the whole process: CPU (with
the local worker processes it reaped; Ray actors not counted) and wall. Its peak RSS includes reaped workers', so the
training process's own figure comes from the process itself. Each model's sha256, size and test accuracy
(`classify` on test.tree). Ratios to the one-process peak are checked against the acceptance bounds at the largest
size, and the per-document costs fitted over the sizes are extrapolated to `--target-docs` longer documents.
"""
import argparse
import functools
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from bench.harness import ROOT, generate_corpus, markdown_table, provenance, relative_paths, run_child, self_peak_kib, stamp

OUT = ROOT / "bench" / "_out"
MARK = "bench-memory:"
MB = 1e6
LIMIT_ENV = "BENCH_MEMORY_AS_BYTES"
# (workers, bound on each worker's peak, bound on the training process's peak), as shares of the one-process peak
ACCEPTANCE = ((4, 0.35, 0.25), (2, 0.6, 0.3))
_PEAKS_RE = re.compile(r"peak RSS \(MB\): training process ([0-9.]+), workers (.*)$", re.M)
_MERGED_RE = re.compile(r"kept (\d+) subtrees of (\d+) documents \(training process's peak RSS ([0-9.]+) MB\)")
_END_RE = re.compile(rf"^{MARK} driver end peak_kib (\d+)$", re.M)
_PHASE_RE = re.compile(rf"^{MARK} worker (\d+) after (\w+) peak_kib (\d+) rss_kib (\d+)$", re.M)
_MODEL_RE = re.compile(r"^model: ([0-9,]+) rules, ([0-9.]+) MB", re.M)
_HOLDERS_RE = re.compile(r"(\d+) shard holders on (\d+) Ray node")
_ACCURACY_RE = re.compile(r"accuracy ([0-9.]+) \((\d+)/(\d+)\)")


class LogFormatError(RuntimeError):
    """A `learn` log without a line this benchmark reads."""


# ---------------------------------------------------------------- the child: the CLI with its log and phase peaks

def _rss_kib() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return 0


def _after(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        os.write(2, f"{MARK} worker {os.getpid()} after {name} peak_kib {self_peak_kib()} rss_kib {_rss_kib()}\n"
                 .encode())
        return out
    return wrapped


def child_main(argv: List[str]) -> None:
    """Run `python -m spacy_treeboost ARGV` with the product's INFO log on stderr, the shard-file workers' peaks
    after each phase (a worker forked from this process inherits the wrapped methods; a missing one is skipped),
    and this process's own peak RSS at its exit. With $BENCH_MEMORY_AS_BYTES set, this process and its forked
    workers have that address-space limit (a run past it fails with a MemoryError instead of crowding the
    machine)."""
    import logging
    import resource

    limit = int(os.environ.get(LIMIT_ENV) or 0)
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("spacy_treeboost").setLevel(logging.INFO)
    try:
        from spacy_treeboost.learning import shard_files
        worker = getattr(shard_files, "ShardFileWorker", None)
    except ImportError:
        worker = None
    for name in ("read", "mine", "build"):
        if callable(getattr(worker, name, None)):
            setattr(worker, name, _after(getattr(worker, name), name))
    from spacy_treeboost.cli import main as cli

    sys.argv = ["spacy_treeboost", *argv]
    code: Any = 0
    try:
        cli()
    except SystemExit as end:
        code = end.code
    finally:
        os.write(2, f"{MARK} driver end peak_kib {self_peak_kib()}\n".encode())
    raise SystemExit(code)


# ---------------------------------------------------------------- parsing (pure: tested on canned logs)

def parse_learn_log(text: str, sharded: bool) -> Dict[str, Any]:
    """The figures of one `learn` run's stderr, in bytes: the training process's peak at its end (and, from shard
    files, once merged and after the fits), every worker's peak, each forked worker's peak after each phase, the
    rules and model size; a LogFormatError naming a required line that is missing."""
    out: Dict[str, Any] = {}
    m = _END_RE.search(text)
    if not m:
        raise LogFormatError(f"the learn log has no '{MARK} driver end peak_kib N' line: the child did not run "
                             "through bench_memory_by_process's child mode")
    out["driver_end_bytes"] = int(m.group(1)) * 1024
    m = _MODEL_RE.search(text)
    if not m:
        raise LogFormatError("the learn log has no 'model: N rules, X MB' line: did the learn command's summary "
                             "change?")
    out["rules"] = int(m.group(1).replace(",", ""))
    if not sharded:
        return out
    m = _PEAKS_RE.search(text)
    if not m:
        raise LogFormatError("the learn log has no INFO line 'peak RSS (MB): training process X, workers A, B, ...' "
                             "(shard_files.fit_files): did its wording change?")
    out["driver_after_fits_bytes"] = round(float(m.group(1)) * MB)
    workers = m.group(2).strip()
    out["workers_bytes"] = ([] if workers.startswith("in this process") else
                            [round(float(w) * MB) for w in workers.split(",") if w.strip()])
    m = _MERGED_RE.search(text)
    if m:
        out["kept_subtrees"], out["n_docs"] = int(m.group(1)), int(m.group(2))
        out["driver_after_merge_bytes"] = round(float(m.group(3)) * MB)
    m = _HOLDERS_RE.search(text)
    if m:
        out["ray_nodes"] = int(m.group(2))
    phases: Dict[str, Dict[str, int]] = {}
    for pid, phase, peak, _ in _PHASE_RE.findall(text):
        phases.setdefault(pid, {})[phase] = int(peak) * 1024
    out["worker_phases_bytes"] = list(phases.values())
    return out


def partial_figures(text: str) -> Dict[str, Any]:
    """What a run that did not finish logged: the training process's peak once merged, the workers' peaks after
    their phases (bytes)."""
    out: Dict[str, Any] = {}
    m = _MERGED_RE.search(text)
    if m:
        out["kept_subtrees"], out["driver_after_merge_bytes"] = int(m.group(1)), round(float(m.group(3)) * MB)
    for _, phase, peak, _ in _PHASE_RE.findall(text):
        out[f"worker_after_{phase}_bytes"] = max(out.get(f"worker_after_{phase}_bytes", 0), int(peak) * 1024)
    return out


def parse_accuracy(text: str) -> Optional[float]:
    m = _ACCURACY_RE.search(text)
    return float(m.group(1)) if m else None


def fit_line(points: Sequence[Tuple[float, float]]) -> Tuple[float, float]:
    """Least squares `y = a + b x` (a fixed part and a per-unit part); through the origin when the points have a
    single x."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    if not points:
        raise ValueError("no points to fit")
    if len(set(xs)) < 2:
        return 0.0, sum(ys) / sum(xs)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


# ---------------------------------------------------------------- corpus and runs

def prepare(n: int) -> Path:
    """The generated corpus of n 60-word training documents (cached)."""
    return generate_corpus(OUT / f"words60_{n}", n, 4000, ["--words", "20", "--sents", "3"])


def split_lines(n_lines: int, n_shards: int) -> List[int]:
    """Where each of `n_shards` runs of consecutive lines starts, the last entry being `n_lines`."""
    return [round(k * n_lines / n_shards) for k in range(n_shards + 1)]


def shard_files(corpus: Path, n_shards: int) -> List[Path]:
    """train.tree cut into `n_shards` files of consecutive lines (cached)."""
    folder = corpus / f"shards{n_shards}"
    paths = [folder / f"part-{k:03d}.tree" for k in range(n_shards)]
    if not (folder / "done").is_file():
        folder.mkdir(exist_ok=True)
        with open(corpus / "train.tree", "rb") as f:  # streamed: this process's peak is the floor of its children's
            n_lines = sum(1 for _ in f)
        cuts = split_lines(n_lines, n_shards)
        with open(corpus / "train.tree", "rb") as f:
            for k, path in enumerate(paths):
                with open(path, "wb") as g:
                    for _ in range(cuts[k + 1] - cuts[k]):
                        g.write(next(f))
        (folder / "done").write_text("", encoding="utf-8")
    return paths


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def descendants_rss(root: int) -> Tuple[int, List[int]]:
    """The summed RSS (bytes) of every process below `root`, and their ids, from /proc."""
    parent, rss = {}, {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(entry)], rss[int(entry)] = int(fields[1]), int(fields[21]) * page
    below, frontier = [], [root]
    while frontier:
        kids = [pid for pid, ppid in parent.items() if ppid in frontier]
        below += kids
        frontier = kids
    return sum(rss[p] for p in below), below


class TotalRssGuard:
    """While open, samples every `every` seconds the summed RSS of all the processes this one started (the `learn`
    child, its workers, the Ray nodes and their actors): its peak, and, past `limit` bytes, SIGKILL to them all so
    that a run too large for the machine fails instead of crowding out other work."""

    def __init__(self, limit: Optional[float], every: float = 2.0) -> None:
        import threading

        self.limit, self.every, self.peak, self.stopped_at = limit, every, 0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> "TotalRssGuard":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(self.every):
            total, pids = descendants_rss(os.getpid())
            self.peak = max(self.peak, total)
            if self.limit and total > self.limit:
                self.stopped_at = total
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                return


def run_learn(label: str, train: Sequence[str], work: Path, extra: Sequence[str], corpus: Path, timeout: float,
              env: Optional[Dict[str, str]], accuracy_of: Dict[str, Optional[float]],
              max_total: Optional[float] = None) -> Dict[str, Any]:
    """One `learn` child and, for a model not classified yet, `classify` on the test split."""
    work.mkdir(parents=True, exist_ok=True)
    model = work / f"{label}.bin"
    argv = [sys.executable, "-m", "bench.bench_memory_by_process", "child", "learn", *train, str(model), *extra]
    with TotalRssGuard(max_total) as guard:
        run = run_child(argv, timeout=timeout, log_stem=work / label, env=env)
    row: Dict[str, Any] = {"label": label, "argv": relative_paths(run.argv), "exit": run.exit,
                           "timed_out": run.timed_out, "cpu_seconds": run.cpu_seconds, "wall_seconds": run.wall_seconds,
                           "tree_peak_bytes": run.maxrss_kib * 1024, "total_rss_sampled_bytes": guard.peak,
                           "parent_peak_bytes_at_spawn": run.parent_peak_kib_at_spawn * 1024}
    if guard.stopped_at or not run.ok:
        row["error"] = (f"stopped: the processes' summed RSS reached {guard.stopped_at / 1e9:.1f} GB "
                        f"(--max-total-gb {(max_total or 0) / 1e9:.0f})" if guard.stopped_at
                        else run.describe_failure())
        row["before_the_end"] = partial_figures((work / f"{label}.stderr").read_text(encoding="utf-8",
                                                                                      errors="replace"))
        return row
    row.update(parse_learn_log((work / f"{label}.stderr").read_text(encoding="utf-8", errors="replace"),
                               sharded=len(train) > 1))
    row["model_bytes"], row["model_sha256"] = model.stat().st_size, sha256(model)
    if row["model_sha256"] not in accuracy_of:
        cls = run_child([sys.executable, "-m", "spacy_treeboost", "classify", str(corpus / "test.tree"), str(model)],
                        timeout=timeout, log_stem=work / f"{label}_classify")
        accuracy_of[row["model_sha256"]] = parse_accuracy(cls.stderr_tail) if cls.ok else None
    row["accuracy"] = accuracy_of[row["model_sha256"]]
    return row


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TwoNodeRay:
    """A head and a second Ray node on 127.0.0.1, 1 CPU each, in their own temporary directory and process groups;
    `stop` ends exactly the processes they started."""

    RAY = [sys.executable, "-m", "ray.scripts.scripts"]

    def __init__(self, start_seconds: float = 240) -> None:
        self.temp = tempfile.mkdtemp(prefix="rmb", dir="/tmp")
        self.env = dict(os.environ, RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0", RAY_TMPDIR=self.temp)
        self.address = f"127.0.0.1:{_free_port()}"
        self.procs: List[subprocess.Popen] = []
        port = self.address.rsplit(":", 1)[1]
        try:
            for i, args in enumerate([["--head", "--port", port, "--temp-dir", self.temp, "--include-dashboard",
                                       "false"], ["--address", self.address]]):
                log = open(Path(self.temp) / f"node{i}.log", "wb")
                self.procs.append(subprocess.Popen(self.RAY + ["start", "--num-cpus", "1", "--block", *args],
                                                   env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                                   start_new_session=True))
                log.close()
                self._wait(i + 1, start_seconds)
        except BaseException:
            self.stop()
            raise

    def _wait(self, cpus: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while True:
            status = subprocess.run(self.RAY + ["status", "--address", self.address], env=self.env,
                                    capture_output=True, text=True)
            if re.search(rf"/{cpus}\.0 CPU", status.stdout):
                return
            for k, p in enumerate(self.procs):
                if p.poll() is not None:
                    raise RuntimeError(f"ray start exited with {p.returncode}: "
                                       f"{(Path(self.temp) / f'node{k}.log').read_text()[-1500:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray cluster did not reach {cpus} CPUs in {seconds:.0f} s")
            time.sleep(2)

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    pass
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=30)
        self.procs = []
        shutil.rmtree(self.temp, ignore_errors=True)


def run_size(n: int, args: argparse.Namespace, save: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    """Every run at one size; `save` gets the size's record after each run."""
    corpus = prepare(n)
    shards = [str(p) for p in shard_files(corpus, args.shards)]
    work = OUT / "memory_by_process" / f"words60_{n}"
    record: Dict[str, Any] = {"n": n, "shards": args.shards, "provenance": provenance(), "runs": [],
                              "argv": relative_paths(sys.argv[1:]),
                              "partial": True}
    accuracy_of: Dict[str, Optional[float]] = {}
    # the acceptance cells first, the largest workers (one of them) last
    plan = [("one", 1)] + [("processes", w) for w in sorted(args.workers, reverse=True) if w > 1]
    plan += [("ray", w) for w in ([] if args.no_ray else args.ray_workers)]
    plan += [("processes", w) for w in args.workers if w == 1]
    limited = dict(os.environ, **{LIMIT_ENV: str(int(args.max_process_gb * 1e9))}) if args.max_process_gb else None
    record["max_process_gb"] = args.max_process_gb
    max_total = args.max_total_gb * 1e9 if args.max_total_gb else None
    record["max_total_gb"] = args.max_total_gb
    cluster: Optional[TwoNodeRay] = None
    try:
        for backend, w in plan:
            if cluster is not None and backend != "ray":
                cluster.stop()
                cluster = None
            for r in range(args.repeats):
                label = f"{backend}{w}_{r}" if backend != "one" else f"one_{r}"
                if backend == "one":
                    row = run_learn(label, [str(corpus / "train.tree")], work, [], corpus, args.timeout, limited,
                                    accuracy_of, max_total)
                else:
                    extra = ["--n-workers", str(w), "--backend", backend]
                    env = limited
                    if backend == "ray":
                        if cluster is None:
                            cluster = TwoNodeRay()
                        extra += ["--ray-address", cluster.address]
                        env = cluster.env
                    row = run_learn(label, shards, work, extra, corpus, args.timeout, env, accuracy_of, max_total)
                row.update(backend=backend, workers=w, repeat=r)
                record["runs"].append(row)
                print(f"{n:,} {label}: " + (row.get("error") or
                      f"training process {row['driver_end_bytes'] / MB:,.0f} MB, workers "
                      f"{[round(b / MB) for b in row.get('workers_bytes', [])]} MB, {row['cpu_seconds']:.0f} CPU s"),
                      file=sys.stderr, flush=True)
                save(record)
    finally:
        if cluster is not None:
            cluster.stop()
    record["partial"] = False
    save(record)
    return record


# ---------------------------------------------------------------- the figures

def cells(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """One cell per (backend, workers) of a size: medians over its successful repeats, and its ratios to the
    one-process peak."""
    groups: Dict[Tuple[str, int], List[Dict[str, Any]]] = {}
    for row in record["runs"]:
        groups.setdefault((row["backend"], row["workers"]), []).append(row)
    one = [r for r in groups.get(("one", 1), []) if "error" not in r]
    reference = statistics.median(r["tree_peak_bytes"] for r in one) if one else None
    out = []
    for (backend, w), rows in groups.items():
        good = [r for r in rows if "error" not in r]
        cell: Dict[str, Any] = {"backend": backend, "workers": w, "runs": len(good)}
        if not good:
            cell["error"] = rows[-1].get("error", "failed")
            cell["before_the_end"] = rows[-1].get("before_the_end") or {}
            out.append(cell)
            continue
        med = lambda key: statistics.median(r[key] for r in good) if all(key in r for r in good) else None  # noqa
        driver = med("tree_peak_bytes") if backend == "one" else med("driver_end_bytes")
        cell.update(driver=driver, cpu=med("cpu_seconds"), wall=med("wall_seconds"), model_bytes=good[0]["model_bytes"],
                    sha256=good[0]["model_sha256"], rules=good[0]["rules"], accuracy=good[0].get("accuracy"),
                    merge=med("driver_after_merge_bytes"), fits=med("driver_after_fits_bytes"),
                    kept=good[0].get("kept_subtrees"), nodes=good[0].get("ray_nodes"),
                    total=med("total_rss_sampled_bytes"))
        if backend != "one":
            per = [sorted(r["workers_bytes"], reverse=True) for r in good]
            cell["worker_peaks"] = [statistics.median(p[k] for p in per) for k in range(min(map(len, per)))]
            cell["worker_max"] = max(cell["worker_peaks"], default=None)
            phases = [p for r in good for p in r.get("worker_phases_bytes", [])]
            cell["worker_phases"] = {k: max(p[k] for p in phases if k in p) for k in ("read", "mine", "build")
                                     if any(k in p for p in phases)}
        if reference:
            cell["driver_ratio"] = driver / reference if driver else None
            cell["worker_ratio"] = cell["worker_max"] / reference if cell.get("worker_max") else None
        out.append(cell)
    return out


def acceptance(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Each acceptance bound of a size, met or not, per backend run."""
    out = []
    by = {(c["backend"], c["workers"]): c for c in cells(record)}
    for w, worker_bound, driver_bound in ACCEPTANCE:
        for backend in ("processes", "ray"):
            c = by.get((backend, w))
            if c is None:
                continue
            if c.get("driver_ratio") is None or c.get("worker_ratio") is None:
                out.append({"backend": backend, "workers": w, "error": c.get("error", "no ratio")})
                continue
            out.append({"backend": backend, "workers": w, "worker_ratio": c["worker_ratio"],
                        "worker_bound": worker_bound,
                        "worker_met": c["worker_ratio"] <= worker_bound, "driver_ratio": c["driver_ratio"],
                        "driver_bound": driver_bound, "driver_met": c["driver_ratio"] <= driver_bound})
    return out


def same_models(record: Dict[str, Any]) -> Dict[str, Any]:
    """The distinct model digests of the shard runs of a size (one = the same bytes for every count and backend),
    and whether the one-process model is among them."""
    shard = {c["sha256"] for c in cells(record) if c["backend"] != "one" and c.get("sha256")}
    one = {c["sha256"] for c in cells(record) if c["backend"] == "one" and c.get("sha256")}
    return {"shard_digests": sorted(shard), "one_process_same": bool(one) and one <= shard}


def extrapolate(records: Sequence[Dict[str, Any]], target_docs: int, node_factor: float,
                nodes: int) -> Optional[Dict[str, Any]]:
    """Fixed part + bytes per 60-word document of a worker (against the documents it holds), of the training
    process and of the one-process fit (against all documents), fitted over the processes runs of every size, and
    their values for `target_docs` documents of `node_factor` times the nodes on `nodes` nodes, one worker each."""
    worker: List[Tuple[float, float]] = []
    driver: List[Tuple[float, float]] = []
    one: List[Tuple[float, float]] = []
    for record in records:
        for c in cells(record):
            if c.get("error") or c.get("driver") is None:
                continue
            if c["backend"] == "one":
                one.append((record["n"], c["driver"]))
            elif c["backend"] == "processes":
                driver.append((record["n"], c["driver"]))
                if c.get("worker_max"):
                    worker.append((record["n"] / min(c["workers"], record["shards"]), c["worker_max"]))
    if not worker or not driver:
        return None
    equivalent = target_docs * node_factor
    out: Dict[str, Any] = {"target_docs": target_docs, "node_factor": node_factor, "nodes": nodes,
                           "equivalent_docs": equivalent}
    for name, points, docs in (("worker", worker, equivalent / nodes), ("driver", driver, equivalent),
                               ("one", one, equivalent)):
        if points:
            a, b = fit_line(points)
            out[name] = {"fixed_bytes": a, "bytes_per_doc": b, "docs": docs, "bytes": a + b * docs,
                         "points": len(points)}
    out["sizes"] = sorted({int(n) for n, _ in driver})
    out["head_node_bytes"] = out["driver"]["bytes"] + out["worker"]["bytes"]
    return out


# ---------------------------------------------------------------- the page

def _mb(x: Optional[float]) -> str:
    return f"{x / MB:,.0f}" if x else "—"


def _ratio(x: Optional[float]) -> str:
    return f"{x:.2f}" if x is not None else "—"


def render(results: Dict[str, Any]) -> str:
    """The Markdown page from the JSON results."""
    records = sorted(results["sizes"], key=lambda r: r["n"])
    largest = records[-1] if records else None
    lines = ["# Memory by process: training from shard files", "",
             f"Generated by `{results['command']}` (the full run; `--render-only` rebuilds this page from "
             "`docs/bench_memory_by_process.json`; module docstring: the workload and what is measured). "
             + stamp([r["provenance"] for r in records]) + " MB = 10^6 bytes; peak RSS of each process (training "
             "process: end / once merged / after the fits); all: the summed RSS of every process started, "
             "Ray nodes included, sampled every 2 s; ratios to the one-process peak; CPU includes the local worker "
             "processes, not Ray actors.", ""]
    if any(r.get("partial") for r in records) or results.get("partial_note"):
        lines += ["**Partial**: " + (results.get("partial_note") or "a size did not finish; its rows are those that "
                  "did."), ""]
    rows = []
    for record in records:
        for c in sorted(cells(record), key=lambda c: (c["backend"] != "one", c["backend"], c["workers"])):
            what = "one process" if c["backend"] == "one" else f"{c['backend']} {c['workers']}"
            if c.get("error"):
                seen = ", ".join(f"{k.replace('_bytes', '').replace('_', ' ')} {_mb(v)} MB"
                                 for k, v in c["before_the_end"].items() if k.endswith("_bytes"))
                rows.append([f"{record['n']:,}", what, f"failed: {c['error'][:90]}" + (f" ({seen})" if seen else "")]
                            + [""] * 8)
                continue
            driver = _mb(c["driver"]) + (f" / {_mb(c['merge'])} / {_mb(c['fits'])}" if c["backend"] != "one" else "")
            workers = " / ".join(_mb(w) for w in c.get("worker_peaks", [])) or "—"
            rows.append([f"{record['n']:,}", what, driver, workers, _mb(c.get("total")),
                         _ratio(c.get("driver_ratio")), _ratio(c.get("worker_ratio")),
                         f"{c['cpu']:,.0f} / {c['wall']:,.0f}", f"{c['model_bytes'] / MB:,.1f} ({c['rules']:,})",
                         f"`{c['sha256'][:10]}`", f"{100 * c['accuracy']:.2f}" if c.get("accuracy") else "—"])
    lines += markdown_table(["docs", "run", "training process MB", "workers MB", "all MB", "train / one",
                             "worker / one", "CPU / wall s", "model MB (rules)", "sha256", "acc %"], rows,
                            align="llrrrrrrrlr")
    if records:
        lines += ["", "Acceptance bounds (ratios to the one-process peak; they apply at 512,000 documents): "
                  + " — ".join(f"at {r['n']:,}: {verdicts(r)}" for r in records) + "."]
    lines += where_memory_goes(records)
    ext = results.get("extrapolation")
    if ext:
        lines += extrapolation_lines(ext)
    return "\n".join(lines) + "\n"


def verdicts(record: Dict[str, Any]) -> str:
    """Each acceptance bound at one size, met, not met or not measured, and whether the models are the same."""
    out = []
    for a in acceptance(record):
        if "error" in a:
            out.append(f"{a['backend']} {a['workers']}: **not measured** ({a['error'][:70]})")
            continue
        out.append(f"{a['backend']} {a['workers']}: worker {a['worker_ratio']:.2f} <= {a['worker_bound']} "
                   f"**{'met' if a['worker_met'] else 'not met'}**, training {a['driver_ratio']:.2f} <= "
                   f"{a['driver_bound']} **{'met' if a['driver_met'] else 'not met'}**")
    digests = same_models(record)["shard_digests"]
    out.append("same model bytes for every count and backend: " + (
        "**not measured**" if not digests else "**met**" if len(digests) == 1
        else f"**not met** ({len(digests)} digests)")
        + ("" if same_models(record)["one_process_same"] else "; the one-process model differs"))
    return "; ".join(out)


def where_memory_goes(records: Sequence[Dict[str, Any]]) -> List[str]:
    out = []
    for record in records:
        for c in cells(record):
            if c["backend"] != "processes" or c.get("error"):
                continue
            ph = c.get("worker_phases") or {}
            out.append(f"{record['n']:,}, {c['workers']} worker(s): training process {_mb(c['merge'])} MB once "
                       f"merged ({c.get('kept') or 0:,} subtrees kept), {_mb(c['fits'])} after the fits, "
                       f"{_mb(c['driver'])} at the end (rules, model); busiest worker "
                       + (", ".join(f"{k} {_mb(v)}" for k, v in ph.items()) + f", fits {_mb(c['worker_max'])} MB"
                          if ph else f"{_mb(c['worker_max'])} MB (no phase figures)"))
    if not out:
        return []
    return ["", "Where the memory goes (peaks after each phase, processes backend): " + "; ".join(out) + "."]


def extrapolation_lines(ext: Dict[str, Any]) -> List[str]:
    def part(name: str, what: str) -> str:
        e = ext[name]
        return (f"{what}: {e['fixed_bytes'] / MB:,.0f} MB + {e['bytes_per_doc']:,.0f} B x {e['docs']:,.0f} = "
                f"**{e['bytes'] / 1e9:,.1f} GB**")

    sizes = ", ".join(f"{n:,}" for n in ext["sizes"])
    text = (f"Extrapolation to {ext['target_docs']:,} 150-word reviews on {ext['nodes']} nodes, one worker each. "
            f"Assumptions: a 150-word review costs what {ext['node_factor']} 60-word documents cost (its nodes, and "
            f"subtrees per document, scale with words), so {ext['target_docs']:,} x {ext['node_factor']} = "
            f"{ext['equivalent_docs']:,.0f} documents of this workload; each peak is a fixed part + bytes per "
            f"document, least squares over the processes runs at {sizes} (worker: against the documents it holds; "
            f"distinct subtrees grow more slowly than documents, so a straight line overstates the training "
            f"process). ")
    text += "; ".join([part("worker", f"Each worker ({ext['equivalent_docs']:,.0f} / {ext['nodes']})"),
                       part("driver", "training process")] + ([part("one", "one process, for comparison")]
                                                              if "one" in ext else []))
    text += f"; the head node (training process + a worker) **{ext['head_node_bytes'] / 1e9:,.1f} GB**."
    return ["", text]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child_main(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[128000, 512000])
    p.add_argument("--shards", type=int, default=16, help="shard files per size (consecutive lines)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="processes backend")
    p.add_argument("--ray-workers", type=int, nargs="*", default=[2, 4], help="on the two-node Ray cluster")
    p.add_argument("--no-ray", action="store_true")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per child")
    p.add_argument("--max-process-gb", type=float, default=16.0,
                   help="address-space limit of the training process and its local workers (0: none; Ray actors: none)")
    p.add_argument("--max-total-gb", type=float, default=16.0,
                   help="stop a run whose processes (training, workers, Ray nodes) sum past this RSS (0: never)")
    p.add_argument("--target-docs", type=int, default=2_300_000)
    p.add_argument("--node-factor", type=float, default=2.5, help="nodes of a target document / a 60-word one")
    p.add_argument("--nodes", type=int, default=8)
    p.add_argument("--keep", action="store_true", help="keep the other sizes already in the JSON")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "bench_memory_by_process")
    p.add_argument("--render-only", action="store_true", help="rewrite the page from the JSON")
    p.add_argument("--merge", type=lambda x: json.loads(Path(x).read_text(encoding="utf-8")), nargs="+",
                   help="JSON results of runs at different sizes, into --out (a later file's size replaces an "
                   "earlier one's), then the page")
    p.add_argument("--note", help="a note on what did not run, shown as partial on the page (with --render-only)")
    args = p.parse_args()
    json_path, md_path = args.out.with_suffix(".json"), args.out.with_suffix(".md")
    if args.merge:
        merged: Dict[str, Any] = {"command": "python -m bench.bench_memory_by_process", "sizes": []}
        for path in args.merge:
            merged["sizes"] = [r for r in merged["sizes"] if r["n"] not in {s["n"] for s in path["sizes"]}]
            merged["sizes"] = sorted(merged["sizes"] + path["sizes"], key=lambda r: r["n"])
        merged["extrapolation"] = extrapolate(merged["sizes"], args.target_docs, args.node_factor, args.nodes)
        json_path.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
    if args.note is not None:
        noted = json.loads(json_path.read_text(encoding="utf-8"))
        noted["partial_note"] = args.note
        json_path.write_text(json.dumps(noted, indent=1) + "\n", encoding="utf-8")
    if args.render_only or args.merge or args.note is not None:
        md_path.write_text(render(json.loads(json_path.read_text(encoding="utf-8"))), encoding="utf-8")
        print(md_path.read_text(encoding="utf-8"))
        return
    results: Dict[str, Any] = {"command": "python -m bench.bench_memory_by_process", "sizes": []}
    if args.keep and json_path.is_file():
        results = json.loads(json_path.read_text(encoding="utf-8"))
        results["sizes"] = [r for r in results["sizes"] if r["n"] not in args.sizes]
    if sys.argv[1:] and not args.keep:
        results["command"] += " " + " ".join(sys.argv[1:])

    def save(record: Dict[str, Any]) -> None:
        sizes = [r for r in results["sizes"] if r["n"] != record["n"]] + [record]
        results["sizes"] = sorted(sizes, key=lambda r: r["n"])
        results["extrapolation"] = extrapolate(results["sizes"], args.target_docs, args.node_factor, args.nodes)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        md_path.write_text(render(results), encoding="utf-8")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the Ray cluster is stopped on the way out
    for n in sorted(args.sizes):
        run_size(n, args, save)
    print(md_path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
