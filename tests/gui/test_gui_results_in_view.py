"""Results in view (issue 33 item 1): what the app writes is offered in the window when it lands: selected in the
table inside a shown folder, else one click opens its folder beside the shown ones; the folders shown come back on
the next start."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.simulator.compiler import CompileRequest
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, open_folder
from .test_gui_small_screen import on_small_screen

SMALL_MODEL = CompileRequest("Qwen/Qwen3-0.6B", npu="RBLN-CA25", max_seq_len=4096)


def _compile_into(qtbot: QtBot, window: MainWindow, output: Path) -> None:
    job = window.dialogs.start_compile(SMALL_MODEL, LocalFolder(output), BackendChoice.SIM)
    with qtbot.waitSignal(job.finished, timeout=60_000):
        pass
    assert job.state.value == "succeeded", job.failure


def _selected(window: MainWindow) -> str | None:
    return window.browser.current_path()


def test_a_result_outside_the_shown_folders_opens_beside_them_in_one_click(
    qtbot: QtBot, settings: Settings, workspace: Path, cr13_artifact: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    window = on_small_screen(qtbot, settings)
    open_folder(qtbot, window, workspace)
    inside = workspace / "qwen3-0.6b-here"
    _compile_into(qtbot, window, inside)  # inside the shown folder: selected in the table, nothing to click
    qtbot.waitUntil(lambda: _selected(window) == str(inside), timeout=20_000)
    assert not window.results.bar.isVisible()

    elsewhere = tmp_path_factory.mktemp("elsewhere") / "qwen3-0.6b-there"
    _compile_into(qtbot, window, elsewhere)
    notice = window.results
    assert notice.bar.isVisible() and str(elsewhere) in notice.label.text()
    assert window.model.row_of(str(elsewhere)) is None  # not in the table until asked
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=30_000):
        qtbot.mouseClick(notice.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _selected(window) == str(elsewhere), timeout=20_000)
    assert window.workspace.roots == [str(workspace), str(elsewhere.parent)]
    assert window.model.row_of(str(cr13_artifact)) is not None  # the first folder's rows stay
    assert f"{workspace} + 1 more" in window.windowTitle()
    assert not notice.bar.isVisible()

    copy = elsewhere.parent / "qwen3-0.6b-copied"  # the folder beside is watched as the first one is
    shutil.copytree(elsewhere, copy)
    qtbot.waitUntil(lambda: window.model.row_of(str(copy)) is not None, timeout=20_000)

    again = MainWindow(settings, debounce_ms=50)  # the next start with no arguments: the same folders
    qtbot.addWidget(again, before_close_func=lambda w: _stop_jobs(qtbot, w))
    with qtbot.waitSignal(again.workspace.scanFinished, timeout=30_000):
        assert again.folders.reopen_workspace()
    qtbot.waitUntil(lambda: again.model.row_of(str(copy)) is not None, timeout=30_000)
    assert again.workspace.roots == [str(workspace), str(elsewhere.parent)]
    assert again.model.row_of(str(cr13_artifact)) is not None
