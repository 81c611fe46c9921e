"""The protocol each kind of place implements (a local folder, a server over SSH, a bucket), and what it is asked.

A kind is one module with a `KIND` object that satisfies `Kind`; dispatch.py finds it by the Location's type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from rbln_artifact_studio.core.location import Location

if TYPE_CHECKING:  # the reader (pydantic) and the backends load with the first artifact a command opens
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, IssueCallback
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback

LogCallback = Callable[[str], None]

# NamedTuples rather than dataclasses: `get-kvcache-num-blocks` runs through this module in shell loops, and
# dataclasses costs it a fifth of its time (see core/errors.py).


class ScanOptions(NamedTuple):
    """How a scan runs. `inspector` gives the reader of real compiler graphs for checks made here (asked once,
    when the first artifact needs it); a kind that checks elsewhere (on the server) ignores it."""

    on_issue: IssueCallback | None = None
    use_cache: bool = True
    processes: int = 1
    cancel: CancelToken | None = None
    inspector: Callable[[], GraphInspector | None] | None = None
    timeout: float | None = None  # seconds a scan elsewhere (a server) may take in all; None: the kind's own limit
    verify: bool = True
    """False: rows the fast checks pass come "checking", for a caller that shows them at once and then hands them to
    the Kind's verify (the desktop); a kind whose scan reads every verdict anyway (a bucket) ignores it."""
    rescan: Rescan | None = None
    """A scan again of part of a place already shown; None: a first scan, every row read."""


class Rescan(NamedTuple):
    """A scan again of root inside a place already shown: a kind that can reads only what changed (the local kind:
    what was added, changed or removed below root, in this process, through the scan cache); one that cannot reads
    root whole, every row again."""

    within: Location
    """The place shown, root itself or a folder above it: links are judged against it, its scan cache is used."""
    known: frozenset[str] = frozenset()
    """The rows shown already (their paths as scanned): those unchanged are not read again."""
    on_gone: Callable[[list[str], list[str]], None] | None = None
    """Told, before the new rows come, the known rows no longer there and the folders the rescan listed (a desktop
    watches them for the next change)."""


class Capabilities(NamedTuple):
    """What a kind of place allows, asked before any work (by the CLI and the desktop) instead of guessing from a
    URL: a frozen record on each Kind (a NamedTuple: the `get-kvcache-num-blocks` fast path loads this module)."""

    what: str
    """The kind of place in a sentence's words: "a folder on this computer", "a folder on a server"."""
    on_this_computer: bool
    """Its bytes are files here: a file manager shows them, the Trash takes them, a file dialog picks them."""
    writable: bool
    """A copy or a compile may be written into it (a read-only kind says why in read_only_reason)."""
    resize_in_place: bool
    """Its artifacts can be resized where they are."""
    server_side_copy: bool
    """A copy within it is made where it lives, without its bytes passing through this computer."""
    locks: bool
    """A resize holds a lock there that another resize of the same artifact waits for or is refused by."""
    copies_to: frozenset[type]
    """The kinds of Location a resized copy of one of its artifacts (or a compile made here, for this computer's
    kind) may go to; a kind other than its own is crossed by the function dispatch.CROSSINGS names."""
    copies_beside: bool
    """A copy proposed by default may go beside the source (a bucket's copy defaults to a folder here instead:
    listing a bucket proves no right to write into it)."""
    read_only_reason: str = ""
    """Why nothing may be written there, for a kind that is not writable."""


class Report(NamedTuple):
    """Where long work reports: log lines, progress (bytes, or 0 of 0 for a step), and the token that stops it."""

    log: LogCallback | None = None
    progress: ProgressCallback | None = None
    cancel: CancelToken | None = None


class Kind(Protocol):
    """Everything the studio does with artifacts in one kind of place. Each method gets a Location of its kind."""

    capabilities: Capabilities

    def scan(self, root: Location, options: ScanOptions) -> Iterator[ArtifactSummary]:
        """Every artifact under root, in path order, each row with the full check's verdict (options.verify=False:
        some "checking", for verify); writes nothing. A kind that cannot read only what changed reads a rescan whole."""
        ...

    def verify(self, root: Location, rows: list[ArtifactSummary], options: ScanOptions) -> Iterator[ArtifactSummary]:
        """Those of rows (found under root by a scan with verify=False) still "checking", each with the full check's
        verdict, in their order: options.processes check at once, options.inspector reads real compiler graphs."""
        ...

    def open(self, where: Location, inspector: GraphInspector | None, cancel: CancelToken | None) -> Artifact:
        """The artifact at where, checked as inspect checks it (NoKvCacheError for a kind without a KV cache)."""
        ...

    def read_block_count(self, where: Location) -> int:
        """kvcache_num_blocks of the artifact at where, as `get-kvcache-num-blocks` prints it."""
        ...

    def resize(self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None) -> ResizeResult:
        """Resize request.source in place or into request.output; nothing is changed when it fails. Both are of this
        kind (a copy across kinds is a Crossing's). toolchain: where the tools the user configured are (None: the
        environment's), looked up only for an artifact the real compiler wrote."""
        ...

    def check_output(self, output: Location, report: Report) -> None:
        """Refuse (StudioError) an output of this kind that cannot take a new artifact, before any work starts;
        writes nothing (receive, or the copy, prepares the place when it writes)."""
        ...

    def receive(self, folder: Path, output: Location, report: Report) -> int:
        """Put a whole artifact folder made on this computer (a compile's staging folder) at output, of this kind,
        visible only once whole; bytes written. Nothing is left at output when it fails."""
        ...


class Crossing(Protocol):
    """A copy from one kind of place into another (dispatch.CROSSINGS names one per pair of kinds): the request
    as it was built, both of its places of the pair's kinds; nothing is changed at the source."""

    def __call__(
        self, request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
    ) -> ResizeResult: ...
