"""SIGTERM and SIGINT stop the CLI as Ctrl-C should: the copy's staging folder is removed, exit 143 or 130.

The CLI stops itself (SIGSTOP, the crash tests' fault hook) once the copy is staged; the signal is sent while it
is stopped and acts when it continues, so the test knows the staging folder existed when the signal came.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from harness import ENV_ACTION, ENV_STEP, cli_command, cli_env

from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG


def staged(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if PARTIAL_TAG in p.name)


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_a_copy_leaves_nothing_behind(
    sig: signal.Signals, status: int, cr13_artifact: Path, tmp_path: Path
) -> None:
    out = tmp_path / "copy-kv12"
    proc = subprocess.Popen(
        [*cli_command(), "set-kvcache-num-blocks", str(cr13_artifact), "12", "--output-dir", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env({ENV_STEP: "copy.copied", ENV_ACTION: "stop", "RBLN_STUDIO_CACHE_DIR": str(tmp_path / "c")}),
    )
    try:
        _, wait_status = os.waitpid(proc.pid, os.WUNTRACED)
        assert os.WIFSTOPPED(wait_status), "the CLI did not reach the staged copy"
        assert len(staged(tmp_path)) == 1  # the copy, staged under a hidden .partial- name
        proc.send_signal(sig)
        os.kill(proc.pid, signal.SIGCONT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()  # its pipes closed and its status read here, not in the next test's collector
    assert proc.returncode == status, err
    assert "cancelled: Nothing was changed." in err and "Traceback" not in err
    assert staged(tmp_path) == [] and not out.exists()
