# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Each boosting round's best rule by branch and bound over the cached patterns (`SearchSpace`), with criteria whose
bounds hold for every supertree."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport fabs, INFINITY, NAN
from libcpp.vector cimport vector
from libcpp.algorithm cimport make_heap, pop_heap
from libcpp.pair cimport pair

from spacy_treeboost.learning._cpu cimport (release_free_heap, run_end, prefetch, shared_load, shared_store,
                                            add_pairs, positive_at)
from spacy_treeboost.learning._criteria cimport (CRIT_IWAKURA, CRIT_Z, CRIT_BACT, value, outside_term,
                                                 value_outside, bound, max0, tie_tol, weight_bound, weight_cut)
from spacy_treeboost.learning._extension cimport PatternCache
from spacy_treeboost.learning._patterns cimport PNode, Scan, BIG_COUNT, UNEXPANDED

import numpy

cdef enum:
    TRIM_SHIFT = 4  # free heap pages go back to the system once the cache has grown by 1/2^TRIM_SHIFT

CRITERIA = {"iwakura": CRIT_IWAKURA, "z": CRIT_Z, "bact": CRIT_BACT}


def py_weight_bound(double S, double Tp, double Tn) -> float:
    """`weight_bound`, for the tests."""
    return weight_bound(S, Tp, Tn)


def py_weight_cut(double Tp, double Tn, double threshold) -> float:
    """`weight_cut`, for the tests."""
    return weight_cut(Tp, Tn, threshold)


def py_bound(str criterion, double Ap, double An, double Tp, double Tn) -> float:
    """The pruning bound for a pattern with positive/negative weight Ap/An inside its documents."""
    return bound(CRITERIA[criterion], Ap, An, max0(Tp - Ap), max0(Tn - An), Tp, Tn)


def tie_tolerance(double v) -> float:
    """`tie_tol`: how close two criterion values count as a tie."""
    return tie_tol(v)


def py_value(str criterion, double P, double N, double Wp, double Wn) -> float:
    """`value`, for the tests."""
    return value(CRITERIA[criterion], P, N, Wp, Wn)


cdef struct Sums:
    double Ap
    double An
    double Wp
    double Wn
    int32_t cp
    int32_t cn


cdef struct Cand:
    double value
    int32_t node
    int32_t z
    int32_t sign
    double P
    double N
    double Ap
    double An


cdef class SearchSpace(PatternCache):
    """A `PatternCache` (whose arguments it takes) and the search of its best rule each boosting round."""
    # per-round scratch, kept so that rounds reuse their memory instead of faulting fresh pages in
    cdef vector[double] rbound_buf
    cdef vector[Sums] rsums_buf
    cdef vector[pair[double, int32_t]] heap
    cdef vector[double] sbound
    # per document (w, +0.0) if positive, (+0.0, w) if negative, w >= +0.0; a positive document's
    # second value is -0.0, which adds nothing to a sum but marks the document (`positive_at`)
    cdef vector[double] wpn
    cdef double Tp, Tn
    cdef int32_t Np, Nn
    cdef vector[double] ub_by_support, single_bound
    cdef public int64_t nodes_visited
    cdef double cut_threshold, cut_weight
    cdef double* shared_best
    cdef int prepared_crit
    cdef int64_t trim_at

    def prepare(self, weights, y, str criterion="iwakura") -> None:
        """Compute the per-document bounds for `best_rule(..., prepared=True)` with the same float64 weights
        (summing to 1), int8 labels in {-1, +1} and criterion."""
        cdef const double[:] w = numpy.ascontiguousarray(weights, dtype=numpy.float64)
        cdef const signed char[:] yy = numpy.ascontiguousarray(y, dtype=numpy.int8)
        if w.shape[0] != self.n_docs or yy.shape[0] != self.n_docs:
            raise ValueError("weights and labels must have one entry per training document")
        if not numpy.all(numpy.isfinite(weights)) or numpy.any(numpy.asarray(weights) < 0) or not numpy.sum(weights) > 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
        if not numpy.all(numpy.abs(numpy.asarray(y)) == 1):
            raise ValueError("labels must be -1 or +1")
        cdef int crit = CRITERIA[criterion]
        self._prepare(w, yy, crit)
        self.prepared_crit = crit + 1

    def best_rule(self, weights, y, str criterion="iwakura", bint presence=False, shared_best=None,
                  bint prepared=False):
        """Find the best rule this round by branch and bound (weights and y as in `prepare`).

        criterion (str): "iwakura" (printed gain), "z" (real AdaBoost Z) or "bact".
        presence (bool): Fix the threshold at z=1 (-FQ).
        shared_best (Optional[numpy.ndarray]): One float64 in shared memory: the best value the searches of the other
            root labels found this round (-inf to start), read and raised by each.
        prepared (bool): `prepare` was called with these weights, labels and criterion: only search.
        RETURNS (dict): node (-1 when no pattern exists), z, sign, value, P, N, A_pos, A_neg, nodes_visited...
        """
        cdef int crit = CRITERIA[criterion]
        if not prepared:
            self.prepare(weights, y, criterion)
        elif self.prepared_crit != crit + 1:
            raise ValueError("best_rule(prepared=True) needs a call of prepare with the same criterion first")
        self.prepared_crit = 0
        cdef double[::1] shared
        if shared_best is not None:
            shared = shared_best
            if shared.shape[0] < 1:
                raise ValueError("shared_best needs one element")
            self.shared_best = &shared[0]
        try:
            return self._best_rule(crit, presence)
        finally:
            self.shared_best = NULL

    cdef void _prepare(self, const double[:] w, const signed char[:] yy, int crit):
        """The class totals, the interleaved weights `wpn` and the bounds by support and by single document."""
        cdef Py_ssize_t k
        self.Tp = self.Tn = 0
        self.Np = self.Nn = 0
        self.wpn.assign(2 * self.n_docs, 0.0)
        for k in range(self.n_docs):
            if yy[k] > 0:
                self.Tp += w[k]
                self.Np += 1
                self.wpn[2 * k] = w[k] + 0.0
                self.wpn[2 * k + 1] = -0.0
            else:
                self.Tn += w[k]
                self.Nn += 1
                self.wpn[2 * k + 1] = w[k] + 0.0
        self._support_bounds(w, yy, crit)
        self._single_bounds(crit)

    cdef dict _best_rule(self, int crit, bint presence):
        cdef Py_ssize_t r
        cdef Cand best = Cand(value=-INFINITY, node=-1, z=1, sign=1, P=0, N=0, Ap=0, An=0)
        self.nodes_visited = 0
        cdef int32_t patterns_before = self.n_nodes
        self.cut_threshold = NAN
        cdef int32_t n_labels = self.label_rank.size()
        self.sbound.assign(n_labels, -INFINITY)
        cdef Py_ssize_t n_roots = self.roots.size()
        self.rbound_buf.resize(n_roots)
        self.rsums_buf.resize(n_roots)
        cdef double* rbound = self.rbound_buf.data()
        cdef Sums* rsums = self.rsums_buf.data()
        # a root of another worker's label is bounded by its number of documents alone, without summing them; the
        # owned roots are visited largest bound first (ties: first root) while their bound reaches the best value
        self.heap.clear()
        for r in range(n_roots):
            if self.root_owned.empty() or self.root_owned[r]:
                self._sums(self.roots[r], &rsums[r])
                rbound[r] = self._bound(crit, &rsums[r])
                self.heap.push_back(pair[double, int32_t](rbound[r], -<int32_t>r))
            else:
                rbound[r] = self.ub_by_support[self.node(self.roots[r]).n_docs]
            self.sbound[self.node(self.roots[r]).label] = rbound[r]
        make_heap(self.heap.begin(), self.heap.end())
        while not self.heap.empty():
            pop_heap(self.heap.begin(), self.heap.end())
            r = -self.heap.back().second
            self.heap.pop_back()
            if rbound[r] < self._threshold(&best):
                break
            self._visit(self.roots[r], &rsums[r], crit, presence, &best)
        # free pages go back to the system once the search space has grown by a fraction (rounds reuse them)
        if self.n_nodes >= self.trim_at and self.n_nodes != patterns_before:
            release_free_heap()
            self.trim_at = self.n_nodes + (self.n_nodes >> TRIM_SHIFT)
        cdef int32_t root = best.node
        while root >= 0 and self.node(root).parent >= 0:
            root = self.node(root).parent
        return {"node": best.node, "z": best.z, "sign": best.sign, "value": best.value,
                "P": best.P, "N": best.N, "A_pos": best.Ap, "A_neg": best.An,
                "T_pos": self.Tp, "T_neg": self.Tn, "nodes_visited": self.nodes_visited,
                "root": root, "root_bound": rbound[root] if root >= 0 else -INFINITY}

    cdef void _support_bounds(self, const double[:] w, const signed char[:] yy, int crit):
        """ub_by_support[n] bounds every pattern in at most n documents (each class's n largest weights inside)."""
        weights, positive = numpy.asarray(w), numpy.asarray(yy) > 0
        cdef const double[:] wp = numpy.sort(weights[positive])[::-1] + 0.0
        cdef const double[:] wn = numpy.sort(weights[~positive])[::-1] + 0.0
        cdef Py_ssize_t k
        self.ub_by_support.assign(self.n_docs + 1, 0.0)
        cdef Sums sm
        sm.Ap = sm.An = 0
        sm.cp = sm.cn = 0
        for k in range(self.n_docs + 1):
            self._complete(&sm)
            self.ub_by_support[k] = self._bound(crit, &sm)
            if k < wp.shape[0]:
                sm.Ap += wp[k]
                sm.cp += 1
            if k < wn.shape[0]:
                sm.An += wn[k]
                sm.cn += 1

    cdef inline double _prune_tol(self, double v) noexcept:
        """Pruning tolerance: looser than the tie tolerance, so rounding never prunes a tie."""
        return 1e-9 * (fabs(v) if fabs(v) > 1.0 else 1.0)

    cdef inline double _threshold(self, Cand* best) noexcept:
        """The bound below which patterns cannot win: the best value here or in `shared_best`, less `_prune_tol`."""
        cdef double v = best.value
        cdef double other
        if self.shared_best != NULL:
            other = shared_load(self.shared_best)
            if other > v:
                v = other
        return v - self._prune_tol(v)

    cdef inline void _complete(self, Sums* sm) noexcept:
        """Weights outside the pattern's documents; a block without documents weighs exactly 0."""
        sm.Wp = 0.0 if sm.cp >= self.Np else max0(self.Tp - sm.Ap)
        sm.Wn = 0.0 if sm.cn >= self.Nn else max0(self.Tn - sm.An)

    cdef inline double _bound(self, int crit, Sums* sm) noexcept:
        return bound(crit, sm.Ap, sm.An, sm.Wp, sm.Wn, self.Tp, self.Tn)

    cdef inline double _weight_cut(self, double threshold) noexcept:
        """The largest pattern weight Ap + An whose `weight_bound` is below `threshold` (-1 if none is)."""
        if threshold != self.cut_threshold:
            self.cut_threshold = threshold
            self.cut_weight = weight_cut(self.Tp, self.Tn, threshold)
        return self.cut_weight

    cdef void _single_bounds(self, int crit) noexcept:
        """single_bound[d]: the bound of a pattern occurring in document d only."""
        cdef Sums sm
        cdef Py_ssize_t d
        self.single_bound.resize(self.n_docs)
        for d in range(self.n_docs):
            sm.Ap = 0.0 + self.wpn[2 * d]
            sm.An = 0.0 + self.wpn[2 * d + 1]
            sm.cp = positive_at(self.wpn.data(), d)
            sm.cn = 1 - sm.cp
            self._complete(&sm)
            self.single_bound[d] = self._bound(crit, &sm)

    cdef inline void _sums(self, int32_t i, Sums* sm) noexcept:
        cdef const Scan* p = &self.scan[i]
        cdef int32_t n = 1 if p.docs < 0 else p.docs
        cdef double g[2]
        cdef int32_t cp = 0
        g[0] = g[1] = 0.0
        add_pairs(self.pool_docs.data() + p.doc_off, n, self.wpn.data(), g, &cp)
        sm.Ap = g[0]
        sm.An = g[1]
        sm.cp = cp
        sm.cn = n - cp
        self._complete(sm)

    cdef int _visit(self, int32_t i, Sums* sm, int crit, bint presence, Cand* best) except -1:
        """Evaluate pattern i (its sums known, its bound passed), then its extensions (pruned by bound)."""
        self.nodes_visited += 1
        self._evaluate(i, sm, crit, presence, best)
        if self.node(i).size >= self.max_pattern_size or self._never_extended(i):
            return 0
        if self.node(i).state == UNEXPANDED:
            self._expand(i)
        cdef int32_t c, first = self.node(i).first_child, n_kids = self.node(i).n_children, nd
        cdef Sums csm
        cdef const double* support_bound = self.ub_by_support.data()
        cdef const double* label_bound = self.sbound.data()
        cdef const double* single_bound = self.single_bound.data()
        cdef const Scan* scan = self.scan.data()
        cdef double threshold = self._threshold(best)
        for c in range(first, first + n_kids):
            if c + 8 < self.n_nodes:
                prefetch(scan + c + 8)
            if scan[c].doc_off + 32 < <int64_t>self.pool_docs.size():
                prefetch(self.pool_docs.data() + scan[c].doc_off + 32)
            nd = scan[c].docs
            if label_bound[scan[c].label] < threshold:
                continue
            if nd < 0:
                if single_bound[-nd - 1] < threshold or support_bound[1] < threshold:
                    continue
                self._sums(c, &csm)
            else:
                if support_bound[nd] < threshold:
                    continue
                self._sums(c, &csm)
                if crit == CRIT_IWAKURA and csm.Ap + csm.An <= self._weight_cut(threshold):
                    continue
                if self._bound(crit, &csm) < threshold:
                    continue
            self._visit(c, &csm, crit, presence, best)
            threshold = self._threshold(best)
            scan = self.scan.data()
        return 0

    cdef void _evaluate(self, int32_t i, Sums* sm, int crit, bint presence, Cand* best):
        cdef PNode* p = self.node(i)
        cdef double Gp = 0, Gn = 0, P, N, v, g, Lp, Ln
        cdef int32_t gp = 0, gn = 0
        cdef const double* wpn = self.wpn.data()
        cdef Cand cand = Cand(value=-INFINITY, node=i, z=1, sign=1, P=sm.Ap, N=sm.An, Ap=sm.Ap, An=sm.An)
        if crit == CRIT_BACT:
            g = 2 * (sm.Ap - sm.An) - (self.Tp - self.Tn)
            cand.value = fabs(g)
            cand.sign = -1 if g < -tie_tol(g) else 1
            self._offer(&cand, best)
            return
        if presence:
            cand.value = value(crit, sm.Ap, sm.An, sm.Wp, sm.Wn)
            self._offer(&cand, best)
            return
        # groups in descending count: after a group, {count >= z} holds every group so far; ties go to the later group
        cdef int64_t doc_off = self.scan[i].doc_off, k = doc_off, j, end = doc_off + p.n_docs
        cdef const uint8_t* counts = self.pool_counts.data()
        cdef int32_t cnt
        cdef double G[2]
        cdef double outside = outside_term(crit, sm.Wp, sm.Wn)
        G[0] = G[1] = 0.0
        while k < end:
            if counts[k] < BIG_COUNT:
                j = run_end(counts, k + 1, end, counts[k])
            else:
                cnt = self._count(k)
                j = k + 1
                while j < end and counts[j] == BIG_COUNT and self._count(j) == cnt:
                    j += 1
            if j < end:
                add_pairs(self.pool_docs.data() + k, j - k, wpn, G, &gp)
            else:
                # the last group: the running sums are the pattern's sums, bit for bit
                G[0] = sm.Ap
                G[1] = sm.An
                gp = sm.cp
            k = j
            Gp = G[0]
            Gn = G[1]
            gn = <int32_t>(k - doc_off) - gp
            Lp = 0.0 if gp >= sm.cp else max0(sm.Ap - Gp)
            Ln = 0.0 if gn >= sm.cn else max0(sm.An - Gn)
            P = Gp + Ln
            N = Gn + Lp
            v = value_outside(crit, P, N, outside)
            if v >= cand.value - tie_tol(cand.value):
                cand.z = self._count(k) + 1 if k < end else 1
                cand.P = P
                cand.N = N
                cand.value = v
        self._offer(&cand, best)

    cdef void _offer(self, Cand* cand, Cand* best):
        cdef double tol = tie_tol(best.value)
        if best.node >= 0 and cand.value < best.value - tol:
            return
        if best.node < 0 or cand.value > best.value + tol or self._precedes(cand, best):
            best[0] = cand[0]
            if self.shared_best != NULL and best.value > shared_load(self.shared_best):
                shared_store(self.shared_best, best.value)

    cdef bint _precedes(self, Cand* a, Cand* b):
        """Tie order: size ascending, code ascending (`_code_precedes`), z ascending, sign +1 first."""
        if a.node != b.node:
            return self._code_precedes(a.node, b.node)
        if a.z != b.z:
            return a.z < b.z
        return a.sign > b.sign

