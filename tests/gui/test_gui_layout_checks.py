"""Text that fits: the layout checks themselves, the defects the issue lists, and every window audited (offscreen;
test_gui_screenshots.py repeats the audit under a real X server, dark, at 200% and right to left)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QWidget, QWizard
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.presentation import BlockFacts
from rbln_artifact_studio.core.estimation.estimator import CurvePoint
from rbln_artifact_studio.gui.app.theme import dark_palette
from rbln_artifact_studio.gui.app.tones import DARK, LIGHT, Tone
from rbln_artifact_studio.gui.dialogs.compare_dialog import CompareDialog
from rbln_artifact_studio.gui.widgets.budget_curve import BudgetCurve
from rbln_artifact_studio.gui.widgets.kv_gauge import KvGauge
from rbln_artifact_studio.gui.window.jobs_panel import JobRow
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .layout_audit import audit, chart_problems, clipped_texts, contrast, overlapping_widgets
from .widgets import child, present


def test_the_checks_find_clipped_and_overlapping_text(qtbot: QtBot) -> None:
    top = QWidget()
    qtbot.addWidget(top)
    clipped = QLabel("a label much longer than its twenty pixels", top)
    clipped.setGeometry(0, 0, 20, 20)
    over = QLabel("over", top)
    over.setGeometry(10, 5, 60, 20)
    top.resize(200, 100)
    top.show()
    assert any("a label much longer" in p for p in clipped_texts(top))
    assert overlapping_widgets(top)
    assert chart_problems(
        top, [("outside", QRectF(190, 0, 40, 10)), ("a", QRectF(0, 0, 30, 10)), ("b", QRectF(10, 0, 30, 10))]
    ) == [
        "QWidget: 'outside' at (190.0, 0.0, 40.0, 10.0) leaves the chart (200x100)",
        "QWidget: 'a' overlaps 'b'",
    ]


def _gauge(qtbot: QtBot, width: int, n: int, floor: int, full: int) -> KvGauge:
    gauge = KvGauge()
    qtbot.addWidget(gauge)
    gauge.resize(width, gauge.sizeHint().height())
    gauge.set_facts(BlockFacts(n, floor, full, 8192, n * 8192, 1, None))
    gauge.show()
    return gauge


@pytest.mark.parametrize(
    ("width", "n", "floor", "full"), [(300, 1, 1, 1), (300, 5, 5, 5), (160, 9, 9, 10), (400, 200, 199, 200)]
)
def test_the_gauge_labels_never_overlap(qtbot: QtBot, width: int, n: int, floor: int, full: int) -> None:
    gauge = _gauge(qtbot, width, n, floor, full)
    texts = [t for t, _ in gauge.label_rects()]
    if floor == full:
        assert texts[1:] == [f"floor = full pool {full}"]  # one label, not "floor 1" over "full 1"
    assert chart_problems(gauge, gauge.label_rects()) == []


def _curve(qtbot: QtBot, width: int, height: int, budget_at: float, floor: int, full: int) -> BudgetCurve:
    curve = BudgetCurve()
    qtbot.addWidget(curve)
    curve.resize(width, height)
    available = 150_323_855_360
    points = [CurvePoint(int(available * (0.1 + 0.02 * b)), 0.1 + 0.02 * b, b) for b in range(1, full + 1)]
    blocks = max(p.blocks for p in points if p.budget_bytes <= available * budget_at)
    curve.set_curve(points, available, floor, full, int(available * budget_at), blocks)
    curve.show()
    return curve


@pytest.mark.parametrize(("budget_at", "floor", "full"), [(1.0, 9, 40), (0.99, 5, 5), (0.5, 39, 40)])
@pytest.mark.parametrize("size", [(260, 160), (420, 240), (600, 300)])
def test_the_budget_curve_labels_stay_inside_and_apart(
    qtbot: QtBot, size: tuple[int, int], budget_at: float, floor: int, full: int
) -> None:
    curve = _curve(qtbot, *size, budget_at, floor, full)
    rects = curve.label_rects()
    assert any(t.startswith("memory_budget (fraction of") for t, _ in rects)  # the axis title, below the ticks
    assert any(t.endswith(" blocks") for t, _ in rects)  # the marker label at the right edge, not clipped
    assert chart_problems(curve, rects) == []


def test_a_job_bar_fits_its_text_and_a_cancelled_bar_stays_put(qtbot: QtBot, window: MainWindow) -> None:
    total = 313_180
    release = threading.Event()

    def stuck(ctx):
        ctx.progress(total // 2, total, "copying")
        while not release.wait(0.02):
            ctx.checkpoint()

    done = window.jobs.submit("Copy a → b", lambda ctx: ctx.progress(total, total, "copied"), writes=True)
    cancelled = window.jobs.submit("Copy a → c", stuck, writes=True)
    qtbot.waitUntil(lambda: done.state.ended and cancelled.done > 0)
    cancelled.cancel()
    qtbot.waitUntil(lambda: cancelled.state.ended)
    done_row, cancelled_row = window.jobs_panel.row_for(done), window.jobs_panel.row_for(cancelled)
    assert isinstance(done_row, JobRow) and isinstance(cancelled_row, JobRow)
    assert done_row.bar.text() == "100% of 305.84 KiB"
    assert cancelled_row.bar.text() == "cancelled at 50%" and cancelled_row.bar.value() == 500
    holder = QWidget()
    qtbot.addWidget(holder)
    QHBoxLayout(holder).addWidget(done_row.bar)
    holder.show()
    assert clipped_texts(holder) == []


def test_message_colours_read_on_light_and_dark(qtbot: QtBot) -> None:
    light_window = QApplication.style().standardPalette().window().color()
    dark_window = dark_palette().window().color()
    for kind in Tone:
        assert contrast(QColor(LIGHT[kind]), light_window) >= 3.0
        assert contrast(QColor(DARK[kind]), dark_window) >= 4.5


def test_every_window_passes_the_audit(
    qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path, ca25_artifact: Path
) -> None:
    """Offscreen at 100%: the main window at 1280x800 and every dialog on a 1280x800 screen."""
    open_folder(qtbot, window, workspace)
    select(qtbot, window, cr13_artifact)
    window.resize(1280, 800)
    assert audit(window) == []
    for open_dialog in (
        window.dialogs.open_resize_dialog,
        window.dialogs.open_explorer,
        window.dialogs.show_about,
        window.dialogs.show_preferences,
    ):
        dialog = open_dialog()
        assert dialog is not None
        assert audit(dialog) == [], dialog.objectName()
        dialog.close()
    wizard = window.dialogs.open_compile_wizard()
    qtbot.waitUntil(lambda: wizard.button(QWizard.WizardButton.NextButton).isEnabled())
    for _page in range(5):
        assert audit(wizard) == [], wizard.currentPage().title()
        wizard.next()
    wizard.reject()
    window.browser.view.selectionModel().select(
        window.browser.proxy.mapFromSource(window.model.index(present(window.model.row_of(str(ca25_artifact))), 0)),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    compare = window.artifact_actions.open_compare()
    assert isinstance(compare, CompareDialog)
    qtbot.waitUntil(lambda: compare.comparison is not None)
    assert audit(compare) == []
    compare.close()
    planner = window.dialogs.open_planner()
    assert planner is not None
    with qtbot.waitSignal(planner.planned, timeout=20_000):  # type: ignore[attr-defined]
        pass
    assert audit(planner) == []  # two artifacts: Plan Again and Close on screen (it used to be 820 pixels tall)
    planner.close()


def test_backend_lines_wrap_in_a_fixed_pitch_font(qtbot: QtBot, window: MainWindow) -> None:
    """About and Preferences: the columns line up and no line runs off the right edge (nothing to scroll to).

    The columns line up in the system's fixed-pitch font, whichever this machine has: the text must be shown in that
    font, as fixed as it is here (a machine without a monospaced font falls back to another, and so does the text).
    """
    from PySide6.QtGui import QFontDatabase, QFontInfo
    from PySide6.QtWidgets import QPlainTextEdit

    fixed = QFontInfo(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))

    for open_dialog, name in (
        (window.dialogs.show_about, "aboutText"),
        (window.dialogs.show_preferences, "prefsBackends"),
    ):
        dialog = open_dialog()
        text = child(dialog, QPlainTextEdit, name)
        text.setPlainText(text.toPlainText() + "\n  optimum  not available  -  " + "a very long detail " * 20)
        qtbot.waitUntil(text.isVisible)
        assert text.lineWrapMode() == QPlainTextEdit.LineWrapMode.WidgetWidth
        assert text.fontInfo().family() == fixed.family(), "not the system's fixed-pitch font"
        assert text.fontInfo().fixedPitch() == fixed.fixedPitch()
        assert text.horizontalScrollBar().maximum() == 0
        dialog.close()
