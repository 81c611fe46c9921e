"""Finding artifacts: summaries from rbln_config.json, symlink loops, unreadable folders, staging folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from app.core.artifact import Status
from app.core.fsutil import INCOMPLETE_MARKER
from app.core.scan import find_artifacts, scan, summarize


def test_summary_from_config(cr13_artifact: Path) -> None:
    s = summarize(cr13_artifact)
    assert (s.status, s.kvcache_num_blocks, s.num_min_blocks, s.num_full_blocks) == (Status.OK, 21, 9, 40)
    assert (s.npu, s.num_devices, s.batch_size, s.model) == ("RBLN-CR13", 1, 8, "Qwen/Qwen3-8B")
    assert s.kv_bytes_per_npu == int(21 * 1.125 * 2**30)
    assert s.size_on_disk == sum(p.stat().st_size for p in cr13_artifact.iterdir())


def test_scan_finds_nested_artifacts_and_survives_loops(
    cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path
) -> None:
    root = tmp_path / "store"
    (root / "team-a" / "deep").mkdir(parents=True)
    shutil.move(cr13_artifact, root / "team-a" / "deep" / "one")
    shutil.move(ca25_artifact, root / "two")
    (root / "team-a" / "loop").symlink_to(root)
    (root / "broken").symlink_to(tmp_path / "missing")
    found = sorted(Path(p).name for p in find_artifacts(root))
    assert found == ["one", "two"]


def test_unreadable_folder_is_reported_and_skipped(cr13_artifact: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can read every folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    issues: list[str] = []
    try:
        found = list(find_artifacts(tmp_path, on_issue=lambda p, m: issues.append(m)))
    finally:
        locked.chmod(0o755)
    assert [p.name for p in found] == ["qwen3-8b-cr13"] and "Cannot list" in issues[0]


def test_incomplete_and_hidden_folders_are_ignored(cr13_artifact: Path, tmp_path: Path) -> None:
    shutil.copytree(cr13_artifact, tmp_path / ".qwen.partial-1-ab")
    marked = shutil.copytree(cr13_artifact, tmp_path / "visible-but-incomplete")
    (marked / INCOMPLETE_MARKER).write_text("{}")
    assert [p.name for p in find_artifacts(tmp_path)] == ["qwen3-8b-cr13"]


def test_broken_config_is_an_invalid_row_not_an_exception(cr13_artifact: Path) -> None:
    (cr13_artifact / "rbln_config.json").write_bytes(b"\x00\x01 not json")
    rows = list(scan(cr13_artifact.parent))
    assert (
        len(rows) == 1 and rows[0].status is Status.INVALID and "not UTF-8" in rows[0].problems[0]
    ) or "JSON" in rows[0].problems[0]


def test_missing_graph_is_invalid(cr13_artifact: Path) -> None:
    (cr13_artifact / "decoder_batch_8.rbln").unlink()
    s = summarize(cr13_artifact)
    assert s.status is Status.INVALID and "decoder_batch_8.rbln" in s.problems[0]
