"""One button per fix an error lists (rbln_artifact_studio.core.errors.Fix): the remedy is a click, not retyping."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from rbln_artifact_studio.core.errors import Fix


class FixButtons(QWidget):
    """Hidden when there is no fix; emits the chosen fix."""

    fixChosen = Signal(object)  # Fix

    def __init__(self, object_name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(QLabel("Fix:"))
        self._layout.addStretch(1)
        self.buttons: list[QPushButton] = []
        self.fixes: tuple[Fix, ...] = ()
        self.hide()

    def set_fixes(self, fixes: tuple[Fix, ...]) -> None:
        if fixes == self.fixes:
            return  # the same remedies: the buttons stay (a dialog validates on every key)
        self.fixes = fixes
        for button in self.buttons:
            self._layout.removeWidget(button)
            button.hide()  # gone from view now, deleted once control returns to the event loop
            button.deleteLater()
        self.buttons = []
        for i, fix in enumerate(fixes):
            button = QPushButton(fix.label)
            button.setObjectName(f"fixButton{i}")
            button.setToolTip("Use " + ", ".join(f"{name} = {value}" for name, value in fix.changes))
            button.clicked.connect(lambda _checked=False, f=fix: self.fixChosen.emit(f))
            self._layout.insertWidget(self._layout.count() - 1, button)
            self.buttons.append(button)
        self.setVisible(bool(fixes))
