"""Kubernetes ConfigMap/Secret volumes (the kubelet's atomic writer): artifacts found once, swaps noticed."""

from __future__ import annotations

import sys
import threading
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


def test_ten_thousand_swaps_during_scans_drop_no_artifact(tmp_path: Path) -> None:
    """The kubelet removes the old version right after a swap: a folder read through it, half gone, looked like no
    artifact and its row was left out (about one scan in 3,000). Every scan while `..data` is swapped 10,000 times
    has every artifact."""
    names = [f"model-{i}" for i in range(4)]
    payload = {}
    for name in names:
        folder = tmp_path / "payload" / name
        folder.mkdir(parents=True)
        (folder / "rbln_config.json").write_text("{}")  # the scan's mark of an artifact: enough to be a row
        payload[name] = folder
    volume = tmp_path / "volume"
    write_volume(volume, payload)
    swaps = 0
    done = threading.Event()

    def swapper() -> None:
        nonlocal swaps
        try:
            for swaps in range(1, 10_001):  # noqa: B007 (read by the test)
                write_volume(volume, payload)
        finally:
            done.set()

    thread = threading.Thread(target=swapper, daemon=True)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(5e-4)  # the swapper waits less for the interpreter after each of its system calls
    try:
        thread.start()
        scans, short = 0, []
        while not done.is_set():
            rows = list(scan(volume, on_issue=lambda _p, _m: None, use_cache=False, verify=False))
            scans += 1
            if sorted(r.name for r in rows) != names:
                short.append([r.name for r in rows])
        thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert swaps == 10_000 and scans > 100, (swaps, scans)
    assert short == [], f"{len(short)} of {scans} scans left an artifact out: {short[:3]}"
