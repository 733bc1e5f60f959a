"""Where a learner's search runs: the one place that starts a backend's workers (the Ray backend is imported only
when asked for)."""
from typing import Any, Dict, Optional

import numpy

from .backends import BACKENDS, LocalBackend, ProcessBackend, SearchBackend


def make_backend(backend: str, n_workers: int, init: Dict[str, Any], owners: Optional[numpy.ndarray],
                 ray_address: Optional[str] = None) -> SearchBackend:
    """Start the workers of a backend ("local", "processes" or "ray")."""
    if backend == "local":
        return LocalBackend(n_workers, init, owners)
    if backend == "processes":
        return ProcessBackend(n_workers, init, owners)
    if backend == "ray":
        from ._ray_backend import RayBackend

        return RayBackend(n_workers, init, owners, ray_address)
    raise ValueError(f"backend={backend!r} is invalid: choose one of {', '.join(BACKENDS)}")
