"""The artifact table at 1280 pixels: the KV cache columns are in view without scrolling; the header layout is kept."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QHeaderView
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.models.artifact_model import TITLES
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder

KEY_COLUMNS = ("Name", "Status", "kvcache_num_blocks", "Floor", "Full pool", "KV cache / NPU")


def _header(window: MainWindow) -> QHeaderView:
    return window.browser.view.horizontalHeader()


def test_key_columns_are_in_view_at_1280_pixels(qtbot: QtBot, window: MainWindow, workspace: Path) -> None:
    window.resize(1280, 800)
    open_folder(qtbot, window, workspace)
    view = window.browser.view
    qtbot.waitUntil(lambda: window.width() == 1280 and view.viewport().width() > 0)
    header = _header(window)
    assert header.sectionsMovable() and view.horizontalScrollBar().value() == 0
    width = view.viewport().width()
    assert width < 800  # the table shares the window with the detail panel
    for title in KEY_COLUMNS:
        column = TITLES.index(title)
        left = header.sectionViewportPosition(column)
        assert left >= 0 and left + header.sectionSize(column) <= width, f"{title} is cut off at {width} px"
        # Neither the title nor any cell of the column is cut short.
        assert header.sectionSize(column) >= header.sectionSizeHint(column), title
        assert header.sectionSize(column) >= view.sizeHintForColumn(column), title
    # The long model id comes after them.
    assert TITLES.index("Model") > max(TITLES.index(t) for t in KEY_COLUMNS)
    assert window.browser.proxy.rowCount() == 2  # the filter still sees every row


def test_moved_and_resized_columns_are_remembered(
    qtbot: QtBot, window: MainWindow, settings: Settings, workspace: Path
) -> None:
    header = _header(window)
    model = TITLES.index("Model")
    header.moveSection(header.visualIndex(model), 1)  # the user drags Model next to Name
    header.resizeSection(TITLES.index("Status"), 95)
    window.save_state()
    again = MainWindow(settings)
    qtbot.addWidget(again)
    restored = _header(again)
    assert restored.visualIndex(model) == 1
    assert restored.sectionSize(TITLES.index("Status")) == 95
    assert [restored.logicalIndex(v) for v in range(len(TITLES))] == [
        header.logicalIndex(v) for v in range(len(TITLES))
    ]


def test_a_layout_saved_for_the_old_column_order_is_not_applied(
    qtbot: QtBot, window: MainWindow, settings: Settings
) -> None:
    header = _header(window)
    default = [header.logicalIndex(v) for v in range(len(TITLES))]  # the order a new window shows
    assert default[:2] == [TITLES.index("Name"), TITLES.index("Host")]  # where each row lives, beside its name
    header.moveSection(0, 5)
    settings.set_state("artifactHeader", header.saveState())  # the key 0.1.0 used, for another column order
    settings.save()
    again = MainWindow(Settings(settings.store))
    qtbot.addWidget(again)
    restored = _header(again)
    assert [restored.logicalIndex(v) for v in range(len(TITLES))] == default
