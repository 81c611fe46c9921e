"""One writer per folder on a server (a real sshd, the installed CLI): a copy into a server's folder that another
copy is writing is refused before it sends anything, and the first ends whole.

The first copy stops itself (SIGSTOP, the crash tests' fault hook) once its first file is sent: the server's receive
holds the folder's claim, waiting for the rest; the second runs to its end; the first is then continued.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fakes.helpers import leftovers
from harness import cli_command, cli_env, continued, stopped_at

from rbln_artifact_studio.core.storage.jsonfile import read_block_count
from remote.conftest import SshServer, url


def test_a_copy_into_a_server_folder_being_written_is_refused(
    server: SshServer, control_dir: Path, cr13_artifact: Path, tmp_path: Path
) -> None:
    staging = tmp_path / "tmp"
    staging.mkdir()
    env = {
        "RBLN_STUDIO_SSH_CONFIG": str(server.client_config),
        "XDG_RUNTIME_DIR": str(control_dir),
        "TMPDIR": str(staging),
    }
    out = tmp_path / "srv" / "qwen-12"
    args = ["set-kvcache-num-blocks", str(cr13_artifact), "12", "--output-dir", url(out)]
    with stopped_at("transfer.sent.0", *args, env=env) as first:
        held = sorted(os.listdir(out.parent))
        second = subprocess.run(
            [*cli_command(), "set-kvcache-num-blocks", str(cr13_artifact), "14", "--output-dir", url(out)],
            capture_output=True,
            text=True,
            env=cli_env(env),
            timeout=180,
        )
        assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
        assert f"{url(out)} is being written by process " in second.stderr, second.stderr
        assert "Nothing was changed." in second.stderr
        assert sorted(os.listdir(out.parent)) == held  # no staging folder of its own there
        done = continued(first, 180)
    assert done.returncode == 0, done.stderr
    assert read_block_count(out) == 12
    assert leftovers(out.parent) == [] and os.listdir(out.parent) == ["qwen-12"]
