"""Finding artifacts: summaries from rbln_config.json, symlink loops, unreadable folders, staging folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rbln_artifact_studio.core.fleet.artifact import Status
from rbln_artifact_studio.core.fleet.scan import find_artifacts, scan, summarize
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER


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


@pytest.fixture
def trusted_timestamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache rows of folders written a moment ago (the fixtures' copies), as if the clock had moved on."""
    import rbln_artifact_studio.core.fleet.scan_cache

    monkeypatch.setattr(rbln_artifact_studio.core.fleet.scan_cache, "RACY_SECONDS", 0)


@pytest.mark.usefixtures("trusted_timestamps")
def test_cached_rows_equal_fresh_rows_and_are_never_stale(cr13_artifact: Path, ca25_artifact: Path) -> None:
    from rbln_artifact_studio.core.operations.resize import resize_in_place

    root = cr13_artifact.parent
    fresh = [r.to_json() for r in scan(root, use_cache=False)]
    assert [r.to_json() for r in scan(root)] == fresh  # fills the cache
    assert [r.to_json() for r in scan(root)] == fresh  # served from it
    resize_in_place(cr13_artifact, 12)
    rows = {r.name: r for r in scan(root)}
    assert rows["qwen3-8b-cr13"].kvcache_num_blocks == 12
    (ca25_artifact / "decoder_batch_8.rbln").unlink()
    assert {r.name: r for r in scan(root)}["qwen3-8b-ca25x4"].status is Status.INVALID


@pytest.mark.usefixtures("trusted_timestamps")
def test_warm_scan_does_not_parse_configs(cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rbln_artifact_studio.core.fleet.scan as scan_module

    list(scan(cr13_artifact.parent))

    def fail(*args: object) -> None:
        raise AssertionError("a cached row was read again")

    monkeypatch.setattr(scan_module, "_read_row", fail)
    assert [r.kvcache_num_blocks for r in scan(cr13_artifact.parent)] == [21]


def test_corrupt_cache_is_ignored(cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rbln_artifact_studio.core.fleet import scan_cache

    monkeypatch.setattr(scan_cache, "RACY_SECONDS", 0)  # the copy was made just now: remember its row all the same
    list(scan(cr13_artifact.parent))
    cache = scan_cache.ScanCache(cr13_artifact.parent).path
    assert cache.is_file()  # there is a cache to damage (alone, no earlier test has made its folder)
    cache.write_text("{not json")
    assert [r.kvcache_num_blocks for r in scan(cr13_artifact.parent)] == [21]


def test_a_fifo_under_a_graphs_name_is_said_to_be_no_file_not_missing(cr13_artifact: Path) -> None:
    graph = cr13_artifact / "prefill.rbln"
    graph.unlink()
    os.mkfifo(graph)  # never opened: a read would wait for a writer forever
    said = "Expected compiled graph 'prefill.rbln' is not a regular file: it is a named pipe (FIFO)."
    for verify in (True, False):  # the full check's verdict, and the fast row before it
        [row] = scan(cr13_artifact.parent, use_cache=False, verify=verify)
        assert said in row.problems and not any("missing" in p for p in row.problems)


def test_a_rows_constructor_takes_its_fields_in_order_with_their_defaults() -> None:
    """ArtifactSummary's own __init__ (one __dict__ update: a scan makes two rows an artifact) takes every field
    in the dataclass's order with the dataclass's defaults, so a row made either way is the same row."""
    import dataclasses
    import inspect

    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.core.status import Status

    params = list(inspect.signature(ArtifactSummary.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(ArtifactSummary)]
    for param, f in zip(params, dataclasses.fields(ArtifactSummary), strict=True):
        expected = [] if f.default_factory is list else f.default
        got = None if param.default is inspect.Parameter.empty else param.default
        assert (got if f.name != "problems" else []) == (expected if expected is not dataclasses.MISSING else None)
    row = ArtifactSummary("/fleet/a", "a", Status.OK)
    assert row.problems == [] and row.problems is not ArtifactSummary("/fleet/b", "b", Status.OK).problems
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.name = "b"  # type: ignore[misc]
