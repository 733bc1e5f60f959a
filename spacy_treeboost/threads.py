"""Threads for fixed pieces of work: results that do not depend on how many threads computed them."""
import itertools
import os
from typing import Any, Callable, List, Sequence, Union


class Threads:
    """A number of threads for this process's fits that may rise while they run (a process whose other workers ran
    out of tasks lends their cores to its last fit)."""

    def __init__(self, value: int = 1) -> None:
        self.value = value

    def __int__(self) -> int:
        return self.value


class ThreadTeam:
    """Up to `threads` threads (an int or a `Threads`) for fixed pieces of work, until `close`: `map` returns the
    results in the pieces' order, so that what is summed from them is the same for any number of threads."""

    def __init__(self, threads: Union[int, Threads] = 1) -> None:
        self.threads = threads
        self._pool: Any = None

    def map(self, work: Callable[[Any], Any], pieces: Sequence[Any]) -> List[Any]:
        n = min(int(self.threads), len(pieces))
        if n <= 1:
            return [work(piece) for piece in pieces]
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max(n, os.cpu_count() or 1) - 1)
        out: List[Any] = [None] * len(pieces)
        taken = itertools.count()

        def run() -> None:
            for i in taken:
                if i >= len(pieces):
                    return
                out[i] = work(pieces[i])

        helpers = [self._pool.submit(run) for _ in range(n - 1)]
        try:
            run()
        finally:
            for helper in helpers:
                helper.result()
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> "ThreadTeam":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
