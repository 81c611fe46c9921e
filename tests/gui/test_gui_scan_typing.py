"""Typing, scrolling and selecting during a 2,000-artifact scan (issue #23 item 8): the table applies what was typed
after every key, rows arriving never move the view, and neither rows arriving nor the scan's end select for the user.

The scroll rule, as file managers filling a large folder: the view stays where the user put it while rows arrive and
never follows them to the bottom. A changed filter keeps the current row in view when it still matches and otherwise
leaves the scroll where it was (Qt lowers it only when fewer rows remain than were above it). Untouched, the first
row is selected once every row is read, as before (test_gui_scan_leaves_the_user_be.py).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSlider, QApplication
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.matching import folded
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.gui.models.artifact_model import SEARCH_ROLE
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .held_scan import HeldScan

ARTIFACTS = 2000


@pytest.fixture
def fleet(tmp_path: Path, tiny_model: Path) -> Path:
    """ARTIFACTS small artifacts a0 … a1999 (hard links of one), 100 to a folder."""
    request = CompileRequest(
        str(tiny_model), npu="RBLN-CA25", batch_size=2, max_seq_len=4096, kvcache_partition_len=1024
    )
    template = write_artifact(plan_compile(request), tmp_path / "template")
    root = tmp_path / "fleet"
    for i in range(ARTIFACTS):
        shutil.copytree(template, root / f"g{i // 100:02d}" / f"a{i}", copy_function=os.link)
    return root


@pytest.fixture
def held(fleet: Path, monkeypatch: pytest.MonkeyPatch) -> HeldScan:
    """The scan's full checks wait for release(): the test acts while rows are in and the scan has not ended."""
    return HeldScan(fleet.parent, monkeypatch)


def _next_batch(qtbot: QtBot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.model.rowsInserted, timeout=60_000):
        pass


def _filtered_as_typed(window: MainWindow) -> bool:
    """The table shows exactly the rows that contain what the filter box holds."""
    text = folded(window.browser.filter_edit.text())
    model, proxy = window.model, window.browser.proxy
    wanted = sum(text in model.index(r, 0).data(SEARCH_ROLE) for r in range(model.rowCount()))
    shown = [proxy.index(r, 0).data(SEARCH_ROLE) for r in range(proxy.rowCount())]
    return len(shown) == wanted and all(text in s for s in shown)


def _wheel_down(window: MainWindow, notches: int) -> None:
    """The mouse wheel over the table, as a user scrolls."""
    viewport = window.browser.view.viewport()
    centre = QPointF(viewport.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(viewport.mapToGlobal(centre.toPoint())),
        QPoint(),
        QPoint(0, -120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(viewport, event)


def test_the_filter_follows_every_key_and_the_view_stays_put_as_rows_arrive(
    qtbot: QtBot, window: MainWindow, fleet: Path, held: HeldScan
) -> None:
    window.open_folder(fleet)
    qtbot.waitUntil(lambda: window.model.rowCount() >= 300, timeout=60_000)
    bar = window.browser.view.verticalScrollBar()
    for _ in range(3):
        bar.triggerAction(QAbstractSlider.SliderAction.SliderPageStepAdd)  # clicks in the scroll bar's trough
    scrolled = bar.value()
    assert scrolled > 0
    for typed in ("a", "a1", "a19"):
        _next_batch(qtbot, window)
        assert bar.value() == scrolled, "rows arriving moved the view"
        qtbot.keyClicks(window.browser.filter_edit, typed[-1])
        QApplication.processEvents()  # one turn of the event loop, no more: the table is never behind the typing
        assert window.browser.filter_edit.text() == typed and _filtered_as_typed(window)
        if window.browser.proxy.rowCount() > scrolled + 100:  # rows enough to stay where the user was
            assert bar.value() == scrolled, f"typing {typed!r} moved the view"
    assert window.workspace.busy
    qtbot.waitUntil(lambda: window.model.rowCount() == ARTIFACTS, timeout=60_000)
    assert window.browser.proxy.rowCount() == 111 and _filtered_as_typed(window)  # a19, a190…a199, a1900…a1999
    at = bar.value()
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=300_000):
        held.release()
    assert window.browser.selected_paths() == [] and window.browser.current_path() == ""
    assert bar.value() == at


def test_scrolled_during_the_scan_the_end_selects_nothing_and_keeps_the_view(
    qtbot: QtBot, window: MainWindow, fleet: Path, held: HeldScan
) -> None:
    window.open_folder(fleet)
    qtbot.waitUntil(lambda: window.model.rowCount() >= 300, timeout=60_000)
    bar = window.browser.view.verticalScrollBar()
    _wheel_down(window, 5)
    scrolled = bar.value()
    assert scrolled > 0
    qtbot.waitUntil(lambda: window.model.rowCount() == ARTIFACTS, timeout=60_000)
    assert bar.value() == scrolled
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=300_000):
        held.release()
    assert window.browser.selected_paths() == [] and window.browser.current_path() == ""
    assert bar.value() == scrolled


def test_a_row_selected_during_the_scan_stays_selected_as_rows_arrive_and_at_the_end(
    qtbot: QtBot, window: MainWindow, fleet: Path, held: HeldScan
) -> None:
    window.open_folder(fleet)
    chosen = str(fleet / "g00" / "a5")
    qtbot.waitUntil(lambda: window.model.row_of(chosen) is not None, timeout=60_000)
    view = window.browser.view
    index = window.browser.proxy.mapFromSource(window.model.index(window.model.row_of(chosen) or 0, 0))
    view.scrollTo(index)  # the user scrolls to it, then clicks it
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    assert window.browser.selected_paths() == [chosen] and window.browser.current_path() == chosen
    seen: list[list[str]] = []
    window.model.rowsInserted.connect(lambda *_: seen.append(window.browser.selected_paths()))
    window.model.layoutChanged.connect(lambda *_: seen.append(window.browser.selected_paths()))
    qtbot.waitUntil(lambda: window.model.rowCount() == ARTIFACTS, timeout=60_000)
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=300_000):
        held.release()
    assert seen and all(s == [chosen] for s in seen), seen
    assert window.browser.selected_paths() == [chosen] and window.browser.current_path() == chosen
    qtbot.waitUntil(lambda: window.artifact is not None and str(window.artifact.path) == chosen, timeout=20_000)


def test_a_selected_row_the_filter_lets_go_when_its_check_ends_goes_to_no_neighbour_and_comes_back(
    qtbot: QtBot, window: MainWindow, fleet: Path, held: HeldScan
) -> None:
    window.open_folder(fleet)
    qtbot.keyClicks(window.browser.filter_edit, "checking")  # the rows whose full check has not ended
    qtbot.waitUntil(lambda: window.model.rowCount() == ARTIFACTS, timeout=60_000)
    chosen = str(fleet / "g00" / "a5")
    assert window.browser.select_path(chosen)
    seen: list[tuple[str, list[str]]] = []  # what the details were for and what was selected, each time rows left
    window.browser.proxy.rowsRemoved.connect(
        lambda *_: seen.append((window.browser.current_path(), window.browser.selected_paths()))
    )
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=300_000):
        held.release()
    assert window.browser.proxy.rowCount() == 0  # every check ended: the filter shows no row
    assert len(seen) > 1 and all(current in (chosen, "") for current, _ in seen), seen
    assert all(selected in ([chosen], []) for _, selected in seen), seen
    assert window.browser.selected_paths() == [] and window.browser.current_path() == ""
    window.browser.filter_edit.clear()  # shown again, it is selected again: as a row a typed filter hid
    assert window.browser.selected_paths() == [chosen] and window.browser.current_path() == chosen
