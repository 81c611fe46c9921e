"""The demo workspace: a few simulator artifacts that show what the app is for, built once on first use.

Opening it again rebuilds a demo artifact that is missing or damaged (it no longer opens as a valid artifact);
anything else in the folder, and a demo artifact the user changed that is still valid, is left as it is.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import summarize
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.progress import CancelToken, Progress, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.fsutil import describe_os_error
from rbln_artifact_studio.core.storage.swap import exchange


@dataclass(frozen=True)
class DemoArtifact:
    """One artifact of the demo: how it is compiled and, optionally, the count it is resized to afterwards."""

    name: str
    request: CompileRequest
    resize_to: int | None = None


QWEN3_8B = partial(CompileRequest, "Qwen/Qwen3-8B", batch_size=8, max_seq_len=40_960, kvcache_partition_len=8_192)
LLAMA_1B = partial(
    CompileRequest, "meta-llama/Llama-3.2-1B", batch_size=4, max_seq_len=32_768, kvcache_partition_len=8_192
)

DEMO_ARTIFACTS = (
    DemoArtifact("qwen3-8b-rbln-cr13", QWEN3_8B(npu="RBLN-CR13", memory_budget=0.3)),
    DemoArtifact("qwen3-8b-4x-rbln-ca25", QWEN3_8B(npu="RBLN-CA25", num_devices=4, memory_budget=0.5)),
    DemoArtifact("llama-3.2-1b-rbln-ca25", LLAMA_1B(npu="RBLN-CA25", memory_budget=0.8)),
    DemoArtifact(
        "qwen3-0.6b-eager-rbln-ca25",
        CompileRequest("Qwen/Qwen3-0.6B", npu="RBLN-CA25", batch_size=4, max_seq_len=4_096, attn_impl="eager"),
    ),
    # Compiled to fit 30% (9 blocks), then grown past the full pool (16) and what the compiler resolved: warnings.
    DemoArtifact("llama-3.2-1b-rbln-ca25-kv18", LLAMA_1B(npu="RBLN-CA25", memory_budget=0.3), resize_to=18),
)


def missing_demo_artifacts(folder: Path) -> list[DemoArtifact]:
    return [a for a in DEMO_ARTIFACTS if not (Path(folder) / a.name).is_dir()]


def damaged_demo_artifacts(folder: Path) -> list[DemoArtifact]:
    """Demo artifacts present but no longer valid (a truncated config, a missing graph): rebuilt on the next open."""
    present = [a for a in DEMO_ARTIFACTS if (Path(folder) / a.name).is_dir()]
    return [a for a in present if summarize(Path(folder) / a.name).status is Status.INVALID]


def _check_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise StudioError(
            f"The demo workspace {folder} is a file, not a folder. Move or delete it, then open the demo workspace "
            "again."
        )
    for item in DEMO_ARTIFACTS:
        path = folder / item.name
        if path.exists() and not path.is_dir():
            raise StudioError(f"{path} is a file where a demo artifact goes. Move or delete it, then try again.")


def _build(item: DemoArtifact, output: Path, cancel: CancelToken | None) -> Path:
    path = write_artifact(plan_compile(item.request), output, Progress(cancel=cancel))
    if item.resize_to is not None:
        resize_in_place(path, item.resize_to)
    return path


def _rebuild(item: DemoArtifact, folder: Path, cancel: CancelToken | None) -> Path:
    """Build the demo artifact beside the damaged one (hidden), then swap it in and remove the damaged one."""
    final = folder / item.name
    fresh = folder / f".{item.name}.rebuild-{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        _build(item, fresh, cancel)
        exchange(fresh, final)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)  # the damaged one after the exchange, or a failed build
    return final


def build_demo(folder: Path, progress: ProgressCallback | None = None, cancel: CancelToken | None = None) -> list[Path]:
    """Compile the demo artifacts that are missing or damaged in folder; returns the ones written."""
    folder = Path(folder)
    _check_folder(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        missing, damaged = missing_demo_artifacts(folder), damaged_demo_artifacts(folder)
        tracker = Progress(progress, cancel)
        tracker.start(len(missing) + len(damaged), f"Building the demo workspace in {folder}")
        written = []
        for item in missing:
            tracker.say(f"Compiling {item.name}")
            written.append(_build(item, folder / item.name, cancel))
            tracker.advance(1)
        for item in damaged:
            tracker.say(f"Rebuilding {item.name} (it was damaged)")
            written.append(_rebuild(item, folder, cancel))
            tracker.advance(1)
    except OSError as exc:
        raise StudioError(describe_os_error(exc, f"building the demo workspace in {folder}")) from None
    return written
