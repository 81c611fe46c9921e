"""Typed look-ups of a window's parts for the GUI tests: a part that is missing fails the test with its name."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

T = TypeVar("T", bound=QObject)
V = TypeVar("V")


def child(parent: QObject | None, cls: type[T], name: str = "") -> T:
    """parent.findChild(cls, name), failing with what was looked for where Qt would give None."""
    assert parent is not None, f"no parent to find {cls.__name__} {name!r} in"
    found = parent.findChild(cls, name) if name else parent.findChild(cls)  # PySide6 matches "" literally
    assert found is not None, f"{type(parent).__name__} has no {cls.__name__} named {name!r}"
    return found


def present(value: V | None, what: str = "") -> V:
    """A result the test needs where the API types it Optional (Qt getters, row look-ups): fails naming it if None."""
    assert value is not None, f"{what or 'the widget'} is missing"
    return value


def cell(table: QTableWidget, row: int, column: int) -> QTableWidgetItem:
    """table.item(row, column), failing with where it looked when the cell is empty."""
    item = table.item(row, column)
    assert item is not None, f"{table.objectName()} has no item at row {row}, column {column}"
    return item
