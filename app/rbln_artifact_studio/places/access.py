"""A Kind made from a file access alone: for a kind of place that can list and read (an HTTP server, a mounted
archive), scan, open and get come from the core's reader (core/fleet/file_access.py), and every write is refused
with its capabilities' reason. A new kind of place is then its Location, its FileAccess and one AccessKind."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
from rbln_artifact_studio.core.fleet.file_access import FileAccess, open_through, scan_through
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.location import Location, UrlFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.places.kind import Capabilities, Report, ScanOptions

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings


def read_only(what: str, reason: str) -> Capabilities:
    """The capabilities of a kind of place the studio only reads: no write of any kind, no copy out of it."""
    return Capabilities(
        what=what,
        on_this_computer=False,
        writable=False,
        resize_in_place=False,
        server_side_copy=False,
        locks=False,
        copies_to=frozenset(),
        copies_beside=False,
        read_only_reason=reason,
    )


class AccessKind:
    """Scan, open and get through a FileAccess; resize, copy and compile outputs refused from the capabilities."""

    def __init__(self, capabilities: Capabilities, access: Callable[[UrlFolder], FileAccess]) -> None:
        self.capabilities = capabilities
        self._access = access

    def _place(self, where: Location) -> tuple[FileAccess, str]:
        assert isinstance(where, UrlFolder), where  # dispatch.kind_of sends only this kind here
        return self._access(where), where.path

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        access, path = self._place(root)
        return scan_through(access, root, path, options.cancel)

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """None to check: the scan through a file access reads every verdict (verify=False changes nothing)."""
        return iter(())

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        access, path = self._place(where)
        return open_through(access, where, path, inspector)

    def read_block_count(self, where: Location) -> int:
        return self.open(where, None, None).config.kvcache_num_blocks

    def _refusal(self, where: Location, doing: str) -> StudioError:
        caps = self.capabilities
        return StudioError(f"{where} is {caps.what}, which the studio only reads ({doing}): {caps.read_only_reason}")

    def resize(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult:
        doing = "a resize in place" if request.output is None else "a copy out of it"
        raise self._refusal(request.source, f"{doing} is not possible") from None

    def check_output(self, output: Location, report: Report) -> None:
        raise self._refusal(output, "nothing may be written there")

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        raise self._refusal(output, "nothing may be written there")
