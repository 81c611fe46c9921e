"""Blocks against memory budget: the core's budget_curve as a step plot with the floor, full pool and budget marked."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPainterPath, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from rbln_artifact_studio.core.estimation.estimator import CurvePoint
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.gui.app.tones import Mark, mark


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
        self.empty_text = "No curve: not even one block fits this NPU."

    def set_curve(
        self,
        points: list[CurvePoint],
        available: int,
        floor: int,
        full: int,
        budget: int | None,
        blocks: int | None,
        empty_text: str = "No curve: not even one block fits this NPU.",
    ) -> None:
        self.points, self.available, self.empty_text = points, max(available, 1), empty_text
        self.floor, self.full, self.budget, self.blocks = floor, full, budget, blocks
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(420, 240)

    def minimumSizeHint(self) -> QSize:
        return QSize(260, 160)

    def _plot(self) -> QRectF:
        """Left: the block numbers; top: the axis title; bottom: a row of tick labels, then the axis title."""
        fm = self.fontMetrics()
        left = fm.horizontalAdvance("00000") + 10
        top = fm.height() * 3 // 2 + 10  # the axis title above, and half a line for the top block number
        bottom = 2 * fm.height() + 12
        return QRectF(left, top, max(self.width() - left - 12, 10), max(self.height() - top - bottom, 10))

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

    def mark_colours(self) -> dict[Mark, QColor]:
        """The curve, the floor and full pool lines and the picked budget, on the widget's palette."""
        return {kind: mark(kind, self.palette()) for kind in (Mark.CURVE, Mark.FLOOR, Mark.FULL, Mark.PICK)}

    def _marker_labels(self, plot: QRectF) -> list[tuple[str, QRectF, QColor]]:
        """The floor and full pool labels inside the plot, and their numbers on the axis; one of each when equal,
        the full pool's moved to the right end when the two would touch."""
        fm = self.fontMetrics()
        h = fm.height()
        c = self.mark_colours()
        marks = [(self.floor, c[Mark.FLOOR], "floor"), (self.full, c[Mark.FULL], "full pool")]
        if self.floor == self.full:
            marks = [(self.full, c[Mark.FULL], "floor = full pool")]
        out: list[tuple[str, QRectF, QColor]] = []
        inside: list[QRectF] = []
        for value, colour, name in marks:
            y = self._map(plot, 0, value).y()
            text = f"{name} {value}"
            rect = QRectF(plot.left() + 4, max(y - 3 - fm.ascent(), plot.top()), fm.horizontalAdvance(text) + 2, h)
            if any(rect.intersects(other) for other in inside):
                rect.moveRight(plot.right() - 2)
            inside.append(rect)
            out.append((text, rect, colour))
            number = QRectF(0, y - h / 2, plot.left() - 4, h)
            if not any(number.intersects(r) for t, r, _ in out if t.isdigit()):
                out.append((str(value), number, QColor()))
        return out

    def label_rects(self) -> list[tuple[str, QRectF]]:
        """Every text the curve paints and where (for the layout checks)."""
        if not self.points:
            return []
        fm = self.fontMetrics()
        plot = self._plot()
        h = fm.height()
        out = [("blocks", QRectF(2, 2, fm.horizontalAdvance("blocks") + 2, h))]
        for fraction in (0.0, 0.25, 0.5, 0.75, 1.0):
            label = f"{fraction:g}"
            width = fm.horizontalAdvance(label) + 2
            x = min(plot.left() + plot.width() * fraction - width / 2, self.width() - width)
            out.append((label, QRectF(x, plot.bottom() + 2, width, h)))
        title = f"memory_budget (fraction of {format_bytes(self.available)} per NPU)"
        out.append((title, QRectF(plot.left(), plot.bottom() + h + 6, plot.width(), h)))
        out += [(text, rect) for text, rect, _ in self._marker_labels(plot)]
        if self.budget is not None and self.blocks is not None:
            dot = self._map(plot, self.budget, self.blocks)
            text = f"{self.blocks} blocks"
            width = fm.horizontalAdvance(text) + 2
            left = dot.x() + 6 if dot.x() + 6 + width <= self.width() - 2 else dot.x() - 6 - width  # never clipped
            out.append((text, QRectF(left, max(dot.y() - 6 - fm.ascent(), 0), width, h)))
        return out

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        plot = self._plot()
        if not self.points:
            painter.setPen(text)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.empty_text)
            return
        painter.setPen(QPen(text, 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        labels = self.label_rects()
        for label, rect in labels[:7]:  # the axis title and ticks
            align = Qt.AlignmentFlag.AlignHCenter if rect.width() > 100 else Qt.AlignmentFlag.AlignLeft
            painter.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, label)
        c = self.mark_colours()
        for value, colour in ((self.floor, c[Mark.FLOOR]), (self.full, c[Mark.FULL])):
            y = self._map(plot, 0, value).y()
            painter.setPen(QPen(colour, 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        for label, rect, colour in self._marker_labels(plot):
            painter.setPen(text)  # the dashed line carries the colour; the words stay legible on any palette
            align = Qt.AlignmentFlag.AlignRight if not colour.isValid() else Qt.AlignmentFlag.AlignLeft
            painter.drawText(rect, align | Qt.AlignmentFlag.AlignVCenter, label)
        path = QPainterPath(self._map(plot, self.points[0].budget_bytes, 0))
        for i, p in enumerate(self.points):
            path.lineTo(self._map(plot, p.budget_bytes, p.blocks - 1 if i == 0 else self.points[i - 1].blocks))
            path.lineTo(self._map(plot, p.budget_bytes, p.blocks))
        path.lineTo(self._map(plot, self.available, self.points[-1].blocks))
        painter.setPen(QPen(c[Mark.CURVE], 2))
        painter.drawPath(path)
        if self.budget is not None:
            x = self._map(plot, self.budget, 0).x()
            painter.setPen(QPen(c[Mark.PICK], 2))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
            if self.blocks is not None:
                dot = self._map(plot, self.budget, self.blocks)
                painter.setBrush(c[Mark.PICK])
                painter.drawEllipse(dot, 4, 4)
                label, rect = labels[-1]
                painter.setPen(text)
                painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, label)
