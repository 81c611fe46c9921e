"""One entry per operation; each finds the module of the Location's kind by its type and hands the work over.

A kind's module loads when the first Location of that kind is used, so a local command never loads SSH's; what a
built-in kind allows (its Capabilities) is listed here, so asking it loads no kind's module.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import (
    BucketPrefix,
    LocalFolder,
    Location,
    ServerFolder,
    expect,
    host_of,
    parse_location,
    server_url,
)
from rbln_artifact_studio.places.kind import (
    Capabilities,
    Crossing,
    Kind,
    Report,
    ScanOptions,
)

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.progress import CancelToken

KIND_MODULES: dict[type, str] = {
    LocalFolder: "rbln_artifact_studio.places.local",
    ServerFolder: "rbln_artifact_studio.places.ssh",
    BucketPrefix: "rbln_artifact_studio.places.bucket",
}
"""The module implementing each built-in kind of Location (its `KIND`); a registered one (a UrlFolder subclass,
core/location.py) names its module itself."""

BUILT_IN_CAPABILITIES: dict[str, Capabilities] = {
    "rbln_artifact_studio.places.local": Capabilities(
        what="a folder on this computer",
        on_this_computer=True,
        writable=True,
        resize_in_place=True,
        server_side_copy=False,
        locks=True,  # the artifact's lock file (core/portable/lock.py)
        copies_to=frozenset({LocalFolder, BucketPrefix, ServerFolder}),
        copies_beside=True,
    ),
    "rbln_artifact_studio.places.ssh": Capabilities(
        what="a folder on a server",
        on_this_computer=False,
        writable=True,
        resize_in_place=True,
        server_side_copy=True,  # a copy on the server is made there by a job
        locks=True,  # the artifact's lock file there, as here
        copies_to=frozenset({ServerFolder, BucketPrefix}),  # on the same server (other_server_error)
        copies_beside=True,  # the server's job checks the folder where it writes
    ),
    "rbln_artifact_studio.places.bucket": Capabilities(
        what="a prefix in a bucket",
        on_this_computer=False,
        writable=True,
        resize_in_place=True,  # where the store honours conditional writes (refused with the reason elsewhere)
        server_side_copy=True,  # a copy in the bucket: the payload copied by the store
        locks=True,  # a lock object created with If-None-Match
        copies_to=frozenset({BucketPrefix, LocalFolder, ServerFolder}),
        copies_beside=False,  # reading a bucket proves no right to write into it: a copy defaults to a folder here
    ),
}
"""What each built-in kind allows, by the module implementing it (whose KIND takes its own from here): a dialog
asks as the user types, and a kind's module brings its whole reader and writer."""

_BUCKET, _DELIVERY = "rbln_artifact_studio.places.bucket_server", "rbln_artifact_studio.places.delivery"
CROSSINGS: dict[tuple[type, type], tuple[str, str]] = {
    (BucketPrefix, LocalFolder): (_BUCKET, "to_folder"),  # downloaded into a staging folder, resized there
    (LocalFolder, BucketPrefix): (_BUCKET, "from_folder"),  # uploaded with the new headers, rbln_config.json last
    (BucketPrefix, ServerFolder): (_BUCKET, "to_server"),  # staged, resized here, sent, renamed into place there
    (ServerFolder, BucketPrefix): (_BUCKET, "from_server"),  # fetched here under the server's lock, uploaded
    (LocalFolder, ServerFolder): (_DELIVERY, "resize_here_and_deliver"),  # resized into staging here, sent whole
}
"""The one table of copies from one kind of place into another: (source's type, output's type) -> (module, name)
of the function that makes them, a Crossing; loaded when first used. A pair not listed is refused with the reason
(cross_refusal); a Kind's own resize gets only its own kind of place."""


DOWNLOADS: dict[type, tuple[str, str]] = {
    ServerFolder: ("rbln_artifact_studio.places.ssh", "fetch_from_server"),  # under the folder's lock there
    BucketPrefix: ("rbln_artifact_studio.places.bucket", "fetch_from_bucket"),  # each object as of its ETag
}
"""The kinds of place whose artifacts are downloaded to this computer as they are, and the function (in the kind's
module) that fetches one's files into a staging folder here (places/download.py); a kind not listed is refused
with the reason."""


def crossing(source: type, output: type) -> Crossing | None:
    """The function that makes a copy from source's kind of place into output's (None: no copy crosses so)."""
    listed = CROSSINGS.get((source, output))
    if listed is None:
        return None
    module, name = listed
    return cast(Crossing, getattr(importlib.import_module(module), name))


def kind_of(where: Location | None, kind: type | None = None) -> Kind:
    """The Kind that serves where's type of Location (or the given type's)."""
    kind = kind or type(where)
    registered: str = getattr(kind, "kind_module", "")  # a registered kind of place (UrlFolder) names its module
    name = registered or KIND_MODULES[kind]
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise  # a library the kind needs: its module says which (a ModuleNotFoundError of its own is a bug)
        label = where if where is not None else kind.__name__
        raise StudioError(f"{label}: this build of the studio cannot reach this kind of place.") from None
    return cast(Kind, module.KIND)


def scan(root: Location, options: ScanOptions | None = None) -> Iterator[ArtifactSummary]:
    """Every artifact under root, by its Kind: what the CLI prints and the desktop shows, for every kind of place."""
    return kind_of(root).scan(root, options or ScanOptions())


def verify(
    root: Location, rows: list[ArtifactSummary], options: ScanOptions | None = None
) -> Iterator[ArtifactSummary]:
    """The full check's verdicts of the rows a scan of root with verify=False left "checking", by root's Kind."""
    return kind_of(root).verify(root, rows, options or ScanOptions())


def open_artifact(
    where: Location, inspector: GraphInspector | None = None, cancel: CancelToken | None = None
) -> Artifact:
    return kind_of(where).open(where, inspector, cancel)


def read_block_count(where: Location) -> int:
    return kind_of(where).read_block_count(where)


def capabilities(where: Location | type) -> Capabilities:
    """What where's kind of place allows (or a Location type's), from its Kind: asked instead of guessing. A
    built-in kind's is listed above (its module is not loaded for it)."""
    kind = where if isinstance(where, type) else type(where)
    module: str = getattr(kind, "kind_module", "") or KIND_MODULES.get(kind, "")
    listed = BUILT_IN_CAPABILITIES.get(module)
    if listed is not None:
        return listed
    if isinstance(where, type):
        return kind_of(None, where).capabilities
    return kind_of(where).capabilities


def path_here(where: Location) -> Path | None:
    """The folder on this computer that where names, when its kind keeps its bytes here (None: a place elsewhere):
    what a file dialog starts in, a disk check reads, a file manager shows."""
    if not capabilities(where).on_this_computer:
        return None
    return expect(where, LocalFolder).path  # the one kind whose bytes are files here


def write_refusal(output: Location) -> str | None:
    """Why nothing may be written at output, from its kind's capabilities (None: its kind takes new artifacts)."""
    caps = capabilities(output)
    if caps.writable:
        return None
    return f"{output} is {caps.what}, which the studio only reads: {caps.read_only_reason} {NOTHING_CHANGED}"


def in_place_refusal(source: Location) -> str | None:
    """Why source cannot be resized where it is, from its kind's capabilities, before anything is read (None: it
    can): what the resize dialog shows beside its in-place choice and the CLI prints."""
    caps = capabilities(source)
    if caps.resize_in_place and caps.locks:
        return None
    if caps.resize_in_place:  # two resizes of one artifact at once there would overwrite each other's bytes
        return (
            f"{source} is {caps.what}, where no lock keeps two resizes of one artifact apart: resize it to a copy "
            "instead. Nothing was changed."
        )
    why = f" {caps.read_only_reason}" if caps.read_only_reason else ""
    instead = (
        "resize it to a copy instead"
        if caps.copies_to
        else "copy the artifact to a folder here first, then resize the copy"
    )
    return (
        f"{source} is {caps.what}, which cannot be resized in place:{why} To change it, {instead}. Nothing was changed."
    )


def _copy_out_refusal(source: Location) -> str | None:
    """Why no resized copy of source can be made anywhere: its kind is one the studio only reads."""
    caps = capabilities(source)
    if caps.copies_to:
        return None
    return (
        f"{source} is {caps.what}, which the studio only reads: {caps.read_only_reason} Copy the artifact to a folder "
        f"here first, then resize the copy. {NOTHING_CHANGED}"
    )


def copy_refusal(source: Location, output: Location) -> str | None:
    """Why a resize of source cannot write its copy at output, before anything is read (None: a Kind makes it).

    The rules resize applies by the capabilities of the two places, for a dialog to say as the user types."""
    refusal = write_refusal(output)
    if refusal is not None:
        return refusal
    refusal = _copy_out_refusal(source)
    if refusal is not None:
        return refusal
    if type(output) not in capabilities(source).copies_to:
        return cross_refusal(source, output).one_line()
    on_server, there = server_folder(source), server_folder(output)
    if on_server is not None and there is not None and there.host != on_server.host:
        return other_server_error(on_server, output).one_line()
    if there is not None and not there.path.startswith("/"):  # say what to type, not only what is wrong
        return f"Give the copy's folder on {there.host} as an absolute path: {there.at('/PATH')} or /PATH there."
    return None


def other_server_error(source: ServerFolder, output: Location) -> StudioError:
    """The refusal of a copy of a server's artifact anywhere but that server (or a bucket: CROSSINGS)."""
    return StudioError(
        f"A resize on {source.host} writes its copy there too; {output} is not on {source.host}. Give the copy's "
        f"folder on {source.host}: {server_url(source.host)}/PATH or an absolute /PATH there."
    )


def place_of(where: Location) -> str:
    """The machine or store where's bytes are on, as the Host column names it: '' for this computer."""
    return "" if capabilities(where).on_this_computer else host_of(where)


def stays_near(source: Location, output: Location) -> bool:
    """Whether output is on source's own machine or store, or on this computer: where a copy may go by default."""
    return place_of(output) in ("", place_of(source))


def crossing_note(source: Location, output: Location) -> str | None:
    """What a dialog says beside Apply when output is on another machine or store than source's and not on this
    computer (None: it is not)."""
    if stays_near(source, output):
        return None
    there = place_of(source) or "this computer"
    return f"Writes to {place_of(output)}, another place than the artifact's ({there})."


def copy_route(source: Location, output: Location) -> str | None:
    """How a copy of source at output is made, when source is not on this computer (None: it is, or no copy goes
    there): made where it lives (its kind copies server-side) or passing through this computer."""
    caps = capabilities(source)
    if caps.on_this_computer or copy_refusal(source, output) is not None:
        return None
    if caps.server_side_copy and place_of(output) == place_of(source):
        return f"Made on {place_of(source)}: the artifact's bytes do not pass through this computer."
    if capabilities(output).on_this_computer:
        return f"Downloaded from {place_of(source)} and resized on this computer."
    return (
        f"Passes through this computer: fetched from {place_of(source)}, resized here, written to {place_of(output)}."
    )


def server_folder(where: object) -> ServerFolder | None:
    """where as a folder on a server, when it is a Location of a server's kind (None: anything else): what asks
    that server's jobs, its connection, its rescans."""
    return where if isinstance(where, ServerFolder) else None


def default_copy(source: Location, name: str, remembered: str, home: Path, chosen: str = "") -> Location:
    """Where a copy of source named name is proposed: in the folder the user chose last for copies from source's
    place (chosen, a Location's text), wherever it is; else in the folder last chosen for any copy (remembered)
    when it is on source's machine or store or on this computer (a copy to a server or a bucket once never makes
    a copy from another place go there too); else beside source where its kind allows it, else in home. Each only
    where a copy of source may go; never a path made from a server's path or a bucket's key in another kind of
    place."""
    for text, anywhere in ((chosen, True), (remembered, False)):
        try:
            folder = parse_location(text) if text else None
        except StudioError:
            folder = None  # a stored value that no longer parses: as if none were stored
        if folder is None or not (anywhere or stays_near(source, folder)):
            continue
        if copy_refusal(source, folder.child(name)) is None:
            return folder.child(name)
    caps = capabilities(source)
    if caps.copies_beside or LocalFolder not in caps.copies_to:
        return source.parent.child(name)
    return LocalFolder(home / name)


def cross_refusal(source: Location, output: Location) -> StudioError:
    """The refusal of a copy into a kind of place that source's kind does not copy to, saying where it may go."""

    def what(kind: type) -> str:
        try:
            return capabilities(kind).what
        except StudioError:  # a kind this build cannot reach: named by its type
            return kind.__name__

    goes = [what(kind) for kind in KIND_MODULES if kind in capabilities(source).copies_to]
    return StudioError(
        f"A copy of {source} may go to {', '.join(goes[:-1])} or {goes[-1]}; {output} is {what(type(output))}. "
        "Make the copy in one of those, then move it. Nothing was changed."
        if len(goes) > 1
        else f"A copy of {source} may go to {goes[0] if goes else 'no other place'}; {output} is "
        f"{what(type(output))}. Nothing was changed."
    )


def compile_refusal(output: Location) -> str | None:
    """Why a compile (made on this computer) cannot be delivered at output, before any work (None: it can)."""
    refusal = write_refusal(output)
    if refusal is not None:
        return refusal
    if type(output) not in capabilities(LocalFolder).copies_to:
        return (
            f"A compile is made on this computer and delivered where a copy from here may go; {output} is "
            f"{capabilities(output).what}, which no copy from here reaches. {NOTHING_CHANGED}"
        )
    return None


def resize(
    request: ResizeRequest, report: Report | None = None, toolchain: ToolchainSettings | None = None
) -> ResizeResult:
    """In place, or into a copy of the same kind of place, by the source's Kind; a copy into another kind of place
    by the function CROSSINGS names for the pair. The request reaches it as it was built."""
    source, output = request.source, request.output
    if output is None and (refusal := in_place_refusal(source)):
        raise StudioError(refusal)
    if output is not None and (refusal := write_refusal(output) or _copy_out_refusal(source)):
        raise StudioError(refusal)
    if output is not None and type(output) is not type(source):
        make = crossing(type(source), type(output))
        if make is None:
            raise cross_refusal(source, output)
        return make(request, report or Report(), toolchain)
    return kind_of(source).resize(request, report or Report(), toolchain)
