"""Blocks against memory budget: the core's budget_curve as a step plot with the floor, full pool and budget marked."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget
from rbln_artifact_studio.core.display.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.core.estimation.estimator import CurvePoint

CURVE = QColor("#1e88e5")
FLOOR = QColor("#e53935")
FULL = QColor("#43a047")
BUDGET = QColor("#6d4c41")


class BudgetCurve(QWidget):
    """Each step is the smallest budget at which one more block fits (2 MiB alignment makes them uneven)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wizardBudgetCurve")
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.points: list[CurvePoint] = []
        self.available = 1
        self.floor = 0
        self.full = 0
        self.budget: int | None = None
        self.blocks: int | None = None

    def set_curve(
        self,
        points: list[CurvePoint],
        available: int,
        floor: int,
        full: int,
        budget: int | None,
        blocks: int | None,
    ) -> None:
        self.points, self.available = points, max(available, 1)
        self.floor, self.full, self.budget, self.blocks = floor, full, budget, blocks
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(420, 240)

    def minimumSizeHint(self) -> QSize:
        return QSize(260, 160)

    def _plot(self) -> QRectF:
        fm = self.fontMetrics()
        left = fm.horizontalAdvance("00000") + 10
        return QRectF(left, fm.height() + 8, self.width() - left - 12, self.height() - 3 * fm.height() - 12)

    def _y_max(self) -> int:
        return max(self.full, self.blocks or 0, 1)

    def _map(self, plot: QRectF, budget: float, blocks: float) -> QPointF:
        x = plot.left() + plot.width() * min(budget / self.available, 1.0)
        y = plot.bottom() - plot.height() * blocks / self._y_max()
        return QPointF(x, y)

    def point_at(self, x: float) -> CurvePoint | None:
        """The last curve point whose budget is at or left of x (what a budget there resolves to)."""
        plot = self._plot()
        budget = (x - plot.left()) / max(plot.width(), 1) * self.available
        best = None
        for p in self.points:
            if p.budget_bytes <= budget:
                best = p
        return best

    def event(self, e: QEvent) -> bool:
        if isinstance(e, QHelpEvent) and e.type() == QHelpEvent.Type.ToolTip:
            p = self.point_at(e.pos().x())
            if p is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(
                    e.globalPos(),
                    f"{p.blocks} blocks from {format_bytes_exact(p.budget_bytes)} per NPU (fraction {p.fraction:.4f})",
                    self,
                )
            return True
        return super().event(e)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        fm = self.fontMetrics()
        plot = self._plot()
        if not self.points:
            painter.setPen(text)
            painter.drawText(
                self.rect(),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                "No curve: not even one block fits this NPU.",
            )
            return
        painter.setPen(QPen(text, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
            x = plot.left() + plot.width() * fraction
            label = f"{fraction:g}"
            painter.drawText(QPointF(x - fm.horizontalAdvance(label) / 2, plot.bottom() + fm.ascent() + 3), label)
        painter.drawText(
            QRectF(plot.left(), plot.bottom() + fm.height() + 2, plot.width(), fm.height()),
            Qt.AlignmentFlag.AlignHCenter,
            f"memory_budget (fraction of {format_bytes(self.available)} per NPU)",
        )
        painter.drawText(QPointF(2, plot.top() - 4), "blocks")
        for value, colour, name in ((self.floor, FLOOR, "floor"), (self.full, FULL, "full pool")):
            y = self._map(plot, 0, value).y()
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.drawText(QPointF(plot.left() + 4, y - 3), f"{name} {value}")
            painter.setPen(text)
            painter.drawText(
                QRectF(0, y - fm.height() / 2, plot.left() - 4, fm.height()), Qt.AlignmentFlag.AlignRight, str(value)
            )
        path = QPainterPath(self._map(plot, self.points[0].budget_bytes, 0))
        for i, p in enumerate(self.points):
            path.lineTo(self._map(plot, p.budget_bytes, p.blocks - 1 if i == 0 else self.points[i - 1].blocks))
            path.lineTo(self._map(plot, p.budget_bytes, p.blocks))
        path.lineTo(self._map(plot, self.available, self.points[-1].blocks))
        painter.setPen(QPen(CURVE, 2))
        painter.drawPath(path)
        if self.budget is not None:
            x = self._map(plot, self.budget, 0).x()
            painter.setPen(QPen(BUDGET, 2))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            if self.blocks is not None:
                dot = self._map(plot, self.budget, self.blocks)
                painter.setBrush(BUDGET)
                painter.drawEllipse(dot, 4, 4)
                painter.drawText(dot + QPointF(6, -6), f"{self.blocks} blocks")
