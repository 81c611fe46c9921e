"""The full checks of a window's scan in several processes: the same verdicts in the same order as in one, each
remembered in the scan cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "app"  # this checkout

# In a fresh interpreter: forking needs a process with a single thread, which a test runner need not be.
CHECK = """
import json, sys
from pathlib import Path

import pytest
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.core.fleet import scan_cache
from rbln_artifact_studio.core.fleet.verify import verify_rows
scan_cache.RACY_SECONDS = 0  # the copies were made just now: remember their rows all the same
root = Path(sys.argv[1])
fast = list(scan(root, use_cache=False, verify=False))
one = [r.to_json() for r in verify_rows(root, fast, use_cache=False)]
two = [r.to_json() for r in verify_rows(root, fast, processes=2)]
print(json.dumps({"fast": [r.status.value for r in fast], "one": one, "two": two}))
"""


def test_checks_in_two_processes_give_the_verdicts_of_one_in_order_and_are_cached(
    cr13_artifact: Path, tmp_path: Path
) -> None:
    root = tmp_path / "fleet"
    for i in range(150):  # past scan_pool.LOCAL_FIRST, so a worker really checks some
        shutil.copytree(cr13_artifact, root / f"team-{i // 50}" / f"a-{i:03d}")
    (root / "team-1" / "a-060" / "prefill.rbln").unlink()  # one invalid verdict among them
    cache = tmp_path / "cache"
    out = subprocess.run(
        [sys.executable, "-c", CHECK, str(root)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(SRC), "RBLN_STUDIO_CACHE_DIR": str(cache)},
        timeout=300,
    )
    result = json.loads(out.stdout)
    assert set(result["fast"]) == {"checking"}
    assert result["two"] == result["one"]
    assert [r["path"] for r in result["two"]] == sorted(r["path"] for r in result["two"])
    assert {r["status"] for r in result["two"]} == {"ok", "invalid"}
    lines = next(cache.rglob("scan-*.json")).read_text().splitlines()[1:]  # "CHECKSUM [folder, entry]" each
    cached = [json.loads(line.split(" ", 1)[1]) for line in lines]
    assert len(cached) == len(result["two"])  # every verdict remembered, those of the worker too


def test_a_row_read_while_a_resize_rewrites_it_stays_checking_and_is_not_remembered(
    cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resize beside the check rewrites rbln_config.json under every read: the row says so as "checking" (busy,
    not broken: a red "invalid" would send the user after a fault that is not there), and no verdict is cached."""
    from rbln_artifact_studio.core.fleet import artifact as reader
    from rbln_artifact_studio.core.fleet import scan_cache
    from rbln_artifact_studio.core.fleet.scan import scan
    from rbln_artifact_studio.core.fleet.verify import verify_rows
    from rbln_artifact_studio.core.status import Status

    root = tmp_path / "fleet"
    shutil.copytree(cr13_artifact, root / "busy")
    config = root / "busy" / "rbln_config.json"
    read_once = reader._read_once

    def rewritten_meanwhile(*args: object, **kwargs: object) -> reader.Artifact:
        artifact = read_once(*args, **kwargs)  # type: ignore[arg-type]
        staged = config.with_name("staged.json")
        staged.write_bytes(config.read_bytes())
        os.replace(staged, config)  # what a resize's atomic rewrite does: a new file in its place
        return artifact

    monkeypatch.setattr(reader, "_read_once", rewritten_meanwhile)
    monkeypatch.setattr(scan_cache, "RACY_SECONDS", 0)
    monkeypatch.setenv("RBLN_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    fast = list(scan(root, use_cache=False, verify=False))
    [row] = verify_rows(root, fast)
    assert row.status is Status.CHECKING
    assert row.problems == [f"{root / 'busy'} kept changing while it was read; try again when the resize is done."]
    monkeypatch.setattr(reader, "_read_once", read_once)  # the resize is over
    [again] = scan(root)
    assert again.status is Status.OK, again.problems  # read anew, not the busy row from the cache
