"""Artifacts in folders on SSH servers: read in one round trip, scanned by a walk there, resized by detached jobs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.summary import ArtifactSummary
from rbln_artifact_studio.core.location import Location, ServerFolder, expect, on_host
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.progress import CancelToken, Progress
from rbln_artifact_studio.places.dispatch import BUILT_IN_CAPABILITIES, other_server_error
from rbln_artifact_studio.places.kind import Report, ScanOptions
from rbln_artifact_studio.remote import registry
from rbln_artifact_studio.remote.scan import checked_rows, scan_remote, verify_remote_rows
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transfer import check_output, fetch_folder, send_folder

if TYPE_CHECKING:  # the reader (msgspec, ~20 ms) loads once a server answers a scan, not before its ssh starts
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector


def _folder(where: Location) -> ServerFolder:
    return expect(where, ServerFolder)  # dispatch.kind_of sends only this kind here


def server(host: str) -> Server:
    """The process's Server for host (remote/registry: configured by the app, else from the environment)."""
    return registry.server(host)


def output_on(source: ServerFolder, output: Location | None) -> str | None:
    """The copy's folder on source's server, as the job there takes it; a copy elsewhere is refused."""
    if output is None:
        return None
    there = on_host(output, source.host)
    if there is None:
        raise other_server_error(source, output)
    return there.path


def fetch_from_server(source: Location, into: Path, progress: Progress) -> int:
    """A server's folder into the empty folder into here, read under its lock there (remote/transfer.fetch_folder):
    the download dispatch.DOWNLOADS names for this kind."""
    folder = _folder(source)
    return fetch_folder(server(folder.host), folder, into, progress)


class ServerKind:
    """A folder on a server reached over SSH. Nothing is read or written on this computer but what is shown."""

    capabilities = BUILT_IN_CAPABILITIES[__name__]

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        folder = _folder(root)
        s = server(folder.host)
        limit = {} if options.timeout is None else {"total": options.timeout}
        rows = scan_remote(s, folder, options.cancel, on_issue=options.on_issue, processes=options.processes, **limit)
        if not options.verify:
            return rows  # shown at once; verify() checks the "checking" ones (a rescan reads root whole: one walk)
        return checked_rows(s, rows, options.cancel)  # rebel reads real graphs there, a round trip per 1,000 rows

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """Checked there by rebel, in one round trip for all of rows."""
        return verify_remote_rows(server(_folder(root).host), rows, options.cancel)

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        # A scan of a server loads this module and reads no artifact here (docs/performance.md row 8).
        # deferred: the reader of an artifact's records (~25 ms of CPU: the full check), for an artifact opened
        from rbln_artifact_studio.remote.artifact import open_remote_artifact

        folder = _folder(where)
        return open_remote_artifact(server(folder.host), folder, cancel)  # rebel there reads real graphs

    def read_block_count(self, where: Location) -> int:
        return self.open(where, None, None).config.kvcache_num_blocks

    def resize(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult:
        """A detached job on the server, followed to its end (Ctrl+C or a dropped connection stops following it;
        the job goes on there)."""
        # A scan of a server loads this module and needs no pydantic (docs/performance.md row 8).
        # deferred: remote_jobs checks the request with the core's targets, which bring pydantic (~0.1 s of CPU)
        from rbln_artifact_studio.remote.remote_jobs import RemoteResizeResult, jobs_command, resize_remote

        source = _folder(request.source)
        output_on(source, request.output)  # a copy elsewhere: refused here, with where it may go instead
        try:
            outcome = resize_remote(server(source.host), request, report.log, report.cancel, report.progress)
        except KeyboardInterrupt:
            raise StudioError(
                f"Interrupted: the job on the server goes on; read its outcome with: {jobs_command(source.host)}"
            ) from None
        assert outcome.path is not None and outcome.previous is not None and outcome.kvcache_num_blocks is not None
        return RemoteResizeResult.on(
            source.at(outcome.path), outcome.previous, outcome.kvcache_num_blocks, outcome.warnings, outcome.job.id
        )

    def check_output(self, output: Location, report: Report) -> None:
        folder = _folder(output)
        check_output(server(folder.host), folder, Progress(report.progress, report.cancel))

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Sent into a staging folder beside output there, renamed into place when all of it is on its disk."""
        there = _folder(output)
        return send_folder(server(there.host), folder, there, Progress(report.progress, report.cancel))


KIND = ServerKind()
