"""Whether a folder already holds exactly the resized copy a request would write (running it again is done)."""

from __future__ import annotations

import os
from pathlib import Path

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact, open_artifact
from rbln_artifact_studio.core.fleet.status import Status
from rbln_artifact_studio.core.model.rbln_config import CONFIG_NAME, with_block_count
from rbln_artifact_studio.core.storage.fsutil import is_internal_name

SMALL_FILE = 1 << 20  # files up to this size are compared byte for byte; larger ones (graphs, weights) by size


def _files(folder: Path) -> dict[str, int]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not is_internal_name(d)]
        for name in filenames:
            if not is_internal_name(name):
                path = Path(dirpath, name)
                out[str(path.relative_to(folder))] = path.stat().st_size
    return out


def holds_resized_copy(output: Path, source: Artifact, target: int) -> bool:
    """True when output opens valid with target blocks, records the source's config with that count, and
    holds the same files: the other files byte for byte (sizes for the large ones)."""
    if not output.is_dir():
        return False
    try:
        copy = open_artifact(output)
        ours, theirs = _files(output), _files(source.path)
    except (StudioError, OSError):
        return False
    if copy.status is Status.INVALID or copy.loaded.raw != with_block_count(source.loaded.raw, target):
        return False
    if ours != theirs:
        return False
    for name, size in ours.items():
        if name == CONFIG_NAME or name.endswith(".rbln") or size > SMALL_FILE:
            continue  # graph headers differ by design (the new count); the container check above read them
        if (output / name).read_bytes() != (source.path / name).read_bytes():
            return False
    return True
