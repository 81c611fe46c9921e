"""A Kubernetes ConfigMap/Secret volume laid out as the kubelet's atomic writer lays it out, for tests.

As pkg/volume/util/atomic_writer.go does it: the payload is written into a new `..<UTC timestamp>.<random>` folder,
a `..data_tmp` link to that folder is renamed over `..data` (the swap readers see as one step), each top-level
entry is a link `name -> ..data/name`, and the old timestamped folder is removed after the swap.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

DATA = "..data"


def _new_version(volume: Path, payload: dict[str, Path]) -> Path:
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime())
    version = Path(tempfile.mkdtemp(prefix=stamp, dir=volume))
    for name, source in payload.items():
        if source.is_dir():
            shutil.copytree(source, version / name, symlinks=True)
        else:
            shutil.copy2(source, version / name)
    return version


def write_volume(volume: Path, payload: dict[str, Path]) -> Path:
    """Write (or update) the volume with payload (top-level name: a file or folder to copy); returns the version."""
    volume.mkdir(parents=True, exist_ok=True)
    old = os.readlink(volume / DATA) if (volume / DATA).is_symlink() else None
    version = _new_version(volume, payload)
    tmp = volume / "..data_tmp"
    os.symlink(version.name, tmp)
    os.rename(tmp, volume / DATA)  # the swap: one rename of a link over the old one
    for name in payload:
        if not (volume / name).is_symlink():
            os.symlink(os.path.join(DATA, name), volume / name)
    for entry in volume.iterdir():
        if entry.is_symlink() and not entry.name.startswith("..") and entry.name not in payload:
            entry.unlink()
    if old is not None:
        shutil.rmtree(volume / old)
    return version


def with_blocks(artifact: Path, blocks: int, into: Path) -> Path:
    """A copy of artifact whose rbln_config.json says `blocks` KV cache blocks (what the fast row reports)."""
    copy = Path(shutil.copytree(artifact, into))
    config = json.loads((copy / "rbln_config.json").read_text())
    config["kvcache_num_blocks"] = blocks
    (copy / "rbln_config.json").write_text(json.dumps(config))
    return copy
