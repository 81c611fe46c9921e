"""The artifact table with its filter line: a sort/filter proxy over ArtifactTableModel."""

from __future__ import annotations

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
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS, PATH_ROLE, SEARCH_ROLE, ArtifactTableModel
from rbln_artifact_studio.gui.models.table_rows import TableRow
from rbln_artifact_studio.gui.widgets.table_delegate import RowTextDelegate
from rbln_artifact_studio.gui.widgets.viewport import viewport_of
from rbln_artifact_studio.gui.window.place_column import PlaceColumn


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
        self._leaving: tuple[str, list[str]] | None = None  # the chosen row, and the selection, as its row leaves
        self.filter_edit = self._build_filter()
        self.proxy = self._build_proxy(model)
        self.view = self._build_view(model)
        self.places = PlaceColumn(self.view, model)  # the Host column beside the names, wide enough for its places
        self._after_paint = self._watch_paints()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.view)
        self.filter_edit.textChanged.connect(self._apply_filter)
        self.view.selectionModel().currentRowChanged.connect(self._check_current)
        self.view.selectionModel().selectionChanged.connect(self._check_current)
        self.proxy.rowsRemoved.connect(self._on_rows_left)
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
        # Before the view's selection model connects (it moves the current row to a neighbour): the chosen row is
        # seen as it leaves.
        proxy.rowsAboutToBeRemoved.connect(self._on_rows_leaving)
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
        timer.timeout.connect(self.painted)
        viewport_of(self.view).installEventFilter(self)
        return timer

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self._after_paint.start()
        return False

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

    def shown_rows(self) -> list[TableRow]:
        """The rows the filter lets through, in the table's order, with their cells as shown (what Export saves)."""
        rows = (self.proxy.mapToSource(self.proxy.index(r, 0)).row() for r in range(self.proxy.rowCount()))
        return [row for r in rows if (row := self.model.table_row(r)) is not None]

    def shown_summaries(self) -> list[ArtifactSummary]:
        """The rows the filter lets through, in the table's order."""
        return [row.summary for row in self.shown_rows()]

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

    @Slot()
    def _check_current(self) -> None:
        if not self._filtering:  # decided once the filter is applied
            self._set_current(self._chosen())

    @Slot(QModelIndex, int, int)
    def _on_rows_leaving(self, _parent: QModelIndex, first: int, last: int) -> None:
        row = self._shown_index(self._current).row() if self._current and not self._filtering else -1
        if first <= row <= last:
            self._leaving = (self._current, self.selected_paths())

    @Slot()
    def _on_rows_left(self) -> None:
        """A chosen row the filter let go as its data changed (a check ended, a resize on disk) is kept as one the
        filter hid: selected again once the filter matches it, as after typing. A row deleted is let go."""
        leaving, self._leaving = self._leaving, None
        self._check_current()
        if leaving is not None and not self._current:
            row = self.model.row_of(leaving[0])  # the model's index is renumbered after its removals: check the path
            kept = self.model.table_row(row) if row is not None else None
            if kept is not None and kept.path == leaving[0]:
                self._hidden_current, self._hidden_selection = leaving

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
