"""A read-only artifact is refused before anything is written; a copy from it still works and changes nothing.

Root (CI runs as root) ignores permission bits, so read-only is simulated by patching os.access, by a
read-only bind mount where the machine allows mounting, and by chmod when not running as root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultfs import FaultFS
from harness import SHAPE, Lab, artifact_state, tiny_model_config, tree_digest

from rbln_artifact_studio.cli.flags import FLAGS
from rbln_artifact_studio.core.errors import ResizeError
from rbln_artifact_studio.core.operations.resize import resize_in_place, resize_to_copy
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ro")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(1)))
    options: dict[str, Any] = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    return write_artifact(plan_compile(CompileRequest(model_id=str(root / "model"), **options)), root / "art")


@pytest.fixture
def artifact(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "art"))


@pytest.mark.parametrize("denied", ["folder", "rbln_config.json", "prefill.rbln", "decoder_batch_2.rbln"])
def test_read_only_artifact_is_refused_before_any_write(
    artifact: Path, monkeypatch: pytest.MonkeyPatch, denied: str
) -> None:
    """Found here: with only the files read-only, the lock file was created (and removed) before the
    refusal; now nothing at all is written."""
    target = artifact if denied == "folder" else artifact / denied
    real_access = os.access

    def access(path: Any, mode: int, *args: object, **kwargs: object) -> bool:
        if mode & os.W_OK and Path(os.fspath(path)) == target:
            return False
        return real_access(path, mode, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    before = artifact_state(artifact)
    with FaultFS(artifact.parent).active() as fs, pytest.raises(ResizeError) as caught:
        resize_in_place(artifact, 3)
    assert fs.points == []
    message = caught.value.one_line(FLAGS)  # as the CLI says it
    assert "read-only" in message and "--output-dir" in message and "\n" not in message
    assert artifact_state(artifact) == before
    # A copy only reads the source: it proceeds and leaves the read-only folder exactly as it was.
    digest = tree_digest(artifact)
    result = resize_to_copy(artifact, artifact.parent / "copy", 3)
    assert result.target == 3 and tree_digest(artifact) == digest


def test_missing_folder_is_not_called_read_only(tmp_path: Path) -> None:
    """Found here: a folder that does not exist was reported as read-only."""
    with pytest.raises(ResizeError, match="is not a folder"):
        resize_in_place(tmp_path / "nope", 3)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_chmod_read_only_folder(artifact: Path) -> None:
    artifact.chmod(0o555)
    try:
        digest = tree_digest(artifact)
        with pytest.raises(ResizeError, match="read-only"):
            resize_in_place(artifact, 3)
        assert resize_to_copy(artifact, artifact.parent / "copy", 3).target == 3
        assert tree_digest(artifact) == digest
    finally:
        artifact.chmod(0o755)


@pytest.fixture
def read_only_view(artifact: Path, tmp_path: Path) -> Iterator[Path]:
    """The artifact through a read-only bind mount (skipped where mounting is not allowed)."""
    view = tmp_path / "ro-view"
    view.mkdir()
    mount = shutil.which("mount")
    if mount is None or os.geteuid() != 0:
        pytest.skip("needs root and mount(8)")
    bind = subprocess.run([mount, "--bind", str(artifact), str(view)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {bind.stderr.decode().strip()}")
    try:
        ro = subprocess.run([mount, "-o", "remount,bind,ro", str(view)], capture_output=True)
        if ro.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {ro.stderr.decode().strip()}")
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def test_read_only_mount_through_the_cli(read_only_view: Path, artifact: Path, tmp_path: Path) -> None:
    lab = Lab(tmp_path)  # only for its CLI runner
    digest = tree_digest(artifact)
    out = lab.run(["set-kvcache-num-blocks", str(read_only_view), "3"])
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "read-only" in out.stderr and "--output-dir" in out.stderr
    copy = lab.run(["set-kvcache-num-blocks", str(read_only_view), "3", "--output-dir", str(tmp_path / "copy")])
    assert copy.returncode == 0, copy.stderr
    assert lab.run(["get-kvcache-num-blocks", str(tmp_path / "copy")]).stdout == "3\n"
    assert tree_digest(artifact) == digest
