"""Output folders a copy or a compile must refuse (before writing), and real disk-full runs on a small tmpfs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultfs import FaultFS
from harness import SHAPE, Lab, artifact_state, tiny_model_config, tree_digest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.operations.resize import resize_to_copy
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("outputs") / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_model_config(16)))
    return folder


def _request(model: Path, materialize: bool = False) -> CompileRequest:
    options = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    return CompileRequest(model_id=str(model), materialize_weights=materialize, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def template(model: Path) -> Path:
    return write_artifact(plan_compile(_request(model)), model.parent / "template")


@pytest.fixture
def artifact(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "art"))


def _bad_output(kind: str, art: Path, tmp: Path) -> Path:
    if kind == "the source":
        return art
    if kind == "a link to the source":
        (tmp / "link").symlink_to(art)
        return tmp / "link"
    if kind == "inside the source":
        return art / "resized"
    if kind == "inside the source through a link":
        (tmp / "link").symlink_to(art)
        return tmp / "link" / "resized"
    if kind == "a folder with content":
        (tmp / "full").mkdir()
        (tmp / "full" / "notes.txt").write_text("keep me")
        return tmp / "full"
    (tmp / "file").write_text("keep me")
    return tmp / "file"


BAD_OUTPUTS = [
    "the source",
    "a link to the source",
    "inside the source",
    "inside the source through a link",
    "a folder with content",
    "a file",
]


@pytest.mark.parametrize("kind", BAD_OUTPUTS)
def test_copy_refuses_bad_output_before_writing(artifact: Path, tmp_path: Path, kind: str) -> None:
    output = _bad_output(kind, artifact, tmp_path)
    before = tree_digest(tmp_path)
    with FaultFS(tmp_path).active() as fs, pytest.raises(StudioError) as caught:
        resize_to_copy(artifact, output, 3)
    assert fs.points == [] and tree_digest(tmp_path) == before
    message = caught.value.one_line()
    assert "\n" not in message and ("choose" in message.lower())


@pytest.mark.parametrize("kind", ["the source", "inside the source", "a folder with content"])
def test_compile_refuses_bad_output_before_writing(model: Path, tmp_path: Path, kind: str) -> None:
    output = _bad_output(kind, model, tmp_path)
    plan = plan_compile(_request(model))
    before, model_before = tree_digest(tmp_path), tree_digest(model)
    with FaultFS(tmp_path).active() as fs, FaultFS(model).active() as fs_model, pytest.raises(StudioError):
        write_artifact(plan, output)
    assert fs.points == [] and fs_model.points == []
    assert tree_digest(tmp_path) == before and tree_digest(model) == model_before


def test_an_empty_output_folder_is_used(artifact: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    assert resize_to_copy(artifact, tmp_path / "empty", 3).path == tmp_path / "empty"
    assert artifact_state(tmp_path / "empty")["count"] == 3


def test_cli_refuses_bad_outputs_in_one_line(artifact: Path, model: Path, tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    full = _bad_output("a folder with content", artifact, tmp_path)
    out = lab.run(["set-kvcache-num-blocks", str(artifact), "3", "-o", str(full)])
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "exists and is not empty" in out.stderr
    out = lab.run(["compile", "--model-id", str(model), "-o", str(model / "x"), *SHAPE])
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "inside the source" in out.stderr
    assert not (model / "x").exists()


# ---- a real full disk ---------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (skipped where mounting is not allowed)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _fill(disk: Path, leave: int) -> None:
    st = os.statvfs(disk)
    with open(disk / "filler", "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))


def test_disk_full_compile_and_copy_through_the_cli(small_disk: Path, model: Path, tmp_path: Path) -> None:
    """16 MiB of weights do not fit a 2 MiB disk: one line, and nothing left on the disk."""
    lab = Lab(tmp_path)
    big = write_artifact(plan_compile(_request(model, materialize=True)), tmp_path / "big")
    digest = tree_digest(big)
    for args in (
        ["compile", "--model-id", str(model), "-o", str(small_disk / "out"), *SHAPE, "--materialize-weights"],
        ["set-kvcache-num-blocks", str(big), "3", "-o", str(small_disk / "out")],
    ):
        out = lab.run(args)
        assert out.returncode == 1, out.stderr
        assert out.stderr.count("\n") == 1 and "No space left" in out.stderr and "Free some space" in out.stderr
        assert os.listdir(small_disk) == []
    assert tree_digest(big) == digest and not (big / ".rbln-studio.lock").exists()


@pytest.mark.parametrize("leave", [0, 4096], ids=["lock-write-fails", "config-write-fails"])
def test_disk_full_in_place_keeps_the_old_count(small_disk: Path, template: Path, tmp_path: Path, leave: int) -> None:
    """With no page free the lock cannot record its holder; with one page free the new headers are written
    (their slots are allocated) and the new rbln_config.json is what fails: the old count stays either way."""
    lab = Lab(tmp_path)
    art = Path(shutil.copytree(template, small_disk / "art"))
    before = artifact_state(art)
    _fill(small_disk, leave=leave)
    out = lab.run(["set-kvcache-num-blocks", str(art), "3"])
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "No space left" in out.stderr, out.stderr
    assert artifact_state(art) == before and sorted(os.listdir(art)) == sorted(os.listdir(template))
    (small_disk / "filler").unlink()
    assert lab.run(["set-kvcache-num-blocks", str(art), "3"]).returncode == 0
    assert artifact_state(art)["count"] == 3
