"""Outputs made on this computer and delivered elsewhere: a compile into a server's folder or a bucket's prefix, and
a resized copy of a folder here sent to a server.

The artifact is made in a private staging folder here (fsutil.staging_root) and handed to the Kind of the
output, which puts it there whole or not at all (a server's folder renamed into place, a bucket's prefix marked
incomplete until its rbln_config.json is written). The output is checked before any work, so a compile that could
not be delivered is refused before it runs.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from rbln_artifact_studio.backends.base import CompileResult
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.registry import compile_model
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import LocalFolder, Location, ServerFolder, expect
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest, ResizeResult
from rbln_artifact_studio.core.simulator.compiler import CompileRequest
from rbln_artifact_studio.core.storage.fsutil import StagingDir, describe_os_error, staging_root
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Kind, Report
from rbln_artifact_studio.remote.transfer import ServerCopyResult

if TYPE_CHECKING:
    from rbln_artifact_studio.backends.settings import ToolchainSettings


def _receiving_kind(output: Location) -> Kind:
    """The Kind of output's place, which takes a folder made here (a kind that a copy from here reaches:
    dispatch.CROSSINGS lists the pair)."""
    if dispatch.crossing(LocalFolder, type(output)) is None:
        raise StudioError(dispatch.compile_refusal(output) or f"Nothing from this computer reaches {output}.")
    return dispatch.kind_of(output)


def compile_to(
    request: CompileRequest,
    output: Location,
    backend: BackendChoice,
    report: Report,
    toolchain: ToolchainSettings | None = None,
) -> CompileResult:
    """Compile into output: a folder here directly, anywhere else through a staging folder here and the crossing
    into output's kind; refused with the reason (its capabilities, or the output's own check) before any work."""

    def run(folder: LocalFolder) -> CompileResult:
        return compile_model(
            request, folder.path, backend, progress=report.progress, log=report.log, cancel=report.cancel,
            toolchain=toolchain,
        )  # fmt: skip

    refusal = dispatch.compile_refusal(output)
    if refusal is not None:
        raise StudioError(refusal)
    here = dispatch.path_here(output)
    if here is not None:
        return run(LocalFolder(here))
    kind = _receiving_kind(output)
    kind.check_output(output, report)  # an output that exists, or a place that cannot be reached: before compiling
    name = output.name or "artifact"
    try:
        with StagingDir(staging_root() / name, claim=False) as staging:
            result = run(LocalFolder(staging.path / name))
            kind.receive(result.path, output, report)
    except OSError as exc:
        raise StudioError(describe_os_error(exc, "staging the compile here") + f" {output} was not written.") from None
    if report.log is not None:
        report.log(f"Delivered the compile to {output}")
    return dataclasses.replace(result, delivered_to=output)


def resize_here_and_deliver(
    request: ResizeRequest, report: Report, toolchain: ToolchainSettings | None = None
) -> ResizeResult:
    """A resized copy of a folder here at an output of another kind (a server's folder): resized into a staging
    folder here by the local Kind (the request aimed at that folder), then delivered whole; the source is only
    read."""
    source, output = expect(request.source, LocalFolder), expect(request.output, ServerFolder)  # dispatch.CROSSINGS
    kind = dispatch.kind_of(output)
    kind.check_output(output, report)  # before a byte is read or written
    name = output.name or source.name
    try:
        with StagingDir(staging_root() / name, claim=False) as staging:
            here = LocalFolder(staging.path / name)
            made = dispatch.kind_of(source).resize(dataclasses.replace(request, output=here), report, toolchain)
            sent = kind.receive(made.path, output, report)
    except OSError as exc:
        raise StudioError(describe_os_error(exc, "staging the copy here") + f" {output} was not written.") from None
    return ServerCopyResult.on(output, made.previous, made.target, made.warnings, sent)
