"""A long session stays flat: every Refresh adds a finished scan to the jobs panel, and the panel kept each one
(a row of widgets and the job with its log) for good: issue 28's 43 KB a cycle. It keeps the newest few.
The memory itself is measured by benchmarks/bench_gui_memory.py (no memory threshold in a test)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window import jobs_panel
from rbln_artifact_studio.gui.window.jobs_panel import JobRow
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder


def test_refreshing_again_and_again_keeps_only_the_newest_finished_jobs(
    qtbot: QtBot, window: MainWindow, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs_panel, "KEEP_FINISHED", 3)
    open_folder(qtbot, window, workspace)
    for _ in range(6):
        with qtbot.waitSignal(window.workspace.scanFinished, timeout=20_000):
            window.workspace.refresh()
        qtbot.waitUntil(lambda: not window.jobs.active())
    panel = window.jobs_panel
    rows = [panel.list.itemWidget(panel.list.item(i)) for i in range(panel.list.count())]
    assert len(rows) == 3 and all(isinstance(r, JobRow) and r.job.state.ended for r in rows)
    assert len(panel.rows) == 3
    assert len([j for j in window.jobs.jobs if j.visible]) == 3  # the older ones are forgotten, not just hidden
    qtbot.waitUntil(lambda: len(window.findChildren(JobRow)) == 3)  # their widgets are gone too
