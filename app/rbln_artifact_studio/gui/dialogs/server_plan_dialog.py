"""The planner's target "this server, now": do the selected artifacts fit in what a server's NPUs have free?"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from rbln_artifact_studio.backends.registry import inspector_for
from rbln_artifact_studio.core.display.commandline import PROG
from rbln_artifact_studio.core.location import parse_location, server_url
from rbln_artifact_studio.core.planning.planner import Verdict, require_valid
from rbln_artifact_studio.core.sizes import format_bytes, format_bytes_exact
from rbln_artifact_studio.gui.app.tones import Tone, tone
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.widgets.command_line import CommandLine
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.devices import read_devices
from rbln_artifact_studio.remote.server_plan import GRANULARITY, PLACEMENT, ServerPlan, plan_on_server

VERDICT_TONES = {Verdict.FIT: Tone.OK, Verdict.DOES_NOT_FIT: Tone.ERROR, Verdict.UNKNOWN: Tone.WARNING}
HEADERS = ("NPU", "Name", "Free now", "Needed", "Headroom", "Artifacts")


def compute_server_plan(host: str, paths: list[str], ctx: JobContext) -> ServerPlan:
    """Worker side: open the artifacts (here or on their servers), read the server's NPUs, place and compare."""
    inspector = inspector_for(cancel=ctx.cancel)
    artifacts = []
    for i, path in enumerate(paths):
        ctx.progress(i, len(paths), f"Reading {path}")
        artifacts.append(dispatch.open_artifact(parse_location(path), inspector, ctx.cancel))
    require_valid(artifacts)  # as plan: an invalid artifact is named, never planned on
    ctx.progress(len(paths), len(paths), f"Reading the NPUs of {host}")
    return plan_on_server(artifacts, read_devices(registry.server(host), ctx.cancel))


class ServerPlanDialog(QDialog):
    """Choose a connected server; the verdict and the per-NPU table follow, with the matching CLI command."""

    planned = Signal()

    def __init__(self, jobs: JobManager, paths: list[str], hosts: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("serverPlanDialog")
        self.setWindowTitle(f"Plan on a server, now: {len(paths)} artifact(s)")
        self.jobs, self.paths = jobs, list(paths)
        self.plan: ServerPlan | None = None
        self._job: Job | None = None
        self.host_combo = QComboBox()
        self.host_combo.setObjectName("serverPlanHost")
        self.host_combo.addItems(hosts)
        self.verdict = QLabel()
        self.verdict.setObjectName("serverPlanVerdict")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        notes = QLabel(f"<small>{html.escape(PLACEMENT)}<br>{html.escape(GRANULARITY)}</small>")
        notes.setWordWrap(True)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("serverPlanTable")
        self.table.setHorizontalHeaderLabels(list(HEADERS))
        self.table.verticalHeader().setVisible(False)
        self.command = CommandLine("serverPlanCommand")
        again = QPushButton("Plan &Again")
        again.setObjectName("serverPlanAgain")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(again, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(QLabel("&Target: this server, now:"))
        row.addWidget(self.host_combo, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.verdict)
        layout.addWidget(self.table, 1)
        layout.addWidget(notes)
        layout.addWidget(self.command)
        layout.addWidget(buttons)
        again.clicked.connect(self.replan)
        self.host_combo.currentTextChanged.connect(self.replan)
        self.resize(860, 460)
        self.replan()

    @Slot()
    def replan(self) -> None:
        host = self.host_combo.currentText()
        if not host:
            self.verdict.setText("No server is connected: File ▸ Connect to Server… first.")
            return
        self.command.set_argv([PROG, "plan", "--on", server_url(host), *self.paths])
        self.verdict.setText(f"Reading {len(self.paths)} artifact(s) and the NPUs of {html.escape(host)}…")
        self.table.setRowCount(0)
        job = self._job = self.jobs.submit(
            f"Plan on {host}", lambda ctx: compute_server_plan(host, self.paths, ctx), visible=False
        )
        job.succeeded.connect(self._on_planned)
        job.failed.connect(self._on_failed)

    @Slot(object)
    def _on_planned(self, p: ServerPlan) -> None:
        if self.sender() is not self._job:
            return
        self.plan = p
        colour = tone(VERDICT_TONES.get(p.verdict, Tone.NEUTRAL))
        over = [
            f"NPU {n.device.index} chiplet {c.chiplet} needs {format_bytes(c.need)} of its {format_bytes(c.available)}"
            for n in p.npus
            for c in n.over_chiplets
        ]
        reasons = "".join(f"<br>{html.escape(r)}" for r in (*p.problems, *over, *p.unknown))
        self.verdict.setText(
            f"<b style='color:{colour}'>{html.escape(p.verdict.value.capitalize())}</b> on {html.escape(p.host)} "
            f"now.{reasons}"
        )
        self.table.setRowCount(len(p.npus))
        for r, n in enumerate(p.npus):
            cells = [
                (str(n.device.index), None),
                (n.device.name, None),
                (format_bytes(n.device.free), n.device.free),
                (format_bytes(n.need), n.need),
                (format_bytes(n.headroom), n.headroom),
                (", ".join(f"{label} {format_bytes(b)}" for label, b in n.needs), None),
            ]
            for c, (text, exact) in enumerate(cells):
                item = QTableWidgetItem(text)
                if exact is not None:
                    item.setToolTip(format_bytes_exact(exact))
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.planned.emit()

    @Slot(object)
    def _on_failed(self, failure: JobFailure) -> None:
        if self.sender() is not self._job:
            return
        self.verdict.setText(f"<b>No plan:</b> {html.escape(failure.reason)}")
        self.planned.emit()
