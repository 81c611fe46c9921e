"""The table's Host column beside the names and as wide as the places it shows: where each row lives reads at a
glance on a 1024-pixel screen, without scrolling the table sideways."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex
from PySide6.QtWidgets import QStyle, QTableView

from rbln_artifact_studio.gui.models.artifact_model import HOST_COLUMN, NAME_COLUMN, ArtifactTableModel

PLACE_WIDTH_MAX = 320
"""The widest the column grows by itself (a deeper root's label is elided, whole in its tooltip); at 1024 pixels
the table's share still shows the name, the place and the status."""
_PADDING = 6  # pixels beyond the text and the delegate's margins: room for the header's separator

Index = QModelIndex | QPersistentModelIndex


class PlaceColumn(QObject):
    """Puts the Host column second (after Name) and widens it to fit each place label it has not seen yet.

    It only grows: a column the user narrowed stays narrow until a new, longer place arrives."""

    def __init__(self, view: QTableView, model: ArtifactTableModel) -> None:
        super().__init__(view)
        self.view, self.model = view, model
        self._seen: set[str] = set()
        header = view.horizontalHeader()
        header.moveSection(header.visualIndex(HOST_COLUMN), header.visualIndex(NAME_COLUMN) + 1)
        model.rowsInserted.connect(self._rows_in)
        model.dataChanged.connect(self._changed)

    def _rows_in(self, _parent: Index, first: int, last: int) -> None:
        self._fit(first, last)

    def _changed(self, top_left: Index, bottom_right: Index) -> None:
        if top_left.column() <= HOST_COLUMN <= bottom_right.column():
            self._fit(top_left.row(), bottom_right.row())

    def _fit(self, first: int, last: int) -> None:
        texts = {row.texts[HOST_COLUMN] for r in range(first, last + 1) if (row := self.model.table_row(r))}
        new = texts - self._seen
        if not new:
            return
        self._seen |= new
        view = self.view
        metrics = view.fontMetrics()
        margin = 1 + view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view)
        need = max(metrics.horizontalAdvance(text) for text in new) + 2 * margin + _PADDING
        header = view.horizontalHeader()
        if header.sectionSize(HOST_COLUMN) < need:
            header.resizeSection(HOST_COLUMN, min(need, PLACE_WIDTH_MAX))
