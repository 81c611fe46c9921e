"""The fleet console's painted cells: each NPU's memory as a bar (used of total), and its last hour as a small chart."""

from __future__ import annotations

import time

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from rbln_artifact_studio.core.display.fleet_console import Column, NpuKey
from rbln_artifact_studio.gui.app.tones import Tone, qcolor, text_on
from rbln_artifact_studio.gui.models.console_model import ROW, SHORT, ConsoleModel

Index = QModelIndex | QPersistentModelIndex


class ConsoleDelegate(QStyledItemDelegate):
    """Paints the Memory and Last hour columns (set for those two: every other cell is Qt's own)."""

    def __init__(self, model: ConsoleModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        column = index.column()
        if column not in (Column.MEMORY, Column.HISTORY):
            super().paint(painter, option, index)
            return
        row = index.data(ROW)
        # The selection and hover backgrounds as Qt draws them, with no text.
        plain = QStyleOptionViewItem(option)
        self.initStyleOption(plain, index)
        plain.text = ""
        style = plain.widget.style() if plain.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, plain.widget)
        if row is None or row.used is None or not row.total:
            return
        rect = QRectF(option.rect).adjusted(3, 3, -3, -3)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        short = bool(index.data(SHORT))
        if column == Column.MEMORY:
            self._bar(painter, option, rect, row.used / row.total, row.texts[Column.MEMORY], short)
        else:
            self._history(painter, option, rect, row.key, row.total, short)
        painter.restore()

    def _bar(
        self, painter: QPainter, option: QStyleOptionViewItem, rect: QRectF, share: float, text: str, short: bool
    ) -> None:
        palette = option.palette
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(rect, 2, 2)
        filled = QRectF(rect.left(), rect.top(), rect.width() * min(max(share, 0.0), 1.0), rect.height())
        colour = qcolor(Tone.WARNING) if short else QColor(palette.color(QPalette.ColorRole.Highlight))
        colour.setAlpha(150)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(filled, 2, 2)
        metrics = option.fontMetrics
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, int(rect.width()) - 4)
        # The label in black or white where it lies on the fill (a light warning fill under light text read at
        # 1.8:1 in the dark theme), in the palette's text colour where it lies on the empty part.
        base, a = palette.color(QPalette.ColorRole.Base), colour.alphaF()
        on_fill = QColor.fromRgbF(
            a * colour.redF() + (1 - a) * base.redF(),
            a * colour.greenF() + (1 - a) * base.greenF(),
            a * colour.blueF() + (1 - a) * base.blueF(),
        )
        for part, pen in (
            (filled, text_on(on_fill)),
            (rect.adjusted(filled.width(), 0, 0, 0), palette.color(QPalette.ColorRole.Text)),
        ):
            painter.save()
            painter.setClipRect(part)
            painter.setPen(pen)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, shown)
            painter.restore()

    def _history(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        rect: QRectF,
        key: NpuKey,
        total: int,
        short: bool,
    ) -> None:
        points = self.model.history.points(key)
        grid = QColor(option.palette.color(QPalette.ColorRole.Text))
        grid.setAlpha(50)
        painter.setPen(QPen(grid, 1))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        if not points:
            return
        now = max(time.time(), points[-1][0])
        window = self.model.history.window
        path = QPainterPath()
        for i, (at, used) in enumerate(points):
            x = rect.left() + rect.width() * (1 - (now - at) / window)
            y = rect.bottom() - rect.height() * min(used / total, 1.0)
            if i == 0:
                path.moveTo(QPointF(x, y))
            else:
                path.lineTo(QPointF(x, y))
        if len(points) == 1:  # one sample: a dot, not an invisible line
            path.addEllipse(path.currentPosition(), 1.5, 1.5)
        colour = qcolor(Tone.WARNING) if short else QColor(option.palette.color(QPalette.ColorRole.Highlight))
        painter.setPen(QPen(colour, 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
