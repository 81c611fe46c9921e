"""The resize dialog's smaller points (issue 33 item 6), at 1024x700 in both themes: an empty count says it is
empty, an error is shown once, Fit to budget and a count below the floor offer their fix as a button, and the
budget field says what 10GB means."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QTableWidget
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.theme import Theme, system_palette
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.gui.widgets.breakdown_table import BreakdownTable
from rbln_artifact_studio.gui.widgets.fix_buttons import FixButtons
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text
from .layout_audit import audit
from .test_gui_small_screen import SMALL, on_small_screen
from .widgets import cell, child, present


@pytest.fixture(autouse=True)
def _desktop_palette_afterwards() -> Iterator[None]:
    system_palette()
    yield
    QApplication.setPalette(system_palette())


def _shown_texts(dialog: ResizeDialog) -> str:
    """Everything the dialog shows in words: its visible labels and what its charts draw."""
    labels = [w.text() for w in dialog.findChildren(QLabel) if w.isVisible()]
    return "\n".join([*labels, dialog.after_chart.summary(), dialog.before_chart.summary()])


def _fix_buttons(dialog: ResizeDialog) -> dict[str, QPushButton]:
    fixes = child(dialog, FixButtons, "resizeFixes")
    return {b.text(): b for b in fixes.buttons} if fixes.isVisible() else {}


@pytest.fixture
def small(qtbot: QtBot, settings: Settings) -> MainWindow:
    return on_small_screen(qtbot, settings)


@pytest.mark.parametrize("theme", [Theme.LIGHT, Theme.DARK])
def test_resize_dialog_says_each_thing_once_and_offers_its_fixes(
    qtbot: QtBot, small: MainWindow, workspace: Path, cr13_artifact: Path, theme: Theme
) -> None:
    small.theme.choose(theme, remember=False)
    open_folder(qtbot, small, workspace)
    select(qtbot, small, cr13_artifact)
    dialog = present(small.dialogs.open_resize_dialog())
    qtbot.waitExposed(dialog)
    assert "10 GiB" in dialog.budget_edit.placeholderText() and "10GB means 10 GiB" in dialog.budget_edit.toolTip()

    type_text(qtbot, dialog.target_spin, "")  # an emptied count says so, never "kvcache_num_blocks=0 is below…"
    assert "kvcache_num_blocks is empty: type a number." in dialog.message.text()
    assert "=0" not in _shown_texts(dialog) and not dialog.apply_button.isEnabled()

    type_text(qtbot, dialog.target_spin, "3")  # below the floor of 9: the reason once, and the floor as a fix
    below = "kvcache_num_blocks=3 is below the minimum required"
    assert _shown_texts(dialog).count(below) == 1 and below in dialog.message.text()
    assert audit(dialog, SMALL) == []
    floor = _fix_buttons(dialog)["kvcache_num_blocks 9 (the floor)"]
    qtbot.mouseClick(floor, Qt.MouseButton.LeftButton)
    assert dialog.target_spin.value() == 9 and dialog.apply_button.isEnabled() and not _fix_buttons(dialog)

    qtbot.mouseClick(dialog.by_budget, Qt.MouseButton.LeftButton)
    type_text(qtbot, dialog.budget_edit, "0.01")  # Fit to budget: too small; the budget that fits is one click
    assert "0.1995" in dialog.message.text() and not dialog.apply_button.isEnabled()
    assert list(_fix_buttons(dialog)) == ["memory_budget 0.1995"]
    assert audit(dialog, SMALL) == []
    qtbot.mouseClick(_fix_buttons(dialog)["memory_budget 0.1995"], Qt.MouseButton.LeftButton)
    assert dialog.budget_edit.text() == "0.1995" and dialog.by_budget.isChecked()
    assert "✓ 9 blocks" in dialog.message.text() and dialog.apply_button.isEnabled()
    dialog.reject()


def test_dram_table_header_names_what_its_rows_name(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    table = child(window.detail, BreakdownTable)
    for artifact, header, first_row in ((cr13_artifact, "NPU · chiplet", "NPU 0 · c"), (ca25_artifact, "NPU", "NPU 0")):
        select(qtbot, window, artifact)
        assert isinstance(table, QTableWidget)
        assert present(table.horizontalHeaderItem(0)).text() == header
        assert cell(table, 0, 0).text().startswith(first_row)
    assert "10 GiB" in window.detail.what_if_edit.placeholderText()
