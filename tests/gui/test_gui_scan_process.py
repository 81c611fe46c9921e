"""The window's scans run in a process of their own: none of the reading happens in the window's process, a scan
process that dies leaves the window working and says so, and a cancel ends the process."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet import scan as scan_module
from rbln_artifact_studio.core.fleet import verify
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.gui.models.folder_scan import RowsFound, ScanProcess, ScanRequest
from rbln_artifact_studio.gui.models.jobs import Job, JobState
from rbln_artifact_studio.gui.window.main_window import MainWindow

from .conftest import open_folder
from .held_scan import HeldScan


def _statuses(window: MainWindow) -> list[Status]:
    return [window.model.summary(r).status for r in range(window.model.rowCount())]


def test_the_window_process_reads_no_artifact_while_it_scans(
    qtbot: QtBot, window: MainWindow, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the scan ran in another process, its fast rows and full checks ran in a thread of the window's."""

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("an artifact was read in the window's process")

    monkeypatch.setattr(verify, "verify_summary", refuse)
    monkeypatch.setattr(scan_module, "_from_config", refuse)
    open_folder(qtbot, window, workspace)
    assert window.model.rowCount() == 2
    assert Status.CHECKING not in _statuses(window)  # every verdict came back from the scan process
    assert {window.model.summary(r).status for r in range(2)} == {Status.OK}


def test_a_scan_process_that_dies_leaves_the_window_working_and_says_why(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = folder_scan.command
    held = HeldScan(tmp_path_factory.mktemp("held"), monkeypatch)
    with qtbot.waitSignal(window.workspace.rowsRead, timeout=20_000):
        window.open_folder(workspace)
    job = window.workspace.scan_job
    assert isinstance(job, Job)
    qtbot.waitUntil(held.started)
    with qtbot.waitSignal(job.finished, timeout=20_000):
        os.kill(held.pid, signal.SIGKILL)  # as the kernel's OOM killer, or a reader's crash, would end it
    assert job.state is JobState.FAILED and job.failure is not None
    assert "killed by signal 9" in job.failure.reason and "window is unaffected" in job.failure.reason
    assert window.model.rowCount() == 2  # the rows read so far stay
    monkeypatch.setattr(folder_scan, "command", real)
    open_folder(qtbot, window, workspace)  # Refresh works, and now the verdicts come
    assert set(_statuses(window)) == {Status.OK}


def test_cancelling_a_scan_ends_its_process(
    qtbot: QtBot,
    window: MainWindow,
    workspace: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    held = HeldScan(tmp_path_factory.mktemp("held"), monkeypatch)
    with qtbot.waitSignal(window.workspace.rowsRead, timeout=20_000):
        window.open_folder(workspace)
    job = window.workspace.scan_job
    assert isinstance(job, Job)
    qtbot.waitUntil(held.started)
    pid = held.pid
    with qtbot.waitSignal(job.cancelled, timeout=20_000):
        job.cancel()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, and reaped
    assert Status.CHECKING in _statuses(window)  # the held checks never ran


def test_the_scan_process_streams_rows_then_verdicts(workspace: Path) -> None:
    process = ScanProcess(ScanRequest(str(workspace), [str(workspace)], opening=True))
    kinds = [type(m).__name__ for m in process.messages(CancelToken())]
    assert kinds.index("RowsRead") < len(kinds) - 1 and kinds[-1] == "Finished"
    assert kinds.count("RowsFound") >= 2  # the fast rows, then the verdicts


_FIVE_BATCHES = """
import os, sys
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.gui.models.folder_scan import Finished, RowsFound, RowsRead, _frames_out
from rbln_artifact_studio.gui.models.table_rows import TableRow
send = _frames_out(os.fdopen(1, "wb"))
for i in range(5):
    send(RowsFound([TableRow.of(ArtifactSummary(f"/f/a{i}", f"a{i}", Status.OK))], [f"/f/a{i}"]))
send(RowsRead(5))
send(RowsFound([TableRow.of(ArtifactSummary("/f/a0", "a0", Status.WARNING))], []))
send(Finished(5))
"""


def test_rows_that_arrived_while_the_window_was_busy_are_handed_over_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, "-c", _FIVE_BATCHES])
    process = ScanProcess(ScanRequest("/f", ["/f"]))
    process.process.wait()  # everything sent before the first is taken: the window was busy meanwhile
    messages = list(process.messages(CancelToken()))
    assert [type(m).__name__ for m in messages] == ["RowsFound", "RowsRead", "RowsFound", "Finished"]
    first = messages[0]
    assert isinstance(first, RowsFound)
    assert [r.summary.name for r in first.rows] == ["a0", "a1", "a2", "a3", "a4"]  # in the order sent
    assert first.watch == [f"/f/a{i}" for i in range(5)]
    last = messages[2]
    assert isinstance(last, RowsFound) and last.rows[0].summary.status is Status.WARNING


def test_a_scan_process_that_fails_to_start_is_an_error_with_its_output(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    crash = "import sys; print('Fatal Python error: Segmentation fault', file=sys.stderr); sys.exit(3)"
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, "-c", crash])
    process = ScanProcess(ScanRequest(str(workspace), [str(workspace)]))
    with pytest.raises(StudioError) as failed:
        list(process.messages(CancelToken()))
    assert "exited with status 3" in failed.value.message
    assert failed.value.hint is not None and "Segmentation fault" in failed.value.hint


def test_a_root_that_is_no_folder_fails_with_the_scans_own_error(tmp_path: Path) -> None:
    process = ScanProcess(ScanRequest(str(tmp_path / "gone"), [str(tmp_path / "gone")], opening=True))
    with pytest.raises(StudioError, match="is not a folder; open a folder"):
        list(process.messages(CancelToken()))
