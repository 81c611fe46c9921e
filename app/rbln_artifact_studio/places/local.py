"""Artifacts in folders on this computer: the core's scan and reader, and the backend that wrote each artifact."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.deferred import DeferredInspector
from rbln_artifact_studio.core.fleet.rescan import rescan_folder
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, Verifier, default_verifier, scan
from rbln_artifact_studio.core.location import LocalFolder, Location, expect
from rbln_artifact_studio.core.model.kinds import block_count
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.progress import CancelToken, Progress
from rbln_artifact_studio.core.storage.fsutil import StagingDir, check_new_output_dir, copy_tree, iter_files
from rbln_artifact_studio.core.storage.jsonfile import plain_decoder_count
from rbln_artifact_studio.places.dispatch import BUILT_IN_CAPABILITIES
from rbln_artifact_studio.places.kind import Report, Rescan, ScanOptions

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector


def _folder(where: Location) -> LocalFolder:
    return expect(where, LocalFolder)  # dispatch.kind_of sends only this kind here


class LocalKind:
    """A folder on this computer."""

    capabilities = BUILT_IN_CAPABILITIES[__name__]

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        folder = _folder(root).path
        verify: Verifier | bool = False  # the desktop's fast pass: rows "checking" until verify() is asked
        if options.verify:
            verify = default_verifier(options.inspector) if options.inspector is not None else True
        if options.rescan is not None:
            return self._rescan(folder, options.rescan, options, verify)
        if not os.path.isdir(folder):
            raise StudioError(f"{root} is not a folder; give a folder that holds compiled artifacts.")
        return scan(
            folder,
            options.cancel,
            on_issue=options.on_issue,
            use_cache=options.use_cache,
            verify=verify,
            processes=options.processes,
        )

    def _rescan(
        self, folder: Path, rescan: Rescan, options: ScanOptions, verify: Verifier | bool
    ) -> Iterator[ArtifactSummary]:
        """What changed below folder since the rows known were read: those gone told first, then the new rows."""
        result = rescan_folder(folder, rescan.known, _folder(rescan.within).path)
        if rescan.on_gone is not None and (result.removed or result.watch):
            rescan.on_gone(result.removed, result.watch)
        yield from result.summaries(options.cancel, options.on_issue, verify=verify)

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """Checked in options.processes processes, each verdict kept in root's scan cache; the reader of real
        compiler graphs chosen when the first such graph is read (a fleet of simulator artifacts never loads it)."""
        # A scan whose rows are all cached loads this module and checks nothing (docs/performance.md row 3).
        # deferred: the full check (~60 ms of imports: the reader, the container, the estimator) loads with a check
        from rbln_artifact_studio.core.fleet.verify import verify_rows

        inspector = DeferredInspector(options.inspector) if options.inspector is not None else None
        return verify_rows(
            _folder(root).path,
            rows,
            inspector,
            options.cancel,
            use_cache=options.use_cache,
            processes=options.processes,
        )

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        # deferred: the full check (~60 ms of imports), which a scan whose rows are all cached never runs
        from rbln_artifact_studio.core.fleet.artifact import open_artifact

        return open_artifact(_folder(where).path, inspector)

    def read_block_count(self, where: Location) -> int:
        """The common kind's count from its JSON alone (shell loops call this per artifact), any other's through
        the reader of kinds (NoKvCacheError for a kind without a KV cache)."""
        count = plain_decoder_count(_folder(where).path)
        if count is None:
            count = block_count(_folder(where).path)
        return count

    def resize(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult:
        # A scan loads this module and must not load pydantic (tests/test_scan_cache.py).
        # deferred: the backends' registry brings pydantic (~0.1 s of CPU): it loads with the first resize here
        from rbln_artifact_studio.backends.registry import resize_artifact

        return resize_artifact(request, report.progress, report.log, report.cancel, toolchain)

    def check_output(self, output: Location, report: Report) -> None:
        check_new_output_dir(_folder(output).path)

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Copied into a staging folder beside output, published by one rename."""
        final = check_new_output_dir(_folder(output).path)
        progress = Progress(report.progress, report.cancel)
        total = sum(st.st_size for _, st in iter_files(folder))
        progress.start(total, f"Copying {folder.name} to {final}")
        final.parent.mkdir(parents=True, exist_ok=True)
        with StagingDir(final, what="copy") as staging:
            copy_tree(folder, staging.path, progress.advance)
            staging.publish()
        return total


KIND = LocalKind()
