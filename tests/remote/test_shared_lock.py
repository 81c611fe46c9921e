"""A resize started here and a job on the server take the same lock: while one writes, the other is refused."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from fakes.install import TINY_CA25, fake_compile

from rbln_artifact_studio.core.portable.lock import LOCK_NAME
from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from rbln_artifact_studio.core.storage.lock import ArtifactLock
from remote.conftest import Run, SshServer, url
from remote.test_remote_scan import tree_state


def test_a_local_writer_blocks_a_server_job_on_the_same_folder(
    remote_cli: Run, server: SshServer, tiny_model: Path, tmp_path: Path
) -> None:
    art = fake_compile(server.toolchain, tiny_model, tmp_path / "srv" / "real", *TINY_CA25, "--memory-budget", "0.5")
    before = tree_state(art)
    with ArtifactLock(art, "local resize"):
        refused = remote_cli("set-kvcache-num-blocks", url(art), "12")
    assert refused.returncode == 1
    holder = f"process {os.getpid()} on {socket.gethostname()} (local resize, since "
    assert f"is being changed by {holder}" in refused.stderr and "Nothing was changed." in refused.stderr
    assert tree_state(art) == before and read_block_count(art) == 16
    done = remote_cli("set-kvcache-num-blocks", url(art), "12")  # the lock given back: the job runs
    assert done.returncode == 0, done.stderr
    assert read_block_count(art) == 12 and not (art / LOCK_NAME).exists()
