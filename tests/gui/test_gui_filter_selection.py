"""The filter keeps the selected artifact while it matches, takes it back once it matches again, and matches targets
as the CLI prints them ("RBLN-CA25 x4")."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text


def test_filtering_keeps_the_selection_and_the_details(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    browser = window.browser
    type_text(qtbot, browser.filter_edit, "cr13")  # still matches: nothing changes
    assert browser.selected_paths() == [str(cr13_artifact)] and window.artifact is not None
    assert window.detail.artifact is not None and window.detail.artifact.path == cr13_artifact

    type_text(qtbot, browser.filter_edit, "x4")  # hides it: no jump to the neighbour's details
    assert browser.proxy.rowCount() == 1 and browser.selected_paths() == []
    assert browser.current_path() == "" and window.detail.artifact is None

    browser.filter_edit.clear()  # the clear button: it matches again and is selected again
    assert browser.selected_paths() == [str(cr13_artifact)] and browser.current_path() == str(cr13_artifact)
    qtbot.waitUntil(lambda: window.detail.artifact is not None and window.detail.artifact.path == cr13_artifact)


def test_a_row_chosen_while_filtered_stays_chosen(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    type_text(qtbot, window.browser.filter_edit, "x4")
    select(qtbot, window, ca25_artifact)
    window.browser.filter_edit.clear()
    assert window.browser.selected_paths() == [str(ca25_artifact)]


def test_targets_match_as_the_cli_prints_them(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    open_folder(qtbot, window, workspace)
    for text, expected in (
        ("x4", [ca25_artifact]),
        ("RBLN-CA25 x4", [ca25_artifact]),
        ("rbln-cr13 x1", [cr13_artifact]),
        ("x3", []),
    ):
        window.browser.filter_edit.setText(text)
        assert [Path(s.path) for s in window.browser.shown_summaries()] == expected, text
