"""Server ▸ Servers View: every connected server's NPUs (used / free), their processes, the artifacts they serve and
the drift against the artifacts' prediction, refreshed on the user's period; "Where does this fit?" for the
selected artifact, with Resize to a Copy… where a smaller count would fit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.gui.app.tones import Tone, qcolor
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager

if TYPE_CHECKING:  # remote/ and the planners load with the first refresh, in its worker
    from rbln_artifact_studio.core.fleet.artifact import Artifact
    from rbln_artifact_studio.core.planning.placement import Blocked, Placement
    from rbln_artifact_studio.remote.fleet import ServerReading

SETTING_PERIOD = "serversView/refreshSeconds"
DEFAULT_PERIOD = 30
SERVER_TIMEOUT = 60.0  # seconds per server (remote.fleet's default, not imported: remote loads in the worker)
BYTES = Qt.ItemDataRole.UserRole  # each size cell keeps its exact bytes: what the CLI's JSON says
SERVER_HEADERS = ("Server / NPU / process", "Name", "Used", "Free", "Total", "Memory", "Artifact", "Predicted", "Drift")
PLACE_HEADERS = ("Server", "NPUs", "Headroom / what blocks it")


NAME_COLUMN_CHARS = 22  # the Name column's widest: an NPU's name or a process's, a server's error elided
ARTIFACT_COLUMN_CHARS = 30  # an artifact's URL, elided (whole in its tooltip)


def period_setting(value: object) -> int:
    """The saved refresh period in seconds; the default for a value that is not one (an edited settings file)."""
    try:
        seconds = int(str(value))
    except ValueError:
        return DEFAULT_PERIOD
    return seconds if 0 <= seconds <= 3600 else DEFAULT_PERIOD


def _read(hosts: list[str], timeout: float, ctx: JobContext) -> list[ServerReading]:
    from rbln_artifact_studio.remote.fleet import read_fleet

    return read_fleet(hosts, timeout, cancel=ctx.cancel)


def _place(hosts: list[str], artifact: Artifact, timeout: float, ctx: JobContext) -> Placement:
    from rbln_artifact_studio.core.planning.placement import place
    from rbln_artifact_studio.remote.fleet import read_fleet

    readings = read_fleet(hosts, timeout, with_drift=False, cancel=ctx.cancel)
    statuses = [r.status for r in readings if r.status is not None]
    failures = {r.host: r.error or "not read" for r in readings if r.status is None}
    return place(artifact, statuses, failures, label=str(artifact.path))


def _size(item: QTreeWidgetItem, column: int, nbytes: int | None) -> None:
    if nbytes is None:
        item.setText(column, "unknown")
        return
    item.setText(column, format_bytes(nbytes))
    item.setData(column, BYTES, nbytes)
    item.setToolTip(column, format_bytes_exact(nbytes))


class ServersView(QWidget):
    """The servers' tree and the placement answer; reads run as background jobs, never on the GUI thread."""

    refreshed = Signal()  # every server's reading (or reason) is shown
    placed = Signal(object)  # Placement: the answer to "Where does this fit?" is shown
    resizeCopyRequested = Signal(object, int)  # Artifact, kvcache_num_blocks: open Resize to a Copy… with it

    def __init__(
        self,
        jobs: JobManager,
        hosts: Callable[[], list[str]],
        selected: Callable[[], Artifact | None],
        period: int = DEFAULT_PERIOD,
        parent: QWidget | None = None,
        timeout: float = SERVER_TIMEOUT,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("serversView")
        self.jobs, self._hosts, self._selected = jobs, hosts, selected
        self.timeout = timeout  # per server, as the CLI's --timeout
        self.readings: list[ServerReading] = []
        self.placement: Placement | None = None
        self._placed_artifact: Artifact | None = None
        self._reading: Job | None = None
        self._collapsed: set[str] = set()  # servers the user folded: kept folded across refreshes
        self._showing = False
        self._build_controls(period)
        self._build_trees()
        self._build_layout()
        self._connect()
        self._set_period(self.period.value())

    # ---- building -----------------------------------------------------------------------------------------------

    def _build_controls(self, period: int) -> None:
        """The refresh period, Refresh, Where does this fit? and the state line."""
        self.period = QSpinBox()
        self.period.setObjectName("serversRefreshPeriod")
        self.period.setRange(0, 3600)
        self.period.setSuffix(" s")
        self.period.setSpecialValueText("off")
        self.period.setValue(period)
        self.period.setToolTip("Read every connected server again this often (off: only with Refresh)")
        self.refresh_button = QPushButton("&Refresh")
        self.refresh_button.setObjectName("serversRefresh")
        self.fit_button = QPushButton("&Where does this fit?")
        self.fit_button.setObjectName("serversWhereFits")
        self.fit_button.setToolTip("Which connected servers and NPUs can take the selected artifact now")
        self.state = QLabel()
        self.state.setObjectName("serversState")

    def _build_trees(self) -> None:
        """The servers' tree and, below it, the placement answer with its title."""
        self.tree = QTreeWidget()
        self.tree.setObjectName("serversTree")
        self.tree.setHeaderLabels(list(SERVER_HEADERS))
        self.place_title = QLabel("Select an artifact, then Where does this fit?")
        self.place_title.setObjectName("serversPlaceTitle")
        self.place_title.setWordWrap(True)
        self.place_tree = QTreeWidget()
        self.place_tree.setObjectName("serversPlaceTree")
        self.place_tree.setHeaderLabels(list(PLACE_HEADERS))
        self.place_tree.setRootIsDecorated(False)
        self.place_tree.setWordWrap(True)

    def _build_layout(self) -> None:
        """The controls in a bar on top, the two trees split below, the state line at the bottom."""
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Refresh every"))
        bar.addWidget(self.period)
        bar.addWidget(self.refresh_button)
        bar.addStretch(1)
        bar.addWidget(self.fit_button)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.place_title)
        lower_layout.addWidget(self.place_tree, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(lower)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        layout.addWidget(self.state)

    def _connect(self) -> None:
        """The refresh timer and what each control does."""
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.refresh)
        self.period.valueChanged.connect(self._set_period)
        self.refresh_button.clicked.connect(self.refresh)
        self.fit_button.clicked.connect(self.where_does_it_fit)
        self.tree.itemCollapsed.connect(lambda item: self._fold(item, True))
        self.tree.itemExpanded.connect(lambda item: self._fold(item, False))

    # ---- the servers ------------------------------------------------------------------------------------------

    def _fold(self, item: QTreeWidgetItem, folded: bool) -> None:
        if self._showing or item.parent() is not None:
            return
        (self._collapsed.add if folded else self._collapsed.discard)(item.text(0))

    @Slot(int)
    def _set_period(self, seconds: int) -> None:
        if seconds > 0:
            self.timer.start(seconds * 1000)
        else:
            self.timer.stop()

    @Slot()
    def refresh(self) -> Job | None:
        """Read every connected server again (not while the last read is still running)."""
        if self._reading is not None:
            return None
        hosts = self._hosts()
        if not hosts:
            self.readings = []
            self.tree.clear()
            QTreeWidgetItem(self.tree, ["No server is connected: File ▸ Connect to Server…"])
            self.state.setText("")
            self.refreshed.emit()
            return None
        self.state.setText(f"Reading {len(hosts)} server(s)…")
        job = self.jobs.submit(
            f"NPUs of {len(hosts)} server(s)", lambda ctx: _read(hosts, self.timeout, ctx), visible=False
        )
        job.succeeded.connect(self._show)
        job.failed.connect(self._failed)
        job.finished.connect(self._read_ended)
        self._reading = job
        return job

    @Slot()
    def _read_ended(self) -> None:
        self._reading = None

    @Slot(object)
    def _failed(self, failure: JobFailure) -> None:
        self.state.setText(failure.reason)
        self.refreshed.emit()

    @Slot(object)
    def _show(self, readings: list[ServerReading]) -> None:
        self.readings = readings
        self._showing = True  # clear() and the new rows' expansion are not the user's
        self.tree.clear()
        for reading in readings:
            self._add_server(reading, reading.host not in self._collapsed)
        self._showing = False
        for column in range(len(SERVER_HEADERS)):
            self.tree.resizeColumnToContents(column)
        # A server's error sits in the Name column: sized to it, the column pushed the NPUs' bars and drift out of
        # view. Capped, the error is elided (its tooltip holds it whole) and every column shows.
        metrics = self.tree.fontMetrics()
        self.tree.setColumnWidth(1, min(self.tree.columnWidth(1), metrics.horizontalAdvance("x" * NAME_COLUMN_CHARS)))
        # The Memory column holds only bars (item widgets, which resizeColumnToContents does not see): wide enough
        # for the words on them. The Artifact column's URLs are elided too, whole in their tooltips.
        self.tree.setColumnWidth(5, metrics.horizontalAdvance("888.88 GiB used, 888.88 GiB free") + 24)
        self.tree.setColumnWidth(
            6, min(self.tree.columnWidth(6), metrics.horizontalAdvance("x" * ARTIFACT_COLUMN_CHARS))
        )
        failed = sum(r.status is None for r in readings)
        flagged = sum(d.flagged for r in readings for d in r.drifts)
        self.state.setText(
            f"{len(readings)} server(s), {failed} not read, {flagged} context(s) past their drift threshold"
        )
        self.refreshed.emit()

    def _add_server(self, reading: ServerReading, expand: bool) -> None:
        top = QTreeWidgetItem(self.tree, [reading.host])
        if reading.status is None:
            top.setText(1, reading.error or "not read")
            top.setToolTip(1, reading.error or "")
            top.setForeground(1, qcolor(Tone.ERROR))
            return
        status = reading.status
        top.setText(1, f"{len(status.devices)} NPU(s), {status.tool} ({status.form.value})")
        drift_of = {(d.npu, d.pid): d for d in reading.drifts}
        for device in status.devices:
            npu = QTreeWidgetItem(top, [f"NPU {device.index} ({device.device})", device.name])
            _size(npu, 2, device.used)
            _size(npu, 3, device.free)
            _size(npu, 4, device.total)
            npu.setData(0, BYTES, device.index)
            bar = QProgressBar()
            bar.setObjectName(f"serversBar-{reading.host}-{device.index}")
            bar.setRange(0, 1000)
            bar.setValue(round(1000 * device.used / device.total) if device.total else 0)
            bar.setFormat(f"{format_bytes(device.used)} used, {format_bytes(device.free)} free")
            self.tree.setItemWidget(npu, 5, bar)
            for process in device.processes:
                drift = drift_of.get((device.index, process.pid))
                row = QTreeWidgetItem(npu, [f"pid {process.pid}", process.name])
                row.setData(0, BYTES, process.pid)
                _size(row, 2, process.memory)
                if drift is None:
                    continue
                row.setText(6, drift.artifact or "unknown")
                row.setToolTip(6, drift.artifact or drift.reason or "")
                _size(row, 7, drift.predicted)
                if drift.difference is None or drift.percent is None:
                    row.setText(8, "unknown")
                    row.setToolTip(8, drift.reason)
                    continue
                row.setText(8, f"{format_bytes(drift.difference)} ({drift.percent:+.1f}%)")
                row.setData(8, BYTES, drift.difference)
                row.setToolTip(
                    8, f"{drift.difference:+,} bytes against the prediction; flagged past {drift.threshold:g}%"
                )
                if drift.flagged:
                    row.setForeground(8, qcolor(Tone.WARNING))
        top.setExpanded(expand)
        for child in (top.child(i) for i in range(top.childCount())):
            if child is not None:
                child.setExpanded(True)

    # ---- where does this fit ------------------------------------------------------------------------------------

    @Slot()
    def where_does_it_fit(self) -> Job | None:
        artifact, hosts = self._selected(), self._hosts()
        if artifact is None:
            self.place_title.setText("Select an artifact first: its placement is worked out on the connected servers.")
            return None
        if not hosts:
            self.place_title.setText("No server is connected: File ▸ Connect to Server…")
            return None
        self.place_title.setText(f"Reading {len(hosts)} server(s) for {artifact.name}…")
        job = self.jobs.submit(
            f"Where {artifact.name} fits", lambda ctx: _place(hosts, artifact, self.timeout, ctx), visible=False
        )
        job.succeeded.connect(lambda placement, a=artifact: self._show_placement(a, placement))
        job.failed.connect(lambda failure: self.place_title.setText(failure.reason))
        return job

    def _show_placement(self, artifact: Artifact, placement: Placement) -> None:
        from rbln_artifact_studio.core.planning.placement import placement_text

        self.placement, self._placed_artifact = placement, artifact
        self.place_tree.clear()
        self.place_title.setText(placement_text(placement).splitlines()[0])
        for rank, option in enumerate(placement.options, 1):
            npus = ", ".join(f"NPU {n.device.index}" for n in option.npus)
            item = QTreeWidgetItem(self.place_tree, [f"{rank}. {option.host}", npus, ""])
            _size(item, 2, option.headroom)
            item.setText(2, f"{format_bytes(option.headroom)} left on the tightest NPU")
        for blocked in placement.blocked:
            item = QTreeWidgetItem(self.place_tree, [blocked.host, "", f"{blocked.block.value}: {blocked.reason}"])
            item.setToolTip(2, blocked.reason)
            item.setForeground(2, qcolor(Tone.ERROR))
            if blocked.fits_blocks is not None:
                self.place_tree.setItemWidget(item, 1, self._resize_button(blocked))
        for column in range(len(PLACE_HEADERS) - 1):
            self.place_tree.resizeColumnToContents(column)
        self.placed.emit(placement)

    def _resize_button(self, blocked: Blocked) -> QPushButton:
        button = QPushButton(f"Resize to a Copy… ({blocked.fits_blocks} blocks)")
        button.setObjectName(f"serversResizeCopy-{blocked.host}")
        button.setToolTip(f"A copy with kvcache_num_blocks {blocked.fits_blocks} would fit on {blocked.host} now")
        count = blocked.fits_blocks or 0
        button.clicked.connect(lambda _checked=False, n=count: self._ask_resize(n))
        return button

    def _ask_resize(self, blocks: int) -> None:
        if self._placed_artifact is not None:
            self.resizeCopyRequested.emit(self._placed_artifact, blocks)


class ServersDock(QDockWidget):
    """The view in a dock of the main window."""

    def __init__(self, view: ServersView, parent: QWidget | None = None) -> None:
        super().__init__("Servers", parent)
        self.setObjectName("serversDock")
        self.view = view
        self.setWidget(view)
