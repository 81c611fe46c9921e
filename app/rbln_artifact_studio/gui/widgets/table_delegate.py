"""Paints an artifact table cell from its row's prepared text in one Python call (Qt's delegate asks data() per role)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QPointF, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QStaticText, QTransform
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate

from rbln_artifact_studio.gui.models.artifact_model import COLUMNS, STATUS_COLOURS, STATUS_COLUMN, ArtifactTableModel
from rbln_artifact_studio.gui.widgets.viewport import viewport_of

if TYPE_CHECKING:  # built by PySide with the first painted cell, not before the window's first paint
    from PySide6.QtWidgets import QStyleOptionViewItem

_NUMERIC = tuple(c.numeric for c in COLUMNS)
_TEXT = QPalette.ColorRole.Text
TEXT_CACHE = 4096  # laid-out texts kept (a screenful is a few hundred); the cache starts over when full


class RowTextDelegate(QStyledItemDelegate):
    """Draws a plain cell's text from the row the model prepared: one Python call per cell, no data() calls.

    Qt's delegate asks the Python model once per role for every painted cell (seven calls a cell, ~1,000 a
    repaint), and each call must take the interpreter lock back from busy worker threads. Here a plain cell
    costs one call, and its text is drawn from a cached QStaticText (laid out once, not on every repaint).
    Selected, focused, hovered or disabled cells, and right-to-left layouts, go through Qt's delegate, so they
    look exactly as before; tooltips and size hints still come from data().
    """

    def __init__(self, model: ArtifactTableModel, proxy: QSortFilterProxyModel, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._model = model
        self._proxy = proxy
        self._groups: dict[
            QStyle.StateFlag, QPalette.ColorGroup | None
        ] = {}  # per option.state: text colour group or None
        self._texts: dict[str, tuple[QStaticText, float, float]] = {}  # text -> (laid out, width, height)
        self._status_colours = {status: QColor(colour) for status, colour in STATUS_COLOURS.items()}
        self._margin = -1  # the style's focus margin, asked with the first painted cell
        self._style_changed(view)
        viewport_of(view).installEventFilter(self)

    def _style_changed(self, view: QAbstractItemView) -> None:
        self._texts.clear()
        self._groups.clear()
        # The status tones of the palette in use: a theme switched to dark gets the light tones.
        self._status_colours = {status: QColor(colour) for status, colour in STATUS_COLOURS.items()}
        self._margin = -1

    def _focus_margin(self) -> int:
        view = self.parent()
        self._margin = 1
        if isinstance(view, QAbstractItemView):
            self._margin += view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view)
        return self._margin

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        changes = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.PaletteChange)
        if event.type() in changes:
            view = self.parent()
            if isinstance(view, QAbstractItemView):
                self._style_changed(view)
        return False

    def _group(self, state: QStyle.StateFlag) -> QPalette.ColorGroup | None:
        try:
            return self._groups[state]
        except KeyError:
            pass

        s = QStyle.StateFlag
        group = None  # drawn by Qt's delegate (selection, focus frame, hover, disabled look)
        if not state & (s.State_Selected | s.State_HasFocus | s.State_MouseOver) and state & s.State_Enabled:
            group = QPalette.ColorGroup.Active if state & s.State_Active else QPalette.ColorGroup.Inactive
        self._groups[state] = group
        return group

    def _laid_out(self, text: str, option: QStyleOptionViewItem) -> tuple[QStaticText, float, float]:
        if len(self._texts) >= TEXT_CACHE:
            self._texts.clear()
        static = QStaticText(text)
        static.setTextFormat(Qt.TextFormat.PlainText)
        static.prepare(QTransform(), option.font)
        size = static.size()
        entry = self._texts[text] = (static, size.width(), size.height())
        return entry

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        group = self._group(option.state)
        if option.direction == Qt.LayoutDirection.RightToLeft:
            group = None  # mirrored alignment: left to Qt's delegate
        row = None if group is None else self._model.table_row(self._proxy.mapToSource(index).row())
        if row is not None and self._model.stale and row.path in self._model.stale:
            row = None  # a row a write may have changed: Qt's delegate draws its greyed look and its marker (data())
        if row is not None and group is not None:
            column = index.column()
            text = row.texts[column]
            static, width, height = self._texts.get(text) or self._laid_out(text, option)
            rect = option.rect
            x, y, w, h = rect.x(), rect.y(), rect.width(), rect.height()
            margin = self._margin if self._margin >= 0 else self._focus_margin()
            x, w = x + margin, w - 2 * margin
            if width <= w:  # else elided, by Qt's delegate (rare)
                if column == STATUS_COLUMN:
                    painter.setPen(self._status_colours[row.status])
                else:
                    painter.setPen(option.palette.color(group, _TEXT))
                painter.drawStaticText(QPointF(x + w - width if _NUMERIC[column] else x, y + (h - height) // 2), static)
                return
        super().paint(painter, option, index)
