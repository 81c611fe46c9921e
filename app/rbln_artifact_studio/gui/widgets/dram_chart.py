"""The per-NPU DRAM breakdown chart: one stacked bar per NPU (per chiplet on Rebel100), drawn with QPainter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from rbln_artifact_studio.core.display.presentation import (
    NO_BUDGET,
    Segment,
    bar_label,
    segment_labels,
    usage_segments,
    usage_tooltip,
)
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Mark, is_dark, mark
from rbln_artifact_studio.gui.widgets.chart_base import TooltipChart, axis_ticks, paint_byte_axis
from rbln_artifact_studio.gui.widgets.dram_legend import (
    BUDGET,
    HATCH,
    Placed,
    legend_height,
    legend_label_rects,
    legend_layout,
    paint_legend,
)

if TYPE_CHECKING:  # types only: the estimator loads in the worker that reads the artifact, after the window shows
    from rbln_artifact_studio.core.estimation.estimator import Breakdown, ChipletUsage

# The filled parts keep their hues in both schemes, a shade lighter on a dark palette; free space and what lies
# outside the budget are the palette's own base and window, tinted, so they never pass for KV cache.
LIGHT_FILLS = {"reserve": "#9e9e9e", "weights": "#1e88e5", "workspace": "#8e24aa", "kv": "#388e3c"}
DARK_FILLS = {"reserve": "#9e9e9e", "weights": "#42a5f5", "workspace": "#ba68c8", "kv": "#66bb6a"}


def _mix(a: QColor, b: QColor, share_of_b: float) -> QColor:
    keep = 1 - share_of_b
    return QColor.fromRgbF(
        a.redF() * keep + b.redF() * share_of_b,
        a.greenF() * keep + b.greenF() * share_of_b,
        a.blueF() * keep + b.blueF() * share_of_b,
    )


def segment_colour(key: str, palette: QPalette) -> QColor:
    """The fill of a chart segment (reserve, weights, workspace, kv, free, outside) on this palette."""
    fills = DARK_FILLS if is_dark(palette) else LIGHT_FILLS
    kv = QColor(fills["kv"])
    if key == "free":
        return _mix(palette.color(QPalette.ColorRole.Base), kv, 0.12)
    if key == "outside":
        shade = QPalette.ColorRole.Light if is_dark(palette) else QPalette.ColorRole.Mid
        return _mix(palette.color(QPalette.ColorRole.Window), palette.color(shade), 0.5)
    return QColor(fills[key])


@dataclass(frozen=True)
class _Bar:
    usage: ChipletUsage
    label: str
    tightest: bool
    rect: QRectF
    pieces: list[tuple[Segment, QRectF]]
    budget_y: float


class DramChart(TooltipChart):
    """Displays a Breakdown computed by rbln_artifact_studio.core; it only maps bytes to pixels."""

    def __init__(self, parent: QWidget | None = None, object_name: str = "dramChart") -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._breakdown: Breakdown | None = None
        self._chiplets = 1
        self._message = "No artifact selected."
        self.scale_floor = 0  # bytes at the top of the plot at least: two charts on one scale (compare)

    # ---- input ---------------------------------------------------------------------------------------

    def set_breakdown(self, breakdown: Breakdown | None, chiplets: int = 1, message: str = "") -> None:
        self._breakdown = breakdown
        self._chiplets = max(chiplets, 1)
        self._message = message
        self.setAccessibleDescription(self.summary())
        self.update()

    @property
    def breakdown(self) -> Breakdown | None:
        return self._breakdown

    def summary(self) -> str:
        """What the chart shows, in words (accessibility and tests)."""
        if self._breakdown is None:
            return self._message
        b = self._breakdown
        budget = f"budget {b.budget_per_npu:,} B per NPU" if b.budget_set else NO_BUDGET
        return f"{len(b.usages)} bars; tightest {b.tightest.label}; {budget}"

    # ---- geometry ------------------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        return QSize(520, 320)

    def minimumSizeHint(self) -> QSize:
        return QSize(280, 220)

    def _fill(self, key: str) -> QColor:
        return segment_colour(key, self.palette())

    def mark_colours(self) -> dict[Mark, QColor]:
        """The budget line and the tightest NPU's outline and marker, on the widget's palette."""
        return {kind: mark(kind, self.palette()) for kind in (Mark.BUDGET, Mark.TIGHTEST)}

    def _budget_set(self) -> bool:
        return self._breakdown is None or self._breakdown.budget_set

    def _legend_entries(self) -> list[tuple[QColor, str]]:
        if not self._budget_set():  # no budget: no line, and nothing is outside one
            return [(self._fill(k), label) for k, label in segment_labels(False).items() if k != "outside"]
        return [(self._fill(k), label) for k, label in segment_labels(True).items()] + [
            (mark(Mark.BUDGET, self.palette()), BUDGET)
        ]

    def _legend(self) -> list[Placed]:
        return legend_layout(self.fontMetrics(), self.width(), self._legend_entries())

    def _axis_width(self) -> int:
        return self.fontMetrics().horizontalAdvance("000.00 GiB") + 12

    def _plot(self) -> QRectF:
        fm = self.fontMetrics()
        left, top, bottom = self._axis_width(), legend_height(fm, self._legend()) + 8, 2 * fm.height() + 10
        return QRectF(left, top, max(self.width() - left - 10, 10), max(self.height() - top - bottom, 10))

    def _scale(self) -> int:
        """Bytes at the top of the plot: the NPU's DRAM, or more when a chiplet is over its DRAM."""
        b = self._breakdown
        assert b is not None
        return max(self.scale_floor, *(sum(s.nbytes for s in usage_segments(u)) for u in b.usages))

    def bars(self) -> list[_Bar]:
        """Bars and their segments in widget coordinates for the current size."""
        b = self._breakdown
        if b is None or not b.usages:
            return []
        plot, scale_bytes = self._plot(), self._scale()
        slot = plot.width() / len(b.usages)
        width = min(slot * 0.6, 90.0)
        tightest = b.tightest
        bars = []
        for i, u in enumerate(b.usages):
            x = plot.left() + slot * i + (slot - width) / 2
            y = plot.bottom()
            pieces = []
            for seg in usage_segments(u, b.budget_set):
                h = plot.height() * seg.nbytes / scale_bytes
                pieces.append((seg, QRectF(x, y - h, width, h)))
                y -= h
            budget_y = plot.bottom() - plot.height() * (u.reserve + u.budget) / scale_bytes
            rect = QRectF(x, y, width, plot.bottom() - y)
            label = bar_label(u, self._chiplets)
            if self.fontMetrics().horizontalAdvance(label) + 4 > slot:  # narrow: the chiplet alone ("c2")
                label = f"c{u.chiplet}" if self._chiplets > 1 else str(u.node)
            bars.append(_Bar(u, label, u is tightest, rect, pieces, budget_y))
        return bars

    def tooltip_at(self, pos: QPoint | QPointF) -> str:
        """Exact bytes of the segment under pos, then the whole chiplet's figures; empty off the bars."""
        p = QPointF(pos)
        for bar in self.bars():
            if bar.rect.left() <= p.x() <= bar.rect.right():
                for seg, rect in bar.pieces:
                    if rect.contains(p):
                        return seg.tooltip + "\n\n" + usage_tooltip(bar.usage, bar.tightest, self._budget_set())
                return usage_tooltip(bar.usage, bar.tightest, self._budget_set())
        return ""

    # ---- events --------------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette_text = self.palette().windowText().color()
        bars = self.bars()
        marks = self.mark_colours()
        if not bars:
            painter.setPen(palette_text)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self._message)
            return
        paint_legend(painter, self.fontMetrics(), self._legend(), palette_text)
        self._paint_axis(painter, palette_text)
        for bar in bars:
            for seg, rect in bar.pieces:
                if rect.height() <= 0:
                    continue
                painter.fillRect(rect, self._fill(seg.key))
                if seg.key == "outside":
                    painter.fillRect(rect, QBrush(HATCH, Qt.BrushStyle.BDiagPattern))
            painter.setPen(QPen(marks[Mark.TIGHTEST] if bar.tightest else palette_text, 2.5 if bar.tightest else 1))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(bar.rect)
            if self._budget_set():
                painter.setPen(QPen(marks[Mark.BUDGET], 2, Qt.PenStyle.DashLine))
                painter.drawLine(
                    QPointF(bar.rect.left() - 6, bar.budget_y), QPointF(bar.rect.right() + 6, bar.budget_y)
                )
            painter.setPen(palette_text)
            texts = self._bar_texts(bar)
            painter.drawText(texts[0][1], Qt.AlignmentFlag.AlignHCenter, bar.label)
            if bar.tightest:
                bold = QFont(self.font())
                bold.setBold(True)
                painter.setFont(bold)
                painter.setPen(marks[Mark.TIGHTEST])
                painter.drawText(texts[1][1], Qt.AlignmentFlag.AlignHCenter, texts[1][0])
                painter.setFont(self.font())

    def _bar_texts(self, bar: _Bar) -> list[tuple[str, QRectF]]:
        """The label under a bar and, under the tightest, the marker: centred, kept inside the widget."""
        fm = self.fontMetrics()
        bold = QFont(self.font())
        bold.setBold(True)
        out = []
        y = bar.rect.bottom() + 4
        for text, width in ((bar.label, fm.horizontalAdvance(bar.label)), ("▲ tightest", 0)):
            if text == "▲ tightest":
                if not bar.tightest:
                    break
                width = QFontMetrics(bold).horizontalAdvance(text)
            width += 4
            left = min(max(bar.rect.center().x() - width / 2, 0), self.width() - width)
            out.append((text, QRectF(left, y, width, fm.height())))
            y += fm.height()
        return out

    def label_rects(self) -> list[tuple[str, QRectF]]:
        """Every text the chart paints and where (for the layout checks): legend, axis, bar labels."""
        if self._breakdown is None:
            return []
        fm = self.fontMetrics()
        out = legend_label_rects(fm, self._legend())
        plot = self._plot()
        scale = self._scale()
        for value in axis_ticks(scale):
            y = plot.bottom() - plot.height() * value / max(scale, 1)
            text = format_bytes(value)
            width = fm.horizontalAdvance(text) + 2
            out.append((text, QRectF(plot.left() - 8 - width, y - fm.height() / 2, width, fm.height())))
        for bar in self.bars():
            out += self._bar_texts(bar)
        return out

    def _paint_axis(self, painter: QPainter, text: QColor) -> None:
        paint_byte_axis(self, painter, self._plot(), self._scale(), text)
