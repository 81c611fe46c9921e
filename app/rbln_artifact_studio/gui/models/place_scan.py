"""A place's artifacts scanned in a job through places/dispatch (a bucket, or any kind of place registered beside the
built-in ones); its rows join the table in batches beside the folders' and the servers'."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rbln_artifact_studio.core.location import Location

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
    from rbln_artifact_studio.gui.models.artifact_model import ArtifactTableModel
    from rbln_artifact_studio.gui.models.jobs import Job, JobContext, JobManager

BATCH_SECONDS = 0.1


def _scan_place(root: Location, ctx: JobContext) -> int:
    """Worker side: the place's rows, as its Kind reads them, to the table in batches, then the verdicts of any the
    Kind left "checking" (a kind that reads every verdict as it lists leaves none)."""
    from rbln_artifact_studio.core.status import Status
    from rbln_artifact_studio.gui.models.artifact_model import TableRow
    from rbln_artifact_studio.places import dispatch
    from rbln_artifact_studio.places.kind import ScanOptions

    found, batch, last = 0, [], time.monotonic()
    checking: list[ArtifactSummary] = []
    ctx.progress(0, 0, f"Listing {root}")
    for summary in dispatch.scan(root, ScanOptions(cancel=ctx.cancel, verify=False)):
        batch.append(TableRow.of(summary))
        found += 1
        if summary.status is Status.CHECKING:
            checking.append(summary)
        if time.monotonic() - last >= BATCH_SECONDS:
            ctx.progress(found, 0, f"{found:,} artifacts read in {root}")
            ctx.partial(batch)
            batch, last = [], time.monotonic()
    ctx.partial(batch)
    if checking:
        batch, last, total = [], time.monotonic(), len(checking)
        for done, verified in enumerate(dispatch.verify(root, checking, ScanOptions(cancel=ctx.cancel)), start=1):
            batch.append(TableRow.of(verified))
            if time.monotonic() - last >= BATCH_SECONDS:
                ctx.progress(done, total, f"Checked {done:,} of {total:,} artifacts in {root}")
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
