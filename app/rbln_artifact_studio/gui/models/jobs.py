"""Background jobs: run a function in a worker thread with progress, log, partial results and cancel.

Workers never touch widgets: they only emit signals of their Job, which lives on the GUI thread, so every
slot connected to a QObject runs there. The end of a job (succeeded, failed, cancelled, then finished) is
always emitted on the GUI thread, after every progress and partial signal the worker sent.
Writes go through a single-thread pool so two never interleave.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import Any

from PySide6.QtCore import SIGNAL, QObject, QThreadPool, QTimer, Signal, Slot

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, CancelledError, StudioError
from rbln_artifact_studio.core.logs import logger
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.gui.app.remedies import said

GRAVEYARD = 64  # ended jobs kept referenced after forget()
log = logger(__name__)
ACK_POLL = 0.05  # seconds between cancel checks while a worker waits for the GUI to take a batch
ACK_TIMEOUT = 2.0  # flow control only: a worker never waits longer than this for an ack
PROGRESS_INTERVAL = 0.05  # seconds between two progress signals; the first and the last always go through


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def ended(self) -> bool:
        return self not in (JobState.QUEUED, JobState.RUNNING)


@dataclass(frozen=True)
class JobFailure:
    """The one-line reason a user reads and the details (hint or traceback) behind a button."""

    reason: str
    details: str = ""

    @classmethod
    def from_exception(cls, exc: BaseException) -> JobFailure:
        if isinstance(exc, StudioError):
            return cls(said(exc), exc.hint or "")  # a remedy names the desktop's controls, never a CLI flag
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(f"Unexpected error: {type(exc).__name__}: {exc}", text)


class JobContext:
    """What the job function gets in its worker thread."""

    def __init__(self, job: Job) -> None:
        self._job = job
        self.cancel: CancelToken = job.token
        self._last = 0.0
        self._first = True

    def checkpoint(self) -> None:
        """Call between small steps of work: cancels here."""
        self.cancel.raise_if_cancelled()

    def progress(self, done: int, total: int, message: str) -> None:
        """A (done, total, message) update; throttled, except the first and the last. Also a checkpoint."""
        now = time.monotonic()
        if self._first or (total and done >= total) or now - self._last >= PROGRESS_INTERVAL:
            self._first, self._last = False, now
            self._job.progressed.emit(done, total, message)
        self.cancel.raise_if_cancelled()

    def log(self, line: str) -> None:
        """A line of the job's log: shown in the jobs panel, and written to the app's log."""
        log.log(self._job.level, "%s: %s", self._job.title, line)
        self._job.logged.emit(line)

    def partial(self, value: object, wait: bool = False) -> None:
        """Hand a piece of the result to the GUI thread while the work goes on (e.g. a batch of scan rows).

        With wait, block (holding no lock, so not the GIL either) until the receiver calls job.ack(): the GUI
        thread then inserts and paints the batch without competing with this worker for the interpreter.
        """
        job = self._job
        if wait:
            job._acked.clear()
        job.partial.emit(value)
        if wait:
            deadline = time.monotonic() + ACK_TIMEOUT
            while not job._acked.wait(ACK_POLL) and time.monotonic() < deadline:
                self.cancel.raise_if_cancelled()


JobFunction = Callable[[JobContext], Any]


class Job(QObject):
    """One unit of background work and its observable state."""

    # emitted from the worker thread; byte counts pass 2 GiB, so Qt's 64-bit type by name (PySide6's stubs allow
    # only Python types here)
    progressed = Signal("qlonglong", "qlonglong", str)  # type: ignore[arg-type]  # Qt type names, see above
    logged = Signal(str)  # emitted from the worker thread
    partial = Signal(object)  # emitted from the worker thread
    started = Signal()
    succeeded = Signal(object)
    failed = Signal(object)  # JobFailure
    cancelled = Signal()
    finished = Signal()
    askedChanged = Signal()  # a question about this job was put to the user, or answered
    _began = Signal()
    _ended = Signal(str, object)

    def __init__(
        self, title: str, fn: JobFunction, *, writes: bool = False, visible: bool = True, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.title = title
        self.fn = fn
        self.writes = writes
        self.visible = visible
        self.surfaced = False  # a hidden job whose failure nobody handled, shown in the jobs panel instead
        self.command: list[str] | None = None  # the rbln-studio-cli command doing the same (the panel copies it)
        self.output: str | None = None  # the folder it writes, shown in the file manager from the panel
        self.token = CancelToken()
        self._acked = threading.Event()
        self.state = JobState.QUEUED
        self.done = self.total = 0
        self.message = ""
        self.log_lines: list[str] = []
        self.result: object = None
        self.failure: JobFailure | None = None
        self.asking = ""  # the question the user still has to answer before this job's work is done
        self.answer = ""  # what came of that question once answered ("" while none was asked)
        self.created_at = time.monotonic()
        self.started_at: float | None = None
        self.ended_at: float | None = None
        self._began.connect(self._on_began)
        self._ended.connect(self._on_ended)
        self.progressed.connect(self._on_progress)
        self.logged.connect(self._on_log)

    def ack(self) -> None:
        """The GUI has taken the last partial result sent with wait=True; the worker may go on."""
        self._acked.set()

    def ask(self, question: str) -> None:
        """The job ended on a question to the user (a host key): it reads as waiting for the answer, not done."""
        self.asking, self.answer = question, ""
        self.askedChanged.emit()

    def answered(self, outcome: str) -> None:
        """The question was answered; outcome says what came of it ("host key trusted: connecting again")."""
        self.asking, self.answer = "", outcome
        self.askedChanged.emit()

    def cancel(self) -> None:
        """Ask the work to stop; safe from any thread. The job reports `cancelled` when it has stopped."""
        self.token.cancel()

    @property
    def elapsed(self) -> float:
        if self.started_at is None:
            return 0.0
        return (self.ended_at or time.monotonic()) - self.started_at

    @property
    def level(self) -> int:
        """How its records are logged: a hidden bookkeeping job (a rescan, a detail read) only when verbose."""
        return logging.INFO if self.visible else logging.DEBUG

    def run_in_worker(self) -> None:
        """The worker thread's side: run fn and report how it ended (to the log too); never raises."""
        if self.token.cancelled:
            self._ended.emit(JobState.CANCELLED.value, None)
            return
        self._began.emit()
        log.log(self.level, "%s: started", self.title)
        started = time.monotonic()
        try:
            result = self.fn(JobContext(self))
        except CancelledError:
            log.log(self.level, "%s: cancelled after %.1f s", self.title, time.monotonic() - started)
            self._ended.emit(JobState.CANCELLED.value, None)
        except BaseException as exc:  # a worker must report every failure, never die silently
            failure = JobFailure.from_exception(exc)
            unexpected = not isinstance(exc, StudioError)
            log.warning("%s: failed: %s", self.title, failure.reason, exc_info=exc if unexpected else None)
            self._ended.emit(JobState.FAILED.value, failure)
        else:
            log.log(self.level, "%s: done in %.1f s", self.title, time.monotonic() - started)
            self._ended.emit(JobState.SUCCEEDED.value, result)

    @Slot()
    def _on_began(self) -> None:
        self.state = JobState.RUNNING
        self.started_at = time.monotonic()
        self.started.emit()

    @Slot(int, int, str)
    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.done, self.total, self.message = done, total, message

    @Slot(str)
    def _on_log(self, line: str) -> None:
        self.log_lines.append(line)

    @Slot(str, object)
    def _on_ended(self, state: str, payload: object) -> None:
        self.state = JobState(state)
        self.ended_at = time.monotonic()
        if self.started_at is None:
            self.started_at = self.ended_at
        if self.state is JobState.SUCCEEDED:
            self.result = payload
            self.succeeded.emit(payload)
        elif self.state is JobState.FAILED:
            assert isinstance(payload, JobFailure)
            self.failure = payload
            self.log_lines.append(f"error: {payload.reason}")
            self.failed.emit(payload)
        else:
            self.log_lines.append(f"cancelled. {NOTHING_CHANGED}")
            self.cancelled.emit()
        self.finished.emit()


def _ended(ctx: JobContext) -> object:
    """The work of a job forgotten after it ended (its own, and what it held, let go)."""
    raise RuntimeError("a forgotten job is not run again")


def _run(job: Job) -> None:
    """A job's life in its worker thread."""
    if job.writes:
        lower_thread_priority()
    job.run_in_worker()


WORKER_NICE = 10  # added to the app's own nice value: a writer always runs below the GUI thread


def lower_thread_priority() -> None:
    """Let the calling (writer) thread yield the CPU to the GUI thread when both want it.

    Linux keeps a nice value per thread (and threads it starts inherit it). Only jobs that write run lower: a
    copy spends its time in the kernel, without the interpreter lock. A scan runs Python most of the time, and
    a niced thread preempted while it holds the interpreter lock keeps the GUI thread waiting for it: with two
    CPU-bound processes beside the app, niced scans stretched the longest stall to 90-160 ms (and the scan
    to ~30 s), against 55-80 ms with the scan at normal priority. Elsewhere this does nothing.
    """
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICE))


class JobManager(QObject):
    """Starts jobs on a read pool or the single-thread write pool and keeps them until they are cleared."""

    jobAdded = Signal(object)
    jobFailed = Signal(object, object)  # job, JobFailure
    activeChanged = Signal(int)

    def __init__(self, parent: QObject | None = None, read_threads: int = 2) -> None:
        super().__init__(parent)
        self.read_pool = QThreadPool(self)
        self.read_pool.setMaxThreadCount(read_threads)
        self.write_pool = QThreadPool(self)
        self.write_pool.setMaxThreadCount(1)
        self.jobs: list[Job] = []
        self._unstarted: list[Job] = []
        self._graveyard: deque[Job] = deque(maxlen=GRAVEYARD)
        self._held = False  # hold(): submitted jobs wait for release()

    def hold(self) -> None:
        """Jobs submitted from now on wait for release() to start (the start holds them until the window's first
        paint: a scan opened with the window would otherwise start its worker at the first event-loop turn, which
        starts the scan's process and takes the interpreter lock from the GUI thread while it builds that paint,
        docs/performance.md row 7; the process takes longer to start than the paint to happen)."""
        self._held = True

    def release(self) -> None:
        """Start the jobs held since hold(), and those submitted after at once again."""
        self._held = False
        self._start_unstarted()

    def submit(self, title: str, fn: JobFunction, *, writes: bool = False, visible: bool = True) -> Job:
        """Queue fn(context) in a worker.

        The worker starts once control returns to the event loop, so signals connected right after submit()
        never miss an early progress or partial result.
        """
        job = Job(title, fn, writes=writes, visible=visible)
        self.jobs.append(job)
        job.failed.connect(self._on_failed)
        job.finished.connect(self._on_finished)
        self.jobAdded.emit(job)
        self._unstarted.append(job)
        if not self._held:
            # With self as the context: a manager destroyed first (its window closed meanwhile) starts nothing.
            QTimer.singleShot(0, self, self._start_unstarted)
        self.activeChanged.emit(len(self.active()))
        return job

    @Slot()
    def _start_unstarted(self) -> None:
        jobs, self._unstarted = self._unstarted, []
        for job in jobs:
            # A callable, not a QRunnable subclass: PySide 6.11 keeps the Python wrapper of a QRunnable that
            # has already run and been auto-deleted when start() returns (the pool's wrapper holds it for good),
            # one per quick job: with a scan's jobs on every Refresh, memory grew for the whole session.
            (self.write_pool if job.writes else self.read_pool).start(partial(_run, job))

    def active(self) -> list[Job]:
        return [j for j in self.jobs if not j.state.ended]

    def waiting_for(self, job: Job) -> str:
        """Why a queued job has not started yet, in words ("" once it runs or ends)."""
        if job.state is not JobState.QUEUED or job.token.cancelled:
            return ""
        ahead = [j for j in self.jobs if j is not job and j.writes == job.writes and not j.state.ended]
        ahead = [j for j in ahead if j.created_at <= job.created_at]
        if job.writes and ahead:
            # Writes run one at a time: the one running (else the oldest still queued) is what this one waits for.
            first = next((j for j in ahead if j.state is JobState.RUNNING), ahead[0])
            return f"waiting for “{first.title}” to finish"
        running = [j for j in ahead if j.state is JobState.RUNNING]
        if not job.writes and len(running) >= self.read_pool.maxThreadCount():
            return f"waiting for a free worker ({len(running)} jobs reading)"
        return "starting…"

    def active_visible(self) -> list[Job]:
        return [j for j in self.active() if j.visible]

    def cancel_all(self) -> None:
        for job in self.active():
            job.cancel()

    def wait(self, msecs: int = -1) -> bool:
        """Block until both pools are idle (used when the window closes, after cancel_all)."""
        self._start_unstarted()  # a cancelled job that never started still reports `cancelled`
        return self.read_pool.waitForDone(msecs) and self.write_pool.waitForDone(msecs)

    def forget(self, job: Job) -> None:
        """Drop an ended job (the jobs panel's Clear)."""
        if job.state.ended and job in self.jobs:
            self.jobs.remove(job)
            # Keep a reference a while longer: the last one must go on the GUI thread, never in the worker
            # that has just reported the end (a QObject is destroyed in the thread that drops it).
            self._graveyard.append(job)
            job.fn, job.result = _ended, None  # what it ran on and returned: a lingering job keeps none alive

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        job = self.sender()
        if isinstance(job, Job):
            if not job.visible and job.receivers(SIGNAL("failed(PyObject)")) <= 1:
                # Only this manager listens: the failure of a hidden job (a rescan, a lookup) would be lost,
                # so it joins the jobs panel, failed, where the user sees it.
                job.visible = job.surfaced = True
                self.jobAdded.emit(job)
            self.jobFailed.emit(job, failure)

    @Slot()
    def _on_finished(self) -> None:
        job = self.sender()
        if isinstance(job, Job) and not job.visible:
            self.forget(job)  # hidden bookkeeping jobs (detail reads, rescans) do not pile up
        self.activeChanged.emit(len(self.active()))
