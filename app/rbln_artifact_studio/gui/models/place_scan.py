"""A place's artifacts scanned in a job through places/dispatch (a bucket, or any kind of place registered beside the
built-in ones); its rows join the table in batches beside the folders' and the servers'."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.location import Location

if TYPE_CHECKING:
    from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
    from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager

BATCH_SECONDS = 0.1


def _scan_place(root: Location, ctx: JobContext) -> int:
    """Worker side: the place's rows to the table in batches, each with the full check's verdict."""
    from rbln_artifact_studio.gui.models.artifact_model import TableRow
    from rbln_artifact_studio.places import dispatch
    from rbln_artifact_studio.places.kind import ScanOptions

    found, batch, last = 0, [], time.monotonic()
    ctx.progress(0, 0, f"Listing {root}")
    for summary in dispatch.scan(root, ScanOptions(cancel=ctx.cancel)):
        batch.append(TableRow.of(summary))
        found += 1
        if time.monotonic() - last >= BATCH_SECONDS:
            ctx.progress(found, 0, f"{found:,} artifacts read in {root}")
            ctx.partial(batch)
            batch, last = [], time.monotonic()
    ctx.partial(batch)
    ctx.progress(found, found, f"{found:,} artifacts read in {root}")
    return found


def open_place(jobs: JobManager, model: ArtifactTableModel, root: Location) -> Job:
    """Scan root in a job; its rows join the table beside the others (a failure is the job's)."""
    model.add_root("places", str(root))  # a second prefix of one bucket: each row names its own
    job = jobs.submit(f"Scan {root}", lambda ctx: _scan_place(root, ctx))
    job.partial.connect(model.upsert)
    return job
