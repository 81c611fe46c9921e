"""The main window's helpers built alone, from the few objects each is given: no MainWindow (issue 31 item 5)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QSplitter, QStatusBar, QWidget
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace
from rbln_artifact_studio.gui.window.artifact_actions import ArtifactActions, BusyPaths, WindowActions
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.window.detail_panel import DetailPanel
from rbln_artifact_studio.gui.window.folder_control import FolderControl
from rbln_artifact_studio.gui.window.start_panel import FirstSteps
from rbln_artifact_studio.gui.window.status_line import StatusLine


@dataclass
class Data:
    """What the window builds first and its helpers share."""

    jobs: JobManager
    model: ArtifactTableModel
    workspace: Workspace
    settings: Settings


@pytest.fixture
def data(qtbot: QtBot, settings: Settings) -> Iterator[Data]:
    jobs = JobManager()
    model = ArtifactTableModel()
    yield Data(jobs, model, Workspace(jobs, model, debounce_ms=50), settings)
    jobs.cancel_all()
    jobs.wait()


def _widget(qtbot: QtBot, widget: QWidget) -> QWidget:
    qtbot.addWidget(widget)
    return widget


def test_the_status_line_counts_the_rows_and_names_the_refresh_keys(qtbot: QtBot, data: Data) -> None:
    status = QStatusBar()
    shown = QSortFilterProxyModel()
    shown.setSourceModel(data.model)
    line = StatusLine(status, data.model, shown, data.workspace, data.jobs, _widget(qtbot, QWidget()))
    refresh = QAction("Refresh")
    refresh.setShortcut("F5")
    line.connect_to(refresh)
    assert line.count_label.text() == "0 artifact(s)"
    data.workspace.watcher.limited.emit(3)  # as the watcher reports folders it had to leave out
    assert line.watch_label.text() == "Changes inside 3 artifact(s) show after F5"


def test_a_server_in_open_recent_is_handed_on_to_connect(qtbot: QtBot, data: Data) -> None:
    entry = ServerEntry("npu-1", ("/models",))
    data.settings.remember_server(entry)
    window = _widget(qtbot, QWidget())
    folders = FolderControl(window, QStatusBar(window), data.workspace, data.settings, data.jobs)
    folders.fill_recent_menu()
    action = next(a for a in folders.recent_menu.actions() if a.objectName() == "recentServer:npu-1")
    with qtbot.waitSignal(folders.serverChosen) as chosen:
        action.trigger()
    assert chosen.args == [entry]


def test_the_first_steps_give_way_to_an_opened_folder(qtbot: QtBot, data: Data, tmp_path: Path) -> None:
    window = _widget(qtbot, QWidget())
    opened: list[bool] = []
    action = QAction("Open Folder…", window)
    action.setObjectName("actionOpenFolder")
    action.triggered.connect(lambda: opened.append(True))
    window.addAction(action)
    table, splitter = QWidget(), QSplitter(Qt.Orientation.Horizontal, window)
    splitter.addWidget(table)
    splitter.addWidget(QWidget())
    window.show()
    steps = FirstSteps(window, splitter, table, data.settings, data.workspace, data.model, data.jobs)
    panel = steps.offer()
    assert panel is not None and not table.isVisible()
    panel.buttons["actionOpenFolder"].click()  # the window's own action
    assert opened == [True]
    with qtbot.waitSignal(data.workspace.scanFinished, timeout=20_000):
        data.workspace.open(tmp_path)
    assert steps.panel is None and table.isVisible()


def test_the_kv_actions_say_why_a_model_offers_no_resize(qtbot: QtBot, data: Data) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    mine = {name: QAction(name.title(), window) for name in ("compile", "resize", "plan", "explore", "copy_path")}
    browser, detail, splitter = ArtifactBrowser(data.model), DetailPanel(), QSplitter()
    # What the selection tells the actions: no artifact to resize, and why.
    selection = SimpleNamespace(artifact=None, no_resize_reason="It has no KV cache.", selected_paths=lambda: [])
    actions = ArtifactActions(
        window,
        browser=browser,
        selection=selection,
        actions=WindowActions(**mine),
        open_resize=lambda _artifact: pytest.fail("nothing to resize"),
        detail=detail,
        splitter=splitter,
        jobs=data.jobs,
        model=data.model,
        workspace=data.workspace,
        settings=data.settings,
        busy=BusyPaths(window),
        offer=lambda _where: pytest.fail("nothing was written"),
    )
    actions.update()
    assert not mine["resize"].isEnabled() and not actions.resize_copy.isEnabled()
    assert mine["resize"].toolTip() == "Resize: not offered. It has no KV cache."
    selection.no_resize_reason = None
    actions.update()
    assert mine["resize"].toolTip() == "Resize"
