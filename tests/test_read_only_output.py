"""An output folder on a read-only file system is named as such (compile -o, resize to a copy), not as permissions."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli_command, cli_env
from remote.pythons import can_hide_trees

pytestmark = pytest.mark.skipif(not can_hide_trees(), reason="needs `unshare -m` to mount a read-only folder")


def _on_read_only(folder: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """The CLI in a mount namespace where folder is a read-only bind mount of itself."""
    command = shlex.join([*cli_command(), *map(str, args)])
    where = shlex.quote(str(folder))
    script = f"mount --bind {where} {where} && mount -o remount,bind,ro {where} && exec {command}"
    return subprocess.run(
        [shutil.which("unshare") or "unshare", "-m", "sh", "-c", script],
        capture_output=True,
        text=True,
        env=cli_env(),
        timeout=120,
    )


def test_compile_into_a_read_only_file_system(tmp_path: Path) -> None:
    frozen = tmp_path / "ro"
    frozen.mkdir()
    done = _on_read_only(
        frozen,
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        frozen / "out",
        "--tensor-parallel-size",
        "4",
        "--kvcache-partition-len",
        "8192",
    )
    assert done.returncode == 1 and "read-only file system" in done.stderr, done.stderr
    assert "permission denied" not in done.stderr.lower()


def test_copy_into_a_read_only_file_system(cr13_artifact: Path, tmp_path: Path) -> None:
    frozen = tmp_path / "ro"
    frozen.mkdir()
    done = _on_read_only(frozen, "set-kvcache-num-blocks", cr13_artifact, "20", "--output-dir", frozen / "copy")
    assert done.returncode == 1 and "read-only file system" in done.stderr, done.stderr
    assert "permission denied" not in done.stderr.lower()
    assert list(frozen.iterdir()) == []
