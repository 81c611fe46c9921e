"""The fleet console's table model: every source's NPU rows, filtered and sorted in a worker, never on the GUI thread.

The rows are prepared (core/display/fleet_console.py); which rows show, and in which order, is worked out by a
background job (`arrange`), and the view takes the answer in one reset. A filter typed while one runs starts
another; the older answer is dropped when it arrives.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont
from shiboken6 import isValid

from rbln_artifact_studio.core.display.fleet_console import (
    HEADERS,
    NUMERIC,
    Column,
    ConsoleRow,
    MemoryHistory,
    Query,
    arrange,
)
from rbln_artifact_studio.core.sizes import format_bytes_exact
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager

ROW = Qt.ItemDataRole.UserRole  # the ConsoleRow
SHORT = Qt.ItemDataRole.UserRole + 1  # True: the NPU has less free memory than the user's threshold
DEFAULT_SHORT = 8 << 30  # bytes: an NPU with less free than this is coloured

Index = QModelIndex | QPersistentModelIndex


class ConsoleModel(QAbstractTableModel):
    """Rows of the console; `arranged` once the filter and sort in force are applied."""

    arranged = Signal()  # the rows shown follow the current rows, filter and sort

    def __init__(self, jobs: JobManager, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.rows: list[ConsoleRow] = []
        self.shown: list[int] = []  # indices into rows, in the order shown
        self.query = Query()
        self.query_text = ""
        self.column, self.descending = Column.NODE, False
        self.short_below = DEFAULT_SHORT
        self.history = MemoryHistory()
        self._next_rows: list[ConsoleRow] | None = None  # rows given, not yet arranged
        self._generation = 0
        self._arranging: list[ConsoleRow] = []  # the rows the newest arranging job works on
        self._job: Job | None = None
        self._bold = QFont()
        self._bold.setBold(True)

    # ---- what shows, worked out in a worker ----------------------------------------------------------------

    @property
    def arranging(self) -> bool:
        """A filter or sort is being worked out: what shows is the previous answer."""
        return self._job is not None

    def set_rows(self, rows: Sequence[ConsoleRow]) -> Job:
        """Show these rows once arranged; until then the view keeps the rows it shows (rows and shown change
        together, in one reset)."""
        self._next_rows = list(rows)
        return self._arrange()

    def set_filter(self, text: str) -> Job:
        self.query_text = text
        self.query = Query.parse(text)
        return self._arrange()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.column, self.descending = Column(column), order == Qt.SortOrder.DescendingOrder
        self._arrange()

    def _arrange(self) -> Job:
        self._generation += 1
        generation = self._generation
        rows = self._next_rows if self._next_rows is not None else self.rows
        query, column, descending = self.query, self.column, self.descending
        if self._job is not None:
            self._job.cancel()  # its answer would be dropped anyway

        def work(ctx: JobContext) -> list[int]:
            return arrange(rows, query, column, descending, ctx.checkpoint)

        job = self.jobs.submit(f"Arrange {len(rows):,} NPU rows", work, visible=False)
        # The rows wait here, not in the connection: an ended job lingers a while (JobManager's graveyard), and
        # 40,000 rows held by each of the last few made every pass of the cycle collector stall the window.
        self._arranging = rows
        job.succeeded.connect(lambda shown, g=generation: self._take(g, self._arranging, shown))
        job.finished.connect(lambda g=generation: self._ended(g))
        self._job = job
        return job

    def _take(self, generation: int, rows: list[ConsoleRow], shown: list[int]) -> None:
        if not isValid(self):
            return  # the console closed while its job ran (the job belongs to the window's manager)
        if generation != self._generation:
            return  # a newer filter or sort is on its way
        self.beginResetModel()
        self.rows, self.shown = rows, shown
        self._next_rows = None
        self._arranging = []
        self.endResetModel()
        self.arranged.emit()

    def _ended(self, generation: int) -> None:
        if isValid(self) and generation == self._generation:
            self._job = None

    def set_short_below(self, nbytes: int) -> None:
        """Colour the NPUs with less free memory than this (the whole column repaints)."""
        self.short_below = nbytes
        if self.shown:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.shown) - 1, len(Column) - 1))

    def history_changed(self) -> None:
        if self.shown:
            top, bottom = self.index(0, Column.HISTORY), self.index(len(self.shown) - 1, Column.HISTORY)
            self.dataChanged.emit(top, bottom)

    # ---- Qt's model ------------------------------------------------------------------------------------------

    def row_at(self, row: int) -> ConsoleRow:
        return self.rows[self.shown[row]]

    def is_short(self, row: ConsoleRow) -> bool:
        free = row.free
        return free is not None and free < self.short_below

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.shown)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[Column(section)]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row = self.row_at(index.row())
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return row.texts[column]
        if role == ROW:
            return row
        if role == SHORT:
            return self.is_short(row)
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.error:
                return qcolor(Tone.ERROR) if column == Column.HOLDERS else None
            if column in (Column.FREE, Column.NODE, Column.NPU) and self.is_short(row):
                return qcolor(Tone.WARNING)
            if column == Column.DRIFT and row.flagged:
                return qcolor(Tone.WARNING)
            return None
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if column == Column.FREE and self.is_short(row) else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column in NUMERIC:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, Column(column))
        return None

    def _tooltip(self, row: ConsoleRow, column: Column) -> str | None:
        if row.error:
            return f"{row.node} ({row.source}): {row.error}"
        if column == Column.FREE and row.free is not None:
            short = " — short of free memory" if self.is_short(row) else ""
            return f"{format_bytes_exact(row.free)} free{short}"
        if column == Column.USED and row.used is not None:
            return format_bytes_exact(row.used)
        if column == Column.TOTAL and row.total is not None:
            return format_bytes_exact(row.total)
        if column == Column.HISTORY:
            peak = self.history.peak(row.key)
            return None if peak is None else f"Peak used over the last hour: {format_bytes_exact(peak)}"
        text = row.texts[column]
        return text or None
