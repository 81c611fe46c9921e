"""How the budget explorer's chart paints one frame: shading, axes, floor and full pool, the curve, the pick."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen

from rbln_artifact_studio.core.planning.explore import Exploration
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Mark, mark

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.widgets.explorer_chart import ExplorerChart

BELOW_FLOOR = QColor(229, 57, 53, 28)
TICKS = 5


class ExplorerPainter:
    """Paints an exploration on the chart's plot rectangle; the chart's x_of and y_of map bytes and blocks to pixels."""

    def __init__(self, chart: ExplorerChart, painter: QPainter, exploration: Exploration, plot: QRectF) -> None:
        self.chart = chart
        self.painter = painter
        self.e = exploration
        self.plot = plot
        palette = chart.palette()  # marks legible on it (3:1), light or dark
        self.curve, self.floor, self.full = (mark(k, palette) for k in (Mark.CURVE, Mark.FLOOR, Mark.FULL))
        self.current, self.pick = mark(Mark.PICK, palette), mark(Mark.TIGHTEST, palette)

    def paint(self, text: QColor) -> None:
        """The whole frame; the curve and the pick are clipped to (a little more than) the plot."""
        self.painter.setClipRect(self.chart.rect())
        self._below_floor()
        self._axes(text)
        self._levels()
        self.painter.save()
        self.painter.setClipRect(self.plot.adjusted(-4, -4, 4, 4))
        self._curve()
        self._pick()
        self.painter.restore()

    def _below_floor(self) -> None:
        """Budgets below the floor are shaded: resizing to them fails."""
        e, plot, chart = self.e, self.plot, self.chart
        floor_x = plot.right() if e.floor_budget is None else min(chart.x_of(e.floor_budget.low), plot.right())
        if floor_x > plot.left():
            self.painter.fillRect(QRectF(plot.left(), plot.top(), floor_x - plot.left(), plot.height()), BELOW_FLOOR)

    def _axes(self, text: QColor) -> None:
        e, plot, chart, painter = self.e, self.plot, self.chart, self.painter
        fm = chart.fontMetrics()
        painter.setPen(QPen(text, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        low, high = chart.view
        for i in range(TICKS):
            budget = low + (high - low) * i / (TICKS - 1)
            x = chart.x_of(budget)
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4))
            for row, label in enumerate((f"{budget / e.available:.4g}", format_bytes(int(budget)))):
                width = fm.horizontalAdvance(label)
                left = min(max(x - width / 2, 0), chart.width() - width)
                painter.drawText(QPointF(left, plot.bottom() + fm.ascent() + 6 + row * fm.height()), label)
        painter.drawText(
            QRectF(plot.left(), plot.bottom() + 2 * fm.height() + 8, plot.width(), fm.height()),
            Qt.AlignmentFlag.AlignHCenter,
            f"memory_budget per NPU: fraction of {format_bytes(e.available)} and bytes (scroll to zoom)",
        )
        painter.drawText(QPointF(2, plot.top() - 6), "blocks")

    def _levels(self) -> None:
        """Floor and full pool as horizontal lines, with the budget each is reached from as a vertical tick."""
        e, plot, chart, painter = self.e, self.plot, self.chart, self.painter
        fm = chart.fontMetrics()
        for value, colour, name, step in (
            (e.floor, self.floor, "floor", e.floor_budget),
            (e.full, self.full, "full pool", e.full_budget),
        ):
            y = chart.y_of(value)
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.drawText(
                QRectF(0, y - fm.height() / 2, plot.left() - 4, fm.height()), Qt.AlignmentFlag.AlignRight, str(value)
            )
            label = f"{name} {value}"
            if step is not None and chart.view[0] <= step.low <= chart.view[1]:
                x = chart.x_of(step.low)
                painter.setPen(QPen(colour, 1, Qt.PenStyle.DotLine))
                painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
                label += f" from {step.fraction:g}" if step.fraction is not None else f" from {format_bytes(step.low)}"
            painter.setPen(colour)
            painter.drawText(QPointF(plot.left() + 4, y - 3), label)

    def _curve(self) -> None:
        e, plot, chart, painter = self.e, self.plot, self.chart, self.painter
        low, high = chart.view
        path = QPainterPath(QPointF(chart.x_of(low), chart.y_of(e.blocks_at(low))))
        previous = e.blocks_at(low)
        shown = []
        for p in e.points:
            if p.budget_bytes <= low:
                continue
            if p.budget_bytes > high:
                break
            x = chart.x_of(p.budget_bytes)
            path.lineTo(QPointF(x, chart.y_of(previous)))
            path.lineTo(QPointF(x, chart.y_of(p.blocks)))
            previous = p.blocks
            shown.append(p)
        path.lineTo(QPointF(chart.x_of(high), chart.y_of(previous)))
        painter.setPen(QPen(self.curve, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        if len(shown) <= plot.width() / 6:  # room for a dot on every step
            painter.setBrush(self.curve)
            for p in shown:
                painter.drawEllipse(QPointF(chart.x_of(p.budget_bytes), chart.y_of(p.blocks)), 3, 3)
        if e.current_budget is not None and low <= e.current_budget.low <= high:
            painter.setPen(QPen(self.current, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            dot = QPointF(chart.x_of(e.current_budget.low), chart.y_of(e.current))
            painter.drawEllipse(dot, 6, 6)
            painter.drawText(dot + QPointF(8, 14), f"current {e.current}")

    def _pick(self) -> None:
        picked = self.chart.picked
        if picked is None:
            return
        plot, chart, painter = self.plot, self.chart, self.painter
        budget, blocks = picked
        x = chart.x_of(budget)
        painter.setPen(QPen(self.pick, 1.5))
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        if blocks is not None:
            dot = QPointF(x, chart.y_of(blocks))
            painter.setBrush(self.pick)
            painter.drawEllipse(dot, 4.5, 4.5)
            painter.drawText(dot + QPointF(7, -7), f"{blocks} blocks")
