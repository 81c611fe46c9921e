"""The background operations the app runs: each submits one job whose worker calls rbln_artifact_studio.core or a backend.

The work runs in worker threads, and so do the imports of what only the work needs (the backends, the compiler,
pydantic: ~300 ms that would otherwise stall the GUI thread the first time an artifact is selected): this module
itself loads before the window's first paint, with nothing heavy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from PySide6.QtCore import QFile, QStandardPaths

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import Location, parse_location
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager
from rbln_artifact_studio.places import dispatch
from rbln_artifact_studio.places.kind import Report

if TYPE_CHECKING:  # types only: what the work alone loads, in its worker
    from rbln_artifact_studio.backends.base import CompileResult
    from rbln_artifact_studio.backends.choice import BackendChoice
    from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector
    from rbln_artifact_studio.core.model.kinds import ModelDescription
    from rbln_artifact_studio.core.operations.resize import ResizeResult
    from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
    from rbln_artifact_studio.core.simulator.compiler import CompileRequest


def _log_result(ctx: JobContext, warnings: list[str], summary: str) -> None:
    for warning in warnings:
        ctx.log(f"warning: {warning}")
    ctx.log(summary)


def inspector(cancel: CancelToken, toolchain: ToolchainSettings) -> GraphInspector | None:
    """Worker side: the backends' reader of the real compiler's graphs (None where there is none)."""
    # deferred: the backends and pydantic (~300 ms) load in the job's worker, never on the GUI thread
    from rbln_artifact_studio.backends.registry import inspector_for

    return inspector_for(cancel=cancel, toolchain=toolchain)


class NotResizable(NamedTuple):
    """What read_artifact found in a model without a resizable KV cache: its description (the window tells the two
    results apart without loading the model's kinds)."""

    description: ModelDescription


def read_artifact(jobs: JobManager, path: str, toolchain: ToolchainSettings) -> Job:
    """Open an artifact (config, graph headers, allocations) for the detail panel.

    The job's result is the Artifact, or for a model without a resizable KV cache NotResizable.
    """

    def work(ctx: JobContext) -> Artifact | NotResizable:
        # deferred: the model's kinds load in the worker, never before the window's first paint
        from rbln_artifact_studio.core.model.kinds import NoKvCacheError

        try:  # wherever it lives (a server's: read there)
            return dispatch.open_artifact(where, inspector(ctx.cancel, toolchain), ctx.cancel)
        except NoKvCacheError as exc:
            return NotResizable(exc.description)

    where = parse_location(path)
    return jobs.submit(f"Read {where.name}", work, visible=False)


def compile_artifact(
    jobs: JobManager,
    request: CompileRequest,
    output: Location,
    backend: BackendChoice,
    toolchain: ToolchainSettings,
    before: Callable[[], None] | None = None,
) -> Job:
    """Compile into a new folder here, or here and then delivered to a server or a bucket (places/delivery.py); a
    failed or cancelled compile leaves nothing behind (staging + rename). before runs first, in the worker."""

    def work(ctx: JobContext) -> CompileResult:
        # deferred: places.delivery (fsutil, the compiler's output checks) loads in the compile's worker
        from rbln_artifact_studio.places.delivery import compile_to

        if before is not None:
            before()

        ctx.log(f"compile {request.model_id} -> {output} (backend {backend.value})")
        result = compile_to(request, output, backend, Report(ctx.log, ctx.progress, ctx.cancel), toolchain)
        _log_result(ctx, result.warnings, result.summary())
        return result

    return jobs.submit(f"Compile {request.model_id} → {output}", work, writes=True)


def resize(
    jobs: JobManager,
    request: ResizeRequest,
    toolchain: ToolchainSettings,
    before: Callable[[], None] | None = None,
    blocks: int | None = None,
) -> Job:
    """Resize in place or into a copy (with progress and cancel for the copy), the request handed to dispatch as the
    dialog built it; before runs first, in the worker. blocks: the count the dialog previewed, for the title."""
    where = f"copy {request.output}" if request.output else "in place"
    count = blocks if blocks is not None else request.target
    size = f"{count} blocks" if count is not None else f"fit {request.budget_text}"
    title = f"Resize {request.source} to {size} ({where})"  # as the CLI names it: which place, too

    def work(ctx: JobContext) -> ResizeResult:
        if before is not None:
            before()
        result = dispatch.resize(request, Report(ctx.log, ctx.progress, ctx.cancel), toolchain)
        _log_result(ctx, result.warnings, result.summary())
        return result

    return jobs.submit(title, work, writes=True)


def move_to_trash(jobs: JobManager, paths: list[str]) -> Job:
    """Move artifact folders to the desktop's Trash (a rename there, so each one moves whole or not at all)."""

    def work(ctx: JobContext) -> list[str]:
        # Qt makes the Trash folder but not the data folder that holds it (missing on a fresh account).
        os.makedirs(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation), exist_ok=True)
        moved = []
        for path in paths:
            ctx.checkpoint()
            if not os.path.lexists(path):
                continue  # already gone (deleted from a terminal meanwhile)
            if not QFile.moveToTrash(path):
                moved_before = f"Moved before it: {', '.join(moved)}." if moved else NOTHING_CHANGED
                raise StudioError(
                    f"Could not move {path} to the Trash (no Trash on that disk, or no permission). {moved_before}"
                )
            ctx.log(f"moved {path} to the Trash")
            moved.append(path)
        return moved

    title = f"Move {paths[0]} to the Trash" if len(paths) == 1 else f"Move {len(paths)} artifacts to the Trash"
    return jobs.submit(title, work, writes=True)


def build_demo_workspace(jobs: JobManager, folder: str) -> Job:
    """Compile the demo artifacts that are missing in folder."""

    def work(ctx: JobContext) -> str:
        # deferred: the demo's compiles (the compiler, pydantic) load in the job's worker
        from rbln_artifact_studio.core.demo import build_demo

        written = build_demo(Path(folder), ctx.progress, ctx.cancel)
        ctx.log(f"{len(written)} demo artifact(s) written in {folder}")
        return folder

    return jobs.submit("Build the demo workspace", work, writes=True)
