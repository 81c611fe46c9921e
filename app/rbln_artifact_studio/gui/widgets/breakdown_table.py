"""The table below the DRAM chart: each chiplet's figures in exact bytes (rounded in tooltips), as the README says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from rbln_artifact_studio.core.display.presentation import BREAKDOWN_HEADERS, breakdown_rows, usage_tooltip
from rbln_artifact_studio.core.sizes import format_bytes

if TYPE_CHECKING:  # a type only: the estimator loads in the worker that reads the artifact, after the window shows
    from rbln_artifact_studio.core.estimation.estimator import Breakdown


class BreakdownTable(QTableWidget):
    """Read-only rows per (NPU, chiplet); the tightest row is bold and says so."""

    def __init__(self, parent: QWidget | None = None, object_name: str = "breakdownTable") -> None:
        super().__init__(0, len(BREAKDOWN_HEADERS), parent)
        self.setObjectName(object_name)
        self.setHorizontalHeaderLabels(BREAKDOWN_HEADERS)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setAlternatingRowColors(True)

    def set_breakdown(self, breakdown: Breakdown | None, chiplets: int = 1) -> None:
        self.setRowCount(0)
        if breakdown is None:
            return
        table = breakdown_rows(breakdown, chiplets)  # the cells `inspect --what-if` prints too
        self.setColumnCount(len(table.headers))
        self.setHorizontalHeaderLabels(table.headers)
        self.setRowCount(len(table.rows))
        for row, (u, cells) in enumerate(zip(breakdown.usages, table.rows, strict=True)):
            is_tight = row == table.tightest
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                value = table.values[row][col - 1] if col else None
                item.setToolTip(
                    usage_tooltip(u, is_tight, breakdown.budget_set) if value is None else format_bytes(value)
                )
                if value is not None:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if is_tight:
                    font = QFont(self.font())
                    font.setBold(True)
                    item.setFont(font)
                self.setItem(row, col, item)
