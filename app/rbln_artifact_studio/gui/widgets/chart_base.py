"""What the painted charts share: tooltips from a tooltip_at(pos) method, and a byte axis with grid lines."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from rbln_artifact_studio.core.sizes import format_bytes


class TooltipChart(QWidget):
    """A widget whose tooltip text depends on where the mouse is: subclasses implement tooltip_at."""

    def tooltip_at(self, pos: QPoint | QPointF) -> str:
        return ""

    def event(self, e: QEvent) -> bool:
        if isinstance(e, QHelpEvent) and e.type() == QHelpEvent.Type.ToolTip:
            text = self.tooltip_at(e.pos())
            if text:
                QToolTip.showText(e.globalPos(), text, self)
            else:
                QToolTip.hideText()
                e.ignore()
            return True
        return super().event(e)


GIB = 1 << 30
MAX_INTERVALS = 5


def axis_ticks(scale: int) -> list[int]:
    """Grid values from 0 to at most scale in round steps (1, 2 or 5 × a power of ten GiB, or of MiB below 1 GiB):
    "0, 10 GiB, 20 GiB, 30 GiB", never "8.75 GiB" steps; at most five intervals."""
    if scale <= 0:
        return [0]
    unit = GIB if scale >= GIB else 1 << 20
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude * unit
            if scale // step <= MAX_INTERVALS:
                return [step * i for i in range(scale // step + 1)]
        magnitude *= 10


def paint_byte_axis(widget: QWidget, painter: QPainter, plot: QRectF, scale: int, text: QColor) -> None:
    """Grid lines in round steps from 0 up to scale bytes, labelled at the left of the plot."""
    grid = QColor(text)
    grid.setAlpha(60)
    fm = widget.fontMetrics()
    for value in axis_ticks(scale):
        y = plot.bottom() - plot.height() * value / max(scale, 1)
        painter.setPen(QPen(grid, 1))
        painter.drawLine(QPointF(plot.left() - 4, y), QPointF(plot.right(), y))
        painter.setPen(text)
        box = QRectF(0, y - fm.height() / 2, plot.left() - 8, fm.height())
        painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, format_bytes(value))
