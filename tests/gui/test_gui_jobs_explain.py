"""Jobs that explain themselves (issue 33 item 4): a queued job says what it waits for, and the quit question
follows the jobs it asks about while it is open."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.models.jobs import JobContext
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .widgets import present


def _held(release: threading.Event) -> Callable[[JobContext], None]:
    def work(ctx: JobContext) -> None:
        while not release.wait(0.02):
            ctx.checkpoint()

    return work


def test_a_queued_write_says_which_job_it_waits_for(qtbot: QtBot, window: MainWindow) -> None:
    window.resize(1024, 700)
    first_done, second_done = threading.Event(), threading.Event()
    first = window.jobs.submit("Resize qwen3-8b-cr13 → 40 blocks", _held(first_done), writes=True)
    with qtbot.waitSignal(first.started):
        second = window.jobs.submit("Resize qwen3-8b-ca25 → 30 blocks", _held(second_done), writes=True)
    row = present(window.jobs_panel.row_for(second))
    assert row.state.text() == "queued: waiting for “Resize qwen3-8b-cr13 → 40 blocks” to finish"
    with qtbot.waitSignal(second.started, timeout=10_000):
        first_done.set()
    assert row.state.text() == "running"
    with qtbot.waitSignal(second.finished, timeout=10_000):
        second_done.set()


def test_the_quit_question_follows_the_jobs_and_closes_when_they_end(qtbot: QtBot, window: MainWindow) -> None:
    releases = [threading.Event(), threading.Event()]
    jobs = [
        window.jobs.submit("Copy a", _held(releases[0]), writes=True),
        window.jobs.submit("Copy b", _held(releases[1])),
    ]
    qtbot.waitUntil(lambda: all(job.state.value == "running" for job in jobs), timeout=10_000)
    seen: list[str] = []
    stale: list[int] = []

    def step() -> None:
        """Runs inside the question's own event loop: reads it, then ends the jobs one by one."""
        box = next((w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()), None)
        if box is None:
            return
        if not seen or box.text() != seen[-1]:
            seen.append(box.text())
            stale.clear()
            releases[min(len(seen), 2) - 1].set()  # the first text seen: end "Copy a"; the second: end "Copy b"
        else:
            stale.append(1)
            if len(stale) > 500:  # a question that never follows the jobs: answer No rather than hang the run
                box.reject()

    timer = QTimer()
    timer.timeout.connect(step)
    timer.start(20)
    closed = window.close()  # the question is modal: it returns once answered, here by the jobs ending
    timer.stop()
    assert seen[0].startswith("2 jobs are still running: “Copy a”, “Copy b”.")
    assert seen[1].startswith("1 job is still running: “Copy b”. Cancel it and quit?")
    assert closed and not window.isVisible()
    assert all(job.state.value == "succeeded" for job in jobs)
