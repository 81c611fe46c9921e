"""The scan cache: a cached row equals a fresh one, and every kind of change to a folder forces a fresh read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import rbln_artifact_studio.core.fleet.scan as scan_module
import rbln_artifact_studio.core.fleet.scan_cache
from rbln_artifact_studio.core.fleet.scan import scan

CONFIG = "rbln_config.json"


@pytest.fixture
def trusted_timestamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache rows of folders written a moment ago (the fixtures' copies), as if the clock had moved on."""
    monkeypatch.setattr(rbln_artifact_studio.core.fleet.scan_cache, "RACY_SECONDS", 0)


def rows(root: Path, **kw: object) -> list[dict[str, object]]:
    return [r.to_json() for r in scan(root, **kw)]  # type: ignore[arg-type]


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each folder whose rbln_config.json the scan reads (rather than serving the cache)."""
    reads: list[str] = []
    original = scan_module._read_row

    def spy(task: scan_module._RowTask, verify: scan_module.Verifier | None) -> object:
        reads.append(os.path.basename(task.folder))
        return original(task, verify)

    monkeypatch.setattr(scan_module, "_read_row", spy)
    return reads


def _same_size_edit(folder: Path) -> None:
    data = (folder / CONFIG).read_bytes()
    (folder / CONFIG).write_bytes(data.replace(b'"kvcache_num_blocks": 21', b'"kvcache_num_blocks": 12'))


def _replaced_by_rename(folder: Path) -> None:
    raw = json.loads((folder / CONFIG).read_text())
    raw["kvcache_num_blocks"] = 12
    tmp = folder / "new.json.tmp"
    tmp.write_text(json.dumps(raw, indent=2))
    os.replace(tmp, folder / CONFIG)


def _same_content_new_inode(folder: Path) -> None:
    data, st = (folder / CONFIG).read_bytes(), (folder / CONFIG).stat()
    (folder / CONFIG).unlink()
    (folder / CONFIG).write_bytes(data)
    os.utime(folder / CONFIG, ns=(st.st_atime_ns, st.st_mtime_ns))  # an rsync -t / cp -p style copy


def _chmod_unreadable(folder: Path) -> None:
    (folder / CONFIG).chmod(0)


def _model_renamed(folder: Path) -> None:
    raw = json.loads((folder / "config.json").read_text())
    raw["_name_or_path"] = "someone/else"
    (folder / "config.json").write_text(json.dumps(raw))


CHANGES: dict[str, Callable[[Path], object]] = {
    "config edited, same size": _same_size_edit,
    "config replaced by rename": _replaced_by_rename,
    "config copied back with its old mtime": _same_content_new_inode,
    "permissions changed": _chmod_unreadable,
    "graph deleted": lambda f: (f / "decoder_batch_8.rbln").unlink(),
    "graph renamed": lambda f: (f / "decoder_batch_8.rbln").rename(f / "decoder_batch_4.rbln"),
    "file added": lambda f: (f / "notes.txt").write_text("hello"),
    "graph touched": lambda f: os.utime(f / "prefill.rbln"),
    "model config.json changed": _model_renamed,
}


@pytest.mark.usefixtures("trusted_timestamps")
@pytest.mark.parametrize("change", CHANGES)
def test_every_change_forces_a_fresh_row(
    change: str, cr13_artifact: Path, ca25_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = cr13_artifact.parent
    rows(root)  # fills the cache
    CHANGES[change](cr13_artifact)
    try:
        reads = count_reads(monkeypatch)
        warm = rows(root)
        assert reads == ["qwen3-8b-cr13"]  # only the changed folder is read again; the other is served
        assert warm == rows(root, use_cache=False)
    finally:
        (cr13_artifact / CONFIG).chmod(0o644)


@pytest.mark.usefixtures("trusted_timestamps")
def test_vanished_folders_leave_the_cache(cr13_artifact: Path, ca25_artifact: Path) -> None:
    root = cr13_artifact.parent
    rows(root)
    os.rename(ca25_artifact, root / ".hidden-now")
    assert [r["name"] for r in rows(root)] == ["qwen3-8b-cr13"]
    lines = rbln_artifact_studio.core.fleet.scan_cache.ScanCache(root).path.read_text().splitlines()
    # A header line, then one `CHECKSUM JSON` line per folder, keyed relative to the root.
    assert [json.loads(line.split(" ", 1)[1])[0] for line in lines[1:]] == [cr13_artifact.name]


def test_folders_changed_a_moment_ago_are_not_cached(cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A coarse-timestamp file system could hide a second same-size edit in the same tick: read such folders again."""
    rows(cr13_artifact.parent)
    reads = count_reads(monkeypatch)
    rows(cr13_artifact.parent)
    assert reads == ["qwen3-8b-cr13"]


def test_a_warm_scan_does_not_import_pydantic(cr13_artifact: Path, trusted_timestamps: None) -> None:
    """Nor multiprocessing, nor the backends: with every row cached, `scan --jobs 2` reads no artifact, so it loads
    neither the full check nor the reader of real compiler graphs, and starts no process."""
    rows(cr13_artifact.parent)  # fills the cache (this process may import anything)
    code = (
        "import sys; from rbln_artifact_studio.cli.main import main; "
        f"main(['scan', {str(cr13_artifact.parent)!r}, '--json', '--jobs', '2']); "
        "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'multiprocessing', 'rbln_artifact_studio.backends.registry'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "app")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
    assert '"kvcache_num_blocks": 21' in out.stdout  # the cached row, printed


def test_saving_and_freeing_a_large_cache_gives_way_every_few_hundred_entries(tmp_path: Path) -> None:
    """A GUI's scan worker passes its checkpoint: writing or freeing 50,000 entries must not hold the interpreter
    lock from start to end while the window paints (the second pass of a 50,000-artifact scan stalled on it)."""
    from rbln_artifact_studio.core.fleet.scan_cache import PAUSE_EVERY, ScanCache

    cache = ScanCache(tmp_path)
    for i in range(3 * PAUSE_EVERY + 5):
        cache.put(f"/fleet/a{i}", [["rbln_config.json", 1, 0, 0, i]], {"name": f"a{i}"})
    paused: list[str] = []
    cache.save(False, lambda: paused.append("save"))
    assert paused == ["save"] * 3
    assert len(ScanCache(tmp_path)._entries) == 3 * PAUSE_EVERY + 5  # everything was written
    cache.release(lambda: paused.append("release"))
    assert paused.count("release") >= 3 and not cache._entries


def test_a_cold_scan_of_simulator_artifacts_does_not_load_the_backends(cr13_artifact: Path) -> None:
    """The reader of real compiler graphs (the backends: compiler, resize, optimum-rbln's driver) is chosen when the
    first real graph is read, so a full-check scan of simulator artifacts never imports it and still gives each row
    inspect's verdict (issue 35: it cost every scan ~30 ms of CPU)."""
    code = (
        "import sys; from rbln_artifact_studio.cli.main import main; "
        f"main(['scan', {str(cr13_artifact.parent)!r}, '--json', '--no-cache', '--jobs', '1']); "
        "print(sorted(m for m in sys.modules if m.startswith('rbln_artifact_studio.backends.registry')))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "app")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
    report = json.loads("\n".join(out.stdout.splitlines()[:-1]))
    assert [(row["name"], row["status"], row["kvcache_num_blocks"]) for row in report] == [("qwen3-8b-cr13", "ok", 21)]
