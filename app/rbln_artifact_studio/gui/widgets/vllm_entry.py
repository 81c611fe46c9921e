""" "vLLM Cache Entry…" beside an output field (Resize to a Copy, the compile wizard): the output becomes the folder a
`vllm serve` command will hit in a cache (core/vllm_cache), so vllm-rbln finds the block count chosen here."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.gui.app.remedies import one_line
from rbln_artifact_studio.places.vllm_cache import default_root, entry_for


class _Answer(QObject):
    """Carries the worker's answer to the GUI thread (a queued signal)."""

    done = Signal(str, str)  # the entry's location or "", the reason or ""


class VllmEntryDialog(QDialog):
    """The cache root and the `vllm serve` command line; OK puts the entry's folder into the output field."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget, rbln_config: Callable[[], dict[str, Any] | None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("vllmEntryDialog")
        self.setWindowTitle("As a vLLM Cache Entry")
        self.rbln_config = rbln_config
        self.root_edit = QLineEdit(str(default_root()), self)
        self.command_edit = QLineEdit(self)
        self.command_edit.setPlaceholderText("vllm serve MODEL --max-num-seqs 8 --max-model-len 8192 --block-size 4096")
        self.problem = QLabel(self)
        self.problem.setObjectName("vllmEntryProblem")
        self.problem.setWordWrap(True)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self._resolve)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Cache root:", self.root_edit)
        form.addRow("vllm serve command:", self.command_edit)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("The output becomes the folder this command will use in that cache.", self))
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(self.buttons)
        self._answer = _Answer(self)
        self._answer.done.connect(self._resolved)

    @Slot()
    def _resolve(self) -> None:
        root, text = self.root_edit.text(), self.command_edit.text()
        config = self.rbln_config() if self.rbln_config is not None else None
        self.buttons.setEnabled(False)
        self.problem.setText("Reading the command…")

        def work() -> None:
            try:
                self._answer.done.emit(entry_for(root, text, config), "")
            except StudioError as exc:
                self._answer.done.emit("", one_line(exc))

        threading.Thread(target=work, daemon=True).start()  # the model's config.json may be read: never here

    @Slot(str, str)
    def _resolved(self, where: str, problem: str) -> None:
        self.buttons.setEnabled(True)
        self.problem.setText(problem)
        if where:
            self.chosen.emit(where)
            self.accept()


def vllm_entry_button(
    output_edit: QLineEdit, rbln_config: Callable[[], dict[str, Any] | None] | None = None
) -> QPushButton:
    """A button that fills output_edit with a cache entry's folder, as if typed (rbln_config: the artifact being copied,
    whose settings must be the command's)."""
    button = QPushButton("vLLM Cache Entry…")
    button.setObjectName("vllmEntryButton")
    button.setToolTip("Write the output as the cache entry a `vllm serve` command will use")

    def choose() -> None:
        dialog = VllmEntryDialog(button.window(), rbln_config)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.chosen.connect(output_edit.setText)
        dialog.chosen.connect(output_edit.textEdited.emit)  # typed, as far as the dialog's own proposals go
        dialog.open()

    button.clicked.connect(choose)
    return button
