"""One exit code whatever the place: an invalid artifact on a server exits 3 as the same one here (docs/cli.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_exit_code_rule import DAMAGE

from remote.conftest import Run, url


@pytest.mark.parametrize("damage", ["string", "truncated"])
def test_an_invalid_artifact_exits_3_over_ssh_as_here(remote_cli: Run, cr13_artifact: Path, damage: str) -> None:
    config = cr13_artifact / "rbln_config.json"
    config.write_bytes(DAMAGE[damage](config.read_bytes()))
    for command in ("inspect", "serving"):
        here = remote_cli(command, cr13_artifact)
        there = remote_cli(command, url(cr13_artifact))
        assert here.returncode == there.returncode == 3, (command, here.stderr, there.stderr)
        assert there.stderr.startswith("error: ") and url(cr13_artifact) in there.stderr, there.stderr
        assert "Traceback" not in there.stderr


def test_a_folder_without_a_config_is_no_artifact_over_ssh(remote_cli: Run, tmp_path: Path) -> None:
    done = remote_cli("inspect", url(tmp_path))
    assert done.returncode == 1 and "not a compiled artifact" in done.stderr, done.stderr
