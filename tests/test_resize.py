"""Resize engine: rules and messages, in place (O(1), two-slot commit), to a copy (source untouched), locks."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import (
    ArtifactLockedError,
    CancelledError,
    InsufficientMemoryError,
    ResizeError,
    StudioError,
)
from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact
from rbln_artifact_studio.core.fleet.targets import check_target
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.operations.resize import resize_in_place, resize_to_copy
from rbln_artifact_studio.core.progress import CancelToken, Progress
from rbln_artifact_studio.core.simulator.container import read_container
from rbln_artifact_studio.core.storage.lock import ArtifactLock


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_check_target_rules(cr13_artifact: Path) -> None:
    config = open_artifact(cr13_artifact).config  # current 21, floor 9, full 40
    below = check_target(config, 8)
    assert below.error == (
        "kvcache_num_blocks=8 is below the minimum required for the full sequence length (num_min_blocks=9)."
    )
    assert check_target(config, 9).ok and check_target(config, 9).warnings == []
    above_current = check_target(config, 30)
    assert above_current.ok and len(above_current.warnings) == 1 and "may fail to allocate" in above_current.warnings[0]
    above_full = check_target(config, 41)
    assert above_full.ok and any("never used" in w for w in above_full.warnings)
    # The current count changes nothing in place (the dialog offers no Apply), but is a fine copy.
    assert check_target(config, 21).ok and check_target(config, 21, in_place=False).ok
    assert check_target(config, 21, in_place=True).error == (
        "The artifact already has kvcache_num_blocks=21; nothing to change in place."
    )
    assert check_target(config, 20, in_place=True).ok


def test_current_count_must_be_positive(cr13_artifact: Path) -> None:
    raw = json.loads((cr13_artifact / "rbln_config.json").read_text())
    raw["kvcache_num_blocks"] = 0
    (cr13_artifact / "rbln_config.json").write_text(json.dumps(raw))
    with pytest.raises(ResizeError):
        resize_in_place(cr13_artifact, 12)


def test_in_place_resize_rescales_every_buffer(cr13_artifact: Path) -> None:
    before = open_artifact(cr13_artifact)
    result = resize_in_place(cr13_artifact, 12)
    assert (result.previous, result.target, result.warnings) == (21, 12, [])
    after = open_artifact(cr13_artifact)
    assert after.config.kvcache_num_blocks == 12 and after.status is Status.OK
    for name, header in after.headers.items():
        old = before.headers[name]
        for tensor, grid in header.dram_tensor_sizes.items():
            assert grid == [[v // 21 * 12 for v in row] for row in old.dram_tensor_sizes[tensor]]
    resized = after.breakdown()
    assert resized is not None and resized.usages[0].kv == 12 * 288 * 2**20


def test_in_place_keeps_the_old_slot_until_the_config_commits(cr13_artifact: Path) -> None:
    resize_in_place(cr13_artifact, 12)
    info = read_container(cr13_artifact / "prefill.rbln")
    assert sorted(s.header.kvcache_num_blocks for s in info.slots) == [12, 21]
    resize_in_place(cr13_artifact, 30)  # overwrites the slot that is not current (21)
    info = read_container(cr13_artifact / "prefill.rbln")
    assert sorted(s.header.kvcache_num_blocks for s in info.slots) == [12, 30]
    assert open_artifact(cr13_artifact).config.kvcache_num_blocks == 30


def test_in_place_does_not_touch_the_payload(tiny_model: Path, tmp_path: Path) -> None:
    from conftest import compile_artifact

    art = compile_artifact(
        tmp_path / "small",
        model_id=str(tiny_model),
        batch_size=2,
        max_seq_len=8192,
        kvcache_partition_len=4096,
        materialize_weights=True,
    )
    assert read_container(art / "prefill.rbln").payload_length > 1 << 20
    info = read_container(art / "prefill.rbln")
    with open(art / "prefill.rbln", "rb") as f:
        f.seek(info.payload_offset)
        payload = hashlib.sha256(f.read()).hexdigest()
    resize_in_place(art, 3)
    with open(art / "prefill.rbln", "rb") as f:
        f.seek(info.payload_offset)
        assert hashlib.sha256(f.read()).hexdigest() == payload


def test_below_floor_changes_nothing(cr13_artifact: Path) -> None:
    before = tree_hashes(cr13_artifact)
    with pytest.raises(ResizeError, match="num_min_blocks=9"):
        resize_in_place(cr13_artifact, 8)
    assert tree_hashes(cr13_artifact) == before


def test_fit_to_budget(cr13_artifact: Path) -> None:
    result = resize_in_place(cr13_artifact, budget=parse_budget(0.5))
    assert result.target == 40  # room for the full pool at half the NPU
    result = resize_in_place(cr13_artifact, budget=parse_budget(0.3))
    assert result.target == 21  # the same as compiling at 0.3, from an already-resized artifact
    with pytest.raises(InsufficientMemoryError, match="only 8 blocks"):
        resize_in_place(cr13_artifact, budget=parse_budget(0.195))


def test_resize_to_copy_leaves_source_untouched(cr13_artifact: Path, tmp_path: Path) -> None:
    before = tree_hashes(cr13_artifact)
    (cr13_artifact / "tokenizer").mkdir()
    (cr13_artifact / "tokenizer" / "vocab.txt").write_text("a b c")
    before = tree_hashes(cr13_artifact)
    seen: list[tuple[int, int]] = []
    result = resize_to_copy(
        cr13_artifact, tmp_path / "copy-12", 12, progress=Progress(lambda d, t, m: seen.append((d, t)))
    )
    assert tree_hashes(cr13_artifact) == before
    copy = open_artifact(tmp_path / "copy-12")
    assert copy.config.kvcache_num_blocks == 12 and copy.status is Status.OK
    assert (tmp_path / "copy-12" / "tokenizer" / "vocab.txt").read_text() == "a b c"
    assert seen[-1][0] == seen[-1][1] == result.bytes_copied > 0
    assert not (tmp_path / "copy-12" / ".rbln-studio.lock").exists()


@pytest.mark.parametrize("where", ["source", "inside", "nonempty"])
def test_bad_output_folders_are_refused(cr13_artifact: Path, tmp_path: Path, where: str) -> None:
    target = {"source": cr13_artifact, "inside": cr13_artifact / "sub", "nonempty": tmp_path / "full"}[where]
    if where == "nonempty":
        target.mkdir()
        (target / "x").write_text("x")
    before = tree_hashes(cr13_artifact)
    with pytest.raises(StudioError):
        resize_to_copy(cr13_artifact, target, 12)
    assert tree_hashes(cr13_artifact) == before


def test_cancelled_copy_leaves_nothing(cr13_artifact: Path, tmp_path: Path) -> None:
    token = CancelToken()

    def on_progress(done: int, total: int, message: str) -> None:
        if done > 0:
            token.cancel()

    with pytest.raises(CancelledError):
        resize_to_copy(cr13_artifact, tmp_path / "out", 12, progress=Progress(on_progress, token))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qwen3-8b-cr13"]


def test_second_writer_fails_at_once_naming_the_first(cr13_artifact: Path) -> None:
    with (
        ArtifactLock(cr13_artifact, "test holder"),
        pytest.raises(ArtifactLockedError, match=rf"process {os.getpid()} .*test holder"),
    ):
        resize_in_place(cr13_artifact, 12)
    resize_in_place(cr13_artifact, 12)  # released: works


def test_real_artifact_needs_the_toolchain(cr13_artifact: Path) -> None:
    for rbln in cr13_artifact.glob("*.rbln"):
        rbln.write_bytes(b"real compiler output")
    art = open_artifact(cr13_artifact)
    assert art.allocations is None and "rebel" in (art.unknown_reason or "")
    with pytest.raises(ResizeError, match="optimum-rbln-cli"):
        resize_in_place(cr13_artifact, 12)
