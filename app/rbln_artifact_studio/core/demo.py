"""The demo workspace: a few simulator artifacts that show what the app is for, built once on first use."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.progress import CancelToken, Progress, ProgressCallback
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact


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


def build_demo(folder: Path, progress: ProgressCallback | None = None, cancel: CancelToken | None = None) -> list[Path]:
    """Compile the demo artifacts that are not in folder yet; returns the ones written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    todo = missing_demo_artifacts(folder)
    tracker = Progress(progress, cancel)
    tracker.start(len(todo), f"Building the demo workspace in {folder}")
    written = []
    for item in todo:
        tracker.say(f"Compiling {item.name}")
        path = write_artifact(plan_compile(item.request), folder / item.name, Progress(cancel=cancel))
        if item.resize_to is not None:
            resize_in_place(path, item.resize_to)
        written.append(path)
        tracker.advance(1)
    return written
