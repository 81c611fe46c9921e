"""Bad input in the resize dialog, driven only through its objectNames: the core's verdict, never an exception."""

from __future__ import annotations

import html
from pathlib import Path

from hypothesis import given
from PySide6.QtWidgets import QDialog, QLabel, QLineEdit, QPushButton, QSpinBox
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import largest_fitting
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.targets import check_target, target_for_budget
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder, select
from .fuzzing import (
    COUNT_TEXTS,
    FUZZ,
    NASTY,
    budget_texts,
    examples,
    no_error_dialog,
    paste_into,
    type_count,
    typed_counts,
)
from .widgets import child


def _open(qtbot: QtBot, window: MainWindow, workspace: Path, artifact: Path) -> QDialog:
    open_folder(qtbot, window, workspace)
    select(qtbot, window, artifact)
    child(window, type(window.action_resize), "actionResize").trigger()
    dialog = child(window, QDialog, "resizeDialog")
    assert dialog is not None and dialog.isVisible()
    return dialog


def _verdict(artifact_dir: Path, text: str) -> str | None:
    """The core's error for a fit-to-budget text, or None when it resolves to a valid target."""
    artifact = open_artifact(artifact_dir)
    try:
        target = target_for_budget(artifact, parse_budget(text.strip()))
    except StudioError as exc:
        return exc.one_line()
    return check_target(artifact.config, target, artifact).error


def test_budget_field_for_any_text(qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path) -> None:
    dialog = _open(qtbot, window, workspace, cr13_artifact)
    edit = child(dialog, QLineEdit, "resizeBudgetEdit")
    message = child(dialog, QLabel, "resizeMessage")
    apply = child(dialog, QPushButton, "resizeApplyButton")

    @FUZZ
    @given(text=budget_texts)
    @examples(NASTY)
    def typed(text: str) -> None:
        with qtbot.captureExceptions() as raised:
            paste_into(qtbot, edit, text)
        assert not raised, raised
        no_error_dialog()
        shown = edit.text()
        if not shown.strip():
            assert not apply.isEnabled() and "Type a memory budget" in message.text()
            return
        error = _verdict(cr13_artifact, shown)
        if error is None:
            assert apply.isEnabled() and "✓" in message.text()
        else:
            assert f"✖ {html.escape(error)}" in message.text() and not apply.isEnabled()

    typed()


def test_target_field_for_any_typing(qtbot: QtBot, window: MainWindow, workspace: Path, cr13_artifact: Path) -> None:
    dialog = _open(qtbot, window, workspace, cr13_artifact)
    spin = child(dialog, QSpinBox, "resizeTargetSpin")
    apply = child(dialog, QPushButton, "resizeApplyButton")

    artifact = open_artifact(cr13_artifact)
    layout, npu = artifact.layout(), artifact.npu
    assert layout is not None and npu is not None
    room = npu.available_per_chiplet
    largest = largest_fitting(lambda n: layout.fits(n, room), 1, 10**6, otherwise=0)  # more would not fit: refused

    @FUZZ
    @given(text=typed_counts)
    @examples(COUNT_TEXTS)
    def typed(text: str) -> None:
        type_count(qtbot, spin, text)
        assert apply.isEnabled() == (9 <= spin.value() <= largest)  # the floor; a copy is the default mode

    typed()
