"""The full checks of a window's scan in several processes: the same verdicts in the same order as in one, each
remembered in the scan cache."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "app"  # this checkout

# In a fresh interpreter: forking needs a process with a single thread, which a test runner need not be.
CHECK = """
import json, sys
from pathlib import Path
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
