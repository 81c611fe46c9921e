"""The Jobs panel (issue #23 item 4): Cancel in view without scrolling, and a job row's context menu."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.commandline import shell_text
from rbln_artifact_studio.gui.window.jobs_panel import JobRow
from rbln_artifact_studio.gui.window.main_window import MainWindow

LONG_TITLE = "Copy qwen3-8b-cr13-with-a-long-folder-name → qwen3-8b-cr13-with-a-long-folder-name-kv30 " * 2


def _stuck_job(window: MainWindow, release: threading.Event):
    def stuck(ctx):
        ctx.progress(1, 6, "copying")
        while not release.wait(0.02):
            ctx.checkpoint()

    return window.jobs.submit(LONG_TITLE, stuck, writes=True)


def test_cancel_is_in_view_without_scrolling(qtbot: QtBot, window: MainWindow) -> None:
    release = threading.Event()
    job = _stuck_job(window, release)
    qtbot.waitUntil(lambda: job.done > 0)
    row = window.jobs_panel.row_for(job)
    assert isinstance(row, JobRow)
    listing = window.jobs_panel.list
    qtbot.waitUntil(lambda: row.cancel_button.isVisible())
    viewport = listing.viewport()
    left = row.cancel_button.mapTo(viewport, QPoint(0, 0)).x()
    assert left >= 0 and left + row.cancel_button.width() <= viewport.width()
    assert listing.horizontalScrollBar().maximum() == 0
    assert row.title.toolTip() == LONG_TITLE and row.title.text().count("…") == 1  # shortened, whole in the tip
    with qtbot.waitSignal(job.finished):
        job.cancel()
    release.set()


def test_a_job_rows_context_menu(qtbot: QtBot, window: MainWindow) -> None:
    release = threading.Event()
    job = _stuck_job(window, release)
    job.command = ["rbln-studio-cli", "resize", "/srv/a b", "--kvcache-num-blocks", "12"]
    qtbot.waitUntil(lambda: job.done > 0)
    panel = window.jobs_panel
    row = panel.row_for(job)
    assert isinstance(row, JobRow)
    menu = panel.context_menu(row)
    actions = {a.text(): a for a in menu.actions()}
    assert list(actions) == ["&Cancel", "Show &Log", "Copy &Command", "Show Output in &File Manager"]
    assert actions["&Cancel"].isEnabled() and actions["Copy &Command"].isEnabled()
    assert not actions["Show Output in &File Manager"].isEnabled()  # no output folder (and not finished)
    actions["Copy &Command"].trigger()
    assert QGuiApplication.clipboard().text() == shell_text(job.command)  # quoted: pasting it runs the same
    actions["Show &Log"].trigger()
    assert panel.list.itemWidget(panel.list.currentItem()) is row
    with qtbot.waitSignal(job.finished):
        actions["&Cancel"].trigger()
    release.set()
    assert job.state.value == "cancelled"
    assert not panel.context_menu(row).actions()[0].isEnabled()  # nothing left to cancel
    menu.close()
