"""The desktop's log: a rotating file in the app's log folder holds the jobs' logs; --verbose says it on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env
from pytestqt.qtbot import QtBot

from rbln_artifact_studio import __version__
from rbln_artifact_studio.core import app_dirs, logs
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.gui.models.jobs import JobContext, JobManager


def test_a_jobs_log_and_its_failure_are_in_the_log_file(qtbot: QtBot, log_folder: Path) -> None:
    path = logs.setup(to_file=True)
    assert path is not None
    jobs = JobManager()

    def work(ctx: JobContext) -> None:
        ctx.log("copying model.rbln")
        raise StudioError("The disk is full; nothing was left half-written.")

    job = jobs.submit("Copy qwen", work, writes=True)
    with qtbot.waitSignal(job.failed):
        pass
    jobs.wait()
    logs.stop()
    lines = path.read_text().splitlines()
    said = [line.split(" rbln_artifact_studio.gui.models.jobs: ", 1)[1] for line in lines if "models.jobs" in line]
    assert said == [
        "Copy qwen: started",
        "Copy qwen: copying model.rbln",
        "Copy qwen: failed: The disk is full; nothing was left half-written.",
    ]
    assert " WARNING " in lines[-1]


@pytest.mark.parametrize("verbose", [False, True])
def test_the_app_writes_its_log_file_and_says_it_on_stderr_when_verbose(tmp_path: Path, verbose: bool) -> None:
    folder = tmp_path / "log"
    env = cli_env() | {"QT_QPA_PLATFORM": "offscreen", app_dirs.LOG_ENV: str(folder)}
    args = ["--smoke-test", *(["--verbose"] if verbose else [])]
    code = f"import sys\nfrom rbln_artifact_studio.gui.main import main\nsys.exit(main({args!r}))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    started = f"rbln-studio {__version__} started (log: {folder / logs.LOG_FILE})"
    assert started in (folder / logs.LOG_FILE).read_text()
    assert (started in done.stderr) is verbose
