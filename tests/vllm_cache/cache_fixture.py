"""A vllm-rbln cache built with the studio's own compile, one entry per status, and a process holding a file open."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import TINY_MODEL

from rbln_artifact_studio.core.simulator.compiler import plan_compile, write_artifact
from rbln_artifact_studio.core.vllm_cache.command import parse_serve
from rbln_artifact_studio.core.vllm_cache.lookup import compile_request

SEQS = {"ok": 1, "incomplete": 2, "in-use": 3, "stale": 4}
"""Each entry's --max-num-seqs: one serve command per entry."""
MEGA = "rbln/tiny-llama-0a1b2c3d/0123456789abcdef"
"""A mega-cache bundle of the vLLM-native path."""


MODEL = "Qwen/Qwen3-0.6B"
"""A bundled preset: its hub id is what a cache folder's name keeps (the / as _)."""


def serve(model: str | Path, seqs: int, budget: str = "0.5") -> list[str]:
    return ["vllm", "serve", str(model), "--max-num-seqs", str(seqs), "--max-model-len", "8192", "--block-size",
            "4096", "--dtype", "bfloat16", "--gpu-memory-utilization", budget]  # fmt: skip


def tiny_model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(TINY_MODEL))
    return folder


def build_cache(root: Path, model: str | Path = MODEL) -> dict[str, Path]:
    """root/compiled_models with an entry per status of SEQS (by name), and one mega-cache bundle."""
    folders: dict[str, Path] = {}
    for state, seqs in SEQS.items():
        command = parse_serve(serve(model, seqs))
        folder = root / "compiled_models" / command.key.folder_name
        write_artifact(plan_compile(compile_request(command)), folder)
        folders[state] = folder
    # A compile that died midway: rbln_config.json written, a graph never (vllm-rbln #619: it still counts as a hit).
    next(folders["incomplete"].glob("decoder_batch_*.rbln")).unlink()
    # As optimum-rbln 0.10 wrote it: its version, and the KV tensors under their old name.
    config = folders["stale"] / "rbln_config.json"
    raw = json.loads(config.read_text())
    raw["optimum_rbln_version"] = "0.10.2"
    raw["kvcache_metas"] = raw.pop("cache_metas")
    config.write_text(json.dumps(raw, indent=2))
    bundle = root / MEGA / "rank0" / "mega_cache.bin"
    bundle.parent.mkdir(parents=True)
    bundle.write_bytes(b"bundle" * 100)
    return folders


@contextmanager
def holding(folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A running process that holds the folder's rbln_config.json open (named by the environment, not its
    command line): ended when the block ends."""
    code = "import os, sys\nf = open(os.environ['HELD'], 'rb')\nprint('open', flush=True)\nsys.stdin.read()\n"
    env = {**os.environ, "HELD": str(folder / "rbln_config.json")}
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"open\n"
        yield proc
    finally:
        proc.kill()
        proc.communicate()  # waits, and closes both pipes


def tree(root: Path) -> dict[str, int]:
    """Every file below root with its size: what must not change."""
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*")) if p.is_file()}


@contextmanager
def serving(command: list[str], folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A running `vllm serve MODEL [flags]` (command: its words from `vllm`), as its console script runs: the
    interpreter, then a script named vllm (a stand-in written in folder/bin), holding no file of the cache open."""
    script = folder / "bin" / "vllm"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import sys\nprint('up', flush=True)\nsys.stdin.read()\n")
    argv = [sys.executable, str(script), *command[1:]]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
        yield proc
    finally:
        proc.kill()
        proc.communicate()
