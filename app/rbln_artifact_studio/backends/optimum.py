"""The real toolchain backend: compile and resize by running optimum-rbln-cli, streamed, cancellable, all-or-nothing."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
from pathlib import Path
from typing import cast

from rbln_artifact_studio.backends.base import BackendInfo, CompileResult, LogCallback
from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.process import Finished, failure, run_streamed
from rbln_artifact_studio.backends.toolchain import CLI_NAME, Located, locate, optimum_status, tool_env
from rbln_artifact_studio.core.errors import (
    NOTHING_CHANGED,
    TO_A_COPY,
    CancelledError,
    ConfigError,
    Remedy,
    ResizeError,
    StudioError,
)
from rbln_artifact_studio.core.estimation.estimator import SequenceShape
from rbln_artifact_studio.core.fleet.artifact import Artifact, GraphInspector, Status, open_artifact
from rbln_artifact_studio.core.fleet.targets import check_target, target_for_budget
from rbln_artifact_studio.core.model.budget import check_exclusive, parse_budget
from rbln_artifact_studio.core.model.kinds import KvLocation
from rbln_artifact_studio.core.model.modelspec import ResolvedModel, resolve_model
from rbln_artifact_studio.core.model.npu import AttnImpl, get_npu
from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.operations.resize import ResizeResult
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import (
    CompileRequest,
    above_full_warning,
    below_floor_message,
    resolve_shape,
)
from rbln_artifact_studio.core.storage.fsutil import (
    INCOMPLETE_MARKER,
    StagingDir,
    check_new_output_dir,
    is_internal_name,
    remove_stale_partials,
    tree_size,
)
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.core.storage.lock import ArtifactLock
from rbln_artifact_studio.core.storage.swap import require_exchange, staging_room_problem

EAGER_BUDGET_NOTE = "Under eager attention the block count is always the full pool; memory_budget is not used."


def budget_argument(value: object) -> str:
    """memory_budget as optimum-rbln-cli parses it back: 0.3 stays a float, 80% and 10GB stay strings."""
    return repr(value) if isinstance(value, float) else str(value).strip()


def model_argument(model_id: str) -> str:
    """A local model folder as an absolute path (the tool may run elsewhere); a hub id unchanged."""
    local = Path(model_id).expanduser()
    return str(local.resolve()) if local.is_dir() else model_id


def compile_argv(cli: str, request: CompileRequest, output_dir: Path) -> list[str]:
    """The optimum-rbln-cli command line for a compile; options the user left unset stay the tool's defaults."""
    argv = [cli, "--model-id", model_argument(request.model_id), "--output-dir", str(output_dir)]
    argv += ["--npu", request.npu, "--num_devices", str(request.num_devices), "--batch_size", str(request.batch_size)]
    for flag, value in (
        ("--max_seq_len", request.max_seq_len),
        ("--attn_impl", request.attn_impl),
        ("--kvcache_partition_len", request.kvcache_partition_len),
        ("--prefill_chunk_size", request.prefill_chunk_size),
    ):
        if value is not None:
            argv += [flag, str(value)]
    if request.memory_budget is not None:
        argv += ["--memory-budget", budget_argument(request.memory_budget)]
    if request.kvcache_num_blocks:
        argv += ["--kvcache_num_blocks", str(request.kvcache_num_blocks)]
    return argv


def resize_argv(cli: str, artifact_dir: Path, request: ResizeRequest, output_dir: Path | None) -> list[str]:
    """--set-kvcache-num-blocks N or --set-memory-budget B on --model-id DIR [--output-dir D]."""
    if request.target is not None:
        argv = [cli, "--set-kvcache-num-blocks", str(request.target)]
    else:
        argv = [cli, "--set-memory-budget", str(request.budget_text).strip()]
    argv += ["--model-id", str(artifact_dir.resolve())]
    if output_dir is not None:
        argv += ["--output-dir", str(output_dir)]  # a separate token: the tool looks for it literally
    return argv


def _known_model(model_id: str) -> ResolvedModel | None:
    """The model's config when the studio can read it; None for a hub id it has no preset of (the tool downloads)."""
    try:
        return resolve_model(model_id)
    except ConfigError:
        local = Path(model_id).expanduser()
        if local.is_dir() or model_id.startswith((".", "/", "~")):
            raise
        return None


def validate_compile(request: CompileRequest) -> list[str]:
    """The checks that need no simulator numbers (NPU, shape limits, budget, explicit count); returns warnings."""
    npu = get_npu(request.npu)
    explicit = request.kvcache_num_blocks or None
    if explicit is not None and explicit < 0:
        raise ResizeError(f"kvcache_num_blocks must be positive, got {explicit}.")
    budget = parse_budget(request.memory_budget)
    check_exclusive(budget, explicit)
    budget.bytes_per_npu(npu)  # a byte count above the NPU is rejected here, as the simulator does
    warnings = list(budget.warnings())
    if request.materialize_weights:
        warnings.append("materialize_weights applies to the built-in simulator only; optimum-rbln ignores it.")
    model = _known_model(request.model_id)
    if model is None and request.max_seq_len is None:
        return warnings  # the shape depends on the model's own maximum, which only the tool knows
    # resolve_shape reads the model only for a default max_seq_len, which is given when the model is unknown.
    shape = resolve_shape(request, cast(ResolvedModel, model))
    sequence = SequenceShape(shape.batch_size, shape.max_seq_len, shape.block_size, shape.attn)
    if explicit is not None:
        if explicit < sequence.floor:
            raise ResizeError(below_floor_message(explicit, sequence.floor))
        if explicit > sequence.full:
            warnings.append(above_full_warning(explicit, sequence.full))
    elif shape.attn is AttnImpl.EAGER and budget.is_set:
        warnings.append(EAGER_BUDGET_NOTE)
    return warnings


def _reporter(progress: ProgressCallback | None, log: LogCallback | None) -> LogCallback:
    """Each line of the tool goes to the log and becomes the indeterminate progress message."""

    def emit(line: str) -> None:
        if log is not None:
            log(line)
        if progress is not None:
            progress(0, 0, line)

    return emit


def _drop_internal_files(folder: Path) -> None:
    """The tool copies every file of the source, including this app's lock; a copy must not carry it."""
    for entry in os.scandir(folder):
        if entry.name != INCOMPLETE_MARKER and is_internal_name(entry.name):
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)


def require_real(artifact: Artifact) -> None:
    """Refuse (ResizeError) an artifact optimum-rbln-cli cannot resize: the simulator's, or an invalid one."""
    if artifact.is_simulated:
        raise ResizeError(
            f"{artifact.name} was written by the built-in simulator; optimum-rbln-cli cannot read its .rbln files",
            remedy=Remedy("Resize it with the simulator's engine ({option}).", "backend", "sim"),
            unchanged=True,
        )
    invalid = [p.message for p in artifact.problems if p.severity is Status.INVALID]
    if invalid:
        raise ResizeError(f"{artifact.name} is not valid, so it cannot be resized: {'; '.join(invalid)}")


def planned_target(artifact: Artifact, request: ResizeRequest) -> tuple[int | None, list[str]]:
    """The count the studio expects (None when a budget cannot be estimated here) and the budget's warnings.

    Raises the core's own errors (below the floor, bad budget, a budget that cannot hold the floor) before
    the tool runs; the tool then does the resize and has the last word on a budget's count.
    """
    config = artifact.config
    if request.target is not None:
        check = check_target(config, request.target, artifact)
        if check.error:
            raise ResizeError(check.error)
        return request.target, []
    if config.kvcache_num_blocks <= 0:
        raise ResizeError(str(check_target(config, config.num_min_blocks).error))  # the current count is wrong
    budget = parse_budget(request.budget_text)
    if artifact.npu is not None:
        budget.bytes_per_npu(artifact.npu)  # a byte count above the NPU fails here, as in the simulator
    expected = target_for_budget(artifact, budget) if artifact.layout() is not None else None
    return expected, budget.warnings()


class OptimumBackend:
    """Runs optimum-rbln-cli; validation, staging and publishing stay the studio's own."""

    name = BackendChoice.OPTIMUM.value

    def __init__(
        self, located: Located | None = None, inspector: GraphInspector | None = None, grace: float = 5.0
    ) -> None:
        self.located = located or locate()
        self.inspector = inspector
        self.grace = grace

    def info(self) -> BackendInfo:
        status = optimum_status(self.located)
        path = str(status.path) if status.path else None
        return BackendInfo(self.name, status.available, status.detail, status.version, path)

    def _cli(self, cancel: CancelToken | None) -> str:
        status = optimum_status(self.located, cancel)
        if not status.available or status.path is None:
            raise StudioError(f"The optimum backend is not available: {status.detail}")
        return str(status.path)

    def _run(
        self,
        argv: list[str],
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
        interruptible: bool = True,
    ) -> Finished:
        emit = _reporter(progress, log)
        emit("$ " + shlex.join(argv))
        return run_streamed(
            argv,
            on_line=emit,
            cancel=cancel,
            grace=self.grace,
            interruptible=interruptible,
            env=tool_env(),
            what=CLI_NAME,
        )

    def _run_staged(
        self,
        argv: list[str],
        output: Path,
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
    ) -> Finished:
        """A run that writes into a staging folder: a cancel says that nothing reached the output."""
        try:
            return self._run(argv, progress, log, cancel)
        except CancelledError:
            raise CancelledError(
                f"Cancelled; {CLI_NAME} was stopped before it wrote {output}.", unchanged=True
            ) from None

    def compile(
        self,
        request: CompileRequest,
        output_dir: Path,
        progress: ProgressCallback | None = None,
        log: LogCallback | None = None,
        cancel: CancelToken | None = None,
    ) -> CompileResult:
        cli = self._cli(cancel)
        warnings = validate_compile(request)
        local = Path(request.model_id).expanduser()
        output = check_new_output_dir(Path(output_dir), local if local.is_dir() else None)
        if cancel is not None:
            cancel.raise_if_cancelled()
        with StagingDir(output, what="compile") as staging:
            finished = self._run_staged(compile_argv(cli, request, staging.path), output, progress, log, cancel)
            if finished.returncode != 0:
                raise failure(finished, CLI_NAME, f"{output} was not written", unchanged=True)
            try:
                config = load_config(staging.path).model
            except StudioError as exc:
                raise StudioError(
                    f"{CLI_NAME} finished, but its output is not a decoder-only artifact the studio can read: {exc}",
                    hint=f"{output} was not written. {NOTHING_CHANGED}",
                ) from None
            staging.publish()
        return CompileResult(
            output,
            self.name,
            config.kvcache_num_blocks,
            config.num_min_blocks,
            config.num_full_blocks,
            config.npu or request.npu,
            config.num_devices,
            warnings,
        )

    def resize(
        self,
        request: ResizeRequest,
        progress: ProgressCallback | None = None,
        log: LogCallback | None = None,
        cancel: CancelToken | None = None,
        location: KvLocation | None = None,
    ) -> ResizeResult:
        cli = self._cli(cancel)
        folder = request.folder
        if (request.target is None) == (request.budget_text is None):
            raise ResizeError("Give either a target block count or a memory budget, not both.")
        artifact = open_artifact(folder, self.inspector)
        require_real(artifact)
        previous = artifact.config.kvcache_num_blocks
        expected, warnings = planned_target(artifact, request)
        if cancel is not None:
            cancel.raise_if_cancelled()
        if request.output is None:
            path, new, copied = self._resize_in_place(cli, folder, request, expected, previous, progress, log, cancel)
        else:
            path, new, copied = self._resize_to_copy(cli, folder, request, progress, log, cancel)
        warnings += check_target(artifact.config, new, artifact).warnings
        if expected is not None and new != expected:
            warnings.append(f"{CLI_NAME} set kvcache_num_blocks={new}; the studio's estimate was {expected}.")
        if progress is not None:
            progress(0, 0, f"Set kvcache_num_blocks to {new} for {path}")
        return ResizeResult(path, previous, new, warnings, copied)

    def _resize_in_place(
        self,
        cli: str,
        folder: Path,
        request: ResizeRequest,
        expected: int | None,
        previous: int,
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
    ) -> tuple[Path, int, int]:
        if not os.access(folder, os.W_OK) or not os.access(folder.parent, os.W_OK):
            raise ResizeError(f"{folder} is read-only", remedy=TO_A_COPY, unchanged=True)
        remove_stale_partials(folder.parent)  # a killed run's staged or swapped-out copy
        if request.target is not None and expected == previous:
            return folder, previous, 0
        problem = staging_room_problem(folder, CLI_NAME)
        if problem is not None:
            raise problem
        require_exchange(folder.parent, f"a resize in place through {CLI_NAME}")
        # The tool writes the resized artifact into a staging folder beside this one, which is then swapped in
        # by one atomic exchange: a kill at any instant leaves the old or the new artifact, and a cancel is safe.
        with (
            ArtifactLock(folder, f"resize in place ({CLI_NAME})"),
            StagingDir(folder, what="resize in place") as staging,
        ):
            argv = resize_argv(cli, folder, request, staging.path)
            finished = self._run_staged(argv, folder, progress, log, cancel)
            if finished.returncode != 0:
                raise failure(finished, CLI_NAME, f"{folder.name} still records kvcache_num_blocks={previous}")
            _drop_internal_files(staging.path)
            new = read_block_count(staging.path)
            staging.swap_in()
        return folder, new, 0

    def _resize_to_copy(
        self,
        cli: str,
        folder: Path,
        request: ResizeRequest,
        progress: ProgressCallback | None,
        log: LogCallback | None,
        cancel: CancelToken | None,
    ) -> tuple[Path, int, int]:
        assert request.output_folder is not None
        output = check_new_output_dir(request.output_folder, folder)
        # A read-only source cannot be changed by anyone through us, so it needs no lock (and cannot hold one).
        lock = ArtifactLock(folder, f"copy for resize ({CLI_NAME})") if os.access(folder, os.W_OK) else None
        with lock or contextlib.nullcontext(), StagingDir(output, what="resize to a copy") as staging:
            argv = resize_argv(cli, folder, request, staging.path)
            finished = self._run_staged(argv, output, progress, log, cancel)
            if finished.returncode != 0:
                raise failure(finished, CLI_NAME, f"{output} was not written", unchanged=True)
            _drop_internal_files(staging.path)
            new = read_block_count(staging.path)
            copied = tree_size(staging.path)
            staging.publish()
        return output, new, copied
