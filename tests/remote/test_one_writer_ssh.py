"""One writer per folder on a server (a real sshd, the installed CLI): a copy into a server's folder that another
copy is writing is refused before it sends anything, and the first ends whole.

The first copy stops itself (SIGSTOP, the crash tests' fault hook) once its first file is sent: the server's receive
holds the folder's claim, waiting for the rest; the second runs to its end; the first is then continued.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from fakes.helpers import leftovers
from harness import ENV_ACTION, ENV_STEP, cli_command, cli_env

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
    first = subprocess.Popen(
        [*cli_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env({**env, ENV_STEP: "transfer.sent.0", ENV_ACTION: "stop"}),
    )
    try:
        _, status = os.waitpid(first.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(status), first.communicate()
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
        assert "nothing was written" in second.stderr
        assert sorted(os.listdir(out.parent)) == held  # no staging folder of its own there
        os.kill(first.pid, signal.SIGCONT)
        _, err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err
    assert read_block_count(out) == 12
    assert leftovers(out.parent) == [] and os.listdir(out.parent) == ["qwen-12"]
