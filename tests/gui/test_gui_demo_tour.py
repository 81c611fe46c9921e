"""`--demo` shows what to try (issue 43 item 7): a short tour whose every claim holds on the demo workspace."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.demo import DEMO_ARTIFACTS
from rbln_artifact_studio.gui.dialogs.planner_dialog import PlannerDialog
from rbln_artifact_studio.gui.window import folder_control
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import row_values
from .test_gui_planner import select_rows


def test_the_demo_tour_says_what_to_try_and_it_holds(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_control, "demo_folder", lambda: str(tmp_path / "demo"))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=60_000):
        window.open_demo()
    tour = window.help.show_demo_tour()  # what `rbln-studio --demo` shows beside the workspace
    qtbot.waitExposed(tour)
    text = tour.browser.toPlainText()
    named = [a.name for a in DEMO_ARTIFACTS if a.name in text]
    assert len(named) >= 2  # the steps name the demo's own artifacts
    cr13 = tmp_path / "demo" / "qwen3-8b-rbln-cr13"
    assert "kvcache_num_blocks 21" in text and row_values(window, cr13)["kvcache_num_blocks"] == "21"
    grown = row_values(window, tmp_path / "demo" / "llama-3.2-1b-rbln-ca25-kv18")
    assert "past its full pool" in text and grown["Status"] == "warning"
    assert "Plan Co-location… (Ctrl+Shift+P)" in text  # the keys, from the window's actions

    ca25 = [tmp_path / "demo" / a.name for a in DEMO_ARTIFACTS if "ca25" in a.name][:2]
    select_rows(qtbot, window, ca25)
    tour.browser.anchorClicked.emit(QUrl("action:actionPlan"))  # a step's link does what it says
    planner = window.findChild(PlannerDialog)
    assert planner is not None and planner.isVisible() and not tour.isVisible()
    planner.reject()
