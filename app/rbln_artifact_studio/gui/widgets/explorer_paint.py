"""How the budget explorer's chart paints one frame: shading, axes, floor and full pool, the curve, the pick.

The painter is given what it paints (the exploration, the scale of the frame, the pick, the widget's rectangle, font
and palette), never the chart.
"""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPainterPath, QPalette, QPen

from rbln_artifact_studio.core.planning.explore import Exploration
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Mark, mark

BELOW_FLOOR = QColor(229, 57, 53, 28)
TICKS = 5
HEADROOM = 1.08  # the tallest count drawn sits this far below the top of the plot


class Scale(NamedTuple):
    """How a frame maps budgets (bytes per NPU) and block counts to pixels: the view's budgets across the plot."""

    plot: QRectF
    low: int  # the view: the budgets shown, from low to high
    high: int
    top: int  # the most blocks drawn

    def x_of(self, budget: float) -> float:
        return self.plot.left() + self.plot.width() * (budget - self.low) / max(self.high - self.low, 1)

    def y_of(self, blocks: float) -> float:
        return self.plot.bottom() - self.plot.height() * blocks / (self.top * HEADROOM)

    def budget_at(self, x: float) -> int:
        return int(self.low + (x - self.plot.left()) / max(self.plot.width(), 1) * (self.high - self.low))


class Frame(NamedTuple):
    """The widget a frame is painted on, as the painter needs it."""

    rect: QRect
    metrics: QFontMetrics
    palette: QPalette  # marks legible on it (3:1), light or dark


class ExplorerPainter:
    """Paints an exploration on the plot rectangle of a frame; its scale maps bytes and blocks to pixels."""

    def __init__(
        self,
        painter: QPainter,
        exploration: Exploration,
        scale: Scale,
        frame: Frame,
        picked: tuple[int, int | None] | None,
    ) -> None:
        """picked: the (budget, blocks) last picked, drawn as a line and a dot."""
        self.painter = painter
        self.e = exploration
        self.scale, self.plot, self.frame, self.picked = scale, scale.plot, frame, picked
        palette = frame.palette
        self.curve, self.floor, self.full = (mark(k, palette) for k in (Mark.CURVE, Mark.FLOOR, Mark.FULL))
        self.current, self.pick = mark(Mark.PICK, palette), mark(Mark.TIGHTEST, palette)

    def paint(self, text: QColor) -> None:
        """The whole frame; the curve and the pick are clipped to (a little more than) the plot."""
        self.painter.setClipRect(self.frame.rect)
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
        e, plot, scale = self.e, self.plot, self.scale
        floor_x = plot.right() if e.floor_budget is None else min(scale.x_of(e.floor_budget.low), plot.right())
        if floor_x > plot.left():
            self.painter.fillRect(QRectF(plot.left(), plot.top(), floor_x - plot.left(), plot.height()), BELOW_FLOOR)

    def _axes(self, text: QColor) -> None:
        e, plot, scale, painter = self.e, self.plot, self.scale, self.painter
        fm = self.frame.metrics
        painter.setPen(QPen(text, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        low, high = scale.low, scale.high
        for i in range(TICKS):
            budget = low + (high - low) * i / (TICKS - 1)
            x = scale.x_of(budget)
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4))
            for row, label in enumerate((f"{budget / e.available:.4g}", format_bytes(int(budget)))):
                width = fm.horizontalAdvance(label)
                left = min(max(x - width / 2, 0), self.frame.rect.width() - width)
                painter.drawText(QPointF(left, plot.bottom() + fm.ascent() + 6 + row * fm.height()), label)
        painter.drawText(
            QRectF(plot.left(), plot.bottom() + 2 * fm.height() + 8, plot.width(), fm.height()),
            Qt.AlignmentFlag.AlignHCenter,
            f"memory_budget per NPU: fraction of {format_bytes(e.available)} and bytes (scroll to zoom)",
        )
        painter.drawText(QPointF(2, plot.top() - 6), "blocks")

    def _levels(self) -> None:
        """Floor and full pool as horizontal lines, with the budget each is reached from as a vertical tick."""
        e, plot, scale, painter = self.e, self.plot, self.scale, self.painter
        fm = self.frame.metrics
        for value, colour, name, step in (
            (e.floor, self.floor, "floor", e.floor_budget),
            (e.full, self.full, "full pool", e.full_budget),
        ):
            y = scale.y_of(value)
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.drawText(
                QRectF(0, y - fm.height() / 2, plot.left() - 4, fm.height()), Qt.AlignmentFlag.AlignRight, str(value)
            )
            label = f"{name} {value}"
            if step is not None and scale.low <= step.low <= scale.high:
                x = scale.x_of(step.low)
                painter.setPen(QPen(colour, 1, Qt.PenStyle.DotLine))
                painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
                label += f" from {step.fraction:g}" if step.fraction is not None else f" from {format_bytes(step.low)}"
            painter.setPen(colour)
            painter.drawText(QPointF(plot.left() + 4, y - 3), label)

    def _curve(self) -> None:
        e, plot, scale, painter = self.e, self.plot, self.scale, self.painter
        low, high = scale.low, scale.high
        path = QPainterPath(QPointF(scale.x_of(low), scale.y_of(e.blocks_at(low))))
        previous = e.blocks_at(low)
        shown = []
        for p in e.points:
            if p.budget_bytes <= low:
                continue
            if p.budget_bytes > high:
                break
            x = scale.x_of(p.budget_bytes)
            path.lineTo(QPointF(x, scale.y_of(previous)))
            path.lineTo(QPointF(x, scale.y_of(p.blocks)))
            previous = p.blocks
            shown.append(p)
        path.lineTo(QPointF(scale.x_of(high), scale.y_of(previous)))
        painter.setPen(QPen(self.curve, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
        if len(shown) <= plot.width() / 6:  # room for a dot on every step
            painter.setBrush(self.curve)
            for p in shown:
                painter.drawEllipse(QPointF(scale.x_of(p.budget_bytes), scale.y_of(p.blocks)), 3, 3)
        if e.current_budget is not None and low <= e.current_budget.low <= high:
            painter.setPen(QPen(self.current, 1.5))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            dot = QPointF(scale.x_of(e.current_budget.low), scale.y_of(e.current))
            painter.drawEllipse(dot, 6, 6)
            painter.drawText(dot + QPointF(8, 14), f"current {e.current}")

    def _pick(self) -> None:
        picked = self.picked
        if picked is None:
            return
        plot, scale, painter = self.plot, self.scale, self.painter
        budget, blocks = picked
        x = scale.x_of(budget)
        painter.setPen(QPen(self.pick, 1.5))
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        if blocks is not None:
            dot = QPointF(x, scale.y_of(blocks))
            painter.setBrush(self.pick)
            painter.drawEllipse(dot, 4.5, 4.5)
            painter.drawText(dot + QPointF(7, -7), f"{blocks} blocks")
