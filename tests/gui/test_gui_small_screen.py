"""A 1024x700 screen (issue #23 item 1): every window and dialog opens within it, its buttons on screen; saved
geometry from a larger screen is not restored where it would hang off this one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import _stop_jobs, open_folder, select
from .layout_audit import audit
from .widgets import present

SMALL = (1024, 700)


def small_screen() -> QScreen:
    screen = next((s for s in QGuiApplication.screens() if s.size().toTuple() == SMALL), None)
    if screen is None:
        pytest.skip("needs the offscreen screens of tests/gui/offscreen-screens.json")
    return screen


def on_small_screen(qtbot: QtBot, settings: Settings) -> MainWindow:
    screen = small_screen()
    window = MainWindow(settings, debounce_ms=50)
    qtbot.addWidget(window, before_close_func=lambda w: _stop_jobs(qtbot, w))
    window.setScreen(screen)
    window.move(screen.geometry().topLeft())
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
def small_window(qtbot: QtBot, settings: Settings) -> Iterator[MainWindow]:
    window = on_small_screen(qtbot, settings)
    yield window
    _stop_jobs(qtbot, window)


def _check(dialog: QWidget | None) -> list[str]:
    assert dialog is not None
    assert dialog.screen() is small_screen()
    return audit(dialog, SMALL)


def test_every_window_and_dialog_fits_1024x700(
    qtbot: QtBot, small_window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    window = small_window
    assert window.screen() is small_screen()
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    assert audit(window, SMALL) == []
    for open_dialog in (
        window.dialogs.open_resize_dialog,
        window.dialogs.open_explorer,
        window.dialogs.show_about,
        window.dialogs.show_preferences,
    ):
        dialog = present(open_dialog())
        qtbot.waitExposed(dialog)
        assert _check(dialog) == [], dialog.objectName()
        dialog.close()
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
    for _page in range(5):
        assert _check(wizard) == [], wizard.currentPage().title()
        wizard.next()
    wizard.reject()
    window.browser.view.selectionModel().select(
        window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(ca25_artifact))), 0)),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    compare = window.artifact_actions.open_compare()
    assert isinstance(compare, CompareDialog)
    qtbot.waitUntil(lambda: compare.comparison is not None)
    assert _check(compare) == []
    compare.close()
    planner = window.dialogs.open_planner()
    assert planner is not None
    with qtbot.waitSignal(planner.planned, timeout=20_000):  # type: ignore[attr-defined]
        pass
    assert _check(planner) == []
    planner.close()


def test_geometry_saved_on_a_larger_screen_is_not_restored_off_this_one(
    qtbot: QtBot, window: MainWindow, settings: Settings
) -> None:
    window.resize(1270, 790)  # on the 1280x800 screen
    window.save_state()
    again = on_small_screen(qtbot, settings)
    area = small_screen().availableGeometry()
    assert area.contains(again.frameGeometry()), again.frameGeometry()
