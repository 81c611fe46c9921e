"""Every opened location's row source, whatever its kind: what Refresh reads again, and what a write re-reads.

A folder here is read by the workspace (its scan process, and its fast rescan of what changed), a server's folder
by the servers (in a job, over the server's connection), any other place by place_scan; each through
folder_scan.scan_folders and the location's Kind. A write marks the rows it may change as stale (the model greys
them) from its start until the places it touched are read again after it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, SignalInstance, Slot

from rbln_artifact_studio.core.location import ServerFolder, parse_server_folder
from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel, is_under
from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.place_scan import PlaceSources, Then, tell
from rbln_artifact_studio.gui.models.servers import ServerSources
from rbln_artifact_studio.gui.models.workspace import Workspace


class RowSource(Protocol):
    """One opened location's rows in the table."""

    @property
    def root(self) -> str:
        """The location as its rows' paths start (a folder here, on a server, in a bucket)."""
        ...

    def read(self, part: str | None = None, then: Then | None = None) -> object:
        """Read part of it (None: all of it) again through its Kind: rows found replace theirs, rows under part it
        no longer holds go; then is told how that read ended (False: it failed, the rows stay as they were)."""
        ...


def _once(signal: SignalInstance, then: Then) -> None:
    """then(True), at the signal's next emission only."""

    def fire(*_args: object) -> None:
        signal.disconnect(fire)
        then(True)

    signal.connect(fire)


class FolderSource:
    """A folder shown here: the workspace reads it in its scan process."""

    def __init__(self, workspace: Workspace, root: str) -> None:
        self.workspace, self.root = workspace, root

    def read(self, part: str | None = None, then: Then | None = None) -> object:
        if then is not None:
            _once(self.workspace.scanFinished, then)  # the workspace's reads run in turn: ours is among them
        if part is None:
            self.workspace.refresh([self.root])
        else:  # what changed there, and the folder that holds it (a result made or removed)
            self.workspace.rescan([part, os.path.dirname(part)])
        return None


class ServerSource:
    """A connected server's folder: the servers read it over that server's connection."""

    def __init__(self, servers: ServerSources, host: str, root: str) -> None:
        self.servers, self.host, self.root = servers, host, root

    def read(self, part: str | None = None, then: Then | None = None) -> object:
        job = self.servers.rescan_path(self.host, parse_server_folder(part or self.root).path)
        if job is not None and then is not None:
            job.finished.connect(lambda: tell(job, [then]))
        return job


class RowSources(QObject):
    """The row sources of every opened location: Refresh reads each again; a write's locations are read again when
    it ends, and their rows are stale until then."""

    def __init__(
        self, jobs: JobManager, model: ArtifactTableModel, workspace: Workspace, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.jobs, self.model, self.workspace = jobs, model, workspace
        self.servers: ServerSources | None = None  # the window's, once its server menu is built
        self.places = PlaceSources.of(jobs, model)
        self._asked: dict[str, None] = {}  # locations to read again at the next turn of the event loop, in order
        workspace.rootChanged.connect(self.places.show_again)  # the folders reopened cleared the table
        jobs.jobAdded.connect(self._follow)

    def sources(self) -> list[RowSource]:
        """One per opened location: the folders, then the servers' folders, then the other places."""
        out: list[RowSource] = [FolderSource(self.workspace, root) for root in self.workspace.roots]
        if self.servers is not None:
            out += [
                ServerSource(self.servers, entry.host, str(ServerFolder(entry.host, folder)))
                for entry in self.servers.entries.values()
                for folder in entry.folders
            ]
        out += self.places.sources.values()
        return out

    def source_of(self, where: str) -> RowSource | None:
        """The source whose location holds where (the deepest), None when no opened location does."""
        holding = [s for s in self.sources() if is_under(where, s.root)]
        return max(holding, key=lambda s: len(s.root)) if holding else None

    @Slot()
    def refresh(self) -> None:
        """Refresh (F5): every opened location, of every kind, read again whole; no row is dropped first."""
        generation = self.model.writes.generation()
        for source in self.sources():
            source.read(None, partial(self._read, source.root, generation))

    def _read(self, where: str, generation: int, ok: bool) -> None:
        """A read of where, asked at generation, ended: its rows are read again, or may be stale (it failed)."""
        if ok:
            self.model.writes.read_again(where, generation)
        else:
            self.model.writes.unconfirmed(where)

    @Slot(object)
    def _follow(self, job: Job) -> None:
        if job.writes:  # whoever started it (a dialog, the planner, the fleet console): its result is read again
            job.succeeded.connect(self._on_written)

    @Slot(object)
    def _on_written(self, result: object) -> None:
        where = getattr(result, "where", None)  # a resize's, a compile's, a download's: where it now lives
        if where is not None:
            self.reread([str(where)])

    def writing(self, job: Job, locations: Iterable[str]) -> None:
        """job writes at locations: their rows are stale from now; when it ends (whatever the outcome) they are read
        again, and stale until that read ends."""
        written = list(dict.fromkeys(locations))
        for where in written:
            self.model.writes.writing(where)
        job.finished.connect(lambda: self._ended(written))

    def _ended(self, written: list[str]) -> None:
        for where in written:
            self.model.writes.written(where)
        self.reread(written)

    def reread(self, locations: Iterable[str]) -> None:
        """Read these locations again through the sources that show them (asked together within one turn of the
        event loop: a write's end and its result come as two signals, one read serves both)."""
        first = not self._asked
        self._asked.update(dict.fromkeys(locations))
        if first and self._asked:
            QTimer.singleShot(0, self, self._read_asked)

    @Slot()
    def _read_asked(self) -> None:
        asked, self._asked = list(self._asked), {}
        generation = self.model.writes.generation()
        for where in asked:
            source = self.source_of(where)
            told: Then = partial(self._read, where, generation)
            if source is None:
                told(True)  # no location shown holds it: no row of it to go stale
            else:
                source.read(where, told)

    def shows(self, where: str) -> bool:
        """An opened location holds where: a result written there has its row read in the table."""
        return self.source_of(where) is not None
