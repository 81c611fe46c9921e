"""The artifact table with its filter line: a sort/filter proxy over ArtifactTableModel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLineEdit, QTableView, QVBoxLayout, QWidget

from rbln_artifact_studio.core.display.matching import folded
from rbln_artifact_studio.gui.artifact_model import COLUMNS, PATH_ROLE, SEARCH_ROLE, ArtifactTableModel
from rbln_artifact_studio.gui.table_delegate import RowTextDelegate

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary


class FilterProxy(QSortFilterProxyModel):
    """Filters rows; sorting is handed to the source model, which keeps its rows in order itself."""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)


class ArtifactBrowser(QWidget):
    """Emits the path of the artifact that becomes current (or '' when none)."""

    currentPathChanged = Signal(str)
    painted = Signal()  # the table finished a repaint (the scan job hands over its next batch after it)

    def __init__(self, model: ArtifactTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self._current = ""
        self._hidden_current = ""  # the artifact the filter hid while it was current: selected again once shown
        self._hidden_selection: list[str] = []  # and the rows selected with it (two for Compare, more to Plan)
        self._filtering = False
        self.filter_edit = self._build_filter()
        self.proxy = self._build_proxy(model)
        self.view = self._build_view(model)
        self._after_paint = self._watch_paints()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.view)
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        self.view.selectionModel().selectionChanged.connect(self._check_current)
        self.proxy.rowsRemoved.connect(self._check_current)
        self.proxy.modelReset.connect(self._check_current)

    # ---- construction, step by step -----------------------------------------------------------------

    def _build_filter(self) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName("artifactFilter")
        edit.setPlaceholderText("Filter by name, host, model, NPU, attention or status")
        edit.setClearButtonEnabled(True)
        return edit

    def _build_proxy(self, model: ArtifactTableModel) -> FilterProxy:
        proxy = FilterProxy(self)
        proxy.setSourceModel(model)
        proxy.setFilterRole(SEARCH_ROLE)
        proxy.setFilterKeyColumn(0)
        # Both sides are folded by core/display/matching.py (str.casefold): Qt's own case-insensitive compare folds
        # one character at a time and misses İ -> i (a Turkish capital), so the proxy compares folded text exactly.
        proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseSensitive)
        proxy.setDynamicSortFilter(True)
        return proxy

    def _build_view(self, model: ArtifactTableModel) -> QTableView:
        view = QTableView()
        view.setObjectName("artifactTable")
        view.setModel(self.proxy)
        view.setItemDelegate(RowTextDelegate(model, self.proxy, view))  # one Python call per painted cell
        view.setSortingEnabled(True)
        view.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)  # several for the planner
        view.setAlternatingRowColors(True)
        view.setWordWrap(False)
        view.verticalHeader().setVisible(False)
        view.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionsMovable(True)  # the main window saves the order and widths with its other state
        header.setStretchLastSection(True)
        for column, c in enumerate(COLUMNS):  # wide enough for the title and the sort arrow
            header.resizeSection(column, max(c.width, header.sectionSizeHint(column)))
        return view

    def _watch_paints(self) -> QTimer:
        """A timer that fires once the paint that started it is done (painted); it dies with the browser."""
        timer = QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(0)
        timer.timeout.connect(self._painted)
        self.view.viewport().installEventFilter(self)
        return timer

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self._after_paint.start()
        return False

    @Slot()
    def _painted(self) -> None:
        self.painted.emit()

    # ---- the table's rows and selection --------------------------------------------------------------

    @Slot()
    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def current_path(self) -> str:
        return self._current

    def selected_paths(self) -> list[str]:
        """The selected artifacts' folders, in the table's order."""
        rows = sorted(self.view.selectionModel().selectedRows(), key=lambda index: index.row())
        return [index.data(PATH_ROLE) for index in rows]

    def shown_summaries(self) -> list[ArtifactSummary]:
        """The rows the filter lets through, in the table's order (what Export saves)."""
        rows = (self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount()))
        return [self.model.summary(r) for r in rows]

    def select_path(self, path: str) -> bool:
        """Make the artifact at path current (if it is shown); True when it is."""
        return self._select(path, [])

    def _shown_index(self, path: str) -> QModelIndex:
        """The view's index of the artifact's row (invalid when the table has no row for it or the filter hides it)."""
        row = self.model.row_of(path)
        return QModelIndex() if row is None else self.proxy.mapFromSource(self.model.index(row, 0))

    def _select(self, current: str, others: list[str]) -> bool:
        """Select current and those of others that are shown, current made current and scrolled into view; False
        (nothing changed) when current is not shown."""
        index = self._shown_index(current)
        if not index.isValid():
            return False
        rows = QItemSelection()
        for path in others:
            shown = self._shown_index(path)
            if shown.isValid():
                rows.select(shown, shown)
        rows.select(index, index)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        selection = self.view.selectionModel()
        selection.select(rows, flags)
        selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.view.scrollTo(index)
        return True

    @Slot(QModelIndex, QModelIndex)
    def _on_current(self, _current: QModelIndex, _previous: QModelIndex) -> None:
        self._check_current()

    @Slot()
    def _check_current(self) -> None:
        self._set_current(self._chosen())

    def _chosen(self) -> str:
        """The artifact the details and the one-artifact actions are for: the current row while it is selected, else
        the one selected row; '' when there is none. A row Ctrl+clicked off stays Qt's current but is not chosen."""
        selection = self.view.selectionModel()
        index = selection.currentIndex()
        if index.isValid() and selection.isRowSelected(index.row(), index.parent()):
            return index.data(PATH_ROLE) or ""
        rows = selection.selectedRows()
        return (rows[0].data(PATH_ROLE) or "") if len(rows) == 1 else ""

    @Slot(str)
    def _apply_filter(self, text: str) -> None:
        """Filter, keeping the current artifact and the others selected with it while the current one matches (and
        taking them back once it matches again); the details never jump to the neighbour Qt would make current."""
        wanted = self._current or self._hidden_current
        chosen = self.selected_paths() if self._current else self._hidden_selection
        self._filtering = True
        try:
            self.proxy.setFilterFixedString(folded(text))
        finally:
            self._filtering = False
        if wanted and self._select(wanted, chosen):
            self._hidden_current, self._hidden_selection = "", []
            return
        self._hidden_current, self._hidden_selection = wanted, chosen
        self.view.selectionModel().clear()
        self._set_current("")

    def _set_current(self, path: str) -> None:
        if self._filtering:
            return  # decided once the filter is applied
        if path != self._current:
            if path:  # the user chose another artifact
                self._hidden_current, self._hidden_selection = "", []
            self._current = path
            self.currentPathChanged.emit(path)
