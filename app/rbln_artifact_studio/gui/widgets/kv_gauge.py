"""A bar showing kvcache_num_blocks against the floor and the full pool."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from rbln_artifact_studio.core.display.presentation import BlockFacts
from rbln_artifact_studio.gui.app.tones import Mark, mark, text_on

GAP = 6  # pixels between two marker labels


@dataclass(frozen=True)
class GaugeColours:
    """What the gauge paints with on its palette: the tests hold each to WCAG's ratios."""

    fill: QColor  # the filled part, up to the count
    empty: QColor  # the rest of the bar
    outline: QColor  # the bar's frame and the floor / full marks
    text: QColor  # the marks' labels, on the window
    count_on_fill: QColor  # the count where it lies over the filled part
    count_on_empty: QColor  # and where it lies over the empty part


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

    def colours(self) -> GaugeColours:
        """The colours for the count shown now, on the widget's palette."""
        f = self._facts
        palette = self.palette()
        kind = Mark.GOOD
        if f is not None:
            kind = Mark.LOW if f.num_blocks < f.floor else Mark.HIGH if f.num_blocks > f.full else Mark.GOOD
        fill = mark(kind, palette)
        text = palette.windowText().color()
        return GaugeColours(fill, palette.base().color(), text, text, text_on(fill), palette.text().color())

    def paintEvent(self, event: QPaintEvent) -> None:
        f = self._facts
        if f is None:
            return
        painter = QPainter(self)
        c = self.colours()
        bar = self._bar()
        filled = QRectF(bar.left(), bar.top(), self._x(f.num_blocks) - bar.left(), bar.height())
        painter.fillRect(bar, c.empty)
        painter.fillRect(filled, c.fill)
        painter.setPen(QPen(c.outline, 1))
        painter.drawRect(bar)
        for x, label, rect in self.marks():
            painter.setPen(QPen(c.outline, 2))
            painter.drawLine(QPointF(x, bar.top() - 2), QPointF(x, bar.bottom() + 4))
            painter.setPen(c.text)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        # The count may straddle the fill's end: each part in the colour that reads on what lies under it.
        count, rect = self.label_rects()[0]
        for clip, colour in (
            (filled, c.count_on_fill),
            (QRectF(filled.right(), bar.top(), bar.width(), bar.height()), c.count_on_empty),
        ):
            painter.save()
            painter.setClipRect(clip)
            painter.setPen(colour)
            painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, count)
            painter.restore()
