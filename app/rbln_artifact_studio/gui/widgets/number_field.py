"""A spin box whose visible text is the value used: empty or out-of-range text is reported, never replaced."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QFocusEvent, QHideEvent, QShowEvent, QValidator
from PySide6.QtWidgets import QSpinBox, QWidget


class NumberField(QSpinBox):
    """typed_value() is the number the text shows, or None while the text is not a number in range.

    A plain QSpinBox keeps its last good value while the text is empty or out of range (and puts it back
    on focus-out), so a page reading value() would use a number the user no longer sees.
    """

    edited = Signal()  # the text changed, by typing or by setValue

    def __init__(self, name: str, low: int, high: int, special_text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setRange(low, high)
        if special_text:
            self.setSpecialValueText(special_text)  # shown at the minimum (0), e.g. the NPU family's default
        # setValue changes the text with the editor's signals blocked; typing an unacceptable text emits nothing
        # on the spin box: listen to both, and say `edited` once per text.
        self._last_text = self.lineEdit().text()
        self.textChanged.connect(self._on_text)
        self.lineEdit().textChanged.connect(self._on_text)
        self.lineEdit().textEdited.connect(self._on_typed)
        self.user_edited = False  # typed into by the user (defaults then leave it alone)
        self._hidden_text: tuple[str, int] | None = None

    def hideEvent(self, event: QHideEvent) -> None:
        self._hidden_text = (self.lineEdit().text(), self.lineEdit().cursorPosition())
        super().hideEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        """QAbstractSpinBox puts its last good value back on show; QWizard hides and shows the page when its
        buttons change state (a field going empty disables Next), which would undo what the user just typed."""
        super().showEvent(event)
        if self._hidden_text is not None and self._hidden_text[0] != self.lineEdit().text():
            text, cursor = self._hidden_text
            self.lineEdit().blockSignals(True)  # the page has already seen this text; nothing changed for it
            self.lineEdit().setText(text)
            self.lineEdit().setCursorPosition(cursor)
            self.lineEdit().blockSignals(False)
        self._hidden_text = None

    def focusOutEvent(self, event: QFocusEvent) -> None:
        """Leaving the field corrects bad text to the last good value without a textChanged: say so."""
        before = self.lineEdit().text()
        super().focusOutEvent(event)
        if self.lineEdit().text() != before:
            self._on_text()

    def _on_text(self) -> None:
        text = self.lineEdit().text()
        if self._hidden_text is not None and not self.isVisible():
            self._hidden_text = (text, len(text))  # set while hidden (a default for a new model): shown as set
        if text != self._last_text:
            self._last_text = text
            self.edited.emit()

    def _on_typed(self) -> None:
        self.user_edited = True

    def typed_value(self) -> int | None:
        text = self.text()
        if self.specialValueText() and text == self.specialValueText():
            return self.minimum()
        if self.validate(text, len(text))[0] != QValidator.State.Acceptable:
            return None
        return self.valueFromText(text)

    def problem(self, label: str) -> str | None:
        """What is wrong with the text as typed (None when it is a number in range)."""
        if self.typed_value() is not None:
            return None
        if not self.cleanText().strip():
            return f"{label} is empty: type a number."
        return f"{label} must be a whole number from {self.minimum():,} to {self.maximum():,}, got {self.cleanText()}."

    def set_default(self, value: int) -> None:
        """Set a default the user has not overridden by typing."""
        if not self.user_edited:
            self.setValue(value)
