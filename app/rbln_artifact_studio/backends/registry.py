"""Which backend does the work: detection, and the compile/resize/inspect entry points the CLI and GUI call."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rbln_artifact_studio.backends.base import Backend, BackendInfo, CompileResult, LogCallback
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.optimum import OptimumBackend, require_real
from rbln_artifact_studio.backends.rebel_inspect import RebelInspector
from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.backends.simulator import SimulatorBackend
from rbln_artifact_studio.backends.toolchain import (
    CLI_NAME,
    Located,
    clear_cache,
    locate,
    optimum_status,
    rebel_status,
)
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, GraphInspector, open_artifact
from rbln_artifact_studio.core.fleet.damage import is_real_compiler_output
from rbln_artifact_studio.core.model.kinds import kv_location
from rbln_artifact_studio.core.operations.resize import ResizeResult
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest


def detect_backends(
    refresh: bool = False, cancel: CancelToken | None = None, toolchain: ToolchainSettings | None = None
) -> list[BackendInfo]:
    """The simulator always; optimum-rbln-cli and rebel where installed. Cached per process unless refresh.

    Cancel stops a check that is running (its process group ends) and raises CancelledError. `toolchain` is what
    the caller configured (the GUI's preferences); environment variables win over it.
    """
    if refresh:
        clear_cache()
    located = locate(toolchain)
    optimum_status(located, cancel)  # run (and cache) the check here, where it can be cancelled
    rebel = rebel_status(located, cancel)
    return [
        SimulatorBackend().info(),
        OptimumBackend(located).info(),
        BackendInfo("rebel", rebel.available, rebel.detail, rebel.version, str(rebel.path) if rebel.path else None),
    ]


BackendFactory = Callable[[Located, CancelToken | None], Backend]

BACKENDS: dict[BackendChoice, BackendFactory] = {
    BackendChoice.SIM: lambda located, cancel: SimulatorBackend(),
    BackendChoice.OPTIMUM: lambda located, cancel: OptimumBackend(located, inspector=_inspector(located, cancel)),
}
"""Every concrete backend by its choice; AUTO is resolved per job by compile_model and resize_artifact."""


def backend_for(choice: BackendChoice, located: Located, cancel: CancelToken | None = None) -> Backend:
    """The backend that does the work for a concrete choice."""
    factory = BACKENDS.get(choice)
    if factory is None:
        raise ValueError(f"{choice!r} names no single backend")
    return factory(located, cancel)


def _inspector(located: Located, cancel: CancelToken | None) -> GraphInspector | None:
    if located.python is None:
        return None
    return RebelInspector(located.python, located.settings.probe_timeout, cancel)


def inspector_for(
    backend: BackendChoice = BackendChoice.AUTO,
    cancel: CancelToken | None = None,
    toolchain: ToolchainSettings | None = None,
) -> GraphInspector | None:
    """A reader for real compiler .rbln files (rebel in the toolchain's Python), or None where there is none.

    Finding the interpreter runs nothing; whether rebel imports there is learnt when an artifact is read,
    and a failure then becomes the artifact's "allocations unknown" reason.
    """
    if BackendChoice.parse(backend) == BackendChoice.SIM:
        return None
    return _inspector(locate(toolchain), cancel)


def has_real_graphs(artifact_dir: Path) -> bool:
    """True when some .rbln file in the folder has none of the simulator container's marks (the real compiler
    wrote it); an empty or overwritten container is damaged, not real (the simulator's engine names it)."""
    try:
        entries = list(os.scandir(artifact_dir))
    except OSError:
        return False
    return any(e.name.endswith(GRAPH_SUFFIX) and e.is_file() and is_real_compiler_output(Path(e.path)) for e in entries)


def compile_model(
    request: CompileRequest,
    output_dir: str | Path,
    backend: BackendChoice = BackendChoice.AUTO,
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: CancelToken | None = None,
    toolchain: ToolchainSettings | None = None,
) -> CompileResult:
    """Compile with optimum-rbln-cli when asked (or, for auto, when it is installed), else the simulator."""
    choice, located = BackendChoice.parse(backend), locate(toolchain)
    if choice == BackendChoice.AUTO:
        choice = BackendChoice.OPTIMUM if optimum_status(located, cancel).available else BackendChoice.SIM
    return backend_for(choice, located, cancel).compile(request, Path(output_dir), progress, log, cancel)


def resize_artifact(
    request: ResizeRequest,
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: CancelToken | None = None,
    toolchain: ToolchainSettings | None = None,
) -> ResizeResult:
    """Resize a folder here with the tool that wrote the artifact: the simulator's own engine, or optimum-rbln-cli.
    Where its KV cache is is read once, here, and handed to the backend; the toolchain is looked up only for an
    artifact the real compiler wrote (or when optimum is asked for by name)."""
    asked = BackendChoice.parse(request.backend)
    folder = request.folder
    location = kv_location(folder)  # kinds without a resizable KV cache are refused here
    real = has_real_graphs(location.model_dir)
    if real and location.vlm_root is not None:
        raise StudioError(
            f"{folder.name}: its language model was compiled by the real compiler, and "
            f"{CLI_NAME} 0.12.0 resizes only top-level decoder-only artifacts: run on {location.section}/ it "
            f"would leave the {location.section} section of the model's rbln_config.json at the old count. "
            "Nothing was changed."
        )
    choice = (BackendChoice.OPTIMUM if real else BackendChoice.SIM) if asked == BackendChoice.AUTO else asked
    if choice == BackendChoice.SIM:  # the simulator's own engine: no toolchain is looked for, nothing is run
        return SimulatorBackend().resize(request, progress, log, cancel, location)
    if not real and (artifact := open_artifact(folder)).is_simulated:
        require_real(artifact)  # optimum asked for by name on the simulator's artifact: refused without the tool
    located = locate(toolchain)
    if real and asked == BackendChoice.AUTO:
        status = optimum_status(located, cancel)
        if not status.available:
            raise StudioError(
                f"{folder.name} was compiled by the real compiler; resizing it needs {CLI_NAME}, "
                f"which is not available here: {status.detail} Nothing was changed."
            )
    return backend_for(choice, located, cancel).resize(request, progress, log, cancel, location)
