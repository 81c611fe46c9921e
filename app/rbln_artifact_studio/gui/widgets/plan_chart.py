"""The co-location chart: per NPU (per chiplet on Rebel100), every artifact's share stacked against the DRAM left."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from rbln_artifact_studio.core.display.plan_display import bar_label, chiplet_tooltip, headroom_short, share_tooltip
from rbln_artifact_studio.core.planning.planner import FamilyStack, Share, StackedChiplet
from rbln_artifact_studio.gui.widgets.chart_base import TooltipChart, paint_byte_axis

PALETTE = ("#1e88e5", "#8e24aa", "#f4511e", "#00897b", "#6d4c41", "#3949ab", "#c0ca33", "#d81b60")
AVAILABLE = QColor("#d32f2f")
OVER = QColor("#e53935")
FREE = QColor("#2e7d32")
TIGHTEST = QColor("#e65100")


def artifact_colour(index: int) -> QColor:
    return QColor(PALETTE[index % len(PALETTE)])


def kv_colour(colour: QColor) -> QColor:
    """The lighter tint a share's KV cache is drawn in."""
    return colour.lighter(150)


@dataclass(frozen=True)
class PlanBar:
    chiplet: StackedChiplet
    label: str
    tightest: bool
    rect: QRectF
    pieces: list[tuple[Share, bool, QRectF]]  # (share, is its KV part, rectangle)
    available_y: float

    @property
    def headroom_text(self) -> str:
        return headroom_short(self.chiplet.headroom)


class PlanChart(TooltipChart):
    """Displays one FamilyStack computed by rbln_artifact_studio.core.planning.planner; it only maps bytes to pixels."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("plannerChart")
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.stack: FamilyStack | None = None
        self.chiplets_per_npu = 1
        self.colours: dict[str, QColor] = {}

    def set_stack(self, stack: FamilyStack, chiplets_per_npu: int, colours: dict[str, QColor]) -> None:
        self.stack, self.chiplets_per_npu, self.colours = stack, max(chiplets_per_npu, 1), colours
        t = stack.tightest
        self.setAccessibleDescription(f"{len(stack.chiplets)} bars; tightest {t.label}; headroom {t.headroom:,} bytes")
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(640, 340)

    def minimumSizeHint(self) -> QSize:
        return QSize(320, 240)

    # ---- geometry ------------------------------------------------------------------------------------

    def _legend(self) -> list[tuple[QColor, str, bool]]:
        """(colour, text, is a line) for each artifact of the stack, the KV tint and the available line."""
        assert self.stack is not None
        entries = [(self.colours[m.label], m.label, False) for m in self.stack.members]
        entries.append((QColor("#bdbdbd").lighter(120), "lighter part: KV cache", False))
        entries.append((AVAILABLE, "DRAM after the system reserve", True))
        return entries

    def _legend_rows(self) -> list[list[tuple[QColor, str, bool]]]:
        fm = self.fontMetrics()
        rows: list[list[tuple[QColor, str, bool]]] = [[]]
        width = 6.0
        for entry in self._legend():
            w = fm.height() + 8 + fm.horizontalAdvance(entry[1]) + 12
            if rows[-1] and width + w > self.width():
                rows.append([])
                width = 6.0
            rows[-1].append(entry)
            width += w
        return rows

    def _plot(self) -> QRectF:
        fm = self.fontMetrics()
        top = len(self._legend_rows()) * (fm.height() + 4) + 10
        left = fm.horizontalAdvance("000.00 GiB") + 12
        bottom = 3 * fm.height() + 12
        return QRectF(left, top, max(self.width() - left - 10, 10), max(self.height() - top - bottom, 10))

    def _scale(self) -> int:
        assert self.stack is not None
        return max([c.available for c in self.stack.chiplets] + [c.used for c in self.stack.chiplets] + [1])

    def bars(self) -> list[PlanBar]:
        """Bars and their pieces in widget coordinates for the current size."""
        s = self.stack
        if s is None or not s.chiplets:
            return []
        plot, scale = self._plot(), self._scale()
        slot = plot.width() / len(s.chiplets)
        width = min(slot * 0.6, 90.0)
        tightest = s.tightest
        out = []
        for i, ch in enumerate(s.chiplets):
            x = plot.left() + slot * i + (slot - width) / 2
            y = plot.bottom()
            pieces = []
            for share in ch.shares:
                for is_kv, nbytes in ((False, share.weights + share.workspace), (True, share.kv)):
                    h = plot.height() * nbytes / scale
                    pieces.append((share, is_kv, QRectF(x, y - h, width, h)))
                    y -= h
            available_y = plot.bottom() - plot.height() * ch.available / scale
            top = min(y, available_y)
            out.append(
                PlanBar(
                    ch,
                    bar_label(ch, self.chiplets_per_npu),
                    ch is tightest,
                    QRectF(x, top, width, plot.bottom() - top),
                    pieces,
                    available_y,
                )
            )
        return out

    def tooltip_at(self, pos: QPoint | QPointF) -> str:
        """The share under pos in exact bytes, then the whole chiplet; empty off the bars."""
        p = QPointF(pos)
        for bar in self.bars():
            if bar.rect.left() <= p.x() <= bar.rect.right():
                text = chiplet_tooltip(bar.chiplet, bar.tightest)
                for share, _kv, rect in bar.pieces:
                    if rect.contains(p):
                        return share_tooltip(share) + "\n\n" + text
                return text
        return ""

    # ---- events --------------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        bars = self.bars()
        if not bars:
            return
        self._paint_legend(painter, text)
        self._paint_axis(painter, text)
        fm = self.fontMetrics()
        for bar in bars:
            for share, is_kv, rect in bar.pieces:
                colour = self.colours.get(share.label, QColor("#9e9e9e"))
                painter.fillRect(rect, kv_colour(colour) if is_kv else colour)
            if bar.chiplet.headroom < 0:
                over = QRectF(bar.rect.left(), bar.rect.top(), bar.rect.width(), bar.available_y - bar.rect.top())
                painter.fillRect(over, QBrush(OVER, Qt.BrushStyle.BDiagPattern))
            painter.setPen(QPen(TIGHTEST if bar.tightest else text, 2.5 if bar.tightest else 1))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(bar.rect)
            painter.setPen(QPen(AVAILABLE, 2, Qt.PenStyle.DashLine))
            painter.drawLine(
                QPointF(bar.rect.left() - 6, bar.available_y), QPointF(bar.rect.right() + 6, bar.available_y)
            )
            label = QRectF(bar.rect.center().x() - 70, bar.rect.bottom() + 4, 140, fm.height())
            painter.setPen(text)
            painter.drawText(label, Qt.AlignmentFlag.AlignHCenter, bar.label)
            painter.setPen(FREE if bar.chiplet.headroom >= 0 else OVER)
            painter.drawText(label.translated(0, fm.height()), Qt.AlignmentFlag.AlignHCenter, bar.headroom_text)
            if bar.tightest:
                bold = QFont(self.font())
                bold.setBold(True)
                painter.setFont(bold)
                painter.setPen(TIGHTEST)
                painter.drawText(label.translated(0, 2 * fm.height()), Qt.AlignmentFlag.AlignHCenter, "▲ tightest")
                painter.setFont(self.font())

    def _paint_legend(self, painter: QPainter, text: QColor) -> None:
        fm = self.fontMetrics()
        box = fm.height() - 4
        y = 4.0
        for row in self._legend_rows():
            x = 6.0
            for colour, label, is_line in row:
                if is_line:
                    painter.setPen(QPen(colour, 2, Qt.PenStyle.DashLine))
                    painter.drawLine(QPointF(x, y + box / 2 + 2), QPointF(x + box + 4, y + box / 2 + 2))
                else:
                    painter.fillRect(QRectF(x, y + 2, box + 4, box), colour)
                painter.setPen(text)
                painter.drawText(QPointF(x + box + 8, y + fm.ascent() + 1), label)
                x += fm.height() + 8 + fm.horizontalAdvance(label) + 12
            y += fm.height() + 4

    def _paint_axis(self, painter: QPainter, text: QColor) -> None:
        paint_byte_axis(self, painter, self._plot(), self._scale(), text)
