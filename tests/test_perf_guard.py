"""The CI performance guard (benchmarks/regression_guard.py): the scan and get-kvcache-num-blocks stay near their
baselines in CPU time, and the guard does fail when the scan is made slower on purpose."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import regression_guard as guard

# A realistic regression: every rbln_config.json decoded twice more (json.loads of its bytes) on top of the scan's own
# reading. The guard holds the one-process scan's CPU ratio to 1.3 times what main measures (SCAN_HELD), where one
# extra parse adds ~50-60% since issue 35's fourth pass; two fail it.
SLOWED_SCAN = """
import json, os, sys
from rbln_artifact_studio.core.fleet import scan
from rbln_artifact_studio.cli.main import main

original = scan._read_row
def slowed(task, verify):
    for _ in range(2):
        with open(os.path.join(task.folder, "rbln_config.json"), "rb") as f:
            json.loads(f.read())
    return original(task, verify)
scan._read_row = slowed
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return guard.build_scan_fleets(tmp_path_factory.mktemp("guard"))


def test_scan_cpu_time_stays_near_the_bare_walker(fleets: tuple[Path, Path]) -> None:
    verdict = guard.scan_verdict(*fleets, rounds=9)
    if not verdict.holds:  # again, with more rounds: noise rarely fails twice, a regression always does
        verdict = guard.scan_verdict(*fleets, rounds=18)
    print(verdict.line(), f"(load average {os.getloadavg()[0]:.1f})")
    assert verdict.holds, verdict.line()


def test_get_kvcache_num_blocks_cpu_time_stays_near_the_one_liner(fleets: tuple[Path, Path]) -> None:
    artifact = next(fleets[0].glob("*/*"))
    verdict = guard.get_blocks_verdict(artifact, rounds=15)
    if not verdict.holds:
        verdict = guard.get_blocks_verdict(artifact, rounds=30)
    assert verdict.holds, verdict.line()


def test_the_guard_fails_a_deliberately_slowed_scan(fleets: tuple[Path, Path]) -> None:
    slowed = [sys.executable, "-c", SLOWED_SCAN, "scan"]
    verdict = guard.scan_verdict(*fleets, rounds=5, scan_command=slowed)
    print(verdict.line())
    assert not verdict.holds, verdict.line()
    assert verdict.ratio > guard.scan_verdict(*fleets, rounds=5).ratio  # and the guard itself tells them apart
