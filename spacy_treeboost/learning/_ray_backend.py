"""The Ray search backend: one actor per worker, on a running cluster or a local Ray."""
from typing import Any, Dict, List, Optional, Tuple

import numpy

from .backends import RAY_EXTRA_HINT, SearchBackend, SearchWorker, WorkerDiedError


def import_ray() -> Any:
    """Ray, or an ImportError that names the extra to install."""
    try:
        import ray
    except ImportError:
        raise ImportError(f'backend="ray" needs Ray, which is not installed; {RAY_EXTRA_HINT}') from None
    return ray


def connect_ray(address: Optional[str]) -> Any:
    """Connect to the cluster at `address` (or RAY_ADDRESS), or start a local Ray; reuse a running connection."""
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    return ray


class RayBackend(SearchBackend):
    """Workers as Ray actors: one CPU each, or an equal share when there are more workers than CPUs."""

    def __init__(self, n_workers: int, init: Dict[str, Any], owners: Optional[numpy.ndarray],
                 address: Optional[str] = None) -> None:
        ray = connect_ray(address)
        self.ray = ray
        self.n_workers = n_workers
        cpus = ray.cluster_resources().get("CPU", 1.0)
        actor = ray.remote(num_cpus=min(1.0, cpus / n_workers), max_restarts=0)(SearchWorker)
        forest, targets = ray.put(init["forest"]), ray.put(init["targets"])
        self.actors = [actor.remote(forest, targets, init["space_settings"], init["search_settings"],
                                    None if owners is None else owners == i) for i in range(n_workers)]
        self._refs: Dict[int, Any] = {}
        self._posted: Dict[int, List[Any]] = {}
        self.start_workers()
        self.node_ids = [loc["ray_node"] for loc in self._call_all(range(n_workers), "location", [()] * n_workers)]

    def _send(self, i: int, method: str, args: Tuple[Any, ...]) -> None:
        self._refs[i] = getattr(self.actors[i], method).remote(*args)

    def _post(self, i: int, method: str, args: Tuple[Any, ...]) -> None:
        self._posted.setdefault(i, []).append(getattr(self.actors[i], method).remote(*args))

    def _receive(self, i: int) -> Any:
        ray = self.ray
        try:
            return ray.get(self._posted.pop(i, []) + [self._refs.pop(i)])[-1]
        except ray.exceptions.RayActorError as err:
            self.close()
            if self.round == 0:
                lines = [line.strip() for line in str(err).splitlines() if line.strip()]
                raise WorkerDiedError(
                    f"Search worker {i} (Ray actor) died while starting ({lines[-1] if lines else type(err).__name__}). "
                    "Every Ray node must run the spacy-treeboost of this process: start each node (ray start) from "
                    "the Python environment where this version is installed.") from None
            raise WorkerDiedError(f"Search worker {i} (Ray actor) died in boosting round {self.round}; the training "
                                  f"stopped ({type(err).__name__}).") from None
        except ray.exceptions.RayTaskError as err:
            self.close()
            raise err.as_instanceof_cause() from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for actor in getattr(self, "actors", []):
            self.ray.kill(actor)
        self.actors = []
