"""The Server menu's dialogs: Connect to Server… (the ssh config's hosts offered), a host key to trust, NPU
Devices… and Plan on Server Now….

The menu (server_actions.py) makes ServerDialogs when the first of them is asked for, so these modules (and the
devices' and the planner's readers) load then, never before the window's first paint.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QWidget

from rbln_artifact_studio.gui.app.settings import Settings
from rbln_artifact_studio.gui.dialogs.connect_dialog import ConnectDialog
from rbln_artifact_studio.gui.dialogs.devices_dialog import DevicesDialog
from rbln_artifact_studio.gui.dialogs.host_key_dialog import HostKeyDialog
from rbln_artifact_studio.gui.dialogs.server_plan_dialog import ServerPlanDialog
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.servers import HostKeyQuestion, ServerSources
from rbln_artifact_studio.remote.ssh_config import chosen_config, config_hosts


def _config_hosts(config: Path | None) -> list[str]:
    """Worker side: the Host entries of the ssh config in use (a file read: never on the GUI thread)."""
    return config_hosts(config)


class ServerDialogs:
    """Opens the Server menu's dialogs on the window, for the servers it connects."""

    def __init__(self, window: QWidget, jobs: JobManager, settings: Settings, servers: ServerSources) -> None:
        self.window, self.jobs, self.settings, self.servers = window, jobs, settings, servers

    def connect(self) -> tuple[ConnectDialog, Job]:
        """Connect to Server…, and the job that offers it the ssh config's hosts (read in a worker)."""
        dialog = ConnectDialog(self.settings.servers(), self.window)
        dialog.accepted.connect(lambda: self._connect(dialog))
        dialog.open()
        config = chosen_config(self.settings.ssh_config())
        hosts = self.jobs.submit("Hosts of the ssh config", lambda _ctx: _config_hosts(config), visible=False)
        hosts.succeeded.connect(dialog.offer_hosts)
        return dialog, hosts

    def _connect(self, dialog: ConnectDialog) -> None:
        entry = dialog.entry()
        if entry is None:
            return
        self.settings.remember_server(entry)
        self.servers.connect_server(entry)

    def host_key(self, question: HostKeyQuestion) -> HostKeyDialog:
        """The key a connection stopped at: trusted, the connection starts again."""
        dialog = HostKeyDialog(question.check, self.window)
        dialog.setObjectName("hostKeyDialog")
        dialog.accepted.connect(lambda: self.servers.trust(question))
        job = question.job
        if job is not None:  # the connection's row says what came of the question
            dialog.finished.connect(
                lambda result: job.answered(
                    "host key trusted: connecting again" if result else "stopped: host key not trusted"
                )
            )
        dialog.open()
        return dialog

    def devices(self) -> DevicesDialog:
        dialog = DevicesDialog(self.jobs, self.servers.hosts(), self.window)
        dialog.open()
        return dialog

    def server_plan(self, paths: list[str]) -> ServerPlanDialog:
        dialog = ServerPlanDialog(self.jobs, paths, self.servers.hosts(), self.window)
        dialog.open()
        return dialog
