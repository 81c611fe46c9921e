"""Which backend does the work: detection, and the compile/resize/inspect entry points the CLI and GUI call."""

from __future__ import annotations

import os
from pathlib import Path

from rbln_artifact_studio.backends.base import BackendInfo, CompileResult, LogCallback, ResizeRequest
from rbln_artifact_studio.backends.optimum import OptimumBackend
from rbln_artifact_studio.backends.rebel_inspect import RebelInspector
from rbln_artifact_studio.backends.simulator import SimulatorBackend
from rbln_artifact_studio.backends.toolchain import CLI_NAME, clear_cache, locate, optimum_status, rebel_status
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import GRAPH_SUFFIX, GraphInspector
from rbln_artifact_studio.core.model.kinds import kv_location
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest
from rbln_artifact_studio.core.simulator.container import is_container
from rbln_artifact_studio.core.storage.resize import ResizeResult

BACKEND_CHOICES = ("auto", "sim", "optimum")


def detect_backends(refresh: bool = False, cancel: CancelToken | None = None) -> list[BackendInfo]:
    """The simulator always; optimum-rbln-cli and rebel where installed. Cached per process unless refresh.

    Cancel stops a check that is running (its process group ends) and raises CancelledError.
    """
    if refresh:
        clear_cache()
    located = locate()
    optimum_status(located, cancel)  # run (and cache) the check here, where it can be cancelled
    rebel = rebel_status(located, cancel)
    return [
        SimulatorBackend().info(),
        OptimumBackend(located).info(),
        BackendInfo("rebel", rebel.available, rebel.detail, rebel.version, str(rebel.path) if rebel.path else None),
    ]


def _check_choice(backend: str) -> None:
    if backend not in BACKEND_CHOICES:
        raise StudioError(f"Unknown backend {backend!r}; choose one of {', '.join(BACKEND_CHOICES)}.")


def inspector_for(backend: str = "auto", cancel: CancelToken | None = None) -> GraphInspector | None:
    """A reader for real compiler .rbln files (rebel in the toolchain's Python), or None where there is none.

    Finding the interpreter runs nothing; whether rebel imports there is learnt when an artifact is read,
    and a failure then becomes the artifact's "allocations unknown" reason.
    """
    _check_choice(backend)
    if backend == "sim":
        return None
    located = locate()
    if located.python is None:
        return None
    return RebelInspector(located.python, located.settings.probe_timeout, cancel)


def has_real_graphs(artifact_dir: Path) -> bool:
    """True when some .rbln file in the folder is not the simulator's container (the real compiler wrote it)."""
    try:
        entries = list(os.scandir(artifact_dir))
    except OSError:
        return False
    return any(e.name.endswith(GRAPH_SUFFIX) and e.is_file() and not is_container(Path(e.path)) for e in entries)


def compile_model(
    request: CompileRequest,
    output_dir: str | Path,
    backend: str = "auto",
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: CancelToken | None = None,
) -> CompileResult:
    """Compile with optimum-rbln-cli when asked (or, for auto, when it is installed), else the simulator."""
    _check_choice(backend)
    if backend == "optimum" or (backend == "auto" and optimum_status(cancel=cancel).available):
        return OptimumBackend().compile(request, Path(output_dir), progress, log, cancel)
    return SimulatorBackend().compile(request, Path(output_dir), progress, log, cancel)


def resize_artifact(
    artifact_dir: str | Path,
    target: int | None = None,
    budget_text: str | None = None,
    output_dir: str | Path | None = None,
    backend: str = "auto",
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: CancelToken | None = None,
) -> ResizeResult:
    """Resize with the tool that wrote the artifact: the simulator's own engine, or optimum-rbln-cli."""
    _check_choice(backend)
    request = ResizeRequest(Path(artifact_dir), target, budget_text, Path(output_dir) if output_dir else None)
    location = kv_location(request.artifact_dir)  # kinds without a resizable KV cache are refused here
    real = has_real_graphs(location.model_dir)
    if real and location.vlm_root is not None:
        raise StudioError(
            f"{request.artifact_dir.name}: its language model was compiled by the real compiler, and "
            f"{CLI_NAME} 0.12.0 resizes only top-level decoder-only artifacts: run on {location.section}/ it "
            f"would leave the {location.section} section of the model's rbln_config.json at the old count. "
            "Nothing was changed."
        )
    if backend == "auto":
        backend = "optimum" if real else "sim"
        status = optimum_status(cancel=cancel) if real else None
        if status is not None and not status.available:
            raise StudioError(
                f"{request.artifact_dir.name} was compiled by the real compiler; resizing it needs {CLI_NAME}, "
                f"which is not available here: {status.detail} Nothing was changed."
            )
    if backend == "optimum":
        return OptimumBackend(inspector=inspector_for("optimum", cancel)).resize(request, progress, log, cancel)
    return SimulatorBackend().resize(request, progress, log, cancel)
