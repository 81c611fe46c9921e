"""Every legal output name works over ssh://: a 250-byte name left no room for the server's staging suffix
(`OSError: [Errno 36] File name too long`); the staging name is shortened there as it is here."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from remote.conftest import url

Run = Callable[..., subprocess.CompletedProcess[str]]
NAMES = ["n" * 250, "모" * 85]  # 250 bytes; 255 bytes of 3-byte characters


@pytest.mark.parametrize("name", NAMES, ids=["250-bytes", "255-bytes-korean"])
def test_resize_to_a_copy_on_the_server_with_a_long_name(
    remote_cli: Run, cr13_artifact: Path, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done = remote_cli("set-kvcache-num-blocks", cr13_artifact, "20", "--output-dir", url(out / name))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and 'File "<rbln-studio>"' not in done.stderr
    assert read_block_count(out / name) == 20
    assert [p.name for p in out.iterdir()] == [name], "nothing of the staging left"
