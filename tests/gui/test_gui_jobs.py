"""The job API: results, failures and cancellation arrive on the GUI thread; writes never interleave."""

from __future__ import annotations

import gc
import threading

import pytest
from PySide6.QtCore import QThread
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import ResizeError
from rbln_artifact_studio.gui.models.jobs import JobContext, JobFailure, JobManager, JobState


@pytest.fixture
def jobs(qtbot: QtBot):
    manager = JobManager()
    yield manager
    manager.cancel_all()
    manager.wait()


def test_success_progress_and_partials_arrive_in_order_on_the_gui_thread(qtbot: QtBot, jobs: JobManager) -> None:
    seen: list[object] = []
    gui_thread = QThread.currentThread()

    def work(ctx: JobContext) -> str:
        assert QThread.currentThread() is not gui_thread
        for i in range(3):
            ctx.partial(i)
        ctx.progress(3, 3, "done")
        return "result"

    job = jobs.submit("count", work)
    job.partial.connect(lambda v: seen.append(("partial", v, QThread.currentThread() is gui_thread)))
    job.succeeded.connect(lambda v: seen.append(("succeeded", v, QThread.currentThread() is gui_thread)))
    with qtbot.waitSignal(job.finished):
        pass
    assert seen == [("partial", 0, True), ("partial", 1, True), ("partial", 2, True), ("succeeded", "result", True)]
    assert job.state is JobState.SUCCEEDED and (job.done, job.total, job.message) == (3, 3, "done")
    assert job.elapsed >= 0 and not jobs.active()


def test_a_studio_error_becomes_a_one_line_failure(qtbot: QtBot, jobs: JobManager) -> None:
    def work(ctx: JobContext) -> None:
        raise ResizeError("kvcache_num_blocks=3 is below the minimum.", hint="Use 9 or more.")

    reported: list[tuple[object, object]] = []
    jobs.jobFailed.connect(lambda j, f: reported.append((j, f)))
    job = jobs.submit("resize", work)
    with qtbot.waitSignal(job.failed):
        pass
    failure = job.failure
    assert failure == JobFailure("kvcache_num_blocks=3 is below the minimum.", "Use 9 or more.")
    assert reported == [(job, failure)]


def test_an_unexpected_error_keeps_its_traceback(qtbot: QtBot, jobs: JobManager) -> None:
    job = jobs.submit("bug", lambda ctx: 1 / 0)
    with qtbot.waitSignal(job.failed) as blocker:
        pass
    failure = blocker.args[0]
    assert failure.reason == "Unexpected error: ZeroDivisionError: division by zero"
    assert "Traceback" in failure.details and job.state is JobState.FAILED


def test_cancel_stops_at_the_next_progress_check(qtbot: QtBot, jobs: JobManager) -> None:
    steps: list[int] = []

    def work(ctx: JobContext) -> None:
        for i in range(1_000_000):
            steps.append(i)
            ctx.progress(i, 1_000_000, "working")

    job = jobs.submit("long", work)
    with qtbot.waitSignal(job.progressed):
        pass
    with qtbot.waitSignal(job.cancelled):
        job.cancel()
    assert job.state is JobState.CANCELLED and len(steps) < 1_000_000
    assert job.log_lines[-1] == "cancelled. Nothing was changed."


def test_write_jobs_run_one_at_a_time(qtbot: QtBot, jobs: JobManager) -> None:
    release = threading.Event()
    order: list[str] = []
    lock = threading.Lock()

    def first(ctx: JobContext) -> None:
        with lock:
            order.append("first started")
        release.wait(10)
        with lock:
            order.append("first ended")

    def second(ctx: JobContext) -> None:
        with lock:
            order.append("second started")

    a = jobs.submit("write a", first, writes=True)
    b = jobs.submit("write b", second, writes=True)
    with qtbot.waitSignal(a.started):
        pass
    assert b.state is JobState.QUEUED
    with qtbot.waitSignals([a.finished, b.finished]):
        release.set()
    assert order == ["first started", "first ended", "second started"]


def test_a_job_cancelled_before_it_starts_never_runs(qtbot: QtBot, jobs: JobManager) -> None:
    release = threading.Event()
    ran: list[str] = []
    blocker_job = jobs.submit("busy", lambda ctx: release.wait(10), writes=True)
    queued = jobs.submit("queued", lambda ctx: ran.append("ran"), writes=True)
    queued.cancel()
    with qtbot.waitSignals([blocker_job.finished, queued.cancelled]):
        release.set()
    assert ran == [] and queued.state is JobState.CANCELLED


def test_signals_connected_right_after_submit_see_the_first_results(qtbot: QtBot, jobs: JobManager) -> None:
    got: list[object] = []
    for i in range(20):
        job = jobs.submit(f"fast {i}", lambda ctx: ctx.partial("first"))
        job.partial.connect(got.append)
        with qtbot.waitSignal(job.finished):
            pass
    assert got == ["first"] * 20


def test_progress_in_bytes_beyond_two_gib_arrives(qtbot: QtBot, jobs: JobManager) -> None:
    """A copy of a 4 GiB artifact reports byte counts that do not fit a 32-bit int."""
    four_gib = 4 << 30

    def work(ctx: JobContext) -> None:
        ctx.progress(four_gib - 1, four_gib, "copying")
        ctx.progress(four_gib, four_gib, "copied")

    job = jobs.submit("copy", work)
    with qtbot.waitSignal(job.succeeded):
        pass
    assert (job.done, job.total) == (four_gib, four_gib)


def test_writers_run_below_the_gui_threads_priority_and_readers_beside_it(qtbot: QtBot, jobs: JobManager) -> None:
    """A copy yields the CPU to the GUI thread (Linux: a nice value per thread). A scan, which holds the
    interpreter lock most of the time, runs at the GUI's priority: preempted at a lower one, it kept the GUI
    thread waiting for the lock."""
    import os
    import sys

    if not sys.platform.startswith("linux"):
        pytest.skip("per-thread nice values are a Linux feature")

    def nice(_ctx: object) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    writer = jobs.submit("copy", nice, writes=True)
    reader = jobs.submit("scan", nice)
    with qtbot.waitSignals([writer.succeeded, reader.succeeded]):
        pass
    gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert isinstance(writer.result, int) and writer.result >= gui + 1
    assert reader.result == gui


def test_finished_jobs_leave_nothing_behind_in_the_thread_pools(qtbot: QtBot, jobs: JobManager) -> None:
    """Issue 28 item 5: every Refresh runs quick jobs, and each left a dead runner held by its pool for good."""

    def held() -> int:
        gc.collect()
        return len(gc.get_referents(jobs.read_pool)) + len(gc.get_referents(jobs.write_pool))

    def run(count: int) -> None:
        for i in range(count):  # one at a time, as a Refresh does: an idle worker takes each at once
            job = jobs.submit(f"quick {i}", lambda ctx: None, writes=i % 2 == 1)
            qtbot.waitUntil(lambda: job.state.ended)  # noqa: B023 (waited on before the next one)
        jobs.read_pool.waitForDone()
        jobs.write_pool.waitForDone()

    run(5)  # the pools' own first references, whatever they are
    before = held()
    run(60)
    assert held() == before
