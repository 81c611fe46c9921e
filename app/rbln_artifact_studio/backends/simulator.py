"""The built-in simulator backend: compiles and resizes with rbln_artifact_studio.core, always available."""

from __future__ import annotations

from pathlib import Path

from rbln_artifact_studio import __version__
from rbln_artifact_studio.backends.base import BackendInfo, CompileResult, LogCallback
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.core.model.kinds import KvLocation
from rbln_artifact_studio.core.operations.resize import ResizeResult, resize_in_place, resize_to_copy
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, Progress, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact


class SimulatorBackend:
    name = BackendChoice.SIM.value

    def info(self) -> BackendInfo:
        return BackendInfo(self.name, True, "built-in compiler simulator (always available)", __version__)

    def compile(
        self,
        request: CompileRequest,
        output_dir: Path,
        progress: ProgressCallback | None = None,
        log: LogCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> CompileResult:
        plan = plan_compile(request)
        path = write_artifact(plan, Path(output_dir), Progress(progress, cancel))
        return CompileResult(
            path,
            self.name,
            plan.num_blocks,
            plan.floor,
            plan.full,
            plan.shape.npu.name,
            plan.shape.num_devices,
            plan.warnings,
        )

    def resize(
        self,
        request: ResizeRequest,
        progress: ProgressCallback | None = None,
        log: LogCallback | None = None,
        cancel: CancelToken | None = None,
        location: KvLocation | None = None,
    ) -> ResizeResult:
        budget = request.budget
        if request.output_folder is None:
            return resize_in_place(request.folder, request.target, budget, location=location)
        return resize_to_copy(
            request.folder, request.output_folder, request.target, budget, Progress(progress, cancel), location=location
        )
