"""The rbln-studio-cli command line equivalent to a compile or resize the desktop app runs ("Show command")."""

from __future__ import annotations

import shlex
from pathlib import Path

from rbln_artifact_studio.core.simulator.compiler import CompileRequest

PROG = "rbln-studio-cli"


def compile_argv(request: CompileRequest, output_dir: str | Path) -> list[str]:
    """Arguments (program first) that compile exactly what `request` asks for into output_dir."""
    argv = [PROG, "compile", "--model-id", request.model_id, "--output-dir", str(output_dir)]
    argv += ["--npu", request.npu, "--num-devices", str(request.num_devices), "--batch-size", str(request.batch_size)]
    optional = (
        ("--max-seq-len", request.max_seq_len),
        ("--attn-impl", request.attn_impl),
        ("--kvcache-partition-len", request.kvcache_partition_len),
        ("--prefill-chunk-size", request.prefill_chunk_size),
        ("--kvcache-num-blocks", request.kvcache_num_blocks or None),
    )
    for flag, value in optional:
        if value is not None:
            argv += [flag, str(value)]
    if request.memory_budget is not None:
        argv.append(f"--memory-budget={request.memory_budget}")
    if request.materialize_weights:
        argv.append("--materialize-weights")
    return argv


def resize_argv(
    artifact_dir: str | Path,
    target: int | None = None,
    budget_text: str | None = None,
    output_dir: str | Path | None = None,
) -> list[str]:
    """Arguments for a resize to a count or to what fits a budget, in place or (with output_dir) into a copy."""
    if (target is None) == (budget_text is None):
        raise ValueError("give a target count or a budget, not both")
    if target is not None:
        argv = [PROG, "set-kvcache-num-blocks", str(artifact_dir), str(target)]
    else:
        argv = [PROG, "set-memory-budget", str(artifact_dir), f"{budget_text}"]
    if output_dir is not None:
        argv += ["--output-dir", str(output_dir)]
    return argv


def inspect_argv(paths: list[str]) -> list[str]:
    """What to run for the selected artifacts in a terminal: inspect one, plan several together."""
    return [PROG, "inspect", *paths] if len(paths) == 1 else [PROG, "plan", *paths]


def shell_text(argv: list[str]) -> str:
    """One line a POSIX shell runs as is (quoted where needed)."""
    return shlex.join(argv)
