"""The fleet console's table model: every source's NPU rows, filtered and sorted in a worker, never on the GUI thread.

The rows are prepared (core/display/fleet_console.py); which rows show, in which order, and where each row shown
before went, is worked out by a background job (`arrangement`). The view takes the answer as it is: the same rows
in place (their figures repaint), the same rows in another order (a layout change: a selection follows its rows),
or other rows (a reset). A filter typed while one runs starts another; the older answer is dropped when it arrives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont
from shiboken6 import isValid

from rbln_artifact_studio.core.display.fleet_console import (
    HEADERS,
    NUMERIC,
    Arrangement,
    Column,
    Columns,
    ConsoleRow,
    HistoryKeeper,
    MemoryHistory,
    Query,
    Rows,
    arrangement,
    full_collections_held,
    let_go_columns,
)
from rbln_artifact_studio.core.sizes import format_bytes_exact
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager

ROW = Qt.ItemDataRole.UserRole  # the ConsoleRow
SHORT = Qt.ItemDataRole.UserRole + 1  # True: the NPU has less free memory than the user's threshold
DEFAULT_SHORT = 8 << 30  # bytes: an NPU with less free than this is coloured
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
# Roles a cell is painted with that this model never answers (as data() has it): multiData skips them.
UNANSWERED = frozenset(
    int(r) for r in (Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.CheckStateRole, Qt.ItemDataRole.BackgroundRole)
)

Index = QModelIndex | QPersistentModelIndex


class ConsoleModel(QAbstractTableModel):
    """Rows of the console; `arranged` once the filter and sort in force are applied."""

    arranged = Signal()  # the rows shown follow the current rows, filter and sort

    def __init__(self, jobs: JobManager, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.rows = Rows()
        self.shown: list[int] = []  # indices into rows, in the order shown
        self.query = Query()
        self.query_text = ""
        self.column, self.descending = Column.NODE, False
        self.short_below = DEFAULT_SHORT
        self.moved: list[int] | None = []  # the last arrangement's: where each row shown before shows now
        self.history = MemoryHistory()  # the snapshot shown
        self.keeper = HistoryKeeper()  # where the workers make the next one
        self._next_rows: Rows | None = None  # rows given, not yet arranged
        self._next_history: MemoryHistory | None = None  # the history given with them
        self._generation = 0
        self._arranging = Rows()  # the rows the newest arranging job works on
        self._job: Job | None = None
        self._spent: list[Columns] = []  # what showed before, not yet let go of
        self.cells = Cells(self)

    # ---- what shows, worked out in a worker ----------------------------------------------------------------

    @property
    def arranging(self) -> bool:
        """A filter or sort is being worked out: what shows is the previous answer."""
        return self._job is not None

    def set_rows(self, rows: Rows | Sequence[ConsoleRow], history: MemoryHistory | None = None) -> Job:
        """Show these rows once arranged, with this history if given (one repaint); until then the view keeps
        the rows it shows (rows and shown change together). The console gives Rows made in its worker; a list is
        made into Rows here."""
        self._next_rows = rows if isinstance(rows, Rows) else Rows(rows)
        if history is not None:
            self._next_history = history
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
        before, before_shown = self.rows, self.shown  # replaced, never changed: the worker reads them as they are
        if self._job is not None:
            self._job.cancel()  # its answer would be dropped anyway

        def work(ctx: JobContext) -> Arrangement:
            with full_collections_held():  # 40,000 rows' identities and places: no full pass over the heap meanwhile
                return arrangement(rows, query, column, descending, before, before_shown, ctx.checkpoint)

        job = self.jobs.submit(f"Arrange {len(rows):,} NPU rows", work, visible=False)
        # The rows wait here, not in the connection: an ended job lingers a while (JobManager's graveyard), and
        # 40,000 rows held by each of the last few made every pass of the cycle collector stall the window.
        self._arranging = rows
        job.succeeded.connect(lambda answer, g=generation: self._take(g, self._arranging, answer))
        job.finished.connect(lambda g=generation: self._ended(g))
        self._job = job
        return job

    def _take(self, generation: int, rows: Rows, answer: Arrangement) -> None:
        """Show a worker's answer as it is: no work per row here."""
        if not isValid(self):
            return  # the console closed while its job ran (the job belongs to the window's manager)
        if generation != self._generation:
            return  # a newer filter or sort is on its way
        before = self.rows
        spent = [] if before is rows else [before.columns()]
        self._next_rows = None
        self._arranging = Rows()
        if self._next_history is not None:
            spent += self._swap_history(self._next_history)  # no signal of its own: the rows' repaint shows it
            self._next_history = None
        if answer.same:  # a refresh of the same NPUs: their figures repaint, the selection stays
            self.rows, self.shown, self.moved = rows, answer.shown, answer.moved
            if self.shown:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self.shown) - 1, len(Column) - 1))
        elif answer.reordered:  # a sort, or figures that moved rows: the selection and current row follow them
            moved = answer.moved
            assert moved is not None
            self.layoutAboutToBeChanged.emit()
            kept = self.persistentIndexList()
            self.changePersistentIndexList(kept, [self.index(moved[i.row()], i.column()) for i in kept])
            self.rows, self.shown, self.moved = rows, answer.shown, moved
            self.layoutChanged.emit()
        else:  # other rows: the view starts over (FleetConsole selects again the rows still shown, by `moved`)
            self.beginResetModel()
            self.rows, self.shown, self.moved = rows, answer.shown, answer.moved
            self.endResetModel()
        self._spend(spent)
        self.arranged.emit()

    def _spend(self, spent: list[Columns]) -> None:
        """Keep what showed before (rows, a history) for a worker to let go of: freeing 40,000 rows holds the
        interpreter, so the GUI thread too, for tens of milliseconds. The console's reading worker takes it once
        the window has painted what replaced it (take_spent); what no one took by the next change goes to a job
        of its own."""
        if not spent:
            return
        if self._spent:
            untaken, self._spent = self._spent, []
            self.jobs.submit("Let go of what showed before", lambda ctx: let_go_columns(untaken), visible=False)
        self._spent = spent

    def take_spent(self) -> list[Columns]:
        """What showed before, for the caller's worker to let go of (let_go_columns)."""
        spent, self._spent = self._spent, []
        return spent

    def _ended(self, generation: int) -> None:
        if isValid(self) and generation == self._generation:
            self._job = None

    def set_short_below(self, nbytes: int) -> None:
        """Colour the NPUs with less free memory than this (the whole column repaints)."""
        self.short_below = nbytes
        if self.shown:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.shown) - 1, len(Column) - 1))

    def set_history(self, history: MemoryHistory) -> None:
        """Show this snapshot of the last hour (made in a worker) unless a newer one shows: its column repaints."""
        spent = self._swap_history(history)
        if not spent:
            return
        self._spend(spent)
        if self.shown:
            top, bottom = self.index(0, Column.HISTORY), self.index(len(self.shown) - 1, Column.HISTORY)
            self.dataChanged.emit(top, bottom)

    def _swap_history(self, history: MemoryHistory) -> list[Columns]:
        """Show this snapshot unless a newer one shows; what it replaced (none if it does not show)."""
        if history.serial <= self.history.serial:
            return []
        before, self.history = self.history, history
        return [before.columns()]

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
        return self.cells.answer(self.shown[index.row()], index.column(), role)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """Every role a cell is painted with, in one call: Qt otherwise asks one role at a time, seven calls a
        cell, and each call into Python waits its turn for the interpreter while a worker reads."""
        if not index.isValid():
            return
        i, column, texts = self.shown[index.row()], index.column(), self.rows.texts
        # A span is a sequence at run time (PySide6's stubs do not say so); read by index: iterating one ends on an
        # IndexError, slow at 500 cells a paint. Qt's spans come without data: a role with none is left alone.
        span = cast(list[QModelRoleData], [roleDataSpan] if type(roleDataSpan) is QModelRoleData else roleDataSpan)
        for n in range(len(span)):
            asked = span[n]
            role = asked.role()
            if role == DISPLAY:
                asked.setData(texts[i][column])
            elif role not in UNANSWERED:
                value = self.cells.answer(i, column, role)
                if value is not None:
                    asked.setData(value)


class Cells:
    """What a console cell answers for each role: its text, colour, font, alignment and tooltip."""

    def __init__(self, model: ConsoleModel) -> None:
        self.model = model
        self.bold = QFont()
        self.bold.setBold(True)

    def short(self, i: int) -> bool:
        free = self.model.rows.free(i)
        return free is not None and free < self.model.short_below

    def answer(self, i: int, column: int, role: int) -> object:
        """Row i's (an index into rows) data for column and role."""
        rows = self.model.rows
        if role == Qt.ItemDataRole.DisplayRole:
            return rows.texts[i][column]
        if role == ROW:
            return rows[i]
        if role == SHORT:
            return self.short(i)
        if role == Qt.ItemDataRole.ForegroundRole:
            if rows.error[i]:
                return qcolor(Tone.ERROR) if column == Column.HOLDERS else None
            if column in (Column.FREE, Column.NODE, Column.NPU) and self.short(i):
                return qcolor(Tone.WARNING)
            if column == Column.DRIFT and rows.flagged[i]:
                return qcolor(Tone.WARNING)
            return None
        if role == Qt.ItemDataRole.FontRole:
            return self.bold if column == Column.FREE and self.short(i) else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return RIGHT if column in NUMERIC else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(rows[i], Column(column))
        return None

    def tooltip(self, row: ConsoleRow, column: Column) -> str | None:
        if row.error:
            return f"{row.node} ({row.source}): {row.error}"
        if column == Column.FREE and row.free is not None:
            short = " — short of free memory" if self.model.is_short(row) else ""
            return f"{format_bytes_exact(row.free)} free{short}"
        if column == Column.USED and row.used is not None:
            return format_bytes_exact(row.used)
        if column == Column.TOTAL and row.total is not None:
            return format_bytes_exact(row.total)
        if column == Column.HISTORY:
            peak = self.model.history.peak(row.key)
            return None if peak is None else f"Peak used over the last hour: {format_bytes_exact(peak)}"
        text = row.texts[column]
        return text or None
