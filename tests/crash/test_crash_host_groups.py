"""Saving a server group writes host_groups.json: killed at each of its steps, the file holds the old groups or the
new ones, never a part; saving again gives the new groups."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from harness import ENV_STEP, ENV_TRACE, cli_env

OLD = {"version": 1, "groups": {"rack1": ["ssh://npu1", "npu2"]}}
NEW = {"version": 1, "groups": {"rack1": ["ssh://npu1", "npu2"], "rack2": ["npu3", "npu4"]}}
STEPS = ["host_groups.tmp_written", "host_groups.renamed"]

SAVE = """
import sys
from pathlib import Path
from rbln_artifact_studio.core.fleet.host_groups import save_group
save_group("rack2", ["npu3", "npu4"], Path(sys.argv[1]))
"""


def _save(path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SAVE, str(path)], capture_output=True, text=True, env=cli_env(env), timeout=60
    )


def test_saving_a_group_passes_its_documented_steps(tmp_path: Path) -> None:
    path, trace = tmp_path / "host_groups.json", tmp_path / "trace"
    path.write_text(json.dumps(OLD))
    assert _save(path, {ENV_TRACE: str(trace)}).returncode == 0
    assert [line.split()[0] for line in trace.read_text().splitlines()] == [f"{s}#1" for s in STEPS]
    assert json.loads(path.read_text()) == NEW


@pytest.mark.parametrize("step", STEPS)
def test_kill_while_saving_a_group(tmp_path: Path, step: str) -> None:
    path = tmp_path / "host_groups.json"
    path.write_text(json.dumps(OLD))
    killed = _save(path, {ENV_STEP: step})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert json.loads(path.read_text()) in (OLD, NEW), "host_groups.json holds a part of a write"
    done = _save(path, {})
    assert done.returncode == 0, done.stderr
    assert json.loads(path.read_text()) == NEW
