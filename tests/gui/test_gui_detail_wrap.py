"""The details panel wraps its text for every kind (issue #23 item 5): Whisper and LLaVA never scroll sideways."""

from __future__ import annotations

from pathlib import Path

import pytest
from kind_fixtures import materialize, simulated_llava
from PySide6.QtWidgets import QLabel, QWidget
from pytestqt.exceptions import TimeoutError as QtBotTimeout
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder
from .widgets import child, present

NARROW = 420  # the detail panel's width on a 1024x700 screen, about


@pytest.mark.parametrize("kind", ["whisper", "llava"])
def test_the_details_wrap_instead_of_scrolling_sideways(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, kind: str
) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    folder = materialize(kind, root / kind) if kind == "whisper" else simulated_llava(root / kind)
    open_folder(qtbot, window, root)
    window.splitter.setSizes([window.width() - NARROW, NARROW])
    assert window.browser.select_path(str(folder))
    detail = window.detail
    label = child(window, QLabel, "kvBlocksLabel")
    qtbot.waitUntil(lambda: detail.artifact is not None or label.text() == "No resizable KV cache", timeout=10_000)
    qtbot.waitUntil(lambda: present(detail.widget()).isVisible())
    long_texts = [w.text() for w in detail.findChildren(QLabel) if w.isVisible() and len(w.text()) > 60]
    assert long_texts  # the sentences the issue names are there ...
    # ... and wrap, once the panel's layout has settled (it was 1,600 px wide for Whisper, for good)
    try:
        qtbot.waitUntil(lambda: detail.horizontalScrollBar().maximum() == 0, timeout=3_000)
    except QtBotTimeout:
        shown = [w for w in present(detail.widget()).findChildren(QWidget) if w.isVisible()]
        widest = sorted((w.minimumSizeHint().width(), w.objectName() or type(w).__name__) for w in shown)[-4:]
        pytest.fail(f"the panel scrolls sideways: {detail.viewport().width()} px wide, widest parts {widest}")
