"""CPU time of `SearchSpace.prepare` (a round's bounds by support, whose sort of the class weights is numpy's).

Run from two checkouts alternately and compare the medians:
`PYTHONPATH=<checkout> python bench/bench_prepare.py`. At 512,000 documents (3 runs each, alternately): 24.0 ms per
prepare with numpy.sort, 30.6 ms with the compiled radix sort it replaced.
"""
import sys
import time

import numpy

from spacy_treeboost.learning._mine import SearchSpace


def main(n_docs: int = 512_000, rounds: int = 50) -> float:
    """Median CPU seconds of `prepare` over `rounds` random weightings of `n_docs` two-node documents."""
    rng = numpy.random.default_rng(0)
    labels = rng.integers(0, 50, 2 * n_docs).astype(numpy.int32)
    parents = numpy.tile(numpy.array([-1, 0], dtype=numpy.int32), n_docs)
    parents[1::2] = numpy.arange(0, 2 * n_docs, 2, dtype=numpy.int32)
    offsets = numpy.arange(0, 2 * n_docs + 1, 2, dtype=numpy.int64)
    space = SearchSpace(labels, parents, offsets, numpy.arange(50, dtype=numpy.int32), max_pattern_size=2)
    y = numpy.where(rng.random(n_docs) < 0.5, 1, -1).astype(numpy.int8)
    times = []
    for _ in range(rounds):
        w = rng.exponential(size=n_docs)
        w /= w.sum()
        start = time.process_time()
        space.prepare(w, y)
        times.append(time.process_time() - start)
    return float(numpy.median(times))


if __name__ == "__main__":
    print(f"{main(int(sys.argv[1]) if len(sys.argv) > 1 else 512_000) * 1e3:.2f} ms per prepare")
