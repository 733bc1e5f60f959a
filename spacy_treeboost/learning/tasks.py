"""Where work runs: workers in this process, in local processes (forked where safe, else spawned) or as Ray actors.
`run_tasks` returns the results by task, so nothing computed from them depends on which worker ran what."""
import multiprocessing
import os
import signal
import sys
import threading
import weakref
from collections import deque
from multiprocessing.connection import wait
from typing import Any, Callable, Dict, Hashable, List, Optional, Sequence, Tuple, TypeVar

import numpy

from ..threads import Threads

BACKENDS = ("local", "processes", "ray")
# (callable, args, kwargs) of a worker's object; a function of the worker's index and whether it is forked
Build = Tuple[Callable[..., Any], Tuple[Any, ...], Dict[str, Any]]
Builder = Callable[[int, bool], Build]
Task = TypeVar("Task", bound=Hashable)


class WorkerDiedError(RuntimeError):
    """A worker stopped (killed, out of memory, or its node was lost) before its work was done."""


def connect_ray(address: Optional[str]) -> Any:
    """Connect to the Ray cluster at `address` (or RAY_ADDRESS), or start a local Ray; reuse a running connection."""
    try:
        import ray
    except ImportError:
        raise ImportError('backend="ray" needs Ray, which is not installed; install the extra (Python >= 3.10) '
                          'from a clone of the repository: pip install ".[ray]"') from None
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    return ray


def ray_node() -> str:
    """The Ray node this process runs on (a worker's method, called by name)."""
    import ray

    return str(ray.get_runtime_context().get_node_id())


def start_method() -> str:
    """"fork" on Linux when this process runs one thread, else "spawn" (a fork beside other threads can deadlock)."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


class Workers:
    """n workers: `send(i, method, args)` calls a method of worker i's object, `receive(i)` returns its value (an error
    closes the workers and raises here), `post` sends without a reply. `shared`: float64 arrays given to every object
    by name. `when`, `doing[i]`: what they were doing, for errors."""

    n: int
    here: Sequence[int] = ()
    name = "Worker"
    when = "while starting"
    shared: Dict[str, numpy.ndarray]
    doing: Dict[int, str]
    objects: List[Any]  # those of the workers `here`, in this process

    def send(self, i: int, method: str, args: Tuple[Any, ...]) -> None: ...

    def post(self, i: int, method: str, args: Tuple[Any, ...]) -> None: ...

    def receive(self, i: int) -> Any: ...

    def close(self) -> None: ...

    def ready(self, workers: Sequence[int]) -> List[int]:
        """Those of `workers` (each with a call sent) whose reply can be received; waits for one at least."""
        raise NotImplementedError

    def put(self, value: Any) -> Any:
        """`value` as sent to every worker (in Ray's object store for Ray)."""
        return value

    def call_all(self, method: str, args: Tuple[Any, ...] = ()) -> List[Any]:
        """Every worker's `method(*args)`, in worker order."""
        for i in range(self.n):
            self.send(i, method, args)
        return [self.receive(i) for i in range(self.n)]


def _build(build: Build, shared: Dict[str, Any]) -> Any:
    make, args, kwargs = build
    return make(*args, **kwargs, **shared)


def _process_main(conn: Any, shared: Dict[str, Any], parent: Optional[int], build: Optional[Build] = None,
                  inherited: Sequence[Any] = ()) -> None:
    """A worker process: build its object, then answer requests until None or a closed pipe (a posted call's error
    comes with the next reply). It ignores Ctrl-C and dies with the `parent` process (on Linux)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if parent is not None and sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if parent is not None and os.getppid() != parent:
        os._exit(0)
    for other in inherited:
        other.close()
    try:
        build = conn.recv() if build is None else build
        worker = _build(build, {key: numpy.frombuffer(raw, dtype=numpy.float64) for key, raw in shared.items()})
    except (EOFError, OSError):
        return
    except Exception as err:
        conn.send(("error", err))
        return
    failed: Optional[Exception] = None
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        method, args, reply = message
        if failed is None:
            try:
                value = getattr(worker, method)(*args)
            except Exception as err:
                failed = err
        if reply:
            conn.send(("ok", value) if failed is None else ("error", failed))
            failed = None


def _stop_processes(processes: List[Any], conns: List[Any]) -> None:
    for conn in conns:
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
    for proc in processes:
        proc.join(timeout=2)
        if proc.is_alive():
            proc.terminate()
            proc.join(timeout=2)
        if proc.is_alive():
            proc.kill()
    for conn in conns:
        conn.close()


class ProcessWorkers(Workers):
    """The first `n_here` workers in this process (their calls run when their reply is asked for) and the others in
    local processes, forked or spawned (`start_method`). `stopped` (what a worker's death stopped) and `lower` (the
    settings to lower when one runs out of memory): for its error."""

    def __init__(self, n: int, builder: Builder, shared: Sequence[Tuple[str, int]] = (), name: str = "Worker",
                 n_here: int = 1, stopped: str = "the training stopped",
                 lower: str = "max_cache_mb or n_workers") -> None:
        self.n, self.name, self.doing, self.stopped, self.lower = n, name, {}, stopped, lower
        self.first = min(n_here, n)  # the first worker in a process
        self.here = range(self.first)
        self.start_method = start_method()
        forked = self.start_method == "fork" and self.first < n
        context: Any = multiprocessing.get_context(self.start_method)
        raw = {key: context.RawArray("d", size) for key, size in shared}
        self.shared = {key: numpy.frombuffer(array, dtype=numpy.float64) for key, array in raw.items()}
        self.processes: List[Any] = []
        self.conns: List[Any] = []
        self._calls: Dict[int, List[Tuple[str, Tuple[Any, ...]]]] = {}
        self.objects = []
        self._finalizer = weakref.finalize(self, _stop_processes, self.processes, self.conns)
        # PR_SET_PDEATHSIG fires when the starting thread ends, so only the main thread's workers use it
        me = os.getpid() if threading.current_thread() is threading.main_thread() else None
        masking = hasattr(signal, "pthread_sigmask")  # a worker must not see Ctrl-C before it ignores it
        try:
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if masking else set()
            try:
                for i in range(self.first, n):
                    parent, child = context.Pipe()
                    build = builder(i, True) if forked else None
                    args = (child, raw, me, build, [*self.conns, parent]) if forked else (child, raw, me)
                    proc = context.Process(target=_process_main, name=f"spacy-treeboost {name.lower()} {i}",
                                           args=args, daemon=True)
                    proc.start()
                    child.close()
                    self.processes.append(proc)
                    self.conns.append(parent)
            finally:
                if masking:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            if not forked:
                for i in range(self.first, n):
                    self._send(i, builder(i, False))
            self.objects = [_build(builder(i, forked), self.shared) for i in self.here]
        except BaseException:
            self.close()
            raise

    @property
    def pids(self) -> List[int]:
        """The process ids of the workers in processes."""
        return [p.pid for p in self.processes]

    def send(self, i: int, method: str, args: Tuple[Any, ...], reply: bool = True) -> None:
        if i < self.first:
            self._calls.setdefault(i, []).append((method, args))
        else:
            self._send(i, (method, args, reply))

    def post(self, i: int, method: str, args: Tuple[Any, ...]) -> None:
        self.send(i, method, args, reply=False)

    def _send(self, i: int, message: Any) -> None:
        try:
            self.conns[i - self.first].send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            self._died(i)
        except BaseException:
            self.close()
            raise

    def ready(self, workers: Sequence[int], timeout: Optional[float] = None) -> List[int]:
        """See `Workers.ready`; waits at most `timeout` seconds (None: no limit), then returns [] if none is ready."""
        here = [i for i in workers if i < self.first]
        if here:
            return here
        by_conn = {self.conns[i - self.first]: i for i in workers}
        by_conn.update({self.processes[i - self.first].sentinel: i for i in workers})
        return sorted({by_conn[c] for c in wait(list(by_conn), timeout)})

    def receive(self, i: int) -> Any:
        if i < self.first:
            return self._run_here(i)
        conn, proc = self.conns[i - self.first], self.processes[i - self.first]
        try:
            if conn not in wait([conn, proc.sentinel]) and not conn.poll():
                self._died(i)
            status, value = conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            self._died(i)
        except BaseException:
            self.close()
            raise
        if status == "error":
            self.close()
            raise value
        return value

    def _run_here(self, i: int) -> Any:
        """Run worker i's waiting calls (in this process); the value of the last."""
        calls = self._calls.pop(i, [])
        if not self.objects:
            raise RuntimeError(f"The {self.name.lower()}s were stopped (closed): start them again (a learner: fit or "
                               "start).")
        value = None
        try:
            for method, args in calls:
                value = getattr(self.objects[i], method)(*args)
        except BaseException:
            self.close()
            raise
        return value

    def _died(self, i: int) -> None:
        proc = self.processes[i - self.first]
        proc.join(timeout=1)
        code, when = proc.exitcode, self.doing.get(i, self.when)
        self.close()
        how = f"exit code {code}" if code is None or code >= 0 else f"signal {-code}"
        if when == "while starting" and code is not None and code > 0 and self.start_method == "spawn":
            hint = ("Workers are spawned and import the main script: a script that trains when it is imported needs "
                    'the guard `if __name__ == "__main__":` around its training code.')
        else:
            hint = f"A worker killed by the system often ran out of memory: lower {self.lower}."
        raise WorkerDiedError(f"{self.name} {i} (process {proc.pid}) died ({how}) {when}; {self.stopped}. {hint}")

    def close(self, kill: bool = False) -> None:
        """End the workers: ask them to stop, or with `kill` kill them at once."""
        for proc in self.processes if kill else ():
            proc.kill()
        self._calls, self.objects = {}, []
        self._finalizer()


class LocalWorkers(ProcessWorkers):
    """Every worker in this process; a call runs when its reply is asked for."""

    def __init__(self, n: int, builder: Builder, shared: Sequence[Tuple[str, int]] = (), name: str = "Worker") -> None:
        super().__init__(n, builder, shared, name, n_here=n)


class RayWorkers(Workers):
    """Workers as Ray actors, one CPU each (or an equal share); each argument goes to the object store once."""

    def __init__(self, n: int, builder: Builder, address: Optional[str] = None, name: str = "Worker") -> None:
        self.ray = ray = connect_ray(address)
        self.n, self.name, self.doing, self.shared = n, name, {}, {}
        cpus = ray.cluster_resources().get("CPU", 1.0)
        stored: Dict[int, Tuple[Any, Any]] = {}  # each argument (kept, so that its id is not reused) and its ref
        self.actors = []
        for i in range(n):
            make, args, kwargs = builder(i, False)
            refs = [(stored.get(id(a)) or stored.setdefault(id(a), (a, ray.put(a))))[1] for a in args]
            actor = ray.remote(num_cpus=min(1.0, cpus / n), max_restarts=0)(make)
            self.actors.append(actor.remote(*refs, **kwargs))
        self._refs: Dict[int, Any] = {}
        self._posted: Dict[int, List[Any]] = {}

    def put(self, value: Any) -> Any:
        return self.ray.put(value)

    def send(self, i: int, method: str, args: Tuple[Any, ...]) -> None:
        self._refs[i] = getattr(self.actors[i], method).remote(*args)

    def post(self, i: int, method: str, args: Tuple[Any, ...]) -> None:
        self._posted.setdefault(i, []).append(getattr(self.actors[i], method).remote(*args))

    def ready(self, workers: Sequence[int]) -> List[int]:
        by_ref = {self._refs[i]: i for i in workers}
        done, _ = self.ray.wait(list(by_ref), num_returns=1)
        return sorted(by_ref[ref] for ref in done)

    def receive(self, i: int) -> Any:
        ray = self.ray
        try:
            return ray.get(self._posted.pop(i, []) + [self._refs.pop(i)])[-1]
        except ray.exceptions.RayActorError as err:
            when = self.doing.get(i, self.when)
            self.close()
            lines = [line.strip() for line in str(err).splitlines() if line.strip()]
            cause = lines[-1] if when == "while starting" and lines else type(err).__name__
            hint = (" Every Ray node must run the spacy-treeboost of this process: start each node (ray start) from "
                    "the Python environment where this version is installed." if when == "while starting" else "")
            raise WorkerDiedError(f"{self.name} {i} (Ray actor) died {when}; the training stopped ({cause}).{hint}"
                                  ) from None
        except ray.exceptions.RayTaskError as err:
            self.close()
            raise err.as_instanceof_cause() from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


def make_workers(backend: str, n: int, builder: Builder, shared: Sequence[Tuple[str, int]] = (),
                 ray_address: Optional[str] = None, name: str = "Worker", worker0_here: bool = True) -> Workers:
    """Start n workers of a backend ("local", "processes" or "ray"; Ray shares no arrays)."""
    if backend == "local":
        return LocalWorkers(n, builder, shared, name)
    if backend == "processes":
        extra: Dict[str, Any] = {} if worker0_here else {"n_here": 0}
        return ProcessWorkers(n, builder, shared, name, **extra)
    if backend == "ray":
        return RayWorkers(n, builder, ray_address, name)
    raise ValueError(f"backend={backend!r} is invalid: choose one of {', '.join(BACKENDS)}")


def run_tasks(worker: Callable[..., Any], args: Tuple[Any, ...], tasks: Sequence[Task], n_workers: int = 1,
              backend: Optional[str] = None, ray_address: Optional[str] = None, name: str = "Worker",
              describe: Callable[[Task], str] = lambda task: f"during task {task!r}") -> Dict[Task, Any]:
    """Every task's result, by task, from `worker(*args, threads).run(task)` on up to `n_workers` workers of `backend`
    (None: processes; alone: here on `n_workers` threads); on processes, once the queue is empty the idle workers'
    cores go to the task running here (`threads` a rising `Threads`)."""
    n = min(n_workers, len(tasks))
    if n <= 1 or backend == "local":
        runner = worker(*args, min(n_workers, os.cpu_count() or 1))
        return {task: runner.run(task) for task in tasks}
    lent = Threads(1) if backend != "ray" else None
    workers = make_workers(backend or "processes", n,
                           lambda i, _: (worker, (*args, 1 if i or lent is None else lent), {}),
                           ray_address=ray_address, name=name)
    try:
        return schedule(workers, tasks, describe, lent)
    finally:
        workers.close()


def schedule(workers: Workers, tasks: Sequence[Task], describe: Callable[[Task], str] = repr,
             lent: Optional[Threads] = None) -> Dict[Task, Any]:
    """`run_tasks` on started workers: each free worker takes the next task, those in this process on this thread, the
    others fed from a second thread. `lent`: the threads of the task here, raised once the queue is empty."""
    queue, lock = deque(tasks), threading.Lock()
    results: Dict[Task, Any] = {}
    remote = [i for i in range(workers.n) if i not in workers.here]
    running: Dict[int, Task] = {}
    errors: List[BaseException] = []

    def take(i: Optional[int] = None) -> Optional[Task]:
        with lock:
            if not queue or errors:
                if lent is not None:
                    lent.value = max(1, min(workers.n - len(running), os.cpu_count() or 1))
                return None
            task = queue.popleft()
            if i is not None:
                running[i] = task
            return task

    def start(i: int) -> None:
        task = take(i)
        if task is not None:
            workers.doing[i] = describe(task)
            workers.send(i, "run", (task,))

    def feed() -> None:
        try:
            for i in remote:
                start(i)
            while running:
                for i in workers.ready(list(running)):
                    value = workers.receive(i)
                    with lock:
                        results[running.pop(i)] = value
                    start(i)
        except BaseException as err:
            errors.append(err)

    here = [workers.objects[i] for i in workers.here]
    task = take() if here else None  # the first (longest) task runs here
    feeder = threading.Thread(target=feed, daemon=True) if remote and here else None
    if feeder is not None:
        feeder.start()
    elif remote:
        feed()
    k = 0
    try:
        while task is not None:
            results[task] = here[k % len(here)].run(task)
            task, k = take(), k + 1
    except BaseException as err:
        with lock:
            errors.insert(0, err)
        workers.close()
    if feeder is not None:
        feeder.join()
    if lent is not None:
        lent.value = 1
    if errors:
        raise errors[0]
    return {task: results[task] for task in tasks}
