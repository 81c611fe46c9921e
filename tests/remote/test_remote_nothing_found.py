"""Nothing found is not success: a server path that does not exist, or is a file, exits as `scan` of that path
here does (a real sshd), where it printed a warning, then "0 artifact(s)", and exited 0."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from remote.conftest import url

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize("what", ["missing", "file"])
@pytest.mark.parametrize("form", [(), ("--json",)])
def test_a_server_path_that_is_no_folder_exits_as_here(
    remote_cli: Run, cr13_artifact: Path, tmp_path: Path, what: str, form: tuple[str, ...]
) -> None:
    path = tmp_path / "no" / "such" / "folder" if what == "missing" else cr13_artifact / "rbln_config.json"
    here = remote_cli("scan", path, *form)
    there = remote_cli("scan", url(path), *form)
    assert here.returncode == 1, here.stderr
    assert (there.returncode, there.stdout) == (here.returncode, here.stdout), there.stdout + there.stderr
    assert there.stderr == here.stderr.replace(str(path), url(path)), there.stderr
    assert there.stderr == f"error: {url(path)} is not a folder; give a folder that holds compiled artifacts.\n"


def test_a_server_folder_still_scans(remote_cli: Run, cr13_artifact: Path) -> None:
    done = remote_cli("scan", url(cr13_artifact.parent), "--json")
    assert done.returncode == 0, done.stderr
    assert '"kvcache_num_blocks": 21' in done.stdout
