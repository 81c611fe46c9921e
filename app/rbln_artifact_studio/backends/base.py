"""The one small interface every backend offers, and the result types the CLI and GUI display."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rbln_artifact_studio.core.location import LocalFolder, Location
from rbln_artifact_studio.core.model.kinds import KvLocation
from rbln_artifact_studio.core.operations.resize import ResizeResult
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest

LogCallback = Callable[[str], None]


@dataclass(frozen=True)
class BackendInfo:
    """What `rbln-studio-cli backends` and the About box report."""

    name: str
    available: bool
    detail: str
    version: str | None = None
    path: str | None = None  # the executable or interpreter that does the work, for the real toolchain

    def line(self) -> str:
        """One line of `rbln-studio-cli backends` and of the About box."""
        state = "available" if self.available else "not available"
        return f"{self.name:8} {state:14} {self.version or '-':12} {self.detail}"

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "available": self.available,
            "detail": self.detail,
            "version": self.version,
            "path": self.path,
        }


@dataclass(frozen=True)
class CompileResult:
    path: Path
    backend: str
    num_blocks: int
    num_min_blocks: int
    num_full_blocks: int
    npu: str
    num_devices: int
    warnings: list[str] = field(default_factory=list)
    delivered_to: Location | None = None  # a compile made in a staging folder here, then delivered there

    @property
    def where(self) -> Location:
        """Where the artifact is now: the folder it was compiled into, or where it was delivered."""
        return self.delivered_to if self.delivered_to is not None else LocalFolder(self.path)

    def to_json(self) -> dict[str, object]:
        return {
            "path": str(self.where),
            "backend": self.backend,
            "kvcache_num_blocks": self.num_blocks,
            "num_min_blocks": self.num_min_blocks,
            "num_full_blocks": self.num_full_blocks,
            "npu": self.npu,
            "num_devices": self.num_devices,
            "warnings": self.warnings,
        }

    def summary(self) -> str:
        return (
            f"Compiled {self.where} on {self.npu} x{self.num_devices}: kvcache_num_blocks={self.num_blocks} "
            f"(floor {self.num_min_blocks}, full pool {self.num_full_blocks})"
        )


class Backend(Protocol):
    """Compile and resize; long work reports progress and log lines and stops when cancel is set."""

    name: str

    def info(self) -> BackendInfo: ...

    def compile(
        self,
        request: CompileRequest,
        output_dir: Path,
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
    ) -> CompileResult: ...

    def resize(
        self,
        request: ResizeRequest,
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
        location: KvLocation | None = None,
    ) -> ResizeResult:
        """request.source (a LocalFolder) in place or into request.output (a LocalFolder); location: where its KV
        cache is, as the caller already read it (None: read here)."""
        ...
