"""Server ▸ Fleet Console: every NPU of every source at once (the connected servers, the console's own servers,
@groups and Prometheus URLs) in one sortable, filterable table with each NPU's last hour; "Where does this fit?"
across all of them, with Resize to a Copy… where a smaller count would fit.

Reading, filtering and sorting run as background jobs (gui/models/console_reading.py, console_model.py), and each
hands the window a finished result to show: it never waits on a server, nor works through 40,000 rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QObject,
    QSignalBlocker,
    Qt,
    QTimer,
    Signal,
    Slot,
)
from PySide6.QtGui import QAction, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QCompleter,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from rbln_artifact_studio.core.display.fleet_console import Column, Columns, MemoryHistory, let_go_columns
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.sizes import format_bytes
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.models.console_model import DEFAULT_SHORT, ConsoleModel
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.console_delegate import ConsoleDelegate

if TYPE_CHECKING:  # these load places/ and remote/ (pydantic with them): in the first job's worker, see below
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.planning.placement import Blocked, Placement
    from rbln_artifact_studio.gui.models.console_reading import ConsoleReader, Placed, Reading

SETTING_PERIOD = "serversView/refreshSeconds"
DEFAULT_PERIOD = 30
SERVER_TIMEOUT = 60.0  # seconds per server (remote.fleet's default, not imported: remote loads in the worker)
GIB = 1 << 30
UNSEEN_MS = 100  # how long a reading's worker waits for the rows to be painted when the table does not paint
PLACE_HEADERS = ("Node", "NPUs", "Headroom / what blocks it")
# Each column's width in characters of the table's font: the key columns (the node, Free, Memory, Last hour, Drift)
# all in view at 1920 pixels; at 1024 the node, Free, Memory and the last hour.
WIDTHS = {
    Column.NODE: 16,
    Column.NPU: 7,
    Column.PRODUCT: 11,
    Column.FREE: 11,
    Column.MEMORY: 26,
    Column.HISTORY: 16,
    Column.UTIL: 6,
    Column.TEMPERATURE: 7,
    Column.USED: 11,
    Column.TOTAL: 11,
    Column.HOLDERS: 24,
    Column.ARTIFACT: 28,
    Column.DRIFT: 18,
    Column.SOURCE: 18,
}
SEARCH_HELP = "Filter: node, product, pod, process, artifact, source; free<8GiB, free>=20G (all words must match)"


def period_setting(value: object) -> int:
    """The saved refresh period in seconds; the default for a value that is not one (an edited settings file)."""
    try:
        seconds = int(str(value))
    except ValueError:
        return DEFAULT_PERIOD
    return seconds if 0 <= seconds <= 3600 else DEFAULT_PERIOD


def _console_reader(
    timeout: float, http_config: str, prepare: Callable[[], None], model: ConsoleModel
) -> ConsoleReader:
    """The console's worker side, made in a job's worker: places/ and remote/ (pydantic with them, 0.1-0.3 s to
    import) load there, not on the GUI thread as the console opens (it may open with the window)."""
    # deferred: places/ and remote/ load in the first job's worker, not on the GUI thread (see above)
    from rbln_artifact_studio.gui.models.console_reading import ConsoleReader

    return ConsoleReader(timeout, http_config, prepare, model.keeper)


def _shown(ctx: JobContext, part: Reading | MemoryHistory, handed: list[Columns]) -> None:
    """Worker side: hand part to the window and wait until it is painted (no worker of the console competes with
    the repaint for the interpreter); then let go of what it replaced, which the window handed back."""
    ctx.partial(part, wait=True)
    let_go_columns(handed)


def _source_names(config: str) -> list[str]:
    """Worker side: what the source field offers: the ssh config's hosts, then the server groups."""
    # deferred: as _console_reader's (core/fleet/host_groups is pydantic's), in the worker reading the names
    from rbln_artifact_studio.gui.models.console_reading import source_names

    return source_names(config)


class PlacementPanel(QWidget):
    """The answer to "Where does this fit?": options best first, then what blocks each node, with Resize to a Copy…"""

    resizeCopyRequested = Signal(object, int)  # Artifact, kvcache_num_blocks
    placed = Signal(object)  # Placement: shown

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.placement: Placement | None = None
        self._artifact: Artifact | None = None
        self.title = QLabel("Select an artifact, then Where does this fit?")
        self.title.setObjectName("serversPlaceTitle")
        self.title.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("serversPlaceTree")
        self.tree.setHeaderLabels(list(PLACE_HEADERS))
        self.tree.setRootIsDecorated(False)
        self.tree.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.tree, 1)

    def show_placement(self, artifact: Artifact, placement: Placement, title: str) -> None:
        self.placement, self._artifact = placement, artifact
        self.tree.clear()
        self.title.setText(title)
        for rank, option in enumerate(placement.options, 1):
            npus = ", ".join(f"NPU {n.device.index}" for n in option.npus)
            item = QTreeWidgetItem(self.tree, [f"{rank}. {option.host}", npus, ""])
            item.setText(2, f"{format_bytes(option.headroom)} left on the tightest NPU")
            item.setData(2, Qt.ItemDataRole.UserRole, option.headroom)
        for blocked in placement.blocked:
            item = QTreeWidgetItem(self.tree, [blocked.host, "", f"{blocked.block.value}: {blocked.reason}"])
            item.setToolTip(2, blocked.reason)
            item.setForeground(2, qcolor(Tone.ERROR))
            if blocked.fits_blocks is not None:
                self.tree.setItemWidget(item, 1, self._resize_button(blocked))
        for column in range(len(PLACE_HEADERS) - 1):
            self.tree.resizeColumnToContents(column)

    def show_placed(self, artifact: Artifact, placed: Placed) -> None:
        """A worker's answer, unless the window closed while it was read."""
        if isValid(self):
            self.show_placement(artifact, placed.placement, placed.title)
            self.placed.emit(placed.placement)

    def _resize_button(self, blocked: Blocked) -> QPushButton:
        button = QPushButton(f"Resize to a Copy… ({blocked.fits_blocks} blocks)")
        button.setObjectName(f"serversResizeCopy-{blocked.host}")
        button.setToolTip(f"A copy with kvcache_num_blocks {blocked.fits_blocks} would fit on {blocked.host} now")
        count = blocked.fits_blocks or 0
        button.clicked.connect(lambda _checked=False, n=count: self._ask_resize(n))
        return button

    def _ask_resize(self, blocks: int) -> None:
        if self._artifact is not None:
            self.resizeCopyRequested.emit(self._artifact, blocks)


class SourcePicker(QWidget):
    """The console's own sources: a field offering the ssh config's hosts and the groups, Add, and a menu to remove
    them; the connected servers are listed there too (disconnected from the Server menu)."""

    changed = Signal(list)  # the console's own sources (texts), to remember
    added = Signal()  # a source was added (or added again): read them all
    refused = Signal(str)  # what the user typed is not a source: why

    def __init__(self, jobs: JobManager, connected: Callable[[], list[str]], own: list[str]) -> None:
        super().__init__()
        self.jobs, self._connected = jobs, connected
        self.own: list[str] = list(dict.fromkeys(own))
        self.edit = QComboBox()
        self.edit.setObjectName("consoleSourceEdit")
        self.edit.setEditable(True)
        self.edit.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.edit.setMinimumContentsLength(24)
        self.edit.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        line = self.edit.lineEdit()
        assert line is not None
        line.setPlaceholderText("npu1, @rack1 or http://prometheus:9090")
        self.edit.setToolTip("A server of your ssh config, a server group (@GROUP) or a Prometheus URL")
        completer = QCompleter(self.edit.model(), self.edit)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.edit.setCompleter(completer)
        self.add_button = QPushButton("&Add Source")
        self.add_button.setObjectName("consoleAddSource")
        self.button = QToolButton()
        self.button.setObjectName("consoleSources")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self)
        self.button.setMenu(self.menu)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.add_button)
        layout.addWidget(self.button)
        self.add_button.clicked.connect(self._add_typed)
        line.returnPressed.connect(self._add_typed)
        self.fill_menu()

    def texts(self) -> list[str]:
        """Every source: the connected servers, then the console's own."""
        return list(dict.fromkeys([*self._connected(), *self.own]))

    def offer(self, names: list[str]) -> None:
        """What the field offers to complete (the ssh config's hosts, the groups); what is typed stays."""
        text = self.edit.currentText()
        with QSignalBlocker(self.edit):
            self.edit.clear()
            self.edit.addItems(list(dict.fromkeys(names)))
            self.edit.setEditText(text)

    def load_names(self, ssh_config: str) -> Job:
        """Read the ssh config's hosts and the groups in a worker, then offer them."""
        job = self.jobs.submit("Hosts of the ssh config", lambda ctx: _source_names(ssh_config), visible=False)
        job.succeeded.connect(self.offer)
        return job

    @Slot()
    def _add_typed(self) -> None:
        text = self.edit.currentText().strip()
        if text:
            self.add(text)

    def add(self, text: str) -> bool:
        """Add a source the user typed (refused with the reason); read at once."""
        # deferred: places/ (pydantic with it) loads here only if the user adds a source before any reading ended
        from rbln_artifact_studio.places.fleet_sources import parse_source

        try:
            source = parse_source(text)
        except StudioError as exc:
            self.refused.emit(exc.message)
            return False
        if source.name not in self.own:
            self.own.append(source.name)
            self.changed.emit(list(self.own))
            self.fill_menu()
        self.edit.setEditText("")
        self.added.emit()
        return True

    def remove(self, text: str) -> None:
        if text in self.own:
            self.own.remove(text)
            self.changed.emit(list(self.own))
            self.fill_menu()
            self.added.emit()

    def fill_menu(self) -> None:
        self.menu.clear()
        texts = self.texts()
        self.button.setText(f"Sources ({len(texts)})")
        for text in texts:
            if text in self.own:
                action = QAction(f"Remove {text}", self.menu)
                action.triggered.connect(lambda _checked=False, t=text: self.remove(t))
            else:
                action = QAction(f"{text} (connected: Server ▸ Disconnect)", self.menu)
                action.setEnabled(False)
            self.menu.addAction(action)
        if not texts:
            empty = QAction("No source yet: type one in the field", self.menu)
            empty.setEnabled(False)
            self.menu.addAction(empty)


class WhenSeen(QObject):
    """Runs a widget's action now if someone can see the widget, else once they can: its tab made current, its
    window shown or restored from minimized."""

    def __init__(self, widget: QWidget, action: Callable[[], object]) -> None:
        super().__init__(widget)
        self.widget, self.action = widget, action
        self._missed = False  # asked while no one could see the widget: run when it shows
        self._watched: QWidget | None = None  # the window whose minimizing and restoring is watched

    @property
    def seen(self) -> bool:
        return self.widget.isVisible() and not self.widget.window().isMinimized()

    def call(self) -> None:
        if self.seen:
            self.action()
        else:
            self._missed = True

    def shown(self) -> None:
        """The widget was shown (its showEvent): watch its window's minimizing, and run what was missed."""
        window = self.widget.window()
        if window is not self._watched:  # minimizing changes no child's visibility: its window says so
            if self._watched is not None and isValid(self._watched):
                self._watched.removeEventFilter(self)
            window.installEventFilter(self)
            self._watched = window
        self._again()

    def _again(self) -> None:
        if self._missed and self.seen:
            self._missed = False
            self.action()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._watched and event.type() == QEvent.Type.WindowStateChange:
            QTimer.singleShot(0, self._again)  # once the state is the window's own (isMinimized)
        return super().eventFilter(watched, event)


class AfterPaint(QObject):
    """Calls back once the widget has painted what changed, or a short while after if it does not paint (hidden).
    A reading's worker waits for that to go on, and the next reading starts after it: no worker of the console
    competes with a repaint of the table for the interpreter."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self._widget = widget
        self._then: list[Callable[[], None]] = []  # armed while not empty
        self._after = QTimer(self)  # 0 ms, started by the paint: fires once it is done
        self._after.setSingleShot(True)
        self._after.setInterval(0)
        self._after.timeout.connect(self._done)
        self._unseen = QTimer(self)  # a hidden widget never paints
        self._unseen.setSingleShot(True)
        self._unseen.setInterval(UNSEEN_MS)
        self._unseen.timeout.connect(self._done)

    def then(self, callback: Callable[[], None]) -> None:
        if not self._then:  # watched only while armed: the widget's other events never call into Python here
            self._widget.installEventFilter(self)
        self._then.append(callback)
        self._unseen.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self._then and event.type() == QEvent.Type.Paint:
            self._after.start()
        return False

    @Slot()
    def _done(self) -> None:
        callbacks, self._then = self._then, []
        if callbacks:
            self._unseen.stop()
            self._widget.removeEventFilter(self)
            for callback in callbacks:
                callback()


class KeptSelection(QObject):
    """The table's selected rows across a model that starts over (other rows read, a filter): noted before, and
    selected again where they show after."""

    def __init__(self, table: QTableView, model: ConsoleModel) -> None:
        super().__init__(table)
        self.table, self.model = table, model
        self._rows: list[int] = []
        self._current = -1
        model.modelAboutToBeReset.connect(self._note)
        model.modelReset.connect(self._select_again)

    @Slot()
    def _note(self) -> None:
        selection = self.table.selectionModel()
        self._rows = [i.row() for i in selection.selectedRows()]
        self._current = selection.currentIndex().row()

    @Slot()
    def _select_again(self) -> None:
        moved, selected, current = self.model.moved, self._rows, self._current
        self._rows, self._current = [], -1
        if moved is None or not (selected or current >= 0):
            return
        now = [moved[r] for r in selected if r < len(moved) and moved[r] >= 0]
        selection = QItemSelection()
        last = len(Column) - 1
        for row in now:
            selection.select(self.model.index(row, 0), self.model.index(row, last))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        model = self.table.selectionModel()
        model.select(selection, flags)
        if 0 <= current < len(moved) and moved[current] >= 0:
            model.setCurrentIndex(self.model.index(moved[current], 0), QItemSelectionModel.SelectionFlag.NoUpdate)


class FleetConsole(QWidget):
    """The console: its sources, the NPU table (model in a worker), the placement answer and a state line."""

    refreshed = Signal()  # every source's reading (or reason) is shown
    placed = Signal(object)  # Placement: the answer to "Where does this fit?" is shown
    historyShown = Signal()  # the last hour of the sources that keep it (Prometheus) is drawn
    resizeCopyRequested = Signal(object, int)  # Artifact, kvcache_num_blocks: open Resize to a Copy… with it
    shortChanged = Signal(object)  # int: the user's threshold of free memory, in bytes, to remember

    def __init__(
        self,
        jobs: JobManager,
        connected: Callable[[], list[str]],
        selected: Callable[[], Artifact | None],
        sources: list[str] | None = None,
        period: int = DEFAULT_PERIOD,
        short_below: int = DEFAULT_SHORT,
        timeout: float = SERVER_TIMEOUT,
        prepare: Callable[[], None] = lambda: None,
        http_config: Callable[[], str] = lambda: "",
        parent: QWidget | None = None,
    ) -> None:
        """connected: the hosts connected by File ▸ Connect (shown with the console's own sources); prepare: called
        in each reading's worker first (the window's ssh options given to remote/); http_config: promtool's HTTP
        config file for the Prometheus sources (empty: none)."""
        super().__init__(parent)
        self.setObjectName("fleetConsole")
        self.jobs, self._connected, self._selected, self._prepare = jobs, connected, selected, prepare
        self._http_config = http_config
        self.timeout = timeout
        self.sources = SourcePicker(jobs, connected, sources or [])
        self._reading: Job | None = None
        self._handed: list[Columns] = []  # the reading worker's: what showed before, for it to let go of
        self._again = False  # asked to read while a read ran: read again when it ends
        self.when_seen = WhenSeen(self, self.refresh)  # no source is read while no one can see the console
        self.model = ConsoleModel(jobs, self)
        self.model.short_below = short_below
        self._build_controls(period, short_below)
        self._build_table()
        self._build_layout()
        self._connect()
        self._set_period(self.period.value())

    # ---- building -----------------------------------------------------------------------------------------

    def _build_controls(self, period: int, short_below: int) -> None:
        """The source field and its menu, the refresh period, the filter, the threshold and the buttons."""
        self.period = QSpinBox()
        self.period.setObjectName("serversRefreshPeriod")
        self.period.setRange(0, 3600)
        self.period.setSuffix(" s")
        self.period.setSpecialValueText("off")
        self.period.setValue(period)
        self.period.setToolTip("Read every source again this often (off: only with Refresh)")
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setObjectName("serversRefresh")
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("consoleFilter")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setPlaceholderText("Filter: node, product, pod, free<8GiB")
        self.filter_edit.setToolTip(SEARCH_HELP)
        self.short_spin = QDoubleSpinBox()
        self.short_spin.setObjectName("consoleShortFree")
        self.short_spin.setRange(0, 1024)
        self.short_spin.setDecimals(1)
        self.short_spin.setSuffix(" GiB")
        self.short_spin.setValue(short_below / GIB)
        self.short_spin.setToolTip("NPUs with less free memory than this are coloured")
        self.fit_button = QPushButton("&Where does this fit?")
        self.fit_button.setObjectName("serversWhereFits")
        self.fit_button.setToolTip("Which nodes of every source, and which NPUs, can take the selected artifact now")
        self.state = QLabel()
        self.state.setObjectName("serversState")

    def _build_table(self) -> None:
        self.table = QTableView()
        self.table.setObjectName("consoleTable")
        self.table.setModel(self.model)
        delegate = ConsoleDelegate(self.model, self.table)
        for column in (Column.MEMORY, Column.HISTORY):  # the other cells are Qt's own, painted without Python
            self.table.setItemDelegateForColumn(column, delegate)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(Column.NODE, Qt.SortOrder.AscendingOrder)
        self.after_paint = AfterPaint(self.table.viewport())
        self.kept_selection = KeptSelection(self.table, self.model)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        rows = self.table.verticalHeader()
        rows.setVisible(False)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # uniform rows: 8,000 of them lay out at once
        rows.setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        char = self.fontMetrics().averageCharWidth()
        widest_size = self.fontMetrics().horizontalAdvance("1023.99 MiB")  # digits are wider than the average
        for column, chars in WIDTHS.items():
            sized = column in (Column.FREE, Column.USED, Column.TOTAL)  # a byte count's unit is never cut
            self.table.setColumnWidth(column, max(chars * char, widest_size if sized else 0) + 12)
        self.place = PlacementPanel()

    def _build_layout(self) -> None:
        sources = QHBoxLayout()
        sources.addWidget(self.sources, 1)
        sources.addSpacing(12)
        sources.addWidget(QLabel("Refresh every"))
        sources.addWidget(self.period)
        sources.addWidget(self.refresh_button)
        view = QHBoxLayout()
        view.addWidget(self.filter_edit, 1)
        short_label = QLabel("Short of free memory below")
        short_label.setBuddy(self.short_spin)
        view.addWidget(short_label)
        view.addWidget(self.short_spin)
        view.addWidget(self.fit_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("consoleSplitter")
        split.addWidget(self.table)
        split.addWidget(self.place)
        split.setStretchFactor(0, 5)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.place.hide()  # shown with the first "Where does this fit?": until then the NPUs have the room
        layout = QVBoxLayout(self)
        layout.addLayout(sources)
        layout.addLayout(view)
        layout.addWidget(split, 1)
        layout.addWidget(self.state)

    def _connect(self) -> None:
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh_when_seen)
        self.period.valueChanged.connect(self._set_period)
        self.refresh_button.clicked.connect(self.refresh)
        self.fit_button.clicked.connect(self.where_does_it_fit)
        self.sources.added.connect(self.refresh)
        self.sources.refused.connect(self.state.setText)
        self.filter_edit.textChanged.connect(self.model.set_filter)
        self.short_spin.valueChanged.connect(self._set_short)
        self.place.resizeCopyRequested.connect(self.resizeCopyRequested)
        self.place.placed.connect(self.placed)

    # ---- the sources ----------------------------------------------------------------------------------------

    @Slot()
    def connected_changed(self) -> None:
        self.sources.fill_menu()
        self.refresh_when_seen()

    # ---- reading ----------------------------------------------------------------------------------------------

    @Slot()
    def refresh_when_seen(self) -> None:
        """Read every source now if the console is seen, else when it shows (a hidden tab or a minimized window
        asks no server): the refresh period, a server connected elsewhere, the console restored at start."""
        self.when_seen.call()

    def showEvent(self, event: QShowEvent) -> None:
        """Its tab made current (or its window shown): a read the period missed meanwhile happens now."""
        super().showEvent(event)
        self.when_seen.shown()

    @Slot(int)
    def _set_period(self, seconds: int) -> None:
        if seconds > 0:
            self.timer.start(seconds * 1000)
        else:
            self.timer.stop()

    @Slot(float)
    def _set_short(self, gib: float) -> None:
        nbytes = round(gib * GIB)
        self.model.set_short_below(nbytes)
        self.shortChanged.emit(nbytes)

    def _reader(self) -> Callable[[], ConsoleReader]:
        """How a worker reads the sources: these settings, taken now on the GUI thread."""
        timeout, http_config, prepare, model = self.timeout, self._http_config(), self._prepare, self.model
        return lambda: _console_reader(timeout, http_config, prepare, model)

    @Slot()
    def refresh(self) -> Job | None:
        """Read every source again; while the last read still runs, once more when it ends (a source just added)."""
        if self._reading is not None:
            self._again = True
            return None
        texts = self.sources.texts()  # the connected servers, then the console's own
        if not texts:
            self.state.setText("No source yet: connect to a server, or add a server, @group or Prometheus URL above.")
            self.model.set_rows([]).finished.connect(self.refreshed)
            return None
        self.state.setText(f"Reading {len(texts)} source(s)…")
        reader = self._reader()
        handed = self._handed = []  # what each part shown replaced: the worker lets go of it
        job = self.jobs.submit(
            f"NPUs of {len(texts)} source(s)",
            lambda ctx: reader().read(texts, ctx.cancel, lambda part: _shown(ctx, part, handed)),
            visible=False,
        )
        job.partial.connect(self._show)
        job.failed.connect(self._failed)
        job.finished.connect(self._read_ended)
        job.succeeded.connect(self._read_again)
        job.failed.connect(self._read_again)
        self._reading = job
        return job

    @Slot()
    def _read_ended(self) -> None:
        self._reading = None

    @Slot()
    def _read_again(self) -> None:
        """A source was added while the last read ran: read them all now (not after a cancel: the app is closing)."""
        if self._again:
            self._again = False
            QTimer.singleShot(0, self.refresh)  # after this read's `finished` has cleared it

    @Slot(object)
    def _failed(self, failure: JobFailure) -> None:
        self.state.setText(failure.reason)
        self.refreshed.emit()

    @Slot(object)
    def _show(self, part: Reading | MemoryHistory) -> None:
        """Show what the read's worker finished: the reading (its rows, arranged in a worker too, with its history,
        and its state line), then the last hour of the sources that keep their own. The worker waits until each is
        painted (`_painted`) before it goes on, and the next read starts after: none competes with the repaint."""
        if not isValid(self):
            return  # the window closed while the read ran
        if isinstance(part, MemoryHistory):
            self.model.set_history(part)
            self.after_paint.then(self._history_painted)
            return
        self.state.setText(part.state)
        arranging = self.model.set_rows(part.rows, part.history)
        arranging.finished.connect(self.refreshed)
        arranging.finished.connect(self._rows_arranged)

    @Slot()
    def _rows_arranged(self) -> None:
        self.after_paint.then(self._painted)

    @Slot()
    def _painted(self) -> None:
        """What the worker handed over is painted: it goes on, letting go of what showed before first."""
        if self._reading is not None:
            self._handed.extend(self.model.take_spent())
            self._reading.ack()

    @Slot()
    def _history_painted(self) -> None:
        self._painted()
        self.historyShown.emit()

    # ---- where does this fit --------------------------------------------------------------------------------

    @Slot()
    def where_does_it_fit(self) -> Job | None:
        artifact, texts = self._selected(), self.sources.texts()
        self.place.show()
        if artifact is None:
            self.place.title.setText("Select an artifact first: its placement is worked out on every source.")
            return None
        if not texts:
            self.place.title.setText("No source yet: connect to a server, or add a source above.")
            return None
        self.place.title.setText(f"Reading {len(texts)} source(s) for {artifact.where}…")
        reader = self._reader()
        job = self.jobs.submit(
            f"Where {artifact.where} fits", lambda ctx: reader().place(texts, artifact, ctx.cancel), visible=False
        )
        job.succeeded.connect(lambda placed, a=artifact: self.place.show_placed(a, placed))
        job.failed.connect(lambda failure: self.place.title.setText(failure.reason))
        return job
