"""Default folder names the desktop app proposes for new artifacts and resized copies."""

from __future__ import annotations

import re
from pathlib import Path

_KV_SUFFIX = re.compile(r"-kv\d+$")


def resized_copy_dir(source: str | Path, target: int) -> Path:
    """Beside the source, named after the new count: `qwen3-8b-cr13` -> `qwen3-8b-cr13-kv12` (suffix replaced)."""
    source = Path(source)
    stem = _KV_SUFFIX.sub("", source.name) or source.name
    return source.with_name(f"{stem}-kv{target}")


def compiled_dir(parent: str | Path, model_id: str, npu: str, num_devices: int, num_blocks: int) -> Path:
    """`<parent>/qwen3-8b-rbln-cr13-kv21`, `...-4x-rbln-ca25-kv14`: model (last path part), target and count."""
    model = Path(model_id.rstrip("/\\")).name or "model"
    devices = f"{num_devices}x-" if num_devices > 1 else ""
    name = re.sub(r"[^a-z0-9._-]+", "-", f"{model}-{devices}{npu}-kv{num_blocks}".lower()).strip("-")
    return Path(parent) / name
