"""The scan cache never lies: damaged or edited rows are misses (read again and rewritten), a failed save leaves no
temporary file, one cache serves every spelling of a folder, and a scan sweeps what killed writers left behind."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import rbln_artifact_studio.core.fleet.scan as scan_module
import rbln_artifact_studio.core.fleet.scan_cache as scan_cache
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.fleet.scan_cache import ScanCache, checksum
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER

pytestmark = pytest.mark.usefixtures("trusted_timestamps")


@pytest.fixture
def trusted_timestamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cache rows of folders written a moment ago (the fixtures' copies), as if the clock had moved on."""
    monkeypatch.setattr(scan_cache, "RACY_SECONDS", 0)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders a scan reads from their files (rather than serving the cache)."""
    seen: list[str] = []
    original = scan_module._read_row

    def spy(task: scan_module._RowTask, verify: scan_module.Verifier | None) -> object:
        seen.append(os.path.basename(task.folder))
        return original(task, verify)

    monkeypatch.setattr(scan_module, "_read_row", spy)
    return seen


def cache_lines(root: Path) -> list[str]:
    return ScanCache(root).path.read_text().splitlines()


def stored(line: str) -> tuple[str, dict[str, object]]:
    folder, entry = json.loads(line.split(" ", 1)[1])
    return folder, entry


def rewrite_row(root: Path, edit: object, keep_checksum_valid: bool) -> None:
    """Change the one cached row with `edit(row) -> new row`, re-signing the line when asked."""
    path = ScanCache(root).path
    header, line = path.read_text().splitlines()
    folder, entry = stored(line)
    entry["row"] = edit(entry["row"])  # type: ignore[operator]
    body = json.dumps([folder, entry])
    digest = checksum(body.encode()) if keep_checksum_valid else line.split(" ", 1)[0]
    path.write_text(f"{header}\n{digest} {body}\n")


def with_key(key: str, value: object) -> object:
    return lambda row: {**row, key: value}


def without(key: str) -> object:
    return lambda row: {k: v for k, v in row.items() if k != key}


# Each one is what issue 28 found made `scan` fail or lie: a status the code does not know, a missing key, a row
# that is not an object, a count edited by hand, a negative size, a bool where a count goes.
DAMAGE = {
    "unknown status": (with_key("status", "damaged"), True),
    "missing key": (without("kvcache_num_blocks"), True),
    "extra key": (with_key("surprise", 1), True),
    "row is a string": (lambda row: "ok", True),
    "problems not strings": (with_key("problems", [1, 2]), True),
    "negative size": (with_key("size_on_disk", -5), True),
    "bool for a count": (with_key("kvcache_num_blocks", True), True),
    "count edited, checksum stale": (with_key("kvcache_num_blocks", 27), False),
    "status edited, checksum stale": (with_key("status", "damaged"), False),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_row_that_does_not_hold_is_a_miss_and_is_rewritten(
    damage: str, cr13_artifact: Path, reads: list[str]
) -> None:
    root = cr13_artifact.parent
    fresh = [r.to_json() for r in scan(root, use_cache=False)]
    list(scan(root))  # fills the cache
    edit, resign = DAMAGE[damage]
    rewrite_row(root, edit, resign)
    reads.clear()
    assert [r.to_json() for r in scan(root)] == fresh  # 21 blocks, ok: what the artifact holds
    assert reads == ["qwen3-8b-cr13"]  # read again, not served
    assert stored(cache_lines(root)[1])[1]["row"]["kvcache_num_blocks"] == 21  # type: ignore[index]
    reads.clear()
    assert [r.to_json() for r in scan(root)] == fresh
    assert reads == []  # the rewritten row serves the next scan


def test_a_row_cannot_point_elsewhere(cr13_artifact: Path) -> None:
    """The cache stores no path or name: the walk gives them, so a row edited to "/etc" changes nothing."""
    root = cr13_artifact.parent
    list(scan(root))
    rewrite_row(root, lambda row: {**row, "path": "/etc", "name": "etc"}, keep_checksum_valid=True)
    rows = list(scan(root))
    assert [(r.path, r.name, r.status) for r in rows] == [(str(cr13_artifact), "qwen3-8b-cr13", Status.OK)]


def test_one_damaged_line_costs_only_its_folder(cr13_artifact: Path, ca25_artifact: Path, reads: list[str]) -> None:
    root = cr13_artifact.parent
    list(scan(root))
    path = ScanCache(root).path
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1][:40] + "garbage", lines[2]]) + "\n")
    reads.clear()
    assert [r.kvcache_num_blocks for r in scan(root)] == [14, 21]
    assert len(reads) == 1  # the other folder's line still proved itself


def test_a_cache_of_another_schema_version_is_ignored(cr13_artifact: Path, reads: list[str]) -> None:
    root = cr13_artifact.parent
    list(scan(root))
    path = ScanCache(root).path
    lines = path.read_text().splitlines()
    path.write_text("\n".join([json.dumps({"version": 4}), *lines[1:]]) + "\n")
    reads.clear()
    assert [r.kvcache_num_blocks for r in scan(root)] == [21]
    assert reads == ["qwen3-8b-cr13"]
    assert json.loads(cache_lines(root)[0])["version"] == scan_cache.CACHE_VERSION


def test_every_spelling_of_a_folder_shares_one_cache(
    cr13_artifact: Path, ca25_artifact: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The window's absolute path, `scan fleet` and `scan .` no longer evict one another."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for artifact in (cr13_artifact, ca25_artifact):
        artifact.rename(fleet / artifact.name)
    (tmp_path / "link").symlink_to(fleet)
    list(scan(fleet))
    monkeypatch.chdir(tmp_path)
    for spelling in ("fleet", "./fleet/", str(tmp_path / "link"), "fleet/../fleet"):
        reads.clear()
        assert [r.kvcache_num_blocks for r in scan(Path(spelling))] == [14, 21]
        assert reads == [], spelling
    monkeypatch.chdir(fleet)
    reads.clear()
    rows = list(scan(Path(".")))
    assert reads == [] and [r.path for r in rows] == ["./qwen3-8b-ca25x4", "./qwen3-8b-cr13"]  # as spelled


def test_a_failed_save_leaves_no_temporary_file(
    cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk (here: a file size limit, which fails writes as a full disk does) and a cache path that is a
    folder: the scan still succeeds and no `.scan-….json.tmp-…` stays in the cache folder."""
    cache = tmp_path / "cache"
    code = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "import rbln_artifact_studio.core.fleet.scan_cache as c\n"
        "from rbln_artifact_studio.core.fleet.scan import scan\n"
        "c.RACY_SECONDS = 0\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (600, 600))\n"
        "print(len(list(scan(Path(sys.argv[1])))))\n"
    )
    env = {**os.environ, "RBLN_STUDIO_CACHE_DIR": str(cache), "PYTHONPATH": str(Path(scan_module.__file__).parents[3])}
    out = subprocess.run([sys.executable, "-c", code, str(cr13_artifact.parent)], env=env, capture_output=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [b"2"]
    assert sorted(p.name for p in cache.iterdir()) == []  # no cache (it did not fit), and no temporary file

    monkeypatch.setenv("RBLN_STUDIO_CACHE_DIR", str(tmp_path / "cache-2"))
    folder_cache = ScanCache(cr13_artifact.parent).path
    folder_cache.mkdir(parents=True)
    assert len(list(scan(cr13_artifact.parent))) == 2
    assert [p.name for p in folder_cache.parent.iterdir()] == [folder_cache.name]


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_save_sweeps_temporary_files_of_dead_writers(cr13_artifact: Path) -> None:
    path = ScanCache(cr13_artifact.parent).path
    path.parent.mkdir(parents=True, exist_ok=True)
    stale = path.with_name(f".{path.name}.tmp-{dead_pid()}-0badf00d")
    stale.write_bytes(b"x" * 4096)
    live = path.with_name(f".scan-other.json.tmp-{os.getppid()}-0badf00d")  # a writer still running
    live.write_bytes(b"y")
    try:
        list(scan(cr13_artifact.parent))
        assert not stale.exists() and live.exists() and path.is_file()
    finally:
        live.unlink()


def test_a_scan_sweeps_staging_folders_of_dead_processes_of_this_host(cr13_artifact: Path) -> None:
    """What a resize killed by SIGKILL (or a power cut) left: a hidden `.NAME.partial-PID-TOKEN` beside it."""
    root = cr13_artifact.parent

    def staging(name: str, pid: int, host: str) -> Path:
        folder = root / f".{name}.partial-{pid}-0badf00d"
        folder.mkdir()
        (folder / "big.rbln").write_bytes(b"\0" * 1024)
        (folder / INCOMPLETE_MARKER).write_text(json.dumps({"pid": pid, "host": host, "target": str(root / name)}))
        return folder

    dead = staging("copy-a", dead_pid(), socket.gethostname())
    running = staging("copy-b", os.getpid(), socket.gethostname())
    elsewhere = staging("copy-c", dead_pid(), "another-host.example")  # a shared disk: that host's own business
    assert [r.name for r in scan(root)] == ["qwen3-8b-cr13"]
    assert not dead.exists()
    assert running.is_dir() and elsewhere.is_dir()
