"""Servers as sources of the artifact table: connect (host key checked), scan their folders, refresh, disconnect."""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal, Slot
from rbln_artifact_studio.core.fleet.location import host_of
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.gui.artifact_model import ArtifactTableModel, TableRow
from rbln_artifact_studio.gui.jobs import Job, JobContext, JobFailure, JobManager
from rbln_artifact_studio.gui.settings import ServerEntry
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.target import RemotePath
from rbln_artifact_studio.remote.transport import HostKeyCheck, HostKeyError, SshOptions, accept_host_key

BATCH_SECONDS = 0.1


@dataclass(frozen=True)
class HostKeyQuestion:
    """A connection stopped at the host key: what to show, and what to retry once the user trusts it."""

    entry: ServerEntry
    check: HostKeyCheck


def _scan_server(entry: ServerEntry, ctx: JobContext) -> HostKeyQuestion | int:
    """Worker side: connect, then stream each folder's rows to the GUI in batches; a host key problem is returned."""
    from rbln_artifact_studio.remote.scan import scan_remote

    server = registry.server(entry.host)
    ctx.progress(0, 0, f"Connecting to {entry.host}")
    try:
        server.connection.connect(ctx.cancel)
    except HostKeyError as exc:
        return HostKeyQuestion(entry, exc.check)
    found = 0
    for folder in entry.folders:
        batch: list[TableRow] = []
        last = time.monotonic()
        root = RemotePath(entry.host, folder)
        for summary in scan_remote(server, root, ctx.cancel, lambda _p, message: ctx.log(message)):
            batch.append(TableRow.of(summary))
            found += 1
            if time.monotonic() - last >= BATCH_SECONDS:
                ctx.progress(found, 0, f"{found:,} artifacts read on {entry.host}")
                ctx.partial((root.url, batch))
                batch, last = [], time.monotonic()
        ctx.partial((root.url, batch, "done"))
    ctx.progress(found, found, f"{found:,} artifacts read on {entry.host}")
    return found


class ServerSources(QObject):
    """The connected servers. Their rows live in the same table as the local folder's and survive its reopening."""

    hostKeyQuestion = Signal(object)  # HostKeyQuestion: the GUI asks the user, then trust() or nothing
    connected = Signal(str)  # host: its folders are scanned and shown
    failed = Signal(str, str)  # host, reason
    changed = Signal()  # the set of connected servers changed

    def __init__(
        self,
        jobs: JobManager,
        model: ArtifactTableModel,
        options: SshOptions | None = None,
        python: str = "python3",
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.jobs, self.model = jobs, model
        registry.configure(options, python)
        self.entries: dict[str, ServerEntry] = {}
        self._rows: dict[str, dict[str, TableRow]] = {}  # host -> path -> row, to show again after a clear
        self._seen: dict[str, set[str]] = {}  # folder url -> paths found by the scan running there
        jobs.jobAdded.connect(self._watch_job)

    def hosts(self) -> list[str]:
        return list(self.entries)

    def connect_server(self, entry: ServerEntry) -> Job:
        """Connect and scan the folders (replacing what was shown for this host)."""
        self.entries[entry.host] = entry
        self.changed.emit()
        job = self.jobs.submit(f"Connect to {entry.host}", lambda ctx: _scan_server(entry, ctx))
        job.partial.connect(self._on_rows)
        job.succeeded.connect(lambda result, host=entry.host: self._on_scanned(host, result))
        job.failed.connect(lambda failure, host=entry.host: self._on_failed(host, failure))
        return job

    def trust(self, question: HostKeyQuestion) -> Job:
        """The user trusts the shown key: record it in known_hosts (in a worker), then connect again."""
        job = self.jobs.submit(
            f"Trust {question.entry.host}'s host key", lambda _ctx: accept_host_key(question.check), writes=True
        )
        job.succeeded.connect(lambda _r, entry=question.entry: self.connect_server(entry))
        job.failed.connect(lambda failure, host=question.entry.host: self._on_failed(host, failure))
        return job

    def disconnect_server(self, host: str) -> None:
        """Remove the server's rows and end its shared connection (in a worker)."""
        self.entries.pop(host, None)
        rows = self._rows.pop(host, {})
        self.model.remove_paths(list(rows))
        server = registry.server(host)
        self.jobs.submit(f"Disconnect {host}", lambda _ctx: server.connection.close(), visible=False)
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

    @Slot(object)
    def _on_rows(self, piece: tuple) -> None:
        folder, rows, *done = piece
        host = host_of(folder)
        if host not in self.entries:
            return  # disconnected while it scanned
        cache = self._rows.setdefault(host, {})
        seen = self._seen.setdefault(folder, set())
        for row in rows:
            cache[row.summary.path] = row
            seen.add(row.summary.path)
        self.model.upsert(rows)
        if done:  # rows under this folder that the scan did not find are gone
            prefix = folder.rstrip("/") + "/"
            gone = [p for p in cache if (p == folder or p.startswith(prefix)) and p not in seen]
            for path in gone:
                del cache[path]
            self.model.remove_paths(gone)
            self._seen.pop(folder, None)

    def _on_scanned(self, host: str, result: object) -> None:
        if isinstance(result, HostKeyQuestion):
            self.hostKeyQuestion.emit(result)
            return
        self.connected.emit(host)

    def _on_failed(self, host: str, failure: JobFailure) -> None:
        self.failed.emit(host, failure.reason)

    @Slot(object)
    def _watch_job(self, job: Job) -> None:
        job.succeeded.connect(self._after_job)

    @Slot(object)
    def _after_job(self, result: object) -> None:
        """A job wrote an artifact on a server (a resize): read that artifact's row again."""
        path = str(getattr(result, "path", ""))
        host = host_of(path)
        if host in self.entries and not isinstance(result, ArtifactSummary):
            entry = ServerEntry(host, (path[len("ssh://") + len(host) :],))
            job = self.jobs.submit(f"Rescan {path}", lambda ctx: _scan_server(entry, ctx), visible=False)
            job.partial.connect(self._on_rows)
