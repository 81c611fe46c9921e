"""Shared pieces of the GUI's bad-input tests: hypothesis settings, nasty values, typing any character, no dialogs."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, example, settings
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFocusEvent, QGuiApplication, QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QSpinBox, QWidget
from pytestqt.qtbot import QtBot

FUZZ = settings(
    max_examples=120,
    deadline=None,
    database=None,  # nothing written into the checkout
    derandomize=True,  # the same examples on every run: CI stays deterministic
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# The values issue 5 names, plus their neighbours.
NASTY = [
    "abc", "-1GB", "1e400", "nan", "inf", "-inf", "150%", "0", "0%", "-0", "", " ", "\t \t", "1e-400", "%", "GB",
    "0x10", "1_000", "½", "1,5", "0.5.5", "--1", "++1", "1 GB GB", "10 XB", "NaN%", "infinity", "1e308GB",
    "9" * 30, "9" * 400, "9" * 5000, "9" * 5000 + "GB", "0." + "9" * 5000, "1" + "0" * 4400 + "%",
    "\x00", "\u202e0.5", "0.5\n", "٣", "1" * 20 + "e" + "9" * 20,
]  # fmt: skip

numberish = st.from_regex(
    r"\s*[-+]?\d{0,40}(\.\d{0,20})?([eE][-+]?\d{1,4})?\s*(%|[kKmMgGtTpP]?[iI]?[bB])?\s*", fullmatch=True
)
huge_integers = st.text(alphabet="0123456789", min_size=20, max_size=6000)
budget_texts = st.one_of(st.sampled_from(NASTY), numberish, huge_integers, st.text(max_size=40))
COUNT_TEXTS = [
    "abc",
    "-1",
    "0",
    "",
    " ",
    "1e400",
    "nan",
    "inf",
    "150%",
    "-1GB",
    "99999999999999999999",
    "1.5",
    "+7",
    "٣",
]
typed_counts = st.one_of(
    st.sampled_from(COUNT_TEXTS),
    st.from_regex(r"[-+ ]?\d{0,12}", fullmatch=True),
    st.text(max_size=12),
)


def examples(values: list[str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Every listed value is tried on every run, besides what hypothesis generates."""

    def add(test: Callable[..., None]) -> Callable[..., None]:
        for value in reversed(values):
            test = example(text=value)(test)
        return test

    return add


def type_into_spin(qtbot: QtBot, spin: QSpinBox, text: str) -> None:
    """Type as a user does (the spin box's validator sees every key), then leave the field.

    (Not with Return: in a wizard that also presses the default button, Next.)
    """
    edit = spin.lineEdit()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    key_events(edit, text)
    QApplication.sendEvent(spin, QFocusEvent(QEvent.Type.FocusOut, Qt.FocusReason.TabFocusReason))  # leave the field


def key_events(widget: QWidget, text: str) -> None:
    """One key press and release per character, any character (QTest's keyClicks knows only ASCII keys)."""
    for ch in text:
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.sendEvent(widget, QKeyEvent(kind, 0, Qt.KeyboardModifier.NoModifier, ch))


def paste_into(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    """Replace a line edit's text the way a user can in one go: type a key, select all, paste (Ctrl+V).

    Every step is a user edit (textEdited), unlike setText; the field may keep less than was pasted.
    """
    qtbot.keyClick(edit, Qt.Key.Key_X)
    edit.selectAll()
    QGuiApplication.clipboard().setText(text)
    qtbot.keyClick(edit, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


def no_error_dialog() -> None:
    shown = [w for w in QApplication.topLevelWidgets() if w.objectName() == "errorDialog" and w.isVisible()]
    assert not shown, [w.text() for w in shown]  # type: ignore[attr-defined]


def type_count(qtbot: QtBot, spin: QSpinBox, text: str) -> None:
    """Type into a count field; nothing may raise or open an error dialog, and the value stays in its range."""
    with qtbot.captureExceptions() as raised:
        type_into_spin(qtbot, spin, text)
    assert not raised, raised
    no_error_dialog()
    assert spin.minimum() <= spin.value() <= spin.maximum()
