"""Shared benchmark helpers: build artifact trees with the simulator, time commands side by side."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.compiler import CompileRequest, plan_compile, write_artifact  # noqa: E402

QWEN3_8B = {"model_id": "Qwen/Qwen3-8B", "batch_size": 8, "max_seq_len": 40_960, "kvcache_partition_len": 8_192}


def compile_reference(output: Path, **options: object) -> Path:
    """Qwen3-8B on one RBLN-CR13 at budget 0.3 unless overridden (a Qwen3-8B-sized rbln_config.json)."""
    request = CompileRequest(**{**QWEN3_8B, "npu": "RBLN-CR13", "memory_budget": 0.3, **options})  # type: ignore[arg-type]
    return write_artifact(plan_compile(request), output)


def build_fleet(root: Path, count: int, per_folder: int = 100) -> None:
    """count artifacts under root/team-XX/: rbln_config.json copied (own inode), other files hard-linked."""
    template = compile_reference(root / ".template")
    for i in range(count):
        folder = root / f"team-{i // per_folder:03d}" / f"qwen3-8b-{i:05d}"
        folder.mkdir(parents=True)
        for item in template.iterdir():
            if item.name == "rbln_config.json":
                shutil.copyfile(item, folder / item.name)
            else:
                os.link(item, folder / item.name)
    shutil.rmtree(template)


def cli() -> list[str]:
    exe = shutil.which("rbln-studio-cli")
    if exe is None:
        sys.exit("rbln-studio-cli is not installed: python -m pip install -e .")
    return [exe]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def time_command(
    argv: Sequence[str],
    runs: int,
    setup: Callable[[], None] | None = None,
    extra_env: dict[str, str] | None = None,
) -> list[float]:
    times = []
    for _ in range(runs):
        if setup:
            setup()
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env={**env(), **(extra_env or {})})
        times.append(time.perf_counter() - start)
    return times


def report(label: str, ours: list[float], baseline: list[float], goal: str) -> float:
    """Print both medians and the ratio last, as the README and docs/performance.md quote them."""
    m_ours, m_base = statistics.median(ours), statistics.median(baseline)
    ratio = m_ours / m_base
    print(
        f"{label}: ours median {m_ours * 1000:.1f} ms, baseline median {m_base * 1000:.1f} ms ({len(ours)} runs each)"
    )
    print(f"ratio {ratio:.2f} (goal {goal})")
    return ratio
