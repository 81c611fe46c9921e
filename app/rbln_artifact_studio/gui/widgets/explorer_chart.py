"""The budget explorer's chart: resolved blocks against memory_budget, zoomable down to the 2 MiB steps; clicks pick a budget."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QMouseEvent, QPainter, QPaintEvent, QWheelEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from rbln_artifact_studio.core.planning.explore import Exploration
from rbln_artifact_studio.core.sizes import MIB, format_bytes_exact
from rbln_artifact_studio.gui.widgets.chart_base import TooltipChart
from rbln_artifact_studio.gui.widgets.explorer_paint import ExplorerPainter, Frame, Scale

MIN_SPAN = 8 * MIB  # the closest zoom: four 2 MiB steps across the plot
SNAP_PX = 6.0  # a click this close to a breakpoint picks the breakpoint's budget exactly


class ExplorerChart(TooltipChart):
    """Displays an Exploration computed by rbln_artifact_studio.core.planning.explore between two budgets (the view); it maps bytes to pixels."""

    budgetPicked = Signal(object)  # a budget per NPU, in bytes (an int beyond 32 bits), picked by a click
    viewChanged = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("explorerChart")
        self.setMouseTracking(True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.exploration: Exploration | None = None
        self.view = (0, 1)
        self.picked: tuple[int, int | None] | None = None  # (budget, blocks) last picked

    def set_exploration(self, e: Exploration) -> None:
        self.exploration = e
        self.view = (0, e.available)
        self.setAccessibleDescription(f"{len(e.points)} breakpoints from 0 to {e.available:,} bytes")
        self.update()

    def set_pick(self, budget: int, blocks: int | None) -> None:
        self.picked = (budget, blocks)
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(720, 380)

    def minimumSizeHint(self) -> QSize:
        return QSize(360, 220)

    # ---- view ----------------------------------------------------------------------------------------

    def set_view(self, low: float, high: float) -> None:
        """Show budgets from low to high (clamped to the NPU, at least MIN_SPAN wide)."""
        e = self.exploration
        if e is None:
            return
        span = min(max(high - low, MIN_SPAN), e.available)
        low = min(max(low, 0), e.available - span)
        self.view = (int(low), int(low + span))
        self.viewChanged.emit()
        self.update()

    def zoom(self, factor: float, anchor: float | None = None) -> None:
        """Narrow (factor < 1) or widen the view around a budget (the centre by default)."""
        low, high = self.view
        anchor = (low + high) / 2 if anchor is None else anchor
        self.set_view(anchor - (anchor - low) * factor, anchor + (high - anchor) * factor)

    def reset_view(self) -> None:
        if self.exploration is not None:
            self.set_view(0, self.exploration.available)

    def zoom_floor_to_full(self) -> None:
        """From a little below the floor's budget to a little above the full pool's."""
        e = self.exploration
        if e is None or not e.points:
            return
        low = e.floor_budget.low if e.floor_budget else e.points[0].budget_bytes
        high = e.full_budget.low if e.full_budget else e.available
        margin = max((high - low) // 10, MIN_SPAN)
        self.set_view(low - margin, high + margin)

    # ---- geometry ------------------------------------------------------------------------------------

    def _plot(self) -> QRectF:
        fm = self.fontMetrics()
        left = fm.horizontalAdvance("00000") + 14
        return QRectF(left, fm.height() + 10, self.width() - left - 16, self.height() - 4 * fm.height() - 24)

    def _y_max(self) -> int:
        e = self.exploration
        return max(e.full, e.current, 1) if e else 1

    def scale(self) -> Scale:
        """How budgets and block counts map to pixels now (the view on the plot rectangle)."""
        low, high = self.view
        return Scale(self._plot(), low, high, self._y_max())

    def x_of(self, budget: float) -> float:
        return self.scale().x_of(budget)

    def point_pos(self, i: int) -> QPointF:
        """Where breakpoint i is drawn (the smallest budget of its step, at its count)."""
        assert self.exploration is not None
        p = self.exploration.points[i]
        scale = self.scale()
        return QPointF(scale.x_of(p.budget_bytes), scale.y_of(p.blocks))

    def pick_at(self, x: float) -> int:
        """The budget a click at x picks: a breakpoint's own budget when one is within SNAP_PX, else the x."""
        e = self.exploration
        scale = self.scale()
        if e is not None:
            near = [p for p in e.points if abs(scale.x_of(p.budget_bytes) - x) <= SNAP_PX]
            if near:
                return min(near, key=lambda p: abs(scale.x_of(p.budget_bytes) - x)).budget_bytes
        return scale.budget_at(x)

    # ---- events --------------------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        plot = self._plot()
        pos = event.position()
        if event.button() == Qt.MouseButton.LeftButton and self.exploration and plot.left() <= pos.x() <= plot.right():
            self.budgetPicked.emit(max(self.pick_at(pos.x()), 1))
            event.accept()
            return
        super().mousePressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps and self.exploration is not None:
            self.zoom(0.8**steps, self.scale().budget_at(event.position().x()))
            event.accept()

    def tooltip_at(self, pos: QPoint | QPointF) -> str:
        """The budget under the mouse (a breakpoint's own when close) and the count it resolves to."""
        e = self.exploration
        if e is None:
            return ""
        budget = self.pick_at(pos.x())
        return (
            f"{format_bytes_exact(budget)} per NPU (fraction {budget / e.available:.4f}): "
            f"{e.blocks_at(budget)} blocks. Click to resize to it."
        )

    # ---- painting ------------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        e = self.exploration
        if e is None or not e.points:
            painter.setPen(text)
            message = "Reading the curve…" if e is None else "Not even one block fits this NPU."
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, message)
            return
        frame = Frame(self.rect(), self.fontMetrics(), self.palette())
        ExplorerPainter(painter, e, self.scale(), frame, self.picked).paint(text)
