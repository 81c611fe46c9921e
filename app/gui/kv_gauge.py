"""A bar showing kvcache_num_blocks against the floor and the full pool."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget
from rbln_artifact_studio.core.display.presentation import BlockFacts

GOOD, HIGH, LOW = QColor("#43a047"), QColor("#f9a825"), QColor("#e53935")


class KvGauge(QWidget):
    """Filled up to the count; marks at the floor and the full pool. Green inside [floor, full]."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("kvGauge")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._facts: BlockFacts | None = None

    def set_facts(self, facts: BlockFacts | None) -> None:
        self._facts = facts
        if facts is not None:
            self.setToolTip(f"{facts.headline}\n{facts.meaning}")
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(300, 2 * self.fontMetrics().height() + 18)

    def paintEvent(self, event: QPaintEvent) -> None:
        f = self._facts
        if f is None:
            return
        painter = QPainter(self)
        text = self.palette().windowText().color()
        fm = self.fontMetrics()
        bar = QRectF(4, 4, self.width() - 8, fm.height() + 4)
        scale = max(f.full, f.num_blocks, f.floor, 1)
        colour = LOW if f.num_blocks < f.floor else HIGH if f.num_blocks > f.full else GOOD
        painter.fillRect(bar, self.palette().base())
        painter.fillRect(QRectF(bar.left(), bar.top(), bar.width() * f.num_blocks / scale, bar.height()), colour)
        painter.setPen(QPen(text, 1))
        painter.drawRect(bar)
        for value, label in ((f.floor, f"floor {f.floor}"), (f.full, f"full {f.full}")):
            x = bar.left() + bar.width() * value / scale
            painter.setPen(QPen(text, 2))
            painter.drawLine(QPointF(x, bar.top() - 2), QPointF(x, bar.bottom() + 4))
            width = fm.horizontalAdvance(label)
            left = min(max(x - width / 2, 0), self.width() - width)
            painter.drawText(QPointF(left, bar.bottom() + 4 + fm.ascent()), label)
        painter.setPen(text)
        painter.drawText(bar.adjusted(6, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, f"{f.num_blocks} blocks")
