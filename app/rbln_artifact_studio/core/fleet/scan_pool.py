"""Run a scan's per-artifact work in worker processes as well as here, handing results back in the order asked."""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

TaskT = TypeVar("TaskT")
ResultT = TypeVar("ResultT")

BATCH = 32  # tasks per hand-over to a worker: pickling and the pipe cost little per artifact at this size
DEPTH = 2  # batches a worker holds: one it works on, one waiting, so it never waits for this process to notice
LOOKAHEAD = 2 * BATCH  # items taken before they are needed: the end is seen while a worker's batches last
CHECK_EVERY = 4  # tasks done here between two looks at the workers' pipes: far less than a batch held takes
LOCAL_FIRST = BATCH  # work done here before a worker starts: small scans never pay for a process
_FRAME = struct.Struct("<Q")  # a pickle's length before it on the pipes


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return os.cpu_count() or 1


def running_now() -> int | None:
    """Threads running or ready to run on the machine at this moment, this one included (Linux's count, the
    fourth field of /proc/loadavg); None where there is no such count."""
    try:
        with open("/proc/loadavg", "rb") as f:
            return int(f.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


def idle_cpus(running: Callable[[], int | None] = running_now) -> int:
    """CPUs this process may use that other work leaves idle right now, at least one, like `make -l`.

    A second process helps only on a free core: on a machine kept busy by other work it costs CPU (rows are pickled
    between the processes) and wins nothing, and there a scan that reads alone finishes sooner. What is running
    now, not the load average: the 1-minute average still counts this scan's own previous runs for a minute after
    they ended, so on an idle machine a second scan read in one process. Where no count exists, the load average.
    """
    cpus = available_cpus()
    now = running()
    if now is not None:
        return max(1, min(cpus, cpus - (now - 1)))  # less this thread, running as it reads the count
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average on this platform: assume the CPUs are free
        return cpus
    return max(1, min(cpus, int(cpus - busy + 0.5)))


def can_fork_workers() -> bool:
    """Workers are forked (they inherit the imported modules, so they start in milliseconds); only a process with a
    single thread may fork safely (a lock held by another thread would stay locked in the child), e.g. the CLI."""
    return threading.active_count() == 1 and hasattr(os, "fork")


class Done(Generic[ResultT]):
    """A result known without work (a row from the scan cache, an unreadable folder): passed through in order."""

    __slots__ = ("result",)

    def __init__(self, result: ResultT) -> None:
        self.result = result


class _Slot:
    """A run of items in the order asked: their results once known (here, or back from a worker)."""

    __slots__ = ("error", "results", "tasks")

    def __init__(self, tasks: list[Any], results: list[Any] | None = None) -> None:
        self.tasks = tasks
        self.results = results
        self.error: BaseException | None = None  # compute raised after results: raised here after them


def _wait(readable: list[int], writable: list[int] | None = None) -> None:
    """Block until one of readable can be read (or has ended) or one of writable can be written."""
    if not hasattr(select, "poll"):
        select.select(readable, writable or [], [])
        return
    poller = select.poll()
    for fd in readable:
        poller.register(fd, select.POLLIN)
    for fd in writable or []:
        poller.register(fd, select.POLLOUT)
    poller.poll()


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes | None:
    """size bytes from fd; None at its end (the parent closed the pipe: no more work)."""
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _frame(value: object) -> bytes:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(data)) + data


def _serve(compute: Callable[[Any], Any], tasks_fd: int, results_fd: int) -> None:
    """A worker's life: batches of tasks in, their results out (or what compute raised), until the pipe ends."""
    while (head := _read_exactly(tasks_fd, _FRAME.size)) is not None:
        body = _read_exactly(tasks_fd, _FRAME.unpack(head)[0])
        if body is None:
            return
        results: list[Any] = []
        try:
            for task in pickle.loads(body):
                results.append(compute(task))
            answer = _frame((True, results))
        except Exception as exc:  # raised in the parent after the results before it, where it would have been
            try:
                answer = _frame((False, (results, exc)))
            except Exception:  # an exception that does not pickle: its words
                answer = _frame((False, (results, RuntimeError(f"{type(exc).__name__}: {exc}"))))
        _write_all(results_fd, answer)


class _Worker:
    """A forked worker, seen from the parent: its pipes and the batches it holds, oldest first."""

    def __init__(self, compute: Callable[[Any], Any], others: list[_Worker]) -> None:
        tasks_read, self.tasks_fd = os.pipe()
        self.results_fd, results_write = os.pipe()
        sys.stdout.flush()  # a forked child must not write what this process has buffered
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the worker: it never returns into the caller's frames (no finally, no atexit of the parent)
            code = 1
            try:
                # The parent ends its workers with SIGTERM and handles Ctrl-C itself; a worker that kept the CLI's
                # SIGTERM handler (stop_signals) raised there and printed a traceback on the user's terminal.
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                for fd in (self.tasks_fd, self.results_fd, *(fd for w in others for fd in w.fds())):
                    os.close(fd)  # another worker's pipes held open here would hide the parent's end from it
                _serve(compute, tasks_read, results_write)
                code = 0
            except BaseException:  # stopped mid-write or by its parent: quietly, the parent says what happened
                pass
            finally:
                os._exit(code)
        os.close(tasks_read)
        os.close(results_write)
        os.set_blocking(self.results_fd, False)
        os.set_blocking(self.tasks_fd, False)  # this end only: the worker still waits for its next batch
        self.pid = pid
        self.held: deque[_Slot] = deque()
        self.inbox = bytearray()

    def fds(self) -> tuple[int, int]:
        return self.tasks_fd, self.results_fd

    def give(self, slot: _Slot) -> None:
        """Send a batch. A batch larger than the pipe holds waits for the worker to read it; meanwhile its answers are
        taken, or a worker blocked writing a large answer and this process blocked writing would wait for ever."""
        self.held.append(slot)
        view = memoryview(_frame(slot.tasks))
        while view:
            try:
                view = view[os.write(self.tasks_fd, view) :]
            except BlockingIOError:
                _wait([self.results_fd], [self.tasks_fd])
                self.receive()

    def receive(self) -> None:
        """Whatever the worker has written so far, without waiting: each whole answer fills its batch's slot."""
        while True:
            try:
                data = os.read(self.results_fd, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                if self.held:
                    raise RuntimeError("a scan worker process ended unexpectedly")
                break
            self.inbox += data
        while len(self.inbox) >= _FRAME.size:
            size = _FRAME.unpack_from(self.inbox)[0]
            if len(self.inbox) < _FRAME.size + size:
                break
            ok, value = pickle.loads(memoryview(self.inbox)[_FRAME.size : _FRAME.size + size])
            del self.inbox[: _FRAME.size + size]
            slot = self.held.popleft()
            if ok:
                slot.results = value
            else:
                slot.results, slot.error = value

    def stop(self) -> None:
        """End the worker now, even mid-batch (a cancelled scan), and reap it."""
        for fd in self.fds():
            os.close(fd)
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):  # already reaped (SIGCHLD ignored in this process)
            pass


def ordered_map(
    compute: Callable[[TaskT], ResultT],
    items: Iterable[TaskT | Done[ResultT]],
    processes: int,
    fork_first: bool = False,
    note: Callable[[str], object] | None = None,
) -> Iterator[tuple[TaskT | None, ResultT]]:
    """(task, compute(task)) for each task and (None, result) for each Done, in the order of items, as they finish.

    With processes > 1 (and a process that may fork), batches of tasks go to processes - 1 workers; this process
    walks, hands each worker its next batch the moment it has room for one, and computes single tasks itself in
    between, so every core works and none waits for another. No thread: this process checks the workers' pipes
    between two tasks of its own. compute may be any callable, a closure too: forked workers inherit it (only
    tasks and results are pickled). The workers stop when the iteration ends, fails or is abandoned (a cancelled
    scan). fork_first starts the workers before the first item is asked for: items that start threads (a server's
    answer read by a thread) would leave no moment to fork safely later. note, when given, is told how many workers
    were forked (a caller's debug log).
    """
    if processes <= 1:  # all here
        batch: list[Any] = []
        for item in items:
            batch.append(item)
            if len(batch) >= BATCH:
                for i in batch:
                    yield (None, i.result) if isinstance(i, Done) else (i, compute(i))
                batch.clear()
        for i in batch:
            yield (None, i.result) if isinstance(i, Done) else (i, compute(i))
        return
    source = iter(items)
    queue: deque[_Slot] = deque()  # every item asked for, in order, until yielded
    workers: list[_Worker] = []
    wanted = processes - 1
    done_here = 0

    def start_workers() -> None:
        nonlocal wanted
        if not can_fork_workers():  # a thread appeared (or no fork here): everything is computed in this process
            wanted = 0
        while len(workers) < wanted:
            workers.append(_Worker(compute, workers))
        if workers and note is not None:
            note(f"{len(workers)} worker process(es) forked, besides this one")

    def ready() -> Iterator[tuple[TaskT | None, ResultT]]:
        while queue and queue[0].results is not None:
            slot = queue.popleft()
            assert slot.results is not None
            if slot.error is not None:  # the results before it, then the exception
                yield from zip(slot.tasks, slot.results, strict=False)  # the tasks after it: no result
                raise slot.error
            yield from zip(slot.tasks, slot.results, strict=True)

    def wait_for_workers() -> None:
        """Block until a worker holding work has answered something."""
        busy = [w for w in workers if w.held]
        _wait([w.results_fd for w in busy])
        for w in busy:
            w.receive()

    if fork_first and wanted:
        start_workers()
    # Items are taken LOOKAHEAD ahead (a local walk: the same work, only sooner), so the last batches can be sized
    # to let every process finish together; a server's answer is taken as it comes (its rows would wait).
    lookahead = 0 if fork_first else LOOKAHEAD
    ahead: deque[Any] = deque()
    exhausted = False

    def next_item() -> bool:
        nonlocal exhausted
        while not exhausted and len(ahead) <= lookahead:
            try:
                ahead.append(next(source))
            except StopIteration:
                exhausted = True
        return bool(ahead)

    def share_of(worker: _Worker) -> int:
        """How many more tasks worker should take: all it can while more come; at the end, its even share."""
        if not exhausted:
            return BATCH
        left = 1 + sum(not isinstance(i, Done) for i in ahead)  # the item in hand and those after it
        # What each worker still has to do: its batches held, the first of them half done on average.
        held = {w: sum(len(s.tasks) for s in w.held) - (len(w.held[0].tasks) // 2 if w.held else 0) for w in workers}
        return min(BATCH, (left + sum(held.values())) // (len(workers) + 1) - held[worker])

    filling: tuple[_Slot, _Worker, int] | None = None  # a batch being gathered for a worker with room, its size
    pulled = 0
    try:
        while next_item():
            item = ahead.popleft()
            if workers and not pulled % CHECK_EVERY:  # what the workers finished, yielded while items still come
                for w in workers:
                    if w.held:
                        w.receive()
            pulled += 1
            if queue:
                yield from ready()
            if isinstance(item, Done):
                if filling is not None:
                    filling[1].give(filling[0])  # a shorter batch: the Done comes after it
                    filling = None
                if queue:
                    queue.append(_Slot([None], [item.result]))
                else:  # nothing before it is pending (a scan served from the cache): no bookkeeping
                    yield None, item.result
                continue
            if filling is None and workers:
                free = next((w for w in workers if len(w.held) < DEPTH), None)
                if free is not None and (size := share_of(free)) > 0:
                    filling = (_Slot([]), free, size)
                    queue.append(filling[0])
            if filling is not None:
                slot, worker, size = filling
                slot.tasks.append(item)
                if len(slot.tasks) >= size:
                    worker.give(slot)
                    filling = None
                continue
            # Every worker is busy (or none started yet): this one is done here.
            waits = bool(queue)  # behind results still pending in a worker
            if waits:
                slot = _Slot([item])
                queue.append(slot)
                try:
                    slot.results = [compute(item)]
                except Exception as exc:  # raised in its place, after the results before it (as a worker's is)
                    slot.results, slot.error = [], exc
                    break
            else:
                result = compute(item)
            done_here += 1
            if wanted and not workers and done_here >= LOCAL_FIRST:
                start_workers()
            if not waits:
                yield item, result
        if filling is not None:
            filling[1].give(filling[0])
        while queue:
            yield from ready()
            if queue:
                wait_for_workers()
    finally:
        for w in workers:
            w.stop()
