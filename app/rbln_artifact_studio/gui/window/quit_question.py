"""The question a quit asks while jobs run: it names them, follows them while it is open, and answers itself (quit)
when the last one ends, as nothing is left to cancel."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from rbln_artifact_studio.gui.models.jobs import Job, JobManager
from rbln_artifact_studio.gui.models.workspace import Workspace


def running_jobs(jobs: JobManager, workspace: Workspace) -> list[Job]:
    """The jobs a quit would cancel: a scan only reads (cancelling it loses nothing), so it is not counted."""
    return [job for job in jobs.active_visible() if job is not workspace.scan_job]


def quit_question(running: list[Job]) -> str:
    """ "1 job is still running: “Resize …”. Cancel it and quit? …", naming at most three."""
    names = ", ".join(f"“{job.title}”" for job in running[:3]) + (" …" if len(running) > 3 else "")
    are = "1 job is" if len(running) == 1 else f"{len(running)} jobs are"
    them = "it" if len(running) == 1 else "them"
    return f"{are} still running: {names}. Cancel {them} and quit? Cancelled work leaves nothing half-done."


def ask_to_quit(parent: QWidget, jobs: JobManager, workspace: Workspace) -> bool:
    """Yes: cancel the running jobs and quit. The box updates as jobs end and closes itself with Yes at the last."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Jobs are running",
        quit_question(running_jobs(jobs, workspace)),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setObjectName("quitJobsBox")
    box.setDefaultButton(QMessageBox.StandardButton.No)

    def follow() -> None:
        running = running_jobs(jobs, workspace)
        if running:
            box.setText(quit_question(running))
        else:
            box.done(QMessageBox.StandardButton.Yes)

    jobs.activeChanged.connect(follow)
    try:
        answer = box.exec()
    finally:
        jobs.activeChanged.disconnect(follow)
        box.deleteLater()
    return answer == QMessageBox.StandardButton.Yes
