"""Artifacts in folders on SSH servers: read in one round trip, scanned by a walk there, resized by detached jobs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, Location, ServerFolder, expect, on_host, server_url
from rbln_artifact_studio.places.kind import Capabilities, Report, ScanOptions

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.progress import CancelToken
    from rbln_artifact_studio.remote.server import Server


def _folder(where: Location) -> ServerFolder:
    return expect(where, ServerFolder)  # dispatch.kind_of sends only this kind here


def server(host: str) -> Server:
    """The process's Server for host (remote/registry: configured by the app, else from the environment)."""
    from rbln_artifact_studio.remote import registry

    return registry.server(host)


def output_on(source: ServerFolder, output: Location | None) -> str | None:
    """The copy's folder on source's server, as the job there takes it; a copy elsewhere is refused."""
    if output is None:
        return None
    there = on_host(output, source.host)
    if there is None:
        raise other_server_error(source, output)
    return there.path


def other_server_error(source: ServerFolder, output: Location) -> StudioError:
    """The refusal of a copy of a server's artifact anywhere but that server (or a bucket: dispatch.CROSSINGS)."""
    return StudioError(
        f"A resize on {source.host} writes its copy there too; {output} is not on {source.host}. Give the copy's "
        f"folder on {source.host}: {server_url(source.host)}/PATH or an absolute /PATH there."
    )


class ServerKind:
    """A folder on a server reached over SSH. Nothing is read or written on this computer but what is shown."""

    capabilities = Capabilities(
        what="a folder on a server",
        on_this_computer=False,
        writable=True,
        resize_in_place=True,
        server_side_copy=True,  # a copy on the server is made there by a job
        locks=True,  # the artifact's lock file there, as here
        copies_to=frozenset({ServerFolder, BucketPrefix}),  # on the same server (other_server_error)
        copies_beside=True,  # the server's job checks the folder where it writes
    )

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        from rbln_artifact_studio.remote.scan import checked_rows, scan_remote

        folder = _folder(root)
        s = server(folder.host)
        limit = {} if options.timeout is None else {"total": options.timeout}
        rows = scan_remote(s, folder, options.cancel, on_issue=options.on_issue, processes=options.processes, **limit)
        if not options.verify:
            return rows  # shown at once; verify() checks the "checking" ones (a rescan reads root whole: one walk)
        return checked_rows(s, rows, options.cancel)  # rebel reads real graphs there, a round trip per 1,000 rows

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """Checked there by rebel, in one round trip for all of rows."""
        from rbln_artifact_studio.remote.scan import verify_remote_rows

        return verify_remote_rows(server(_folder(root).host), rows, options.cancel)

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
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
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.remote.transfer import check_output

        folder = _folder(output)
        check_output(server(folder.host), folder, Progress(report.progress, report.cancel))

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Sent into a staging folder beside output there, renamed into place when all of it is on its disk."""
        from rbln_artifact_studio.core.progress import Progress
        from rbln_artifact_studio.remote.transfer import send_folder

        there = _folder(output)
        return send_folder(server(there.host), folder, there, Progress(report.progress, report.cancel))


KIND = ServerKind()
