"""Pure-Python brute-force reference for the subtree-boosting engine.

Everything here is written from the specification (docs/algorithms.md, sections 1-3), not
from the engine, and favours obviousness over speed:

- embeddings are counted straight from Definition 1 (injective, label-,
  parent- and sibling-order-preserving maps), by a backtracking search over
  all node assignments and, for tiny inputs, by trying every map outright;
- the subtrees of a forest are enumerated as connected node subsets, whose
  induced ordered trees give the canonical codes; an embedding is an ordered
  isomorphism onto its image, so the number of embeddings of t in u is the
  number of connected node sets of u whose induced tree is t;
- the best rule is found by scoring every (t, z) or (t, y) and taking the
  first under the total order of §3.6;
- the boosting loops follow §2.5 (BACT AdaBoost / Arc-GV) and §3.3/§3.8
  (real AdaBoost with frequency thresholds).

A tree is given as preorder lists: `labels[v]` and `parents[v]` (local, -1 for
the root). A pattern is given by its code, a tuple of (depth, label) pairs in
preorder. Labels may be ids or strings; ordering uses `vocab` strings.
"""
import itertools
import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy

TIE_REL = 1e-12
GAMMA_GUARD = 1 - 1e-12
GAMMA_CAPPED = 1 - 1e-9


# --------------------------------------------------------------------------------------------
# Trees


def forest_docs(forest) -> List[Tuple[List[int], List[int]]]:
    """Every document of a Forest as (label ids, local parents)."""
    out = []
    for i in range(len(forest)):
        lo, hi = int(forest.offsets[i]), int(forest.offsets[i + 1])
        labels = [int(x) for x in forest.labels[lo:hi]]
        parents = [int(p) - lo if k else -1 for k, p in enumerate(forest.parents[lo:hi])]
        out.append((labels, parents))
    return out


def depths_of(parents: Sequence[int]) -> List[int]:
    depths = []
    for v, p in enumerate(parents):
        depths.append(0 if p < 0 else depths[p] + 1)
    return depths


def children_of(parents: Sequence[int]) -> List[List[int]]:
    kids: List[List[int]] = [[] for _ in parents]
    for v, p in enumerate(parents):
        if p >= 0:
            kids[p].append(v)
    return kids


def code_to_tree(code: Sequence[Tuple[int, object]]) -> Tuple[list, List[int]]:
    """Preorder labels and parents of the tree whose code is `code`."""
    labels, parents, path = [], [], []
    for v, (d, lab) in enumerate(code):
        if v == 0:
            assert d == 0, code
        else:
            assert 1 <= d <= len(path), code
        del path[d:]
        parents.append(path[-1] if path else -1)
        labels.append(lab)
        path.append(v)
    return labels, parents


def is_valid_code(code) -> bool:
    if not code or code[0][0] != 0:
        return False
    return all(1 <= code[k][0] <= code[k - 1][0] + 1 for k in range(1, len(code)))


def nested_to_arrays(tree) -> Tuple[list, List[int]]:
    """Preorder labels and parents of a nested (label, children) tuple (iterative)."""
    labels, parents = [], []
    stack = [(tree, -1)]
    while stack:
        (lab, kids), parent = stack.pop()
        parents.append(parent)
        labels.append(lab)
        me = len(labels) - 1
        for kid in reversed(kids):
            stack.append((kid, me))
    return labels, parents


def arrays_to_nested(labels, parents):
    kids = children_of(parents)

    def build(v):
        return (labels[v], tuple(build(c) for c in kids[v]))

    return build(0)


# --------------------------------------------------------------------------------------------
# Embeddings (Definition 1)


def _left_siblings(parents: Sequence[int]) -> List[List[int]]:
    kids = children_of(parents)
    left = [[] for _ in parents]
    for group in kids:
        for k, v in enumerate(group):
            left[v] = group[:k]
    return left


def count_embeddings(code, labels, parents, *, allow_root: bool = True) -> int:
    """Number of maps phi: pattern nodes -> document nodes that are injective and
    preserve labels, the parent relation and the left-sibling relation.

    The search assigns pattern nodes one after another and rejects a partial
    map as soon as a condition of the definition fails for a pair of assigned
    nodes; every complete map it counts satisfies all conditions, and every
    map satisfying them is reached. allow_root=False forbids the document
    root (node 0) as an image."""
    t_labels, t_parents = code_to_tree(code)
    t_left = _left_siblings(t_parents)
    u_left = _left_siblings(parents)
    k, n = len(t_labels), len(labels)
    phi = [-1] * k
    used = [False] * n

    def ok(v, x):
        if labels[x] != t_labels[v] or used[x]:
            return False
        if x == 0 and not allow_root:
            return False
        p = t_parents[v]
        if p >= 0 and parents[x] != phi[p]:
            return False
        for s in t_left[v]:  # s was assigned before v (preorder)
            if phi[s] not in u_left[x]:
                return False
        return True

    def rec(v):
        if v == k:
            return 1
        total = 0
        for x in range(n):
            if ok(v, x):
                phi[v] = x
                used[x] = True
                total += rec(v + 1)
                used[x] = False
                phi[v] = -1
        return total

    return rec(0)


def count_embeddings_naive(code, labels, parents, *, allow_root: bool = True) -> int:
    """The same count by trying all n^k maps (tiny inputs only)."""
    t_labels, t_parents = code_to_tree(code)
    t_left = _left_siblings(t_parents)
    u_left = _left_siblings(parents)
    n = len(labels)
    total = 0
    for phi in itertools.product(range(n), repeat=len(t_labels)):
        if len(set(phi)) != len(phi):
            continue
        if not allow_root and 0 in phi:
            continue
        if any(labels[phi[v]] != t_labels[v] for v in range(len(phi))):
            continue
        if any(t_parents[v] >= 0 and parents[phi[v]] != phi[t_parents[v]] for v in range(len(phi))):
            continue
        if any(phi[s] not in u_left[phi[v]] for v in range(len(phi)) for s in t_left[v]):
            continue
        total += 1
    return total


def is_subtree(small_code, big_code) -> bool:
    labels, parents = code_to_tree(big_code)
    return count_embeddings(small_code, labels, parents) > 0


# --------------------------------------------------------------------------------------------
# All subtrees of a forest, by connected node subsets


def connected_subsets(parents: Sequence[int], max_size: int, *, allow_root: bool = True):
    """Every set of nodes (sorted tuple) of size 1..max_size that induces a connected subtree."""
    n = len(parents)
    nodes = [v for v in range(n) if allow_root or v != 0]
    for size in range(1, max_size + 1):
        for subset in itertools.combinations(nodes, size):
            members = set(subset)
            tops = [v for v in subset if parents[v] not in members]
            if len(tops) == 1:
                yield subset


def induced_code(subset, labels, depths) -> tuple:
    """Code of the ordered tree induced on a connected node set (preorder restricts to preorder)."""
    top = depths[subset[0]]
    return tuple((depths[v] - top, labels[v]) for v in subset)


def all_subtrees(docs, max_size: int, *, include_root: bool = False, min_support: int = 1) -> Dict[tuple, Dict[int, int]]:
    """code -> {doc: number of embeddings}, for every subtree of the documents up to max_size nodes
    that occurs in at least min_support documents."""
    table: Dict[tuple, Dict[int, int]] = {}
    for i, (labels, parents) in enumerate(docs):
        depths = depths_of(parents)
        for subset in connected_subsets(parents, max_size, allow_root=include_root):
            code = induced_code(subset, labels, depths)
            per_doc = table.setdefault(code, {})
            per_doc[i] = per_doc.get(i, 0) + 1
    return {code: c for code, c in table.items() if len(c) >= min_support}


def subtree_codes_of(code, max_size: Optional[int] = None) -> set:
    """The codes of all subtrees of the pattern `code` (itself included)."""
    labels, parents = code_to_tree(code)
    depths = depths_of(parents)
    return {induced_code(s, labels, depths) for s in connected_subsets(parents, max_size or len(code))}


def code_key(code, vocab) -> tuple:
    """Sort key of a code: (depth, label string), labels by code point."""
    return tuple((d, vocab[lab] if vocab is not None else lab) for d, lab in code)


# --------------------------------------------------------------------------------------------
# Weight sums, gains, bounds (§2, §3)


def weight_sums(counts: Sequence[int], w: Sequence[float], y: Sequence[int], z: int) -> Dict[str, float]:
    """The sums of §3.2 for threshold z, each summed directly over its documents."""
    s = dict.fromkeys(("Gp", "Gn", "Lp", "Ln", "Ap", "An", "Tp", "Tn", "Wp", "Wn"), 0.0)
    for c, wi, yi in zip(counts, w, y):
        side = "p" if yi > 0 else "n"
        s["T" + side] += wi
        if c >= z:
            s["G" + side] += wi
        elif c > 0:
            s["L" + side] += wi
        else:
            s["W" + side] += wi
        if c > 0:
            s["A" + side] += wi
    s["P"] = s["Gp"] + s["Ln"]
    s["N"] = s["Gn"] + s["Lp"]
    return s


def gain_iwakura(P, N, Wp, Wn) -> float:
    """The printed gain |sqrt P - sqrt N| + |sqrt W-not+ - sqrt W-not-|."""
    return abs(math.sqrt(P) - math.sqrt(N)) + abs(math.sqrt(Wp) - math.sqrt(Wn))


def z_star(P, N, Wp, Wn) -> float:
    """Real AdaBoost's normalizer at the optimal confidences."""
    return 2 * math.sqrt(P * N) + 2 * math.sqrt(Wp * Wn)


def gain_z(P, N, Wp, Wn) -> float:
    """The Z criterion as a value to maximize: (sqrt P - sqrt N)^2 + (sqrt W-not+ - sqrt W-not-)^2."""
    return (math.sqrt(P) - math.sqrt(N)) ** 2 + (math.sqrt(Wp) - math.sqrt(Wn)) ** 2


def criterion_value(criterion, s) -> float:
    f = gain_iwakura if criterion == "iwakura" else gain_z
    return f(s["P"], s["N"], s["Wp"], s["Wn"])


def bact_gain(counts, w, y, sign) -> float:
    """gain(<t, y>) = sum_i y_i d_i h(x_i), h = y if t occurs else -y."""
    return sum(yi * wi * (sign if c > 0 else -sign) for c, wi, yi in zip(counts, w, y))


def mu(Ap, An, Tp, Tn) -> float:
    """Theorem 1: BACT's bound on the gain of every supertree."""
    total = Tp - Tn
    return max(2 * Ap - total, 2 * An + total)


def _clip(x, lo, hi):
    return min(max(x, lo), hi)


def u_joint(Ap, An, Tp, Tn) -> float:
    """The joint corrected bound of §3.7 (ii)."""
    ap = _clip((Tp - An) / 2, 0.0, Ap)
    an = _clip((Tn - Ap) / 2, 0.0, An)
    b_pos = math.sqrt(ap + An) + math.sqrt(max(Tp - ap, 0.0)) - math.sqrt(max(Tn - An, 0.0))
    b_neg = math.sqrt(Ap + an) + math.sqrt(max(Tn - an, 0.0)) - math.sqrt(max(Tp - Ap, 0.0))
    return max(b_pos, b_neg)


def u_joint_objective(ap, an, Tp, Tn) -> float:
    """phi(a+, a-) of §3.7 (ii), which u_joint maximizes over the box."""
    return math.sqrt(ap + an) + abs(math.sqrt(max(Tp - ap, 0.0)) - math.sqrt(max(Tn - an, 0.0)))


def u_sep(Ap, An, Tp, Tn) -> float:
    Wp, Wn = Tp - Ap, Tn - An
    return math.sqrt(Ap + An) + max(math.sqrt(Tp) - math.sqrt(max(Wn, 0)), math.sqrt(Tn) - math.sqrt(max(Wp, 0)))


def u_paper(counts, w, y) -> float:
    """The paper's (invalid) bound: max over y, z of sqrt W<y,z>, plus max_u |sqrt T_u - sqrt W-not<-u>|."""
    top = max(max(counts), 1)
    first = 0.0
    for z in range(1, top + 1):
        s = weight_sums(counts, w, y, z)
        first = max(first, math.sqrt(s["P"]), math.sqrt(s["N"]))
    s = weight_sums(counts, w, y, 1)
    second = max(abs(math.sqrt(s["Tp"]) - math.sqrt(s["Wn"])), abs(math.sqrt(s["Tn"]) - math.sqrt(s["Wp"])))
    return first + second


def z_low(Ap, An, Tp, Tn) -> float:
    """Lower bound on Z* of every supertree (§3.7 (iii))."""
    return 2 * math.sqrt(max(Tp - Ap, 0.0) * max(Tn - An, 0.0))


def z_value_bound(Ap, An, Tp, Tn) -> float:
    """The Z bound as a bound on the value to maximize: T - Z_low."""
    return Tp + Tn - z_low(Ap, An, Tp, Tn)


def reference_bound(criterion, Ap, An, Tp, Tn) -> float:
    if criterion == "bact":
        return mu(Ap, An, Tp, Tn)
    if criterion == "z":
        return z_value_bound(Ap, An, Tp, Tn)
    return u_joint(Ap, An, Tp, Tn)


# --------------------------------------------------------------------------------------------
# Exhaustive weak learner (§3.6 order)


def dense_counts(per_doc: Dict[int, int], m: int) -> List[int]:
    return [per_doc.get(i, 0) for i in range(m)]


def candidates(patterns, w, y, criterion, *, presence=False, vocab=None):
    """Every candidate as (value, size, code key, z, -sign, code, sign)."""
    m = len(w)
    out = []
    for code, per_doc in patterns.items():
        counts = dense_counts(per_doc, m)
        key = code_key(code, vocab)
        if criterion == "bact":
            for sign in (+1, -1):
                out.append((bact_gain(counts, w, y, sign), len(code), key, 1, -sign, code, sign))
            continue
        top = 1 if presence else max(counts)
        for z in range(1, top + 1):
            out.append((criterion_value(criterion, weight_sums(counts, w, y, z)), len(code), key, z, -1, code, +1))
    return out


def tied(cands):
    """The candidates whose value ties the best one (within 1e-12 * max(1, |best|))."""
    best = max(c[0] for c in cands)
    tol = TIE_REL * max(1.0, abs(best))
    return [c for c in cands if c[0] >= best - tol]


def select(cands):
    """The first candidate under: value descending (ties within 1e-12 * max(1, |best|)), size, code, z, y=+1 first."""
    return min(tied(cands), key=lambda c: (c[1], c[2], c[3], c[4]))


def exhaustive_best_rule(patterns, w, y, criterion, *, presence=False, vocab=None) -> Dict[str, object]:
    value, size, _, z, _, code, sign = select(candidates(patterns, w, y, criterion, presence=presence, vocab=vocab))
    return {"code": code, "z": z, "sign": sign, "value": value, "size": size}


def pruned_search(patterns, w, y, criterion, bound_fn, *, vocab=None):
    """Depth-first search over the enumeration tree (parent = code minus its last pair), in code
    order, skipping the extensions of t when bound_fn(t) < tau - tol. Used to show which bounds
    are safe; the result equals exhaustive search exactly when the bound never under-estimates."""
    m = len(w)
    kids: Dict[tuple, list] = {}
    roots = []
    for code in patterns:
        (kids.setdefault(code[:-1], []) if len(code) > 1 else roots).append(code)
    best = None

    def consider(code):
        nonlocal best
        counts = dense_counts(patterns[code], m)
        for z in range(1, max(counts) + 1):
            cand = (criterion_value(criterion, weight_sums(counts, w, y, z)), len(code), code_key(code, vocab), z, -1, code, 1)
            best = cand if best is None else select([best, cand])

    def visit(code):
        consider(code)
        tau = best[0]
        if bound_fn(code) < tau - TIE_REL * max(1.0, abs(tau)):
            return
        for child in sorted(kids.get(code, ()), key=lambda c: code_key(c, vocab)):
            visit(child)

    for root in sorted(roots, key=lambda c: code_key(c, vocab)):
        visit(root)
    return {"code": best[5], "z": best[3], "value": best[0]}


# --------------------------------------------------------------------------------------------
# Boosting loops


def boosting_weights(scores, y):
    """w_i proportional to exp(-y_i s_i), shifted by M = max_j(-y_j s_j) (§3.3)."""
    e = [-yi * si for yi, si in zip(y, scores)]
    top = max(e)
    raw = [math.exp(v - top) for v in e]
    total = sum(raw)
    return [r / total for r in raw]


def reference_boost(docs, y, vocab, *, algorithm, criterion="iwakura", n_rounds, max_pattern_size,
                    min_support=1, smoothing=None, boosting="adaboost", include_root=False) -> Dict[str, object]:
    """Boost one binary problem (y in {-1, +1}) for n_rounds rounds.

    RETURNS: {"rules": [(code as (depth, label string), z, a, b)], "rounds": [per-round dicts],
    "scores": final training scores, "stopped": bool}. A BACT rule <t, y> with step alpha is
    stored as a = alpha*y (t present), b = -alpha*y (t absent), z = 1."""
    m = len(y)
    patterns = all_subtrees(docs, max_pattern_size, include_root=include_root, min_support=min_support)
    eps = smoothing if smoothing is not None else 1.0 / m
    scores = [0.0] * m
    alpha_sum = 0.0
    rules, rounds = [], []
    stopped = False
    crit = "bact" if algorithm == "bact" else criterion
    for _ in range(n_rounds):
        w = boosting_weights(scores, y)
        best = exhaustive_best_rule(patterns, w, y, crit, presence=algorithm == "presence", vocab=vocab)
        counts = dense_counts(patterns[best["code"]], m)
        entry = {"code": best["code"], "value": best["value"], "weights": w}
        if algorithm == "bact":
            gamma = best["value"]
            if gamma >= GAMMA_GUARD:
                gamma = GAMMA_CAPPED
            if boosting == "arcgv" and alpha_sum > 0:
                rho = max(0.0, min(yi * si for yi, si in zip(y, scores)) / alpha_sum)
                entry["rho"] = rho
                if gamma <= rho:
                    stopped = True
                    break
                alpha = 0.5 * math.log((1 + gamma) / (1 - gamma)) - 0.5 * math.log((1 + rho) / (1 - rho))
                if alpha <= 0:
                    stopped = True
                    break
            else:
                alpha = 0.5 * math.log((1 + gamma) / (1 - gamma))
                entry["rho"] = 0.0
            alpha_sum += alpha
            a, b, z = alpha * best["sign"], -alpha * best["sign"], 1
            h = [a if c > 0 else b for c in counts]
            entry["alpha"] = alpha
        else:
            z = best["z"]
            s = weight_sums(counts, w, y, z)
            a = 0.5 * math.log((s["P"] + eps) / (s["N"] + eps))
            b = 0.5 * math.log((s["Wp"] + eps) / (s["Wn"] + eps))
            h = [b if c == 0 else (a if c >= z else -a) for c in counts]
        entry["Z"] = sum(wi * math.exp(-yi * hi) for wi, yi, hi in zip(w, y, h))
        scores = [si + hi for si, hi in zip(scores, h)]
        if algorithm == "bact":
            margin = min(yi * si for yi, si in zip(y, scores))
            entry["min_margin"] = margin / alpha_sum if alpha_sum > 0 else 0.0
        entry.update(z=z, a=a, b=b)
        rounds.append(entry)
        rules.append((tuple((d, vocab[lab]) for d, lab in best["code"]), z, a, b))
    return {"rules": rules, "rounds": rounds, "scores": numpy.array(scores), "stopped": stopped}


def reference_margins(rules, docs, vocab, *, allow_root=True) -> numpy.ndarray:
    """Sum of the stumps of `rules` ((code strings, z, a, b)) on each document, by direct counting;
    allow_root=False counts only embeddings that avoid the document root, as in training without
    root patterns."""
    out = numpy.zeros(len(docs))
    for i, (labels, parents) in enumerate(docs):
        strings = [vocab[lab] if lab >= 0 else None for lab in labels]
        for code, z, a, b in rules:
            c = count_embeddings(code, strings, parents, allow_root=allow_root)
            out[i] += b if c == 0 else (a if c >= z else -a)
    return out


# --------------------------------------------------------------------------------------------
# Random inputs for the property tests (hypothesis)


def random_tree_arrays(draw, st, n_nodes: int, shape: str) -> List[int]:
    """Local parents of a random preorder tree: each new node hangs below a node on the
    rightmost path of the tree so far (which keeps preorder)."""
    parents = [-1]
    path = [0]
    for v in range(1, n_nodes):
        if shape == "chain":
            d = len(path)
        elif shape == "flat":
            d = 1
        elif shape == "sentences":
            d = draw(st.sampled_from([1, len(path)]))
        else:
            d = draw(st.integers(1, len(path)))
        del path[d:]
        parents.append(path[-1])
        path.append(v)
    return parents


# Node labels whose id order (first appearance) differs from their code-point order, and
# that need percent-encoding in the BACT format.
LABEL_POOL = ["b", "a", "é", "B", "c", "a b", "(x)", "%", "中"]


def forests(st, *, min_docs=2, max_docs=8, max_nodes=10, min_labels=2, max_labels=4, labeled_roots=True):
    """A hypothesis strategy for (nested trees, label strings): random shapes (random, chain,
    flat, sentence chains), a virtual ROOT or (sometimes) a labeled document root."""

    @st.composite
    def build(draw):
        n_labels = draw(st.integers(min_labels, max_labels))
        names = draw(st.permutations(LABEL_POOL))[:n_labels]
        shape = draw(st.sampled_from(["random", "chain", "flat", "sentences"]))
        labeled = labeled_roots and draw(st.booleans())
        trees = []
        for _ in range(draw(st.integers(min_docs, max_docs))):
            n = draw(st.integers(1, max_nodes))
            parents = random_tree_arrays(draw, st, n, shape)
            labels = [draw(st.sampled_from(names)) for _ in range(n)]
            if not labeled or draw(st.booleans()):
                labels[0] = "ROOT"
            trees.append(arrays_to_nested(labels, parents))
        return trees, names

    return build()


def weights_and_labels(st, m):
    """Random positive weights summing to 1 and random +-1 labels with both classes."""

    @st.composite
    def build(draw):
        raw = [draw(st.floats(0.05, 1.0)) for _ in range(m)]
        total = sum(raw)
        y = [draw(st.sampled_from([-1, 1])) for _ in range(m)]
        if len(set(y)) == 1:
            y[draw(st.integers(0, m - 1))] *= -1
        return [r / total for r in raw], y

    return build()


def random_trees(seed, *, min_docs=2, max_docs=8, max_nodes=10, min_labels=2, max_labels=4):
    """A seeded random forest as (nested trees, label strings): fuller trees than the shrinkable
    strategy above tends to produce (every document gets 1..max_nodes nodes uniformly)."""
    rng = numpy.random.default_rng(seed)
    names = [LABEL_POOL[i] for i in rng.permutation(len(LABEL_POOL))[: int(rng.integers(min_labels, max_labels + 1))]]
    shape = ["random", "chain", "flat", "sentences"][int(rng.integers(4))]
    labeled = bool(rng.integers(2))
    trees = []
    for _ in range(int(rng.integers(min_docs, max_docs + 1))):
        n = int(rng.integers(1, max_nodes + 1))
        parents, path = [-1], [0]
        for v in range(1, n):
            if shape == "chain":
                d = len(path)
            elif shape == "flat":
                d = 1
            elif shape == "sentences":
                d = [1, len(path)][int(rng.integers(2))]
            else:
                d = int(rng.integers(1, len(path) + 1))
            del path[d:]
            parents.append(path[-1])
            path.append(v)
        labels = [names[int(rng.integers(len(names)))] for _ in range(n)]
        if not labeled or rng.integers(2):
            labels[0] = "ROOT"
        trees.append(arrays_to_nested(labels, parents))
    return trees, names


def random_weights_and_labels(seed, m):
    rng = numpy.random.default_rng(seed)
    w = rng.uniform(0.05, 1.0, m)
    y = rng.choice([-1, 1], m)
    if len(set(y.tolist())) == 1:
        y[int(rng.integers(m))] *= -1
    return (w / w.sum()).tolist(), [int(v) for v in y]


def random_binary_classes(n: int, seed: int, names=("+1", "-1")) -> List[str]:
    """n random class names of two, the first document of the first class and the second of the other."""
    rng = numpy.random.default_rng(seed)
    y = [names[0] if v else names[1] for v in rng.random(n) < 0.5]
    y[0], y[1] = names[0], names[1]
    return y


def string_docs(f):
    vocab = f.vocab.to_list()
    return [([vocab[l] if l >= 0 else "\x00root" for l in labels], parents) for labels, parents in forest_docs(f)]


def reference_tfidf(train, other, max_size: int, min_support: int):
    """Brute force: the mined subtrees of `train` (string codes), their idf, and the normalized sublinear tf-idf
    rows of both forests over exactly those subtrees."""
    vocab = train.vocab.to_list()
    table = all_subtrees(forest_docs(train), max_size, min_support=min_support)
    codes = sorted(tuple((d, vocab[l]) for d, l in code) for code in table)
    n = len(train)
    idf = {}
    for code in table:
        key = tuple((d, vocab[l]) for d, l in code)
        idf[key] = math.log((1 + n) / (1 + len(table[code]))) + 1
    def rows(f):
        X = numpy.zeros((len(f), len(codes)))
        for i, (labels, parents) in enumerate(string_docs(f)):
            for j, code in enumerate(codes):
                c = count_embeddings(code, labels, parents, allow_root=False)
                if c:
                    X[i, j] = (1 + math.log(c)) * idf[code]
            norm = numpy.linalg.norm(X[i])
            if norm:
                X[i] /= norm
        return X
    return codes, idf, rows(train), rows(other)


def linear_objective(w, c, X, y, *, C: float, l1_ratio: float = 0.0, loss: str = "logistic") -> float:
    """The linear solver's objective at (w, c): the sum of the losses at the margins y (Xw + c) plus the penalty."""
    m = numpy.asarray(y, dtype=numpy.float64) * (X @ w + c)
    losses = numpy.logaddexp(0.0, -m) if loss == "logistic" else numpy.maximum(0.0, 1.0 - m) ** 2
    return float(losses.sum()) + (1.0 / C) * ((1 - l1_ratio) / 2 * float(w @ w) + l1_ratio * float(numpy.abs(w).sum()))
