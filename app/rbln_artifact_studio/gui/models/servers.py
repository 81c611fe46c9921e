"""Servers as sources of the artifact table: connect (host key checked), scan their folders, refresh, disconnect."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.gui.app.settings import ServerEntry, Settings
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel, TableRow
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.models.place_scan import apply_rows
from rbln_artifact_studio.places.dispatch import server_folder
from rbln_artifact_studio.remote import preferences

# remote/ (ssh, the server's walker: ~15 ms) and the scan load with the first connection, in its worker
# (remote_access.py), never before the window shows.
if TYPE_CHECKING:
    from rbln_artifact_studio.gui.models.remote_access import RemoteAccess
    from rbln_artifact_studio.remote.remote_jobs import JobOutcome
    from rbln_artifact_studio.remote.server import Server
    from rbln_artifact_studio.remote.transport import HostKeyCheck

FAILED_JOB = re.compile(r"\(job (?P<job>\S+) on (?P<host>\S+)\)")  # remote_jobs.resize_remote's failure text


@dataclass(frozen=True)
class HostKeyQuestion:
    """A connection stopped at the host key: what to show, and what to retry once the user trusts it."""

    entry: ServerEntry
    check: HostKeyCheck
    job: Job | None = None  # the connection that stopped here: it waits for the answer


def _scan_server(
    remote: Callable[[], RemoteAccess],
    entry: ServerEntry,
    ctx: JobContext,
    closed: threading.Event | None = None,
    known: list[str] | None = None,
) -> HostKeyQuestion | int:
    """Worker side: connect and read entry's folders (RemoteAccess.scan); a host key problem is returned."""
    found = remote().scan(entry, ctx, closed, known)
    return found if isinstance(found, int) else HostKeyQuestion(entry, found)


def _written(result: object) -> ServerFolder | None:
    """Where a job's result lives: a resize's outcome, an artifact read (a row, which has no Location, is not one)."""
    where = getattr(result, "where", None) or getattr(result, "path", None)
    return server_folder(where)


class ServerSources(QObject):
    """The connected servers. Their rows live in the same table as the local folder's and survive its reopening."""

    jobsReadBack = Signal(str, list)  # host, [JobOutcome]: jobs there that ended since the app last looked
    hostKeyQuestion = Signal(object)  # HostKeyQuestion: the GUI asks the user, then trust() or nothing
    connected = Signal(str)  # host: its folders are scanned and shown
    failed = Signal(str, str)  # host, reason
    changed = Signal()  # the set of connected servers changed

    def __init__(
        self,
        jobs: JobManager,
        model: ArtifactTableModel,
        settings: Settings,
        ssh_config: Path | None = None,
        python: str | None = None,
        parent: QObject | None = None,
    ) -> None:
        """ssh_config: an ssh_config file to use instead of ~/.ssh/config (like ssh -F); python: the servers' Python
        (None: as the CLI, RBLN_STUDIO_REMOTE_PYTHON or python3)."""
        super().__init__(parent)
        self.jobs, self.model, self.settings = jobs, model, settings
        self._ssh_config, self._python = ssh_config, python  # given to remote/'s registry on first use (_remote)
        self._access: RemoteAccess | None = None
        self._access_lock = threading.Lock()  # the console's workers and this window's jobs make it once
        preferences.choose(
            ssh_config, python
        )  # a server reached before any connection (a copy to a server's folder) too
        self.entries: dict[str, ServerEntry] = {}
        self._rows: dict[str, dict[str, TableRow]] = {}  # host -> path -> row, to show again after a clear
        self._following: set[str] = set()  # job ids followed to their end
        self._closing: dict[str, threading.Event] = {}  # host -> set once its last disconnect has closed it
        jobs.jobAdded.connect(self._watch_job)
        jobs.jobFailed.connect(self._after_failure)
        # The table names a server folder's rows by it where a server shows several (artifact_model).
        self.changed.connect(
            lambda: self.model.set_roots(
                "servers", [str(ServerFolder(e.host, f)) for e in self.entries.values() for f in e.folders]
            )
        )

    def _remote(self) -> RemoteAccess:
        """remote/ as this window reaches it; the first call loads remote/ (a connection's worker makes it)."""
        with self._access_lock:
            if self._access is None:
                # deferred: remote/ (ssh: ~15 ms; its jobs' reader, pydantic) loads in the first connection's worker
                from rbln_artifact_studio.gui.models.remote_access import RemoteAccess

                self._access = RemoteAccess(self._ssh_config, self._python)
            return self._access

    def configure_remote(self) -> None:
        """Give remote/'s registry this window's ssh options, once (loads remote/: call it in a worker). A job about
        to write to a server it has not connected to (a compile's or a copy's output) calls it too, so it reaches
        the server as a connection from this window would."""
        self._remote().configure()

    def set_ssh_config(self, ssh_config: Path | None) -> None:
        """Reach servers through another ssh_config from the next connection on (Preferences)."""
        with self._access_lock:
            if ssh_config != self._ssh_config:
                self._ssh_config = ssh_config
                preferences.choose(ssh_config, self._python)  # a server reached any other way first, too
                if self._access is not None:
                    self._access.use(ssh_config)

    def _server(self, host: str) -> Server:
        """host's Server (one per process); the first call loads remote/ and gives it this window's ssh options."""
        return self._remote().server(host)

    def hosts(self) -> list[str]:
        return list(self.entries)

    def connect_server(self, entry: ServerEntry) -> Job:
        """Connect and scan the folders (replacing what was shown for this host)."""
        self.entries[entry.host] = entry
        self.changed.emit()
        closed = self._closing.get(entry.host)
        known = list(self._rows.get(entry.host, {}))
        job = self.jobs.submit(
            f"Connect to {entry.host}", lambda ctx: _scan_server(self._remote, entry, ctx, closed, known)
        )
        job.partial.connect(lambda message, host=entry.host: self._on_rows(host, message))
        job.succeeded.connect(lambda result, host=entry.host, job=job: self._on_scanned(host, result, job))
        job.failed.connect(lambda failure, host=entry.host: self.failed.emit(host, failure.reason))
        return job

    def trust(self, question: HostKeyQuestion) -> Job:
        """The user trusts the shown key: record it in known_hosts (in a worker), then connect again."""

        job = self.jobs.submit(
            f"Trust {question.entry.host}'s host key", lambda _ctx: self._remote().accept(question.check), writes=True
        )
        job.succeeded.connect(lambda _r, entry=question.entry: self.connect_server(entry))
        job.failed.connect(lambda failure, host=question.entry.host: self.failed.emit(host, failure.reason))
        return job

    def disconnect_server(self, host: str) -> None:
        """Remove the server's rows and end its shared connection (in a worker)."""
        self.entries.pop(host, None)
        rows = self._rows.pop(host, {})
        self.model.remove_paths(list(rows))
        server = self._server(host)
        closed = self._closing[host] = threading.Event()

        def close(_ctx: JobContext) -> None:
            try:
                server.transport.close()
            finally:
                closed.set()

        self.jobs.submit(f"Disconnect {host}", close, visible=False)
        self.changed.emit()

    def refresh(self, host: str) -> Job | None:
        entry = self.entries.get(host)
        return self.connect_server(entry) if entry else None

    @Slot()
    def show_again(self) -> None:
        """The local folder was (re)opened and the table cleared: put the servers' rows back."""
        for rows in self._rows.values():
            self.model.upsert(list(rows.values()))

    # ---- results -------------------------------------------------------------------------------------

    def _on_rows(self, host: str, message: object) -> None:
        """A message of a read of host's folders: rows found or gone, in the table and in what is kept of host."""
        if host in self.entries:  # else disconnected while it scanned
            apply_rows(self.model, self._rows.setdefault(host, {}), message)

    def _on_scanned(self, host: str, result: object, job: Job | None = None) -> None:
        if isinstance(result, HostKeyQuestion):
            if job is not None:
                job.ask(f"trust {host}'s host key?")
            self.hostKeyQuestion.emit(replace(result, job=job))
            return
        self.connected.emit(host)
        self.read_back_jobs(host)

    # ---- detached jobs on the servers ----------------------------------------------------------------

    def read_back_jobs(self, host: str) -> Job:
        """Read the server's job outcomes: those that ended unseen are reported, running ones are followed."""
        server = self._server(host)
        job = self.jobs.submit(f"Jobs on {host}", partial(self._remote().outcomes, server), visible=False)
        job.succeeded.connect(lambda outcomes, h=host: self._on_outcomes(h, outcomes))
        return job

    def _on_outcomes(self, host: str, outcomes: list[JobOutcome]) -> None:
        seen = self.settings.seen_jobs(host)
        ended = [o for o in outcomes if o.state != "running"]
        if seen is None:  # the first look at this server: what ended before is history, not news
            self.settings.mark_jobs_seen(host, [o.job.id for o in ended])
            seen = {o.job.id for o in ended}
        news = [o for o in ended if o.job.id not in seen]
        remote = self._remote()
        server = remote.server(host)
        if news:
            self.settings.mark_jobs_seen(host, [o.job.id for o in news])
            self.jobsReadBack.emit(host, news)
            # Shown: their folders on the server are cleaned (a job's outcome is read back once).
            shown = [o.job for o in news]
            self.jobs.submit(f"Clean jobs on {host}", partial(remote.forget, server, shown), visible=False)
        for o in outcomes:
            if o.state == "running" and o.job.id not in seen and o.job.id not in self._following:
                self._following.add(o.job.id)
                job = self.jobs.submit(f"Follow job {o.job.id} on {host}", partial(remote.follow, server, o.job))
                job.succeeded.connect(lambda outcome, h=host: self._on_followed(h, outcome))

    def _on_followed(self, host: str, outcome: JobOutcome) -> None:
        self._following.discard(outcome.job.id)
        self.settings.mark_jobs_seen(host, [outcome.job.id])
        self.jobsReadBack.emit(host, [outcome])

    @Slot(object)
    def _watch_job(self, job: Job) -> None:
        job.succeeded.connect(self._after_job)

    @Slot(object)
    def _after_job(self, result: object) -> None:
        """A job wrote an artifact on a server (a resize): read that artifact's row again."""
        where = _written(result)
        host = where.host if where is not None else ""
        job = getattr(result, "job", "")  # a job there wrote it (a resize on the server): its id
        if host and isinstance(job, str) and job:
            self.settings.mark_jobs_seen(host, [job])  # its outcome is on screen already
        # Its rows are read again by the window's row sources (row_sources.py), as every write's are.

    def rescan_path(self, host: str, path: str) -> Job | None:
        """Read one artifact (or folder) on a connected server again and update its rows (None: not connected)."""
        if host not in self.entries:
            return None
        entry = ServerEntry(host, (path,))
        known = list(self._rows.get(host, {}))
        job = self.jobs.submit(
            f"Rescan {path} on {host}", lambda ctx: _scan_server(self._remote, entry, ctx, known=known), visible=False
        )
        job.partial.connect(lambda message: self._on_rows(host, message))
        return job

    @Slot(object, object)
    def _after_failure(self, _job: Job, failure: JobFailure) -> None:
        """A resize on a server failed in front of the user: its outcome is seen."""
        found = FAILED_JOB.search(failure.reason)
        if found:
            self.settings.mark_jobs_seen(found["host"], [found["job"]])
