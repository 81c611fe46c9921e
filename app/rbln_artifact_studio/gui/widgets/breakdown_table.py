"""The table below the DRAM chart: each chiplet's figures in exact bytes (rounded in tooltips), as the README says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget

from rbln_artifact_studio.core.display.presentation import bar_label, usage_tooltip
from rbln_artifact_studio.core.sizes import format_bytes

if TYPE_CHECKING:  # a type only: the estimator loads in the worker that reads the artifact, after the window shows
    from rbln_artifact_studio.core.estimation.estimator import Breakdown

# The chart's legend and the CLI's breakdown name the same parts, in the same order.
HEADERS = ("NPU", "System reserve", "Weights", "Workspace / other", "KV cache", "Free in budget", "Budget")
NO_BUDGET_HEADERS = (*HEADERS[:5], "Free")  # no budget recorded: no budget column


class BreakdownTable(QTableWidget):
    """Read-only rows per (NPU, chiplet); the tightest row is bold and says so."""

    def __init__(self, parent: QWidget | None = None, object_name: str = "breakdownTable") -> None:
        super().__init__(0, len(HEADERS), parent)
        self.setObjectName(object_name)
        self.setHorizontalHeaderLabels(HEADERS)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.setAlternatingRowColors(True)

    def set_breakdown(self, breakdown: Breakdown | None, chiplets: int = 1) -> None:
        self.setRowCount(0)
        if breakdown is None:
            return
        headers = HEADERS if breakdown.budget_set else NO_BUDGET_HEADERS
        # The first column names what its rows name: "NPU 0", or "NPU 0 · c2" per chiplet on Rebel100.
        headers = ("NPU" if chiplets == 1 else "NPU · chiplet", *headers[1:])
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        tightest = breakdown.tightest
        self.setRowCount(len(breakdown.usages))
        for row, u in enumerate(breakdown.usages):
            is_tight = u is tightest
            name = bar_label(u, chiplets) + ("  ◀ tightest" if is_tight else "")
            cells = [
                (name, None),
                *((f"{v:,} B", v) for v in (u.reserve, u.weights, u.workspace, u.kv, u.free_in_budget, u.budget)),
            ][: len(headers)]
            for col, (text, value) in enumerate(cells):
                item = QTableWidgetItem(text)
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
