"""A count the core refuses is not previewed as if it fitted (issue #26 item 7): type 8 where the floor is 9."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text


def test_a_refused_count_draws_no_after_chart(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    dialog = window.dialogs.open_resize_dialog()
    assert dialog is not None
    floor = dialog.artifact.config.num_min_blocks
    type_text(qtbot, dialog.target_spin, str(floor - 1))
    assert not dialog.apply_button.isEnabled() and "✖" in dialog.message.text()
    assert dialog.after_chart.breakdown is None
    assert "fits" not in dialog.after_caption.text()
    assert dialog.after_caption.text().startswith(f"Not previewed: {floor - 1} blocks cannot be applied")
    type_text(qtbot, dialog.target_spin, str(floor))  # an accepted count is previewed again
    assert dialog.apply_button.isEnabled() and dialog.after_chart.breakdown is not None
    assert "fits" in dialog.after_caption.text()
    dialog.reject()
