"""The default learner's Newton solver against LIBLINEAR on the same matrices: docs/bench_solver.{json,md}.

    python -m bench.bench_solver [--sizes 8000 32000 128000] [--repeats 3] [--C 0.1] [--tol 1e-3]
        [--features presence] [--threads 1 2] [--data-dir /tmp/bench_solver]

Workload: the shared generator (`../shared/bench/gen_synth_trees.py`, seed 13, `--words 20 --sents 3`), one
corpus of the largest size, the first N training documents at each size. `prepare` (a child process, run once per
size) builds the matrix the default learner's final fit hands its solver: the subtrees mined as the learner mines
them (`mine_subtrees` with the learner's defaults, columns in frequency order), presence features (or, with
`--features nb`, naive Bayes scaled presence), then the reduction of the features seen in one document each
(`shard.DocumentShard.place` on one shard); it saves that reduced matrix (CSC) and the {-1, +1} labels once as
`.npz`, so both solvers read the same bytes. The default candidate is the one the folds choose on this workload: presence at C = 0.1.

Then, in turn and `--repeats` times, one child process per solve:

- `solve tron`: the learner's trust-region Newton method (`solver.tron` on `sharded.ShardedNewton` over one
  shard, its products `products.newton_blocks`', BLAS limited to one thread as the learner does), at each of
  `--threads`;
- `solve tron-numpy-cg`: the same with the conjugate gradients' vector operations in numpy (`numpy_pcg`), to
  weigh the compiled CG kernels; and `solve tron-scipy-products` (a matrix of `products.BLOCK_NNZ` nonzeros or
  more) or `tron-column-blocks` (a smaller one): the other kind of products, scipy's or `products.ColumnBlocks`
  with its compiled kernels, to weigh those;
- `solve liblinear`: LIBLINEAR (PyPI `liblinear-official`), `-s 0 -B 1 -R` (L2 logistic regression, a bias
  feature of value 1 that is not regularized), its `-c` the same C: LIBLINEAR's objective is C times the learner's;
- `solve load`: reading the matrix alone, the floor under both.

Each child reports its own setup and solve CPU seconds (`time.process_time`, all threads) and wall; the harness
reports whole-process CPU and peak RSS. Stopping: the learner stops at |g(x)| <= tol |g(x_0)| with x_0 zero
weights and the intercept of the class prior; LIBLINEAR at |g(w)| <= eps min(pos, neg) / l |g(0)|. `eps` is set to
tol (l / min(pos, neg)) |g(x_0)| / |g(0)| (`liblinear_eps`), the same gradient norm. `evaluate` computes one
objective (`objective`) at every solution and at a reference solve at tolerance 1e-9, and the relative gaps.
"""
import argparse
import hashlib
import itertools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from bench.harness import ROOT, command_output, generate_corpus, machine_facts, markdown_table, median, relative_paths, run_child

WORDS60 = ["--words", "20", "--sents", "3"]
REFERENCE_TOL = 1e-9
SOLVERS = ("tron", "tron-numpy-cg", "tron-scipy-products", "tron-column-blocks", "liblinear", "load")


def log(msg: str) -> None:
    print(f"[bench_solver {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def reduced_matrix(lines: Sequence[str], features: str = "presence") -> Tuple[Any, numpy.ndarray]:
    """The reduced matrix (CSC) and the {-1, +1} labels the default learner's final fit hands its solver, for the
    BACT `lines` of a two-class corpus: features "presence" or "nb" (naive Bayes scaled presence)."""
    from spacy_treeboost.learning.classifier import encode_targets
    from spacy_treeboost.learning import sharded
    from spacy_treeboost.learning.features import nb_ratio, presence, scale_columns
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier, mine_subtrees, pattern_size
    from spacy_treeboost.trees.bact import read_bact

    forest, labels = read_bact(lines)
    learner = SubtreeLinearClassifier()
    _, _, heads, targets = encode_targets(labels, learner._positive)
    if len(heads) != 1:
        raise ValueError(f"the corpus has {len(heads)} heads; the solver benchmark takes a two-class corpus")
    y = targets[0].astype(numpy.float64)
    size = pattern_size(forest.n_nodes, len(forest))
    counts = mine_subtrees(forest, max_pattern_size=size, min_support=learner.min_support,
                           include_root_patterns=learner.include_root_patterns, max_cache_mb=learner.max_cache_mb,
                           keep_rare_up_to=learner.keep_rare_up_to, by_frequency=True)[0]
    X = presence(counts.tocsc())
    if features == "nb":
        X = scale_columns(X, nb_ratio(X, y))
    elif features != "presence":
        raise ValueError(f"features={features!r}: use 'presence' or 'nb'")
    with sharded.held_shards({"F": X}) as shards:
        d = shards.map("select", "F", y, None, None)[0]
        sharded._prepare(shards, False, 0.0, d, 1)
        return shards.map("reduced")[0][0], y


def one_shard_problem(X: Any, y: numpy.ndarray, C: float, threads: int = 1) -> Any:
    """The learner's problem on a reduced matrix, one shard of it laid out as is (the trust-region fits' products
    on `threads` threads): a `sharded.ShardedNewton`."""
    from spacy_treeboost.learning import sharded

    shards = sharded.Shards.here([sharded.whole_shard({"F": X})])
    d = shards.map("select", "F", y, None, None)[0]
    shards.map("scale", None)
    sharded._Layout(shards, d, keep_all=True, threads=threads)
    return sharded.ShardedNewton(shards, "logistic", 1.0 / C, threads)


def save_matrix(path: Path, X: Any, y: numpy.ndarray) -> None:
    numpy.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=numpy.array(X.shape), y=y)


def load_matrix(path: Path) -> Tuple[Any, numpy.ndarray]:
    from scipy.sparse import csc_matrix

    with numpy.load(path) as f:
        return csc_matrix((f["data"], f["indices"], f["indptr"]), shape=tuple(f["shape"])), f["y"]


def objective(X: Any, y: numpy.ndarray, w: numpy.ndarray, c: float, C: float) -> float:
    """sum_i log(1 + exp(-y_i (x_i w + c))) + ||w||^2 / (2 C): the learner's objective (LIBLINEAR's over C)."""
    m = y * (X @ w + c)
    return float(numpy.logaddexp(0.0, -m).sum()) + 0.5 / C * float(w @ w)


def gradient(X: Any, y: numpy.ndarray, w: numpy.ndarray, c: float, C: float) -> numpy.ndarray:
    """The gradient of `objective` (weights, then the intercept)."""
    m = y * (X @ w + c)
    g_f = -y / (1.0 + numpy.exp(numpy.minimum(m, 700.0)))
    return numpy.concatenate([X.T @ g_f + w / C, [g_f.sum()]])


def liblinear_eps(X: Any, y: numpy.ndarray, C: float, tol: float) -> float:
    """LIBLINEAR's -e for the learner's `tol`: the same gradient norm at which both stop (module docstring)."""
    from spacy_treeboost.learning.solver import start_point

    x0 = start_point(y, X.shape[1], "logistic")
    zero = numpy.zeros(X.shape[1])
    learner = float(numpy.linalg.norm(gradient(X, y, zero, float(x0[-1]), C)))
    at_zero = float(numpy.linalg.norm(gradient(X, y, zero, 0.0, C)))
    fewer = max(min(int((y > 0).sum()), int((y < 0).sum())), 1)
    return tol * len(y) / fewer * learner / at_zero


def solve_tron(X: Any, y: numpy.ndarray, C: float, tol: float, threads: int = 1,
               max_iter: int = 1000) -> Tuple[numpy.ndarray, float, Dict[str, Any]]:
    """The learner's solve of a reduced matrix (the "tron" branch of `sharded._fit`): the weights, the intercept,
    and the setup and solve CPU and wall seconds, Newton steps and Hessian products."""
    from spacy_treeboost.learning.solver import gradient_scale, one_blas_thread, start_point, tron

    info: Dict[str, Any] = {}
    with one_blas_thread():
        cpu, wall = time.process_time(), time.perf_counter()
        x0 = start_point(y, X.shape[1], "logistic")
        problem = one_shard_problem(X, y, C, threads)
        gtol = max(tol * gradient_scale(problem.value_grad(x0)[1], 0.0), 1e-300)
        counts = {"newton_steps": 0, "hessian_products": 0}
        preconditioner, hessp = problem.preconditioner, problem.hessp

        def counted_preconditioner(x: numpy.ndarray) -> numpy.ndarray:
            counts["newton_steps"] += 1
            return preconditioner(x)

        def counted_hessp(v: numpy.ndarray) -> numpy.ndarray:
            counts["hessian_products"] += 1
            return hessp(v)

        problem.preconditioner, problem.hessp = counted_preconditioner, counted_hessp
        info.update(setup_cpu=time.process_time() - cpu, setup_wall=time.perf_counter() - wall)
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            x = tron(problem, x0, max_iter, gtol)
        finally:
            problem.team.close()
            problem.shards.map("release")
        info.update(solve_cpu=time.process_time() - cpu, solve_wall=time.perf_counter() - wall, **counts)
    return x[:-1], float(x[-1]), info


def numpy_pcg(hessp: Any, g: numpy.ndarray, M: numpy.ndarray, delta: float,
              team: Any = None) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """`solver.pcg`'s conjugate gradients with numpy's vector operations (BLAS dot products) instead of the
    compiled kernels over fixed pieces: the same steps, sums in another order."""
    s = numpy.zeros_like(g)
    r = -g
    z = r / M
    d = z.copy()
    zr = float(z @ r)
    tol = 0.1 * math.sqrt(zr)
    for _ in range(len(g)):
        if math.sqrt(max(zr, 0.0)) <= tol:
            break
        Hd = hessp(d)
        alpha = zr / float(d @ Hd)
        s += alpha * d
        if math.sqrt(float(s @ (M * s))) > delta:
            s -= alpha * d
            sMd, sMs, dMd = float(s @ (M * d)), float(s @ (M * s)), float(d @ (M * d))
            rad = math.sqrt(max(sMd * sMd + dMd * (delta * delta - sMs), 0.0))
            alpha = (delta * delta - sMs) / (sMd + rad) if sMd >= 0 else (rad - sMd) / dMd
            s += alpha * d
            r -= alpha * Hd
            break
        r -= alpha * Hd
        numpy.divide(r, M, out=z)
        zr_new = float(z @ r)
        d *= zr_new / zr
        d += z
        zr = zr_new
    return s, r


def solve_liblinear(X: Any, y: numpy.ndarray, C: float, eps: float) -> Tuple[numpy.ndarray, float, Dict[str, Any]]:
    """LIBLINEAR's `-s 0 -B 1 -R -c C -e eps` on X: the weights, the intercept (the bias feature's weight), and the
    setup (CSR copy, LIBLINEAR's problem) and solve CPU and wall seconds and its Newton steps."""
    from liblinear import liblinear as ll
    from liblinear.liblinearutil import parameter, problem, train

    info: Dict[str, Any] = {}
    cpu, wall = time.process_time(), time.perf_counter()
    prob = problem(y, X.tocsr())
    param = parameter(f"-s 0 -B 1 -R -c {C!r} -e {eps!r}")
    lines: List[str] = []
    param.print_func = ll.PRINT_STRING_FUN(lambda s: lines.append(s.decode()))
    info.update(setup_cpu=time.process_time() - cpu, setup_wall=time.perf_counter() - wall)
    cpu, wall = time.process_time(), time.perf_counter()
    model = train(prob, param)
    info.update(solve_cpu=time.process_time() - cpu, solve_wall=time.perf_counter() - wall)
    text = "".join(lines)
    info["newton_steps"] = sum(1 for line in text.splitlines() if line.startswith("iter"))
    info["hessian_products"] = sum(int(line.split("CG")[1].split()[0]) for line in text.splitlines()
                                   if line.startswith("iter"))
    info["warnings"] = [line for line in text.splitlines() if "WARNING" in line]
    d = X.shape[1]
    w = numpy.ctypeslib.as_array(model.w, shape=(d + 1,)).copy()
    sign = 1.0 if model.get_labels()[0] == 1 else -1.0
    return sign * w[:d], sign * float(w[d]), info


def child_solve(args: argparse.Namespace) -> None:
    """`solve`: one solver on one matrix, the solution and the child's own figures in `--out` (.npz): the CPU seconds
    and peak RSS after the solver's imports, and the CPU seconds of reading the matrix, of the solver's setup and
    of its solve."""
    import resource

    if args.solver.startswith("tron"):
        import scipy.optimize  # noqa: F401  (`one_blas_thread` loads it)
        import threadpoolctl  # noqa: F401

        import spacy_treeboost.learning.solver  # noqa: F401
    elif args.solver == "liblinear":
        import liblinear.liblinearutil  # noqa: F401
    imported = {"imports_cpu": time.process_time(),
                "imports_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    X, y = load_matrix(args.matrix)
    imported["load_cpu"] = time.process_time() - imported["imports_cpu"]
    if args.solver == "load":
        w, c, info = numpy.zeros(0), 0.0, {}
    elif args.solver == "tron":
        w, c, info = solve_tron(X, y, args.C, args.tol, args.threads)
    elif args.solver.startswith("tron-"):
        from spacy_treeboost.learning import products, solver

        if args.solver == "tron-numpy-cg":
            solver.pcg = numpy_pcg
        else:
            products.BLOCK_NNZ = 0 if args.solver == "tron-column-blocks" else 1 << 62
        w, c, info = solve_tron(X, y, args.C, args.tol, args.threads)
    else:
        w, c, info = solve_liblinear(X, y, args.C, args.eps)
    info.update(imported)
    numpy.savez(args.out, w=w, c=numpy.array(c), info=numpy.array(json.dumps(info)))


def child_prepare(args: argparse.Namespace) -> None:
    """`prepare`: the reduced matrix of the first `--n` documents of `--corpus`, saved to `--out`."""
    with open(args.corpus, encoding="utf-8") as f:
        lines = list(itertools.islice(f, args.n))
    X, y = reduced_matrix(lines, args.features)
    save_matrix(args.out, X, y)
    print(json.dumps({"shape": list(X.shape), "nnz": int(X.nnz), "positive": int((y > 0).sum())}))


def child_evaluate(args: argparse.Namespace) -> None:
    """`evaluate`: the objective at each solution and at a tight reference solve, and LIBLINEAR's eps."""
    from spacy_treeboost.learning.products import BLOCK_NNZ

    X, y = load_matrix(args.matrix)
    out: Dict[str, Any] = {"shape": list(X.shape), "nnz": int(X.nnz), "positive": int((y > 0).sum()),
                           "eps": liblinear_eps(X, y, args.C, args.tol), "block_nnz": BLOCK_NNZ, "solutions": {}}
    if not args.solutions:
        print(json.dumps(out))
        return
    w_ref, c_ref, ref = solve_tron(X, y, args.C, REFERENCE_TOL, 1)
    out.update(reference=objective(X, y, w_ref, c_ref, args.C), reference_info=ref)
    for path in args.solutions:
        with numpy.load(path) as f:
            value = objective(X, y, f["w"], float(f["c"]), args.C)
            gnorm = float(numpy.linalg.norm(gradient(X, y, f["w"], float(f["c"]), args.C)))
            digest = hashlib.sha256(f["w"].tobytes() + f["c"].tobytes()).hexdigest()[:16]
        out["solutions"][Path(path).name] = {"objective": value, "gap": (value - out["reference"]) / out["reference"],
                                             "gradient_norm": gnorm, "sha256": digest}
    print(json.dumps(out))


def prepare_corpus(data_dir: Path, n_max: int) -> Path:
    return generate_corpus(data_dir / f"words60_{n_max}", n_max, 1000, WORDS60) / "train.tree"


def run_size(args: argparse.Namespace, corpus: Path, n: int) -> Dict[str, Any]:
    py = [sys.executable, "-m", "bench.bench_solver"]
    work = args.data_dir / f"{args.features}_{n}_of_{corpus.parent.name}"
    work.mkdir(parents=True, exist_ok=True)
    matrix = work / "matrix.npz"
    result: Dict[str, Any] = {"n": n}
    if not matrix.is_file():
        log(f"{n}: building the reduced matrix")
        run = run_child([*py, "prepare", "--corpus", corpus, "--n", str(n), "--features", args.features,
                         "--out", matrix], timeout=args.timeout).check(f"prepare {n}")
        result["prepare"] = {"cpu_seconds": run.cpu_seconds, "peak_rss_mb": run.peak_rss_mb}
    start = json.loads(run_child([*py, "evaluate", "--matrix", matrix, "--C", repr(args.C), "--tol", repr(args.tol)],
                                 timeout=args.timeout).check(f"evaluate {n}").stdout)
    result.update(shape=start["shape"], nnz=start["nnz"], positive=start["positive"])
    eps = result["eps"] = start["eps"]
    other = "tron-scipy-products" if result["nnz"] >= start["block_nnz"] else "tron-column-blocks"
    configs = [("load", 1)] + [("tron", t) for t in args.threads] + [("tron-numpy-cg", 1), (other, 1), ("liblinear", 1)]
    runs: Dict[str, List[Dict[str, Any]]] = {}
    for r in range(args.repeats):
        for solver, threads in configs:
            name = f"tron{threads}" if solver == "tron" else solver
            out = work / f"{name}.npz"
            run = run_child([*py, "solve", solver, "--matrix", matrix, "--C", repr(args.C), "--tol", repr(args.tol),
                             "--eps", repr(eps), "--threads", str(threads), "--out", out],
                            timeout=args.timeout).check(f"{name} at {n}")
            with numpy.load(out) as f:
                info = json.loads(str(f["info"]))
            runs.setdefault(name, []).append({"cpu_seconds": run.cpu_seconds, "wall_seconds": run.wall_seconds,
                                              "peak_rss_mb": run.peak_rss_mb, **info})
            log(f"{n} {name} #{r + 1}: {run.cpu_seconds:.2f} CPU s, {info.get('solve_cpu', 0):.2f} solve CPU s, "
                f"{run.peak_rss_mb:.0f} MiB")
    result["runs"] = runs
    result["medians"] = {name: {key: median(x[key] for x in rs) for key in rs[0] if isinstance(rs[0][key], (int, float))}
                         for name, rs in runs.items()}
    solutions = [str(work / f"{name}.npz") for name in runs if name != "load"]
    result["objective"] = json.loads(run_child([*py, "evaluate", "--matrix", matrix, "--C", repr(args.C), "--tol",
                                                repr(args.tol), "--solutions", *solutions],
                                               timeout=args.timeout).check(f"evaluate {n}").stdout)
    return result


LABELS = {"load": ("load (reads the matrix only)", "1"), "tron1": ("tron", "1"), "tron2": ("tron", "2"),
          "tron-numpy-cg": ("tron, numpy CG vectors", "1"), "tron-scipy-products": ("tron, scipy products", "1"),
          "tron-column-blocks": ("tron, column blocks", "1"), "liblinear": ("LIBLINEAR", "1")}


def label(name: str) -> Tuple[str, str]:
    """The solver and threads of a row's name."""
    return LABELS.get(name, (name, "1"))


def same_bits(result: Dict[str, Any]) -> bool:
    digests = {v["sha256"] for k, v in result["objective"]["solutions"].items() if k in ("tron1.npz", "tron2.npz")}
    return len(digests) == 1


def conclusion(report: Dict[str, Any]) -> List[str]:
    """The conclusion and the recommendation per piece, from the figures."""
    res = [r for r in report["results"] if "liblinear" in r["medians"] and "tron1" in r["medians"]]
    if not res:
        return []
    big = res[-1]
    med = big["medians"]

    def ratio(r: Dict[str, Any], a: str, b: str = "tron1") -> float:
        return r["medians"][a]["solve_cpu"] / r["medians"][b]["solve_cpu"]

    sizes = ", ".join(f"{r['n'] // 1000}k" for r in res)
    vs_lib = ", ".join(f"{1 / ratio(r, 'liblinear'):.2f}" for r in res)
    level = [r["n"] for r in res if ratio(r, "liblinear") >= 1.0]
    gaps = {name: max(r["objective"]["solutions"][f"{name}.npz"]["gap"] for r in res) for name in ("tron1", "liblinear")}
    other = [(r, name) for r in res for name in ("tron-scipy-products", "tron-column-blocks") if name in r["medians"]]
    blocks = "; ".join(f"{r['n'] // 1000}k: scipy's products {ratio(r, name):.2f}×" if name == "tron-scipy-products"
                       else f"{r['n'] // 1000}k: column blocks {ratio(r, name):.2f}×" for r, name in other)
    cg = ", ".join(f"{ratio(r, 'tron-numpy-cg'):.2f}×" for r in res if "tron-numpy-cg" in r["medians"])
    cg_big = ratio(big, "tron-numpy-cg") if "tron-numpy-cg" in med else 1.0
    two = med.get("tron2", med["tron1"])["solve_cpu"] / med["tron1"]["solve_cpu"]
    lines = ["", "## Conclusion", "",
             f"- **Objective.** Stopped at the same gradient norm, both reach the reference objective: the largest "
             f"relative gap over the sizes is {gaps['tron1']:.1e} for the learner's solver and "
             f"{gaps['liblinear']:.1e} for LIBLINEAR.",
             f"- **CPU.** The learner's solver takes {vs_lib} times LIBLINEAR's solve CPU at {sizes} (one thread "
             "each)" + (f": at least as fast from {min(level):,} documents" if level else "") +
             f" (at {res[0]['n'] // 1000}k: {res[0]['medians']['tron1']['solve_cpu']:.2f} against "
             f"{res[0]['medians']['liblinear']['solve_cpu']:.2f} s). It makes about "
             f"as many Hessian-vector products ({int(med['tron1']['hessian_products'])} against LIBLINEAR's "
             f"{int(med['liblinear']['hessian_products'])} CG steps at {big['n']:,}); LIBLINEAR's products cost more: "
             "it multiplies row by row over its own copy of the matrix (16 bytes a nonzero; making it is the "
             f"{med['liblinear']['setup_cpu']:.2f} CPU s of setup, and its peak RSS is "
             f"{med['liblinear']['peak_rss_mb'] / med['tron1']['peak_rss_mb']:.2f}× the learner's), while the learner "
             "multiplies the CSC columns in frequency order (scipy's products below `products.BLOCK_NNZ` nonzeros, "
             "above them `products.ColumnBlocks`, whose compiled kernels read a presence column's one value once). "
             f"And its line search takes more Newton steps ({int(med['liblinear']['newton_steps'])} against "
             f"{int(med['tron1']['newton_steps'])}), each with a gradient and function values.",
             f"- **Threads.** `liblinear-official` runs one thread (no OpenMP in the wheel). The learner's second "
             f"thread takes effect on matrices of {big['objective']['block_nnz']:,} nonzeros or more (here at "
             f"{big['n']:,} only): the same bits, {two:.2f}× the CPU; on this loaded machine its wall gain cannot be "
             "seen (the 32k rows, where the threads change nothing, differ in wall as much).",
             "- **What LIBLINEAR cannot do.** `sharded.ShardedNewton` runs `tron` on the loss, gradient, "
             "preconditioner and Hessian-vector products summed over document shards held in this process or by "
             "Ray actors on other machines; LIBLINEAR's Python interface takes one whole matrix in this process.", "",
             "Per piece (figures: solve CPU over the learner's as it is):", ""]
    lib = ", ".join(f"{ratio(r, 'liblinear'):.2f}×" for r in res)
    rows = [["`solver.tron`, `sharded.ShardedNewton`", f"LIBLINEAR: {lib} at {sizes}; needed for shards", "keep" if level or ratio(big, "liblinear") >= 1.0 else "call LIBLINEAR"],
            ["`products.ColumnBlocks` and the pattern kernels of `_sparse.pyx`", blocks,
             "keep, and use them at every size (the scipy branch of `products.newton_blocks` goes)"
             if all(ratio(r, n) >= 1.0 for r, n in other if n == "tron-scipy-products") and
             all(ratio(r, n) < 1.0 for r, n in other if n == "tron-column-blocks") else "keep above `BLOCK_NNZ`"],
            ["`solver.pcg`'s CG kernels (`dot_range`, `cg_*_range`) and `products.Pieces`",
             f"numpy vector operations: {cg} at {sizes}",
             f"keep: numpy's cost {100 * (cg_big - 1):.0f} % more at {big['n'] // 1000}k" if cg_big >= 1.05 else
             "replace by numpy's vector operations (one thread: the same bits for any number of threads)"]]
    return lines + markdown_table(["piece", "measured", "recommendation"], rows)


def render(report: Dict[str, Any]) -> str:
    s = report["settings"]
    lines = ["# The learner's Newton solver against LIBLINEAR", "",
             f"Generated by `{report['command']}` (module docstring of `bench/bench_solver.py`: workload, matrices, "
             f"commands) at commit {report['commit']} on {report['machine']['cpu_model']} "
             f"({report['machine']['nproc']} cores, shared with other jobs: load average {report['load'][0]} at the "
             f"start, {report['load'][1]} at the end). LIBLINEAR {report['liblinear']} (`liblinear-official`, built "
             "without OpenMP: one thread).", "",
             f"The problem: L2 logistic regression with an unpenalized intercept at C = {s['C']:g} on the reduced "
             f"{s['features']} matrix the default learner's final fit solves; the learner's tol = {s['tol']:g}, "
             "LIBLINEAR's -e set to stop at the same gradient norm: the learner stops at |g(x)| <= tol |g(x0)|, x0 zero weights "
             "and the intercept of the class prior, LIBLINEAR at |g(w)| <= e min(pos, neg) / l |g(0)|, so "
             "e = tol (l / min(pos, neg)) |g(x0)| / |g(0)| (about 2 tol on these balanced classes; the last column "
             "of the ratio table). Figures are medians of "
             f"{s['repeats']} runs taken in turn. **CPU seconds are the main figure** (user + sys of the whole "
             "process, all threads): the machine is loaded, so wall seconds are shown but inflated by waiting for a "
             "core. \"solve CPU\" is the solver call alone inside the process; \"whole CPU\" adds reading the matrix "
             "(the `load` row) and the solver's setup. Objective gap: (F - F*) / F*, F the learner's objective "
             "evaluated by one function on each solution, F* that of a reference solve at tol 1e-9.", ""]
    header = ["n", "matrix (rows × cols, nnz)", "solver", "threads", "solve CPU s", "solve wall s", "setup CPU s",
              "whole CPU s", "whole CPU − imports s", "peak RSS MiB (after imports)", "Newton steps",
              "Hessian products", "objective gap"]
    rows = []
    for r in report["results"]:
        shape = f"{r['shape'][0]:,} × {r['shape'][1]:,}, {r['nnz']:,}"
        for name, m in r["medians"].items():
            solver, threads = label(name)
            sol = r["objective"]["solutions"].get(f"{name}.npz", {})
            rows.append([f"{r['n']:,}", shape, solver, threads, f"{m.get('solve_cpu', 0):.2f}",
                         f"{m.get('solve_wall', 0):.2f}", f"{m.get('setup_cpu', 0):.2f}", f"{m['cpu_seconds']:.2f}",
                         f"{m['cpu_seconds'] - m['imports_cpu']:.2f}",
                         f"{m['peak_rss_mb']:.0f} ({m['imports_rss_mb']:.0f})",
                         str(int(m["newton_steps"])) if "newton_steps" in m else "—",
                         str(int(m["hessian_products"])) if "hessian_products" in m else "—",
                         f"{sol['gap']:.1e}" if sol else "—"])
            shape = ""
    lines += markdown_table(header, rows, "rlllrrrrrrrrr")
    lines += ["", "Ratios to LIBLINEAR's figures (the learner's solver over LIBLINEAR; below 1: the learner's is "
              "cheaper), and LIBLINEAR's -e:", ""]
    ratio_rows = []
    for r in report["results"]:
        med = r["medians"]
        lib = med.get("liblinear")
        if not lib:
            continue
        for name in (k for k in med if k.startswith("tron")):
            m = med[name]
            ratio_rows.append([f"{r['n']:,}", *label(name), f"{m['solve_cpu'] / lib['solve_cpu']:.2f}",
                               f"{(m['cpu_seconds'] - m['imports_cpu']) / (lib['cpu_seconds'] - lib['imports_cpu']):.2f}",
                               f"{m['solve_wall'] / lib['solve_wall']:.2f}", f"{m['peak_rss_mb'] / lib['peak_rss_mb']:.2f}",
                               f"{r['eps']:.4g}"])
    lines += markdown_table(["n", "solver", "threads", "solve CPU", "whole CPU − imports", "solve wall", "peak RSS",
                             "LIBLINEAR -e"], ratio_rows, "rlrrrrrr")
    lines += ["", "The learner's solver gives the same bits on 1 and 2 threads (SHA-256 of the weights and intercept): "
              + ", ".join(f"{r['n']:,}: " + ("yes" if same_bits(r) else "no") for r in report["results"]) + "."]
    lines += conclusion(report)
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="step")
    prep = sub.add_parser("prepare")
    prep.add_argument("--corpus", type=Path, required=True)
    prep.add_argument("--n", type=int, required=True)
    prep.add_argument("--features", default="presence")
    prep.add_argument("--out", type=Path, required=True)
    solve = sub.add_parser("solve")
    solve.add_argument("solver", choices=SOLVERS)
    evaluate = sub.add_parser("evaluate")
    evaluate.add_argument("--solutions", nargs="*", default=[])
    for q in (solve, evaluate):
        q.add_argument("--matrix", type=Path, required=True)
        q.add_argument("--C", type=float, default=0.1)
        q.add_argument("--tol", type=float, default=1e-3)
    solve.add_argument("--eps", type=float, default=0.0)
    solve.add_argument("--threads", type=int, default=1)
    solve.add_argument("--out", type=Path, required=True)
    p.add_argument("--sizes", type=int, nargs="*", default=[8000, 32000, 128000])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--C", type=float, default=0.1)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--features", default="presence", choices=("presence", "nb"))
    p.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/bench_solver"))
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "bench_solver")
    p.add_argument("--render-only", action="store_true", help="rewrite the Markdown page from the JSON results")
    args = p.parse_args(argv)
    if args.step:
        {"prepare": child_prepare, "solve": child_solve, "evaluate": child_evaluate}[args.step](args)
        return
    if args.render_only:
        report = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        args.out.with_suffix(".md").write_text(render(report), encoding="utf-8")
        return
    import os

    import liblinear  # noqa: F401  (an ImportError now, not in the first child, when LIBLINEAR is missing)

    report: Dict[str, Any] = {
        "command": "python -m bench.bench_solver " + " ".join(sys.argv[1:] if argv is None else argv),
        "commit": command_output(["git", "rev-parse", "--short", "HEAD"]), "machine": machine_facts(),
        "liblinear": command_output(["pip", "show", "liblinear-official"]).partition("Version: ")[2].split("\n")[0],
        "settings": {"C": args.C, "tol": args.tol, "features": args.features, "repeats": args.repeats,
                     "threads": args.threads}, "load": [f"{os.getloadavg()[0]:.1f}", None], "results": []}
    args.data_dir.mkdir(parents=True, exist_ok=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    corpus = prepare_corpus(args.data_dir, max(args.sizes))
    for n in sorted(args.sizes):
        report["results"].append(run_size(args, corpus, n))
        report["load"][1] = f"{os.getloadavg()[0]:.1f}"
        args.out.with_suffix(".json").write_text(json.dumps(relative_paths(report), indent=1) + "\n",
                                                 encoding="utf-8")
    args.out.with_suffix(".md").write_text(render(report), encoding="utf-8")
    print(render(report))


if __name__ == "__main__":
    main()
