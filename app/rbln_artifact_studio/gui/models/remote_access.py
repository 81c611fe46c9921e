"""What the servers' jobs run in their workers: remote/ given this window's ssh options (once, and again after they
change), a server's folders read, its detached jobs read back, followed and cleaned, a host key trusted.

ServerSources makes RemoteAccess in the worker of the first connection (or of the first write to a server), so
remote/ (ssh, the server's walker: ~15 ms) and its jobs' reader (pydantic) never load before the window's first
paint. A server a job works on is the one asked for when the job was submitted (server()), as the registry then had
it: a job still queued when the options change keeps its server.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.gui.app.settings import ServerEntry
from rbln_artifact_studio.gui.models.jobs import JobContext
from rbln_artifact_studio.gui.models.place_scan import read_in_process
from rbln_artifact_studio.gui.models.scan_messages import ScanRequest
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.remote_jobs import JobOutcome, RemoteJob, follow, forget_quietly, job_outcomes
from rbln_artifact_studio.remote.server import ENV_REMOTE_PYTHON, Server
from rbln_artifact_studio.remote.transport import HostKeyCheck, HostKeyError, SshOptions, accept_host_key


class RemoteAccess:
    """remote/ as this window reaches it; every method runs in a job's worker."""

    def __init__(self, ssh_config: Path | None, python: str | None) -> None:
        """ssh_config: an ssh_config file to use instead of ~/.ssh/config (like ssh -F); python: the servers' Python
        (None: as the CLI, RBLN_STUDIO_REMOTE_PYTHON or python3)."""
        self._ssh_config, self._python = ssh_config, python
        self._configured = False
        self._lock = threading.Lock()  # the console's workers and this window's jobs configure it once

    def use(self, ssh_config: Path | None) -> None:
        """Reach servers through another ssh_config from the next server asked for on."""
        with self._lock:
            if ssh_config != self._ssh_config:
                self._ssh_config, self._configured = ssh_config, False

    def configure(self) -> None:
        """Give remote/'s registry this window's ssh options, unless it has them."""
        with self._lock:
            if not self._configured:
                python = self._python or os.environ.get(ENV_REMOTE_PYTHON) or "python3"  # as the CLI, when not given
                registry.configure(SshOptions(config_file=self._ssh_config), python)
                self._configured = True

    def server(self, host: str) -> Server:
        """host's Server (one per process), reached with this window's ssh options."""
        self.configure()
        return registry.server(host)

    def scan(
        self,
        entry: ServerEntry,
        ctx: JobContext,
        closed: threading.Event | None = None,
        known: list[str] | None = None,
    ) -> HostKeyCheck | int:
        """Connect, then read the folders as the server's Kind reads them (folder_scan.scan_folders, the reader of
        every place's rows): rows to the GUI in batches, rows no longer there, then the full check's verdicts of
        every folder's rows at once (one more round trip). The host key to ask about, when the connection stopped
        at it; else how many artifacts were read.

        `closed` is set when an earlier disconnect of this host has ended its connection: wait for it, or that
        disconnect could end the connection this scan opens. known: the rows shown on this server.
        """
        while closed is not None and not closed.wait(0.05):
            ctx.checkpoint()
        server = self.server(entry.host)  # the Server the Kind reaches the host through (remote/registry: one a host)
        ctx.progress(0, 0, f"Connecting to {entry.host}")
        try:
            server.transport.connect(ctx.cancel)
        except HostKeyError as exc:
            return exc.check
        folders = [ServerFolder(entry.host, folder).url for folder in entry.folders]
        return read_in_process(ScanRequest(ServerFolder(entry.host, "/").url, folders, known or []), ctx)

    @staticmethod
    def follow(server: Server, job: RemoteJob, ctx: JobContext) -> JobOutcome:
        """A job started elsewhere, followed to its end (not ours to cancel: cancel stops watching)."""
        return follow(server, job, ctx.log, ctx.cancel, stop_job=False, on_progress=ctx.progress)

    @staticmethod
    def outcomes(server: Server, ctx: JobContext) -> list[JobOutcome]:
        """The outcomes of the jobs on the server."""
        return job_outcomes(server, ctx.cancel)

    @staticmethod
    def forget(server: Server, jobs: Sequence[RemoteJob], _ctx: JobContext) -> None:
        """Clean the folders of jobs whose outcome the user has now seen (best effort)."""
        forget_quietly(server, jobs)

    @staticmethod
    def accept(check: HostKeyCheck) -> None:
        """Record the key shown in known_hosts."""
        accept_host_key(check)
