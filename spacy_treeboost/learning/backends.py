"""The boosting search on workers split by root label: the coordinator picks among their best candidates the one a
single search would pick (`_merge`), and every worker applies it, so every backend learns the same rules."""
import hashlib
import heapq
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from ..trees.forest import release_pages
from .tasks import Build, WorkerDiedError, Workers, make_workers, ray_node

# without shared best values (Ray), a candidate's documents come with the reply only up to this many
REPLY_DOCUMENTS = 1 << 16
# a search's effort, added over the workers
EFFORT = ("nodes_visited", "patterns_cached", "cpu_seconds")


def boosting_weights(scores: numpy.ndarray, y: numpy.ndarray) -> numpy.ndarray:
    """w_i proportional to exp(-y_i s_i), computed without overflow."""
    e = -y * scores
    w = numpy.exp(e - e.max())
    return w / w.sum()


def assign_root_labels(labels: numpy.ndarray, parents: numpy.ndarray, n_labels: int, n_workers: int,
                       include_root: bool) -> numpy.ndarray:
    """The int32 worker of each root label: largest first, to the least-loaded worker (absent labels: worker 0)."""
    from ._patterns import label_sizes

    size = label_sizes(labels, parents, n_labels, include_root)
    owner = numpy.zeros(n_labels, dtype=numpy.int32)
    loads = [(0, w) for w in range(n_workers)]
    for label in numpy.lexsort((numpy.arange(n_labels), -size)):
        if size[label] == 0:
            break
        load, worker = heapq.heappop(loads)
        owner[label] = worker
        heapq.heappush(loads, (load + int(size[label]), worker))
    return owner


def pack_occurrences(docs: numpy.ndarray, counts: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """A winner's (docs, counts) in the narrowest unsigned types that hold them (sent to every worker each round)."""
    docs_type, counts_type = (numpy.min_scalar_type(a.max(initial=0)) for a in (docs, counts))
    return docs.astype(docs_type), counts.astype(counts_type)


def tie_key(code: Sequence[Tuple[int, int]], rank: numpy.ndarray) -> Tuple[int, Tuple[Tuple[int, int], ...]]:
    """A pattern's place in the tie order from its code ((depth, label id), ...): (size, ((depth, label rank), ...))."""
    return len(code), tuple((depth, int(rank[label])) for depth, label in code)


def rule_outputs(n_docs: int, docs: numpy.ndarray, counts: numpy.ndarray, z: int, a: float, b: float,
                 bact: bool) -> numpy.ndarray:
    """h(x) of a stump on every training document: BACT's <t, y> (a inside, b outside) or <t, z, a, b>."""
    if bact:
        present = numpy.zeros(n_docs, dtype=bool)
        present[docs] = True
        return numpy.where(present, a, b)
    h = numpy.full(n_docs, b)
    h[docs] = numpy.where(counts >= z, a, -a)
    return h


class SearchWorker:
    """One worker: the `SearchSpace` (built from `forest` and `space_settings` unless given) of the root labels it
    owns (`owned`; None: all), every head's int8 targets and scores.

    search_settings (dict): criterion, presence and bact.
    shared_best (Optional[numpy.ndarray]): Per head, the best value any worker found this round (shared memory).
    inherited (bool): A forked process: give back the pages of the inherited parents and offsets.
    """

    def __init__(self, forest: Tuple[numpy.ndarray, ...], targets: List[numpy.ndarray], space_settings: Dict[str, Any],
                 search_settings: Dict[str, Any], owned: Optional[numpy.ndarray] = None,
                 shared_best: Optional[numpy.ndarray] = None, space: Any = None, inherited: bool = False) -> None:
        from ._mine import SearchSpace

        self.space = SearchSpace(*forest, **space_settings) if space is None else space
        if inherited and space is not None:
            release_pages(forest[1], forest[2])
        if owned is not None:
            self.space.own_root_labels(owned)
        self.targets, self.rank = targets, forest[3]
        self.scores = [numpy.zeros(len(t), dtype=numpy.float64) for t in targets]
        self.settings = search_settings
        self.last_node: Dict[int, int] = {}
        self.search_cpu = 0.0
        self.shared_best = shared_best
        self.prepared: Optional[int] = None
        self.prepare_cpu = 0.0

    def n_patterns(self) -> int:
        return self.space.n_patterns

    def search(self, heads: Sequence[int], updates: Sequence[Tuple[str, Tuple[Any, ...]]] = ()) -> List[Dict[str, Any]]:
        """Apply pending updates, then find each head's best candidate among the owned root labels."""
        for method, args in updates:
            getattr(self, method)(*args)
        out = []
        for k in heads:
            t0 = time.process_time()
            ready, self.prepared = self.prepared == k, None
            w = None if ready else boosting_weights(self.scores[k], self.targets[k])
            shared = None if self.shared_best is None else self.shared_best[k:k + 1]
            best = self.space.best_rule(w, self.targets[k], self.settings["criterion"],
                                        presence=self.settings["presence"], shared_best=shared, prepared=ready)
            node = best.pop("node")
            self.last_node[k] = node
            best["key"] = tie_key(self.space.pattern_code(node), self.rank) if node >= 0 else None
            best["patterns_cached"] = self.space.n_patterns
            best["cpu_seconds"] = time.process_time() - t0 + (self.prepare_cpu if ready else 0.0)
            self.search_cpu += best["cpu_seconds"]
            if node >= 0 and self._may_win(k, best["value"]):
                winner = self.winners([k])[0]
                if self.shared_best is not None or len(winner[0]) <= REPLY_DOCUMENTS:
                    best["winner"] = winner
            out.append(best)
        return out

    def _may_win(self, k: int, value: float) -> bool:
        """Whether head k's candidate can be the round's best: not below the best shared value by more than a tie."""
        if self.shared_best is None:
            return True
        from ._mine import tie_tolerance

        found = float(self.shared_best[k])
        return value >= found - 2.0 * tie_tolerance(found)

    def winners(self, heads: Sequence[int]) -> List[Tuple[numpy.ndarray, numpy.ndarray, Tuple[Tuple[int, int], ...]]]:
        """(docs, counts, code) of each head's last best candidate."""
        return [pack_occurrences(*self.space.pattern_docs(self.last_node[k]))
                + (self.space.pattern_code(self.last_node[k]),) for k in heads]

    def update(self, k: int, docs: numpy.ndarray, counts: numpy.ndarray, z: int, a: float, b: float) -> None:
        """Apply a rule to head k's scores; with one head, also prepare its next search (`SearchSpace.prepare`)."""
        docs, counts = docs.astype(numpy.int32), counts.astype(numpy.int32)
        self.scores[k] += rule_outputs(len(self.scores[k]), docs, counts, z, a, b, self.settings["bact"])
        self.prepared = None
        if len(self.scores) == 1:
            t0 = time.process_time()
            self.space.prepare(boosting_weights(self.scores[k], self.targets[k]), self.targets[k],
                               self.settings["criterion"])
            self.prepared = k
            self.prepare_cpu = time.process_time() - t0

    def set_scores(self, k: int, scores: numpy.ndarray) -> None:
        self.scores[k] = numpy.array(scores, dtype=numpy.float64)
        self.prepared = None

    def node(self) -> str:
        return ray_node()

    def stats(self) -> Dict[str, Any]:
        """Search CPU seconds, the process's id, CPU seconds and peak RSS, and the cache's size."""
        import os
        import resource

        return {"search_cpu_seconds": self.search_cpu, "pid": os.getpid(), "process_cpu_seconds": time.process_time(),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "patterns_cached": self.space.n_patterns, "cache_bytes": self.space.cache_bytes()}


def _digest(scores: numpy.ndarray) -> bytes:
    return hashlib.blake2b(numpy.ascontiguousarray(scores, dtype=numpy.float64).tobytes(), digest_size=16).digest()


def _merge(cands: List[Dict[str, Any]]) -> Tuple[int, Dict[str, Any]]:
    """The global best and its worker, offered in the order a single search pops the root labels."""
    from ._mine import tie_tolerance

    order = sorted((i for i, c in enumerate(cands) if c["key"] is not None),
                   key=lambda i: (-cands[i]["root_bound"], cands[i]["root"]))
    owner = -1
    for i in order:
        cand = cands[i]
        if owner < 0:
            owner = i
            continue
        best = cands[owner]
        tol = tie_tolerance(best["value"])
        if cand["value"] < best["value"] - tol:
            continue
        if cand["value"] > best["value"] + tol or (cand["key"], cand["z"], -cand["sign"]) < (
                best["key"], best["z"], -best["sign"]):
            owner = i
    return owner, cands[owner] if owner >= 0 else cands[0]


class SearchBackend:
    """The coordinator's side: runs `SearchWorker`s on `Workers` (`make_backend`) and merges their candidates."""

    node_ids: List[str] = []  # the Ray node of each worker, on Ray

    def __init__(self, workers: Workers) -> None:
        self.workers = workers
        self.shared_best: Optional[numpy.ndarray] = workers.shared.get("shared_best")
        self._pending: List[Tuple[str, Tuple[Any, ...]]] = []
        self._digests: Dict[int, bytes] = {}
        self.n_patterns = max(workers.call_all("n_patterns"))

    def close(self) -> None:
        self.workers.close()

    def search(self, heads: Sequence[int], round_number: int) -> Dict[int, Dict[str, Any]]:
        """Each head's global best: value, z, sign, sums, docs, counts, code, search effort."""
        self.workers.when = f"in boosting round {round_number}"
        if self.shared_best is not None:
            self.shared_best[:] = -numpy.inf
        pending, self._pending = self._pending, []
        replies = self.workers.call_all("search", (list(heads), pending))
        found: Dict[int, Dict[str, Any]] = {}
        missing: Dict[int, List[int]] = {}  # by worker, the heads whose winner it holds and did not send
        for j, k in enumerate(heads):
            cands = [reply[j] for reply in replies]
            owner, best = _merge(cands)
            found[k] = dict(best, node=0 if owner >= 0 else -1, **{key: sum(c[key] for c in cands) for key in EFFORT})
            if owner >= 0 and "winner" not in best:
                missing.setdefault(owner, []).append(k)
        # a candidate that could win came with its documents (`SearchWorker.search`); the others are asked for
        for i in sorted(missing):
            self.workers.send(i, "winners", (missing[i],))
        for i in sorted(missing):
            for k, win in zip(missing[i], self.workers.receive(i)):
                found[k]["winner"] = win
        for k in heads:
            if "winner" in found[k]:
                docs, counts, code = found[k].pop("winner")
                found[k].update(docs=docs.astype(numpy.int32), counts=counts.astype(numpy.int32), code=code)
        return found

    def update(self, k: int, docs: numpy.ndarray, counts: numpy.ndarray, z: int, a: float, b: float) -> None:
        """Apply a rule to head k's scores on every worker, without waiting for them."""
        args = (k, *pack_occurrences(docs, counts), z, a, b)
        for i in range(self.workers.n):
            self.workers.post(i, "update", args)

    def sync_scores(self, scores: Sequence[numpy.ndarray]) -> None:
        """Send every worker the scores that changed outside boosting (e.g. refitted margins) with the next search."""
        for k, s in enumerate(scores):
            if _digest(s) != self._digests.get(k):
                self._pending.append(("set_scores", (k, numpy.array(s, dtype=numpy.float64))))

    def mark_synced(self, scores: Sequence[numpy.ndarray]) -> None:
        """Record the scores the workers hold now."""
        self._digests = {k: _digest(s) for k, s in enumerate(scores)}

    def stats(self) -> List[Dict[str, Any]]:
        """Per worker: `SearchWorker.stats`."""
        return self.workers.call_all("stats")


def make_backend(backend: str, n_workers: int, init: Dict[str, Any], owners: Optional[numpy.ndarray],
                 ray_address: Optional[str] = None) -> SearchBackend:
    """Start the search workers of a backend; forked ones share this process's index of the forest."""
    built: List[Any] = []

    def build(i: int, forked: bool) -> Build:
        if forked and not built:
            from ._mine import SearchSpace

            built.append(SearchSpace(*init["forest"], **init["space_settings"]))
        args = (init["forest"], init["targets"], init["space_settings"], init["search_settings"],
                None if owners is None else owners == i)
        return SearchWorker, args, {"space": built[0], "inherited": i > 0} if forked else {}

    shared = [("shared_best", len(init["targets"]))] if n_workers > 1 else []
    search = SearchBackend(make_workers(backend, n_workers, build, shared, ray_address, name="Search worker"))
    if backend == "ray":
        search.node_ids = search.workers.call_all("node")
    return search
