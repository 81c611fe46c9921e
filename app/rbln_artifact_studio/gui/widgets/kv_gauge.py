"""A bar showing kvcache_num_blocks against the floor and the full pool."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from rbln_artifact_studio.core.display.presentation import BlockFacts

GOOD, HIGH, LOW = QColor("#43a047"), QColor("#f9a825"), QColor("#e53935")
GAP = 6  # pixels between two marker labels


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

    def minimumSizeHint(self) -> QSize:
        return QSize(160, self.sizeHint().height())

    def _bar(self) -> QRectF:
        return QRectF(4, 4, self.width() - 8, self.fontMetrics().height() + 4)

    def _x(self, value: int) -> float:
        f = self._facts
        assert f is not None
        bar = self._bar()
        return bar.left() + bar.width() * value / max(f.full, f.num_blocks, f.floor, 1)

    def marks(self) -> list[tuple[float, str, QRectF]]:
        """(x of the mark, label, label rectangle) for the floor and the full pool: one label when they are equal;
        labels kept inside the widget and apart from each other (the full pool's moves right, the floor's left)."""
        f = self._facts
        if f is None:
            return []
        fm = self.fontMetrics()
        top = self._bar().bottom() + 4
        if f.floor == f.full:
            wanted = [(self._x(f.floor), f"floor = full pool {f.full}")]
        else:
            wanted = [(self._x(f.floor), f"floor {f.floor}"), (self._x(f.full), f"full {f.full}")]
        rects = []
        for x, label in wanted:
            width = fm.horizontalAdvance(label) + 2
            left = min(max(x - width / 2, 0), self.width() - width)
            rects.append(QRectF(left, top, width, fm.height()))
        if len(rects) == 2 and rects[0].right() + GAP > rects[1].left():
            overlap = rects[0].right() + GAP - rects[1].left()
            room_right = self.width() - rects[1].right()
            shift_right = min(overlap, room_right)
            rects[1].translate(shift_right, 0)
            rects[0].translate(-(overlap - shift_right), 0)
        return [(x, label, rect) for (x, label), rect in zip(wanted, rects, strict=True)]

    def label_rects(self) -> list[tuple[str, QRectF]]:
        """Every text the gauge paints and where (for the layout checks)."""
        f = self._facts
        if f is None:
            return []
        fm = self.fontMetrics()
        bar = self._bar()
        count = f.count_label
        inside = QRectF(bar.left() + 6, bar.top(), fm.horizontalAdvance(count) + 2, bar.height())
        return [(count, inside)] + [(label, rect) for _, label, rect in self.marks()]

    def paintEvent(self, event: QPaintEvent) -> None:
        f = self._facts
        if f is None:
            return
        painter = QPainter(self)
        text = self.palette().windowText().color()
        bar = self._bar()
        colour = LOW if f.num_blocks < f.floor else HIGH if f.num_blocks > f.full else GOOD
        painter.fillRect(bar, self.palette().base())
        painter.fillRect(QRectF(bar.left(), bar.top(), self._x(f.num_blocks) - bar.left(), bar.height()), colour)
        painter.setPen(QPen(text, 1))
        painter.drawRect(bar)
        for x, label, rect in self.marks():
            painter.setPen(QPen(text, 2))
            painter.drawLine(QPointF(x, bar.top() - 2), QPointF(x, bar.bottom() + 4))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        # The count sits on the bar's fill or its base: the text colour that reads on the base in any palette.
        painter.setPen(self.palette().text().color())
        count, rect = self.label_rects()[0]
        painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, count)
