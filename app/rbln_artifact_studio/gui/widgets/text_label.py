"""A label of selectable text, wrapped by default: the detail panel's lines and values."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def text_label(object_name: str = "", wrap: bool = True) -> QLabel:
    label = QLabel()
    if object_name:
        label.setObjectName(object_name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
