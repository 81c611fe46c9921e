"""The table's context menu, toolbar and keys: every action on the selection, the trash flow and compare."""

from __future__ import annotations

import os
import shlex
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QPoint, Qt, QUrl, Slot
from PySide6.QtGui import QContextMenuEvent, QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QPushButton, QTableWidget, QToolBar
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .widgets import cell, child, present

CONTEXT_MENU = [
    "Open &Details",
    "&Resize KV Cache…",
    "Resize to a &Copy…",
    "&Plan Co-location…",
    "Co&mpare…",
    "&Serving Check",
    "&Explore Budgets…",
    "",
    "Show in &File Manager",
    "Do&wnload to This Computer…",
    "Copy &Path",
    "Copy rbln-studio-cli &Command",
    "",
    "Move to &Trash…",
]


def _row_point(window: MainWindow, path: Path):
    view = window.browser.view
    row = window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(path))), 0)).row()
    return view.visualRect(view.model().index(row, 1)).center()


@pytest.mark.qt_log_ignore(
    "This plugin does not support raise", "This plugin does not support grabbing", "propagateSizeHints"
)
def test_right_click_after_a_ctrl_click_selects_only_the_row_clicked(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    """The platform keeps the modifiers of the last input event: after a Ctrl+click, a right-click on another row
    still selects that row alone, as file managers do."""
    open_folder(qtbot, window, workspace)
    select(qtbot, window, ca25_artifact)
    view = window.browser.view
    below_the_rows = view.viewport().rect().bottomLeft() + QPoint(20, -5)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier, below_the_rows)
    assert window.browser.selected_paths() == [str(ca25_artifact)]  # a Ctrl+click on no row changes nothing
    point = _row_point(window, cr13_artifact)
    click = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point, view.viewport().mapToGlobal(point))
    QApplication.sendEvent(view.viewport(), click)
    menu = child(view, QMenu, "artifactContextMenu")
    assert window.browser.selected_paths() == [str(cr13_artifact)]
    menu.close()


def _select_both(window: MainWindow, a: Path, b: Path) -> None:
    from PySide6.QtCore import QItemSelectionModel

    window.browser.select_path(str(a))
    row = window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(b))), 0))
    window.browser.view.selectionModel().select(
        row, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    )


@pytest.mark.qt_log_ignore(  # what the offscreen platform cannot do for a popup menu; a real X server can
    "This plugin does not support raise", "This plugin does not support grabbing", "propagateSizeHints"
)
def test_right_click_selects_the_row_and_offers_every_action(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    view = window.browser.view
    point = _row_point(window, ca25_artifact)
    click = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point, view.viewport().mapToGlobal(point))
    QApplication.sendEvent(view.viewport(), click)
    menu = child(view, QMenu, "artifactContextMenu")
    assert isinstance(menu, QMenu) and menu.isVisible()
    assert [a.text() for a in menu.actions()] == CONTEXT_MENU
    assert window.browser.selected_paths() == [str(ca25_artifact)]  # right-click acts on the row clicked
    menu.close()
    qtbot.waitUntil(lambda: view.findChild(QMenu, "artifactContextMenu") is None)
    # The menu key (or Shift+F10): the menu for the selection as it is, at the current row.
    select(qtbot, window, cr13_artifact)
    key = QContextMenuEvent(
        QContextMenuEvent.Reason.Keyboard, view.rect().center(), view.mapToGlobal(view.rect().center())
    )
    QApplication.sendEvent(view, key)
    menu = child(view, QMenu, "artifactContextMenu")
    assert isinstance(menu, QMenu) and menu.isVisible()
    assert window.browser.selected_paths() == [str(cr13_artifact)]
    menu.close()
    # The Artifact menu of the menu bar offers the same actions (reachable with Alt+A, no mouse needed).
    artifact_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Artifact")
    assert isinstance(artifact_menu, QMenu)
    texts = [a.text() for a in artifact_menu.actions()]
    assert all(t in texts for t in CONTEXT_MENU if t)


def test_the_toolbar_can_be_hidden_and_stays_hidden(
    qtbot: QtBot, window: MainWindow, settings: object, workspace: Path, cr13_artifact: Path
) -> None:
    toolbar = child(window, QToolBar, "artifactToolbar")
    assert toolbar.isVisible()
    names = [a.objectName() for a in toolbar.actions()]
    assert {"actionResize", "actionResizeCopy", "actionPlan", "actionCompare", "actionTrash"} <= set(names)
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    assert isinstance(view_menu, QMenu)
    toggle = next(a for a in view_menu.actions() if a.objectName() == "actionShowToolbar")
    toggle.trigger()
    assert not toolbar.isVisible()
    window.save_state()
    again = MainWindow(window.settings, debounce_ms=50)
    qtbot.addWidget(again)
    again.show()
    assert not child(again, QToolBar, "artifactToolbar").isVisible()


def test_copy_path_command_and_file_manager(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.action_copy_path.trigger()
    assert QGuiApplication.clipboard().text() == str(cr13_artifact)
    window.artifact_actions.copy_command.trigger()
    assert shlex.split(QGuiApplication.clipboard().text()) == ["rbln-studio-cli", "inspect", str(cr13_artifact)]
    _select_both(window, cr13_artifact, ca25_artifact)
    window.artifact_actions.copy_command.trigger()
    assert shlex.split(QGuiApplication.clipboard().text())[:2] == ["rbln-studio-cli", "plan"]

    class Opener(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.urls: list[QUrl] = []

        @Slot(QUrl)
        def open(self, url: QUrl) -> None:
            self.urls.append(url)

    opener = Opener()
    QDesktopServices.setUrlHandler("file", opener, "open")  # type: ignore[arg-type]  # PySide6 takes the slot name as str; its stub says bytes
    try:
        select(qtbot, window, ca25_artifact)
        window.artifact_actions.show_in_folder.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [u.toLocalFile() for u in opener.urls] == [str(ca25_artifact.parent)]


def test_resize_to_a_copy_opens_on_copy_with_the_focus_in_the_count(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    dialog = window.artifact_actions.open_resize_copy()
    assert isinstance(dialog, ResizeDialog) and dialog.isVisible()
    assert dialog.mode_copy.isChecked() and dialog.by_count.isChecked()
    qtbot.waitUntil(lambda: QApplication.focusWidget() in (dialog.target_spin, dialog.target_spin.lineEdit()))
    dialog.reject()


def test_enter_opens_details_and_serving_check_scrolls_to_it(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.splitter.setSizes([1280, 0])  # the details collapsed
    window.browser.view.setFocus()
    qtbot.waitUntil(window.browser.view.hasFocus)
    qtbot.keyClick(window.browser.view, Qt.Key.Key_Return)
    assert window.splitter.sizes()[1] > 0
    qtbot.waitUntil(lambda: window.detail.hasFocus())
    window.artifact_actions.serving.trigger()
    serving = window.detail.serving
    qtbot.waitUntil(lambda: not serving.visibleRegion().isEmpty())


def _trash_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the Trash of these tests lives under tmp_path (a fresh home: the
    return home  # app makes the data folder the Trash goes in)


def _box(qtbot: QtBot, window: MainWindow, name: str) -> QMessageBox:
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, name) is not None)
    box = child(window, QMessageBox, name)
    assert box.isVisible()
    return box


def test_delete_asks_and_cancel_keeps_the_artifact(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _trash_home(monkeypatch, workspace)
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.browser.view.setFocus()
    qtbot.waitUntil(window.browser.view.hasFocus)
    qtbot.keyClick(window.browser.view, Qt.Key.Key_Delete)
    box = _box(qtbot, window, "trashConfirm")
    size = window.model.summary(present(window.model.row_of(str(cr13_artifact)))).size_on_disk
    assert "qwen3-8b-cr13" in box.text() and f"({size:,} bytes) once the Trash is emptied" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.Cancel), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "trashConfirm") is None)
    assert cr13_artifact.is_dir() and window.model.row_of(str(cr13_artifact)) is not None
    assert not window.jobs.active()


def test_confirmed_trash_moves_the_folder_and_the_row_goes(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _trash_home(monkeypatch, workspace)
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    files = sorted(p.name for p in cr13_artifact.iterdir())
    window.artifact_actions.trash.trigger()
    box = _box(qtbot, window, "trashConfirm")
    confirm = child(box, QPushButton, "trashConfirmButton")
    with qtbot.waitSignal(window.jobs.jobAdded) as added:
        qtbot.mouseClick(confirm, Qt.MouseButton.LeftButton)
    job = added.args[0]
    qtbot.waitUntil(lambda: job.state.ended, timeout=10_000)
    assert job.state.value == "succeeded", job.failure
    assert not cr13_artifact.exists()
    trashed = [p for p in home.rglob("qwen3-8b-cr13*") if p.is_dir()] + list(
        Path(workspace).glob(".Trash*/**/qwen3-8b-cr13")
    )
    assert trashed and sorted(p.name for p in trashed[0].iterdir()) == files  # whole, restorable
    qtbot.waitUntil(lambda: window.model.row_of(str(cr13_artifact)) is None, timeout=10_000)
    assert "Moved 1 artifact(s) to the Trash" in window.statusBar().currentMessage()


def test_trash_is_refused_while_a_job_uses_the_artifact(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _trash_home(monkeypatch, workspace)
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    # A resize the user started is tracked as using its source and its copy.
    dialog = window.dialogs.open_resize_dialog()
    assert dialog is not None
    dialog.target_spin.setValue(12)
    qtbot.waitUntil(lambda: dialog.apply_button.isEnabled())
    dialog.accept()
    resize_job = window.artifact_actions.busy.job_using(str(cr13_artifact))
    assert resize_job is not None and resize_job.title.startswith(f"Resize {cr13_artifact} ")
    qtbot.waitUntil(lambda: resize_job.state.ended, timeout=20_000)
    qtbot.waitUntil(lambda: window.artifact_actions.busy.job_using(str(cr13_artifact)) is None)
    qtbot.waitUntil(lambda: window.model.row_of(str(cr13_artifact) + "-kv12") is not None, timeout=10_000)
    select(qtbot, window, cr13_artifact)  # the finished resize selected its copy

    release = threading.Event()
    blocker = window.jobs.submit("Copy qwen3-8b-cr13 elsewhere", lambda ctx: release.wait(10), writes=True)
    window.artifact_actions.busy.track(blocker, cr13_artifact)
    try:
        window.artifact_actions.trash.trigger()
        box = _box(qtbot, window, "trashRefused")
        assert "in use by the job “Copy qwen3-8b-cr13 elsewhere”" in box.text() and "Nothing was changed." in box.text()
        assert window.findChild(QMessageBox, "trashConfirm") is None
        box.accept()
    finally:
        release.set()
    qtbot.waitUntil(lambda: blocker.state.ended)
    assert cr13_artifact.is_dir() and os.listdir(cr13_artifact)


def test_compare_two_artifacts(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    assert not window.artifact_actions.compare.isEnabled()  # one artifact: nothing to compare with
    _select_both(window, cr13_artifact, ca25_artifact)
    assert window.artifact_actions.compare.isEnabled()
    dialog = window.artifact_actions.open_compare()
    assert isinstance(dialog, CompareDialog)
    qtbot.waitUntil(lambda: dialog.comparison is not None, timeout=10_000)
    diffs = child(dialog, QTableWidget, "compareDifferences")
    rows = {cell(diffs, r, 0).text(): [cell(diffs, r, c).text() for c in (1, 2, 3)] for r in range(diffs.rowCount())}
    assert dialog.comparison is not None
    a_is_cr13 = dialog.comparison.left.path == cr13_artifact
    blocks = rows["KV blocks"]
    assert (blocks[:2] == ["21", "14"] and blocks[2] == "−7 blocks") if a_is_cr13 else (blocks[2] == "+7 blocks")
    assert rows["Tokens the KV cache holds"][2].endswith("tokens")
    assert rows["Full-length sequences at once"][2] in ("−2 sequences", "+2 sequences")
    assert rows["KV cache per NPU"][2].startswith(("+", "−"))
    settings = child(dialog, QTableWidget, "compareSettings")
    by_name = {cell(settings, r, 0).text(): r for r in range(settings.rowCount())}
    npu_row, batch_row = by_name["NPU"], by_name["Batch size"]
    assert cell(settings, npu_row, 0).font().bold() and not cell(settings, batch_row, 0).font().bold()
    assert cell(settings, npu_row, 1).background().color().alpha() > 0
    left, right = dialog.left_chart, dialog.right_chart
    assert left.breakdown is not None and right.breakdown is not None
    assert left._scale() == right._scale()  # both breakdowns on one scale
    dialog.close()
