"""The studio's log: named loggers to a rotating file in the app's log folder (and stderr with --verbose)."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import threads_started_since

from rbln_artifact_studio.core import app_dirs, logs
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import scan


def test_the_log_folder_is_the_platforms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(app_dirs.LOG_ENV, raising=False)
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert app_dirs.log_dir() == tmp_path / ".local" / "state" / "rbln-studio" / "log"


def test_a_scan_is_written_to_the_log_file(log_folder: Path, cr13_artifact: Path) -> None:
    """The desktop's log file says when a scan started and how it ended, with what it found."""
    path = logs.setup(to_file=True)
    assert path == log_folder / logs.LOG_FILE
    rows = list(scan(cr13_artifact.parent, use_cache=False))
    logs.stop()  # what is queued is written
    text = path.read_text()
    assert len(rows) == 1
    assert f"INFO rbln_artifact_studio.core.fleet.scan: Scan of {cr13_artifact.parent}: started" in text
    assert f"Scan of {cr13_artifact.parent}: done, 1 found in" in text


def test_a_failure_is_a_warning_with_its_reason(log_folder: Path) -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise StudioError("the disk went away")

    path = logs.setup(to_file=True)
    assert path is not None
    with pytest.raises(StudioError):
        list(logs.logged(logging.getLogger("rbln_artifact_studio.test"), "Scan of /x", failing()))
    logs.stop()
    assert "WARNING rbln_artifact_studio.test: Scan of /x: failed: the disk went away, 1 found in" in path.read_text()


def test_only_the_object_stores_retries_are_kept_from_botocore(log_folder: Path) -> None:
    """botocore says something about every request; the log keeps its decisions to retry, as warnings."""
    path = logs.setup(to_file=True)
    assert path is not None
    retries = logging.getLogger(logs.RETRIES)
    retries.debug("Not retrying request.")
    retries.debug("Retry needed, retrying request after delay of: %s", 0.4)
    logging.getLogger("botocore.endpoint").warning("not ours")
    logs.stop()
    lines = path.read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "WARNING botocore.retries.standard: Retry needed, retrying request after delay of: 0.4"
    )


def test_the_cli_says_what_it_does_on_stderr_only_when_verbose(
    run_cli: Callable[..., subprocess.CompletedProcess[str]], cr13_artifact: Path
) -> None:
    quiet = run_cli("scan", cr13_artifact.parent)
    assert quiet.returncode == 0 and "Scan of" not in quiet.stderr and "INFO" not in quiet.stderr
    for args in (("--verbose", "scan", cr13_artifact.parent), ("scan", cr13_artifact.parent, "-v")):
        loud = run_cli(*args)
        assert loud.returncode == 0, loud.stderr
        assert loud.stdout == quiet.stdout, "the answer is the same; only stderr says more"
        assert f"rbln_artifact_studio.core.fleet.scan: Scan of {cr13_artifact.parent}: started" in loud.stderr
        assert f"Scan of {cr13_artifact.parent}: done, 1 found in" in loud.stderr


def test_verbose_alone_starts_no_thread(capfd: pytest.CaptureFixture[str]) -> None:
    """The CLI's scan forks its workers only while it is single-threaded: --verbose must not take that away."""
    before = set(threading.enumerate())  # other tests' threads may end meanwhile: only new ones count
    try:
        assert logs.setup(verbose=True) is None
        assert threads_started_since(before) == []
        logging.getLogger("rbln_artifact_studio.test").debug("said at once")
        assert "DEBUG rbln_artifact_studio.test: said at once" in capfd.readouterr().err
    finally:
        logs.stop()
