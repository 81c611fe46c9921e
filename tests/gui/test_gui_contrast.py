"""Readable in both themes (issue 33 item 3): every text and state colour at least 4.5:1 against its background,
every other mark (gauge, budget markers, radio indicators) at least 3:1 (WCAG 2.1 AA), in the light and dark themes
and when the desktop's scheme is followed; measured on the widgets' own palettes at 1024x700."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit, QRadioButton, QStyle, QStyleOptionButton, QWidget
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.presentation import BlockFacts
from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.app.theme import Theme, system_palette
from rbln_artifact_studio.gui.app.tones import Mark, Tone, is_dark, tone
from rbln_artifact_studio.gui.widgets.budget_curve import BudgetCurve
from rbln_artifact_studio.gui.widgets.kv_gauge import KvGauge
from rbln_artifact_studio.gui.widgets.radio import label_colour
from rbln_artifact_studio.gui.widgets.table_delegate import RowTextDelegate
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select, type_text
from .layout_audit import contrast
from .pixel_contrast import low_text_contrast
from .test_gui_fleet_console import _fleet_rows
from .test_gui_small_screen import on_small_screen
from .widgets import child, present

TEXT, MARK = 4.5, 3.0
_COLOUR = re.compile(r"color:\s*(#[0-9a-fA-F]{6})")


@pytest.fixture(autouse=True)
def _desktop_palette_afterwards() -> Iterator[None]:
    system_palette()
    yield
    QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Unknown)
    QApplication.setPalette(system_palette())


def _apply(qtbot: QtBot, window: MainWindow, theme: str) -> None:
    """light / dark: chosen in View ▸ Theme; system-dark / system-light: the desktop's scheme followed."""
    if theme.startswith("system"):
        window.theme.choose(Theme.SYSTEM, remember=False)
        scheme = Qt.ColorScheme.Dark if theme == "system-dark" else Qt.ColorScheme.Light
        QGuiApplication.styleHints().colorSchemeChanged.emit(scheme)
    else:
        window.theme.choose(Theme(theme), remember=False)
    assert is_dark(QApplication.palette()) == theme.endswith("dark")
    window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    qtbot.waitUntil(lambda: window.detail.title.palette().color(QPalette.ColorRole.Window) == window_colour)


def _label_colours(top: QWidget) -> list[str]:
    """Each visible label's coloured text against the label's own background, below 4.5:1."""
    problems = []
    for label in [top, *top.findChildren(QLabel)]:
        if not isinstance(label, QLabel) or not label.isVisible():
            continue
        background = label.palette().color(label.backgroundRole())
        for colour in set(_COLOUR.findall(label.text() + label.styleSheet())):
            ratio = contrast(QColor(colour), background)
            if ratio < TEXT:
                problems.append(
                    f"{label.objectName() or label.text()[:40]}: {colour} on {background.name()} {ratio:.1f}"
                )
    return problems


def _indicator_contrast(button: QRadioButton) -> float:
    """The strongest contrast any pixel of the radio's indicator has with the window behind it."""
    option = QStyleOptionButton()
    button.initStyleOption(option)
    rect: QRect = button.style().subElementRect(QStyle.SubElement.SE_RadioButtonIndicator, option, button)
    image = button.grab().toImage()
    behind = button.palette().color(QPalette.ColorRole.Window)
    return max(
        contrast(image.pixelColor(x, y), behind)
        for y in range(rect.top(), rect.bottom() + 1)
        for x in range(rect.left(), rect.right() + 1)
    )


@pytest.mark.parametrize("theme", ["light", "dark", "system-dark", "system-light"])
def test_text_and_marks_read_on_every_theme(
    qtbot: QtBot, settings: Settings, workspace: Path, cr13_artifact: Path, theme: str
) -> None:
    window = on_small_screen(qtbot, settings)  # 1024x700
    _apply(
        qtbot, window, "light" if theme.endswith("dark") else "dark"
    )  # shown in the other theme first, then switched
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    type_text(qtbot, child(window, QLineEdit, "whatIfBudgetEdit"), "0.45")
    assert "[ok]" in window.detail.title.text() and "No problems found." in window.detail.problems.text()
    _apply(qtbot, window, theme)
    assert _label_colours(window) == []

    view = window.browser.view
    delegate = view.itemDelegate()
    assert isinstance(delegate, RowTextDelegate)
    for status, colour in delegate._status_colours.items():  # the table's status column
        for role in (QPalette.ColorRole.Base, QPalette.ColorRole.AlternateBase):
            assert contrast(colour, view.palette().color(role)) >= TEXT, (status, role)

    gauge = child(window.detail, KvGauge)
    for facts in (BlockFacts(4, 9, 40, 8192, 0, 1, 2 << 20), BlockFacts(21, 9, 40, 8192, 0, 4, 2 << 20)):
        gauge.set_facts(facts)  # below the floor, then inside [floor, full]
        c, window_colour = gauge.colours(), gauge.palette().color(QPalette.ColorRole.Window)
        assert contrast(c.outline, window_colour) >= MARK and contrast(c.outline, c.empty) >= MARK
        assert contrast(c.fill, c.empty) >= MARK  # the empty part is told from the filled one
        assert contrast(c.text, window_colour) >= TEXT
        assert contrast(c.count_on_fill, c.fill) >= TEXT and contrast(c.count_on_empty, c.empty) >= TEXT

    chart = window.detail.chart
    behind = chart.palette().color(QPalette.ColorRole.Window)
    marks = chart.mark_colours()
    assert contrast(marks[Mark.BUDGET], behind) >= MARK
    assert contrast(marks[Mark.TIGHTEST], behind) >= TEXT  # also the "▲ tightest" text

    curve = BudgetCurve()  # the wizard's budget curve
    qtbot.addWidget(curve)
    for kind, colour in curve.mark_colours().items():
        assert contrast(colour, curve.palette().color(QPalette.ColorRole.Window)) >= MARK, kind

    dialog = present(window.dialogs.open_resize_dialog())
    qtbot.waitExposed(dialog)
    assert _label_colours(dialog) == []
    copy, in_place = dialog.mode_copy, dialog.mode_in_place
    for radio in (copy, in_place):
        assert _indicator_contrast(radio) >= MARK, radio.text()
    # In place is visibly the destructive choice: in the error tone, legible, and said in words.
    in_place_colour = label_colour(in_place)
    assert in_place_colour.name() == tone(Tone.ERROR, in_place.palette())
    assert contrast(in_place_colour, in_place.palette().color(QPalette.ColorRole.Window)) >= TEXT
    assert in_place_colour != label_colour(copy)
    assert "overwrites" in in_place.text() and not in_place.icon().isNull()
    dialog.reject()


def _open_everything(qtbot: QtBot, window: MainWindow, workspace: Path, artifact: Path) -> tuple[QWidget, ...]:
    """Getting Started, the guide, the resize dialog, the console with NPUs (some short of memory) and a job's
    progress."""
    open_folder(qtbot, window, workspace)  # its scan: a job with its progress bar in the Jobs panel
    select(qtbot, window, artifact)
    type_text(qtbot, child(window, QLineEdit, "whatIfBudgetEdit"), "0.45")
    console = window.server_menu.open_servers_view(focus=False)
    console.short_spin.setValue(14)  # half of the NPUs below 14 GiB free: their bars in the warning colour
    with qtbot.waitSignal(console.model.arranged, timeout=30_000):
        console.model.set_rows(_fleet_rows(4, 8))
    started = window.help.show_getting_started()
    guide = present(window.help.open_documentation())
    guide.search.setText("toolchain.md")
    assert guide.find_text()  # scrolled to text and links, past the screenshots at the top
    dialog = present(window.dialogs.open_resize_dialog())
    for shown in (started, guide, dialog):
        qtbot.waitExposed(shown)
    return window, started, guide, dialog, console


def _measured(qtbot: QtBot, window: MainWindow, tops: tuple[QWidget, ...]) -> list[str]:
    """Every text drawn, the artifacts' tab in front and then the console's."""
    console = tops[-1]
    window.server_menu.open_servers_view(focus=False)
    problems = [p for top in tops if top.isVisible() for p in low_text_contrast(top)]
    window.server_menu.open_servers_view(focus=True)
    qtbot.waitUntil(console.isVisible)
    problems += low_text_contrast(console)
    return sorted(set(problems))  # a text seen through two windows (the console's in the main one) said once


@pytest.mark.parametrize("first", ["light", "dark"])
def test_every_text_drawn_reads_after_a_theme_switch(
    qtbot: QtBot, settings: Settings, workspace: Path, cr13_artifact: Path, first: str
) -> None:
    """Measured on rendered pixels, after a switch at run time with the pages, the dialog and the console open."""
    window = on_small_screen(qtbot, settings)
    _apply(qtbot, window, first)
    tops = _open_everything(qtbot, window, workspace, cr13_artifact)
    problems = _measured(qtbot, window, tops)
    assert problems == [], f"{first} before switching:\n" + "\n".join(problems)
    switched = "dark" if first == "light" else "light"
    _apply(qtbot, window, switched)
    problems = _measured(qtbot, window, tops)
    assert problems == [], f"after switching to {switched}:\n" + "\n".join(problems)
