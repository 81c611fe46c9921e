"""The main window on a folder: table, selection, detail panel and breakdown, disk changes, folders, closing."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QObject, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QTableWidget
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.gui.app import errors
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.widgets.dram_chart import DramChart
from rbln_artifact_studio.gui.window import folder_control
from rbln_artifact_studio.gui.window.main_window import MainWindow, main_window
from rbln_artifact_studio.gui.window.state_notices import folder_identity

from .conftest import make_real_like, open_folder, row_values, select
from .widgets import cell, child, present


def _error_dialog(qtbot: QtBot) -> QMessageBox:
    found: list[QMessageBox] = []

    def shown() -> bool:
        found[:] = [
            w
            for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.objectName() == "errorDialog" and w.isVisible()
        ]
        return bool(found)

    qtbot.waitUntil(shown)
    return found[0]


def _has_child(window: MainWindow, name: str) -> bool:
    return window.findChild(QObject, name) is not None


def test_window_is_reachable_from_the_application(qtbot: QtBot, window: MainWindow) -> None:
    assert main_window() is window
    for name in ("actionOpenFolder", "actionCompile", "actionResize"):
        assert window.findChild(type(window.action_open), name) is not None
    for name in ("artifactTable", "artifactFilter", "detailPanel", "jobsPanel"):
        assert window.findChild(QObject, name) is not None, name
    for name in ("dramChart", "kvBlocksLabel"):  # the detail panel's sections: built after the first paint
        qtbot.waitUntil(partial(_has_child, window, name))


def test_open_select_and_read_the_breakdown(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    assert window.model.rowCount() == 2
    assert child(window, QLabel, "artifactCount").text() == "2 artifact(s)"
    select(qtbot, window, cr13_artifact)
    assert child(window, QLabel, "kvBlocksLabel").text() == "kvcache_num_blocks 21 (floor 9, full pool 40)"
    assert window.action_resize.isEnabled()
    chart = child(window, DramChart, "dramChart")
    assert chart.isVisible()
    bars = chart.bars()
    assert [b.label for b in bars] == ["NPU 0 · c0", "NPU 0 · c1", "NPU 0 · c2", "NPU 0 · c3"]
    expected = open_artifact(cr13_artifact).breakdown()
    assert expected is not None and chart.breakdown == expected
    assert [b.tightest for b in bars].count(True) == 1
    tight = next(b for b in bars if b.tightest)
    assert tight.usage == expected.tightest
    kv_rect = next(rect for seg, rect in tight.pieces if seg.key == "kv")
    tooltip = chart.tooltip_at(kv_rect.center().toPoint())
    assert tooltip.startswith(f"KV cache: {expected.tightest.kv:,} B")
    assert "Budget:" not in tooltip  # the artifact records no memory_budget: the tooltip says so instead
    assert f"No memory_budget recorded: the whole NPU ({expected.tightest.available:,} B" in tooltip
    assert all(rect.height() > 0 for seg, rect in tight.pieces if seg.key in ("weights", "kv", "reserve"))
    table = child(window, QTableWidget, "breakdownTable")
    assert table.rowCount() == 4
    tight_row = [cell(table, r, 0).text() for r in range(4)].index(f"NPU 0 · c{expected.tightest.chiplet}  ◀ tightest")
    headers = [present(table.horizontalHeaderItem(c)).text() for c in range(table.columnCount())]
    assert headers[:5] == [
        "NPU · chiplet",
        "System reserve",
        "Weights",
        "Workspace / other",
        "KV cache",
    ]  # as the legend
    assert cell(table, tight_row, 1).text() == f"{expected.tightest.reserve:,} B"  # exact, as the README says
    assert cell(table, tight_row, 4).text() == f"{expected.tightest.kv:,} B"
    assert chart.tooltip_at(QPoint(1, 1)) == ""


def test_one_bar_per_npu_on_atom(qtbot: QtBot, window: MainWindow, workspace: Path) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, workspace / "qwen3-8b-ca25x4")
    bars = child(window, DramChart, "dramChart").bars()
    assert [b.label for b in bars] == ["NPU 0", "NPU 1", "NPU 2", "NPU 3"]
    assert "14 blocks" in child(window, QLabel, "dramCaption").text()


def test_real_artifact_says_allocations_unknown(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path
) -> None:
    real = make_real_like(cr13_artifact, tmp_path / "real" / "qwen3-8b-real")
    open_folder(qtbot, window, tmp_path / "real")
    select(qtbot, window, real)
    caption = child(window, QLabel, "dramCaption").text()
    assert caption.startswith("Allocations unknown:") and "rebel" in caption
    assert not child(window, DramChart, "dramChart").isVisible()
    assert child(window, DramChart, "dramChart").breakdown is None
    assert child(window, QLabel, "kvBlocksLabel").text() == "kvcache_num_blocks 21 (floor 9, full pool 40)"
    files = child(window, QTableWidget, "detailFiles")
    names = [cell(files, r, 0).text() for r in range(files.rowCount())]
    assert "prefill.rbln" in names and "rbln_config.json" in names


def test_problems_are_shown_in_words(qtbot: QtBot, window: MainWindow, tmp_path: Path, cr13_artifact: Path) -> None:
    resize_in_place(cr13_artifact, 45)
    open_folder(qtbot, window, tmp_path)
    assert row_values(window, cr13_artifact)["Status"] == "warning"
    select(qtbot, window, cr13_artifact)
    problems = child(window, QLabel, "detailProblems").text()
    assert "above the full pool (40)" in problems
    # 45 blocks fit the CR13's DRAM (the tables say so): no "may fail to allocate" beside that computation.
    assert "compiler resolved" not in problems and "fail to allocate" not in problems


def test_table_follows_the_disk(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, run_cli
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    done = run_cli("set-kvcache-num-blocks", cr13_artifact, 12)  # "another terminal"
    assert done.returncode == 0, done.stderr
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "12", timeout=10_000)
    qtbot.waitUntil(lambda: "kvcache_num_blocks 12 " in child(window, QLabel, "kvBlocksLabel").text())
    copy = workspace / "nested" / "deeper" / "copy-of-cr13"
    shutil.copytree(cr13_artifact, copy)
    qtbot.waitUntil(lambda: window.model.row_of(str(copy)) is not None, timeout=10_000)
    shutil.rmtree(workspace / "qwen3-8b-ca25x4")
    qtbot.waitUntil(lambda: window.model.row_of(str(workspace / "qwen3-8b-ca25x4")) is None, timeout=10_000)
    assert sorted(window.model.paths()) == sorted([str(cr13_artifact), str(copy)])


@pytest.mark.parametrize("refresh", [False, True], ids=["by-itself", "refresh-at-once"])
def test_table_follows_an_artifact_replaced_under_the_same_name(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, tmp_path: Path, run_cli, refresh: bool
) -> None:
    """Qt drops the watch of a deleted folder: one made again under that name must be watched again."""
    open_folder(qtbot, window, workspace)
    spare = shutil.copytree(cr13_artifact, tmp_path / "spare")
    resize_in_place(spare, 15)
    shutil.rmtree(cr13_artifact)  # e.g. a deploy script swapping in a fresh copy
    shutil.copytree(spare, cr13_artifact)
    if refresh:  # the user presses Refresh before the watcher has reported the change
        with qtbot.waitSignal(window.workspace.scanFinished):
            window.action_refresh.trigger()
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "15", timeout=10_000)
    done = run_cli("set-kvcache-num-blocks", cr13_artifact, 12)
    assert done.returncode == 0, done.stderr
    qtbot.waitUntil(lambda: row_values(window, cr13_artifact)["kvcache_num_blocks"] == "12", timeout=10_000)


def test_table_follows_an_open_folder_deleted_and_made_again(
    qtbot: QtBot, window: MainWindow, cr13_artifact: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    open_folder(qtbot, window, root)
    qtbot.waitUntil(lambda: str(root) in window.state_notices._opened)  # its identity is known
    opened = folder_identity(str(root))
    shutil.rmtree(root)
    root.mkdir()
    if folder_identity(str(root)) != opened:
        # The file system gave the new folder another inode: to the window it is another folder of that name
        # (as a folder renamed away and one made in its place is), and it says so rather than show it as the old.
        with qtbot.waitSignal(window.state_notices.folderGone, timeout=20_000) as gone:
            pass
        assert gone.args == [str(root), f"{root} was replaced by another folder of the same name."]
        return
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=10_000):  # the rescan the change starts
        pass
    # Copied in before or after the new watch is in place: either way the artifact shows up.
    shutil.copytree(cr13_artifact, root / "a")
    qtbot.waitUntil(lambda: window.model.row_of(str(root / "a")) is not None, timeout=10_000)


def test_drop_a_folder_to_open_it(qtbot: QtBot, window: MainWindow, workspace: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(workspace))])
    event = QDropEvent(
        QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    with qtbot.waitSignal(window.workspace.scanFinished):
        window.dropEvent(event)
    assert window.model.rowCount() == 2 and window.workspace.root == str(workspace)


def test_opening_a_missing_folder_shows_one_error(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    window.open_folder(tmp_path / "nope")
    box = _error_dialog(qtbot)
    assert box.text() == f"{tmp_path / 'nope'} is not a folder; open a folder that holds compiled artifacts."
    box.close()


def test_excepthook_shows_unexpected_errors(
    qtbot: QtBot, window: MainWindow, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        errors.excepthook(RuntimeError, exc, exc.__traceback__)
    box = _error_dialog(qtbot)
    assert box.text() == "Unexpected error: RuntimeError: boom"
    assert "Traceback" in box.detailedText()
    assert box.parent() is window
    box.close()
    assert "RuntimeError: boom" in capsys.readouterr().err


def test_recent_folders_geometry_and_splitter_are_remembered(
    qtbot: QtBot, window: MainWindow, settings: Settings, workspace: Path
) -> None:
    open_folder(qtbot, window, workspace)
    window.resize(760, 560)  # inside the offscreen screen (800x600), where restoreGeometry keeps it
    window.splitter.setSizes([300, 700])
    sizes = window.splitter.sizes()
    window.save_state()
    again = MainWindow(settings)
    qtbot.addWidget(again)
    again.show()
    assert settings.recent_folders()[0] == str(workspace)
    assert again.folders.recent_menu.actions()[0].text() == str(workspace)
    assert again.size() == window.size()
    assert again.splitter.sizes() == sizes


def test_closing_with_a_running_job_asks_then_cancels(
    qtbot: QtBot, window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    started = threading.Event()

    def work(ctx) -> None:
        started.set()
        while True:
            ctx.progress(0, 0, "waiting")
            ctx.cancel.raise_if_cancelled()

    job = window.jobs.submit("endless", work)
    with qtbot.waitSignal(job.started):
        pass
    answers = iter([False, True])
    asked: list[int] = []

    def confirm(count: int) -> bool:
        asked.append(count)
        return next(answers)

    monkeypatch.setattr(window, "confirm_quit_with_jobs", confirm)
    assert not window.close()
    assert window.isVisible() and asked == [1]
    assert window.close()
    assert asked == [1, 1] and job.token.cancelled
    qtbot.waitUntil(lambda: job.state.value == "cancelled")


def test_demo_workspace_is_built_in_a_worker_and_opened(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_control, "demo_folder", lambda: str(tmp_path / "demo"))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=20_000):
        window.open_demo()
    assert window.model.rowCount() == 5
    assert row_values(window, tmp_path / "demo" / "llama-3.2-1b-rbln-ca25-kv18")["Status"] == "warning"


def test_jobs_panel_lists_a_job_and_its_cancel_button_stops_it(qtbot: QtBot, window: MainWindow) -> None:
    from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton

    from rbln_artifact_studio.gui.window.jobs_panel import JobRow

    def work(ctx) -> None:
        ctx.log("started")
        n = 0
        while True:
            n += 1
            ctx.progress(n % 100, 100, "copying")

    job = window.jobs.submit("Endless copy", work)
    with qtbot.waitSignal(job.started):
        pass
    row = window.jobs_panel.row_for(job)
    assert isinstance(row, JobRow) and row.title.text() == "Endless copy"
    qtbot.waitUntil(lambda: child(row, QProgressBar, "jobProgress").maximum() == 1000)
    with qtbot.waitSignal(job.cancelled):
        qtbot.mouseClick(child(row, QPushButton, "jobCancel"), Qt.MouseButton.LeftButton)
    assert child(row, QLabel, "jobState").text() == "cancelled"
    window.jobs_panel.list.setCurrentRow(0)
    assert window.jobs_panel.log.toPlainText().splitlines() == ["started", "cancelled. Nothing was changed."]


def test_the_first_artifact_is_shown_before_the_full_checks_end(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a large fleet the full checks take seconds: the details of the first row must not wait for them."""
    from .held_scan import HeldScan

    held = HeldScan(
        tmp_path_factory.mktemp("held"), monkeypatch
    )  # the scan process holds its full checks until released
    try:
        with qtbot.waitSignal(window.workspace.rowsRead, timeout=20_000):
            window.open_folder(workspace)
        qtbot.waitUntil(lambda: window.artifact is not None, timeout=10_000)
        assert window.workspace.busy  # the checks are still held back
        # Closing now cancels the read-only scan without asking (nothing is lost).
        monkeypatch.setattr(window, "confirm_quit_with_jobs", lambda n: pytest.fail("asked about a scan"))
        scan = window.workspace.scan_job
        assert scan is not None
        assert window.close()
        assert scan.token.cancelled
    finally:
        held.release()
