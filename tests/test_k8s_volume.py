"""Kubernetes ConfigMap/Secret volumes (the kubelet's atomic writer): artifacts found once, swaps noticed."""

from __future__ import annotations

from pathlib import Path

from k8s_volume import DATA, with_blocks, write_volume

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, scan, summarize


def test_a_volume_lists_each_artifact_once_through_its_links(cr13_artifact: Path, tmp_path: Path) -> None:
    volume = tmp_path / "volume"
    write_volume(volume, {"qwen-a": cr13_artifact, "qwen-b": cr13_artifact})
    rows = list(scan(volume, use_cache=False, verify=False))
    assert [r.path for r in rows] == [str(volume / "qwen-a"), str(volume / "qwen-b")]
    assert all(r.kvcache_num_blocks == 21 and not r.problems for r in rows)
    # Opened at its `..data`, the same artifacts, read through it.
    assert [Path(r.path).name for r in scan(volume / DATA, use_cache=False, verify=False)] == ["qwen-a", "qwen-b"]


def test_a_swap_during_a_scan_says_which_rows_are_from_which_version(cr13_artifact: Path, tmp_path: Path) -> None:
    old = {n: with_blocks(cr13_artifact, 16, tmp_path / "old" / n) for n in ("qwen-a", "qwen-b", "qwen-c")}
    new = {n: with_blocks(cr13_artifact, 17, tmp_path / "new" / n) for n in ("qwen-a", "qwen-b", "qwen-c")}
    volume = tmp_path / "volume"
    first = write_volume(volume, old).name
    swapped: list[str] = []

    def read_and_swap(found: ArtifactSummary) -> ArtifactSummary:
        if found.name == "qwen-b" and not swapped:  # the volume is updated while the second row is read
            swapped.append(write_volume(volume, new).name)
        return summarize(found.path, verify=False)

    issues: list[str] = []
    rows = list(scan(volume, on_issue=lambda _p, m: issues.append(m), use_cache=False, verify=read_and_swap))
    blocks = {r.name: r.kvcache_num_blocks for r in rows}
    assert blocks == {"qwen-a": 16, "qwen-b": 17, "qwen-c": 17}  # each row whole from one version, none mixed
    assert issues == [
        f"{volume} was updated while it was scanned (its ..data moved): rows qwen-a from {first}; "
        f"qwen-b, qwen-c from {swapped[0]}; scan again to see one version."
    ]
    assert all(not r.problems for r in rows)
