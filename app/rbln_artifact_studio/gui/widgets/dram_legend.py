"""The DRAM chart's legend: its entries laid out in wrapped lines across the chart's width, and painted there."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter, QPen

from rbln_artifact_studio.core.display.presentation import segment_labels

BUDGET = "Budget"  # the entry drawn as the budget's dashed line, not as a filled box
HATCH = QColor("#b0bec5")  # over what lies outside the budget, in the bars and in the legend alike

Placed = tuple[QColor, str, QPointF]


def legend_layout(fm: QFontMetrics, width: int, entries: list[tuple[QColor, str]]) -> list[Placed]:
    """Legend entries with their positions, wrapped onto as many lines as the width needs."""
    box = fm.height() - 4
    x, y, out = 6.0, 4.0, []
    for colour, label in entries:
        w = box + 4 + fm.horizontalAdvance(label) + 12
        if x + w > width and x > 6:
            x, y = 6.0, y + fm.height() + 4
        out.append((colour, label, QPointF(x, y)))
        x += w
    return out


def legend_height(fm: QFontMetrics, layout: list[Placed]) -> int:
    """How far down the legend reaches, its last line included."""
    return int(layout[-1][2].y()) + fm.height() + 6


def legend_label_rects(fm: QFontMetrics, layout: list[Placed]) -> list[tuple[str, QRectF]]:
    """Each entry's text and where it is painted (for the layout checks)."""
    box = fm.height() - 4
    return [
        (label, QRectF(pos.x() + box + 4, pos.y(), fm.horizontalAdvance(label) + 2, fm.height()))
        for _, label, pos in layout
    ]


def paint_legend(painter: QPainter, fm: QFontMetrics, layout: list[Placed], text: QColor) -> None:
    """A box of each fill (hatched for outside the budget) or the budget's dashed line, then the entry's name."""
    box = fm.height() - 4
    outside = segment_labels(True)["outside"]
    for colour, label, pos in layout:
        x, y = pos.x(), pos.y()
        if label == BUDGET:
            painter.setPen(QPen(colour, 2, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, y + box / 2 + 2), QPointF(x + box, y + box / 2 + 2))
        else:
            painter.fillRect(QRectF(x, y + 2, box, box), colour)
            if label == outside:
                painter.fillRect(QRectF(x, y + 2, box, box), QBrush(HATCH, Qt.BrushStyle.BDiagPattern))
            painter.setPen(QPen(text, 0.5))
            painter.drawRect(QRectF(x, y + 2, box, box))
        painter.setPen(text)
        painter.drawText(QPointF(x + box + 4, y + fm.ascent() + 1), label)
