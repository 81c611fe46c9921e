"""Server ▸ NPU Devices…: each connected server's NPUs now (rbln-smi): memory used, total, free, processes."""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.gui.models.jobs import JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.screen_fit import resize_to_fit
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.devices import DeviceStatus, read_devices
from rbln_artifact_studio.remote.server import Server


def _read(server: Server, ctx: JobContext) -> DeviceStatus:
    return read_devices(server, ctx.cancel)


HEADERS = ("Server / NPU", "Name", "Used", "Total", "Free", "Processes")


class DevicesDialog(QDialog):
    """One top-level row per server, one child per NPU; Refresh reads them all again."""

    loaded = Signal(str)  # a server's devices (or why there are none) are shown

    def __init__(self, jobs: JobManager, hosts: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("devicesDialog")
        self.setWindowTitle("NPU Devices")
        self.jobs, self.hosts = jobs, list(hosts)
        self.tree = QTreeWidget()
        self.tree.setObjectName("devicesTree")
        self.tree.setHeaderLabels(list(HEADERS))
        self.tree.setRootIsDecorated(True)
        note = QLabel(
            "Used and total as the driver's tool reports them: exact bytes from its JSON (rbln-stat -j), to 0.1 GiB "
            "from its text table; total is the DRAM available after the system reserve."
        )
        note.setWordWrap(True)
        refresh = QPushButton("&Refresh")
        refresh.setObjectName("devicesRefresh")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(refresh, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        refresh.clicked.connect(self.refresh)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addWidget(note)
        layout.addWidget(buttons)
        resize_to_fit(self, 820, 360)
        self.refresh()

    @Slot()
    def refresh(self) -> None:
        self.tree.clear()
        if not self.hosts:
            QTreeWidgetItem(self.tree, ["No server is connected: File ▸ Connect to Server…"])
        for host in self.hosts:
            item = QTreeWidgetItem(self.tree, [host, "reading…"])
            item.setData(0, Qt.ItemDataRole.UserRole, host)
            job = self.jobs.submit(f"NPUs of {host}", partial(_read, registry.server(host)), visible=False)
            job.succeeded.connect(lambda status, it=item: self._show(it, status))
            job.failed.connect(lambda failure, it=item: self._show_failure(it, failure))

    def _show(self, item: QTreeWidgetItem, status: DeviceStatus) -> None:
        how = "exact bytes" if status.devices and status.devices[0].exact else "text table, to 0.1 GiB"
        item.setText(1, f"{len(status.devices)} NPU(s), {status.tool} ({how})")
        for d in status.devices:
            child = QTreeWidgetItem(
                item,
                [
                    f"NPU {d.index} ({d.device})",
                    d.name,
                    format_bytes(d.used),
                    format_bytes(d.total),
                    format_bytes(d.free),
                    ", ".join(f"{p.name} (pid {p.pid})" for p in d.processes) or "none",
                ],
            )
            child.setToolTip(4, format_bytes_exact(d.free))
        item.setExpanded(True)
        for column in range(len(HEADERS)):
            self.tree.resizeColumnToContents(column)
        self.loaded.emit(status.host)

    def _show_failure(self, item: QTreeWidgetItem, failure: JobFailure) -> None:
        item.setText(1, failure.reason)
        item.setToolTip(1, failure.reason)
        self.loaded.emit(str(item.data(0, Qt.ItemDataRole.UserRole)))
