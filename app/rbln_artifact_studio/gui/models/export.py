"""Export the table as a fleet report: the user picks a file, a write job saves the rows shown, in table order."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from rbln_artifact_studio.core.fleet.report_file import FILTERS, format_for, with_suffix, write_report
from rbln_artifact_studio.gui.models.artifact_model import HOST_COLUMN
from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager
from rbln_artifact_studio.gui.models.table_rows import TableRow


def choose_report_file(parent: QWidget | None, folder: str) -> tuple[Path, str] | None:
    """Ask where to save and in which format (the file's suffix wins over the chosen filter); None if cancelled."""
    filters = list(FILTERS.values())
    path, chosen = QFileDialog.getSaveFileName(
        parent, "Export the fleet report", str(Path(folder) / "fleet-report.csv"), ";;".join(filters)
    )
    if not path:
        return None
    by_filter = next((fmt for fmt, text in FILTERS.items() if text == chosen), "csv")
    fmt = format_for(path, default=by_filter)
    return with_suffix(path, fmt), fmt


def export_rows(jobs: JobManager, rows: list[TableRow], path: Path, fmt: str) -> Job:
    """Write the report in the single-thread write pool (atomically: a failure leaves no half-written file), each
    row's Host as the table shows it (the folder's name too where a host shows several)."""

    def work(ctx: JobContext) -> Path:
        ctx.progress(0, 1, f"Writing {len(rows)} rows to {path.name}")
        hosts = {row.path: row.texts[HOST_COLUMN] for row in rows}
        written = write_report([row.summary for row in rows], path, fmt, hosts)
        ctx.log(f"{len(rows)} artifact(s) written to {written} as {fmt}")
        ctx.progress(1, 1, "done")
        return written

    return jobs.submit(f"Export {len(rows)} artifacts → {path.name}", work, writes=True)
