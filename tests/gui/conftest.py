"""GUI fixtures: a main window with its settings in a temporary file, and helpers that wait on signals."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QStandardPaths, Qt
from PySide6.QtWidgets import QLineEdit, QSpinBox, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.window.main_window import MainWindow

QStandardPaths.setTestModeEnabled(True)  # demo workspace and settings never touch the user's folders

HERE = Path(__file__).parent
# The offscreen platform's own screen is 800x800; the tests' windows open on a 1280x800 screen (the size the layouts
# are audited at) and, on a second screen to its right, at 1024x700 (the smallest the issue #23 names).
SCREENS = HERE / "offscreen-screens.json"
if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={SCREENS}"


@pytest.fixture
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    folder = tmp_path_factory.mktemp("settings")
    return Settings(QSettings(str(folder / "rbln-studio.ini"), QSettings.Format.IniFormat))


def _stop_jobs(qtbot: QtBot, w: MainWindow) -> None:
    w.jobs.cancel_all()
    w.jobs.wait()

    # A change on disk may have queued a rescan after the cancel: cancel again until nothing runs.
    def all_stopped() -> bool:
        w.jobs.cancel_all()
        return not w.jobs.active()

    qtbot.waitUntil(all_stopped, timeout=20_000)


@pytest.fixture
def window(qtbot: QtBot, settings: Settings) -> Iterator[MainWindow]:
    w = MainWindow(settings, debounce_ms=50)
    # pytest-qt closes its widgets before fixtures are torn down: stop the jobs first, or a test that failed
    # with a job still running would leave the window asking "Jobs are running…" in a modal box forever.
    qtbot.addWidget(w, before_close_func=lambda widget: _stop_jobs(qtbot, widget))
    w.show()
    yield w
    _stop_jobs(qtbot, w)


@pytest.fixture
def workspace(tmp_path: Path, cr13_artifact: Path, ca25_artifact: Path) -> Path:
    """tmp_path holding Qwen3-8B on RBLN-CR13 (21 blocks) and on 4x RBLN-CA25 (14 blocks)."""
    return tmp_path


def open_folder(qtbot: QtBot, window: MainWindow, folder: Path) -> None:
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=20_000):
        window.open_folder(folder)


def select(qtbot: QtBot, window: MainWindow, path: Path) -> None:
    """Make an artifact current and wait until its details are read."""
    assert window.browser.select_path(str(path)), f"{path} is not in the table"
    qtbot.waitUntil(lambda: window.artifact is not None and window.artifact.path == path, timeout=10_000)


def row_values(window: MainWindow, path: Path) -> dict[str, str]:
    from rbln_artifact_studio.gui.models.artifact_model import COLUMNS

    row = window.model.row_of(str(path))
    assert row is not None, f"{path} is not in the table"
    return {c.title: window.model.index(row, i).data() for i, c in enumerate(COLUMNS)}


def type_text(qtbot: QtBot, widget: QLineEdit | QSpinBox, text: str) -> None:
    """Replace a field's text key by key, as a user types it."""
    edit = widget.lineEdit() if isinstance(widget, QSpinBox) else widget
    widget.setFocus()  # as a click into the field does: a field losing focus may correct its text
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def click_next(qtbot: QtBot, wizard: QWizard) -> None:
    button = wizard.button(QWizard.WizardButton.NextButton)
    assert button.isEnabled()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def make_real_like(source: Path, target: Path) -> Path:
    """A copy whose .rbln files are opaque (as the real compiler writes them): allocations unknown."""
    shutil.copytree(source, target)
    for graph in target.glob("*.rbln"):
        graph.write_bytes(b"\x00opaque compiled graph from rebel-compiler\x00" * 16)
    return target


# The offscreen platform's windows cannot take size hints and say so once per window; a real X server (where the
# app runs) implements them. Every other Qt warning still fails a test.
OFFSCREEN_NOTICE = r"This plugin does not support propagateSizeHints\(\)"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOTICE))
