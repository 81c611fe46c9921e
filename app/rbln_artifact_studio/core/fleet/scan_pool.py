"""Run a scan's per-artifact work in worker processes as well as here, handing results back in the order asked."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # multiprocessing loads only when a worker starts (a small scan never needs it)
    from multiprocessing.pool import AsyncResult, Pool

TaskT = TypeVar("TaskT")
ResultT = TypeVar("ResultT")

BATCH = 32  # artifacts per hand-over: large enough that pickling and the pipe cost little per artifact
LOCAL_FIRST = 64  # work done here before a worker starts: small scans never pay for a process


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def idle_cpus() -> int:
    """CPUs this process may use that other work leaves idle (1-minute load average), at least one, like `make -l`.

    A second process helps only on a free core: on a machine kept busy by other work it costs CPU (rows are pickled
    between the processes) and wins nothing, and there a scan that reads alone finishes sooner.
    """
    cpus = available_cpus()
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average on this platform: assume the CPUs are free
        return cpus
    return max(1, min(cpus, int(cpus - busy + 0.5)))


def can_fork_workers() -> bool:
    """Workers are forked (they inherit the imported modules, so they start in milliseconds); only a process with a
    single thread may fork safely (a lock held by another thread would stay locked in the child), e.g. the CLI."""
    import multiprocessing

    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


class Done(Generic[ResultT]):
    """A result known without work (a row from the scan cache, an unreadable folder): passed through in order."""

    __slots__ = ("result",)

    def __init__(self, result: ResultT) -> None:
        self.result = result


_installed: Callable[[Any], Any] | None = None  # a worker's compute, set when it is forked (never pickled)


def _install(compute: Callable[[Any], Any]) -> None:
    """A forked worker's start: its compute, and the stop signals a worker must not handle as its parent does.

    The parent ends its workers with SIGTERM (Pool.terminate) and handles Ctrl-C itself; a worker that inherited
    the CLI's SIGTERM handler (stop_signals) raised there instead and printed a traceback on the user's terminal.
    """
    global _installed
    _installed = compute
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # ended quietly when the parent stops the pool
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent answers it


def _run_installed(tasks: list[Any]) -> list[Any]:
    assert _installed is not None
    return [_installed(task) for task in tasks]


def ordered_map(
    compute: Callable[[TaskT], ResultT],
    items: Iterable[TaskT | Done[ResultT]],
    processes: int,
    fork_first: bool = False,
) -> Iterator[tuple[TaskT | None, ResultT]]:
    """(task, compute(task)) for each task and (None, result) for each Done, in the order of items, as they finish.

    With processes > 1 (and a process that may fork), batches of tasks go to processes - 1 workers while this
    process computes the batches that find every worker busy, so both cores work and none waits for the other.
    compute may be any callable, a closure too: forked workers inherit it (only tasks and results are pickled).
    The workers stop when the iteration ends, fails or is abandoned (a cancelled scan).
    fork_first starts the workers before the first item is asked for: items that start threads (a server's
    answer read by a thread) would leave no moment to fork safely later.
    """
    workers: int | None = None  # decided at the first batch (a scan served from the cache never loads multiprocessing)
    pool: Pool | None = None
    queue: deque[tuple[list[TaskT | None], AsyncResult[list[ResultT]] | list[ResultT]]] = deque()
    in_workers = 0
    done_here = 0
    batch: list[TaskT] = []

    def start_pool() -> None:
        nonlocal pool
        sys.stdout.flush()  # a forked child must not write what this process has buffered
        sys.stderr.flush()
        import multiprocessing

        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_install, initargs=(compute,))

    def hand_over() -> None:
        nonlocal in_workers, done_here, workers
        tasks = list(batch)
        batch.clear()
        if workers is None:  # before any worker thread of ours exists
            workers = processes - 1 if processes > 1 and can_fork_workers() else 0
        if workers and pool is None and done_here >= LOCAL_FIRST:
            start_pool()
        if pool is not None and in_workers < 2 * (workers or 0):
            queue.append((list(tasks), pool.apply_async(_run_installed, (tasks,))))
            in_workers += 1
        else:
            queue.append((list(tasks), [compute(task) for task in tasks]))
            done_here += len(tasks)

    def finished(block: bool) -> Iterator[tuple[TaskT | None, ResultT]]:
        nonlocal in_workers
        while queue:
            tasks, pending = queue[0]
            if isinstance(pending, list):
                results = pending
            else:
                if not block and not pending.ready():
                    return
                results = pending.get()
                in_workers -= 1
            queue.popleft()
            yield from zip(tasks, results, strict=True)

    if fork_first and processes > 1 and can_fork_workers():
        workers = processes - 1
        start_pool()
    try:
        for item in items:
            if isinstance(item, Done):
                if batch:
                    hand_over()
                queue.append(([None], [item.result]))
            else:
                batch.append(item)
                if len(batch) >= BATCH:
                    hand_over()
            yield from finished(block=False)
        if batch:
            hand_over()
        yield from finished(block=True)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
