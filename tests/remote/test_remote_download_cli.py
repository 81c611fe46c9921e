"""`rbln-studio-cli download ssh://HOST/PATH DEST` against a real sshd: the server's artifact copied here whole,
readable as the same artifact; a server folder that holds no artifact is refused and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import same_files

from remote.conftest import Run, url


def test_a_server_artifact_downloads_whole(remote_cli: Run, cr13_artifact: Path, tmp_path: Path) -> None:
    dest = tmp_path / "here" / "qwen"
    done = remote_cli("download", url(cr13_artifact), dest)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Downloaded {url(cr13_artifact)} to {dest} (")
    assert same_files(cr13_artifact, dest)  # every name, every byte
    here = json.loads(remote_cli("inspect", dest, "--json").stdout)
    there = json.loads(remote_cli("inspect", url(cr13_artifact), "--json").stdout)
    assert (here["status"], here["kvcache_num_blocks"]) == ("ok", there["kvcache_num_blocks"])


def test_a_server_folder_without_an_artifact_is_refused(remote_cli: Run, tmp_path: Path) -> None:
    empty = tmp_path / "no-artifact"
    empty.mkdir()
    done = remote_cli("download", url(empty), tmp_path / "dest")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {url(empty)} holds no rbln_config.json"), done.stderr
    assert not (tmp_path / "dest").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
