"""Resizes on a server as detached jobs: checked here, started there, followed, and read back after a reconnect."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.backends.choice import BackendChoice
from rbln_artifact_studio.backends.optimum import require_real
from rbln_artifact_studio.core.errors import CancelledError, Remedy, StudioError
from rbln_artifact_studio.core.fleet.targets import check_target
from rbln_artifact_studio.core.location import Location, ServerFolder, on_host, server_url
from rbln_artifact_studio.core.logs import logger
from rbln_artifact_studio.core.operations.resize import ResizeResult, require_simulated
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.progress import CancelToken, ProgressCallback
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER, LOCK_NAME, PARTIAL_TAG
from rbln_artifact_studio.remote.artifact import open_remote_artifact
from rbln_artifact_studio.remote.job_progress import ENV as PROGRESS_ENV
from rbln_artifact_studio.remote.job_progress import PREFIX as PROGRESS_PREFIX
from rbln_artifact_studio.remote.job_progress import parse_progress
from rbln_artifact_studio.remote.server import Server, assembled_program
from rbln_artifact_studio.remote.server_said import in_words

if TYPE_CHECKING:
    from rbln_artifact_studio.core.fleet.artifact import Artifact

LogFn = Callable[[str], None]
log = logger(__name__)
JOB_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")  # launch.py's format
UNREAD_JOBS_KEPT_DAYS = 7  # a job whose outcome nobody read back is cleaned this long after it ended


def jobs_command(host: str) -> str:
    """The command that lists host's jobs and their outcomes."""
    return f"rbln-studio-cli jobs {server_url(host)}"


@dataclass(frozen=True)
class RemoteJob:
    host: str
    id: str

    @property
    def read_back(self) -> str:
        """The command that shows this job's log and outcome."""
        return f"{jobs_command(self.host)} {self.id}"


@dataclass(frozen=True)
class JobOutcome:
    """What result.json on the server says (or that the job died without one)."""

    job: RemoteJob
    state: str  # done, failed, lost (killed without a result), running
    ok: bool
    path: str | None = None
    previous: int | None = None
    kvcache_num_blocks: int | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    cancelled: bool = False
    remedy: Remedy | None = None  # what to do instead, as the job on the server gave it (on_server/job.py)

    @classmethod
    def from_json(cls, job: RemoteJob, state: str, data: dict[str, Any] | None) -> JobOutcome:
        data = data or {}
        return cls(
            job,
            state,
            bool(data.get("ok")),
            data.get("path"),
            data.get("previous"),
            data.get("kvcache_num_blocks"),
            list(data.get("warnings", [])),
            in_words(str(data["error"])) if data.get("unexpected") and data.get("error") else data.get("error"),
            bool(data.get("cancelled")),
            Remedy(*data["remedy"]) if isinstance(data.get("remedy"), list) and len(data["remedy"]) == 2 else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "host": self.job.host,
            "job": self.job.id,
            "state": self.state,
            "ok": self.ok,
            "path": self.path,
            "previous_kvcache_num_blocks": self.previous,
            "kvcache_num_blocks": self.kvcache_num_blocks,
            "warnings": self.warnings,
            "error": self.error,
        }


def on_server(server: Server, request: ResizeRequest) -> tuple[ServerFolder, str | None]:
    """The request's source and copy folder as paths on server (places/ssh.py refuses a copy elsewhere first)."""
    source, output = on_host(request.source, server.host), request.output
    if source is None:
        raise StudioError(f"{request.source} is not on {server.host}; a job there resizes only what is there.")
    there = on_host(output, server.host)
    if output is not None and there is None:
        raise StudioError(f"A resize on {server.host} writes its copy there too; {output} is not on {server.host}.")
    return source, None if there is None else there.path


def _check_backend(artifact: Artifact, backend: str) -> None:
    """A backend named by the user (--backend, the dialog) that cannot resize this artifact is refused before a job
    starts, in the words a resize here uses; auto takes the tool that wrote it (the job's kind)."""
    asked = BackendChoice.parse(backend)
    if asked is BackendChoice.OPTIMUM:
        require_real(artifact)
    elif asked is BackendChoice.SIM:
        require_simulated(artifact)


def start_resize(
    server: Server, request: ResizeRequest, cancel: CancelToken | None = None
) -> tuple[RemoteJob, list[str]]:
    """Check the request against the artifact (read over SSH), then start the job; returns it and the warnings."""
    source, output_dir = on_server(server, request)
    target, budget = request.target, request.budget_text  # the budget as typed: the server's tool parses it
    if (target is None) == (budget is None):
        raise StudioError("Give either a target block count or a memory budget, not both.")
    artifact = open_remote_artifact(server, source, cancel)
    _check_backend(artifact, request.backend)
    warnings: list[str] = []
    if target is not None:
        check = check_target(artifact.config, target, artifact)  # its tables, where the server sent them
        if check.error is not None:
            raise StudioError(check.error, unchanged=True)  # on the server: nothing there was touched
        warnings = list(check.warnings)
    spec = {
        "kind": "sim" if artifact.is_simulated else "real",
        "artifact": source.path,
        "target": target,
        "budget": budget,
        "output_dir": output_dir,  # a path on that server
        "lock_name": LOCK_NAME,
        "incomplete_marker": INCOMPLETE_MARKER,
        "partial_tag": PARTIAL_TAG,
        "progress_env": PROGRESS_ENV,
        "progress_prefix": PROGRESS_PREFIX,
    }
    runner = assembled_program("job")  # with the portable modules it imports
    [answer] = server.run_program("launch", [json.dumps(spec), runner], cancel)
    if "refused" in answer:
        raise StudioError(f"{source.name} cannot be resized on {server.host}: {answer['refused']}")
    job = RemoteJob(server.host, str(answer["job"]))
    log.info("%s: job %s started: resize %s to %s", server.host, job.id, source.path, target or f"budget {budget}")
    return job, warnings


def follow(
    server: Server,
    job: RemoteJob,
    on_log: LogFn | None = None,
    cancel: CancelToken | None = None,
    offset: int = 0,
    stop_job: bool = True,
    forget: bool = True,
    on_progress: ProgressCallback | None = None,
) -> JobOutcome:
    """Stream the job's log until it has a result. Cancel asks the job to stop and waits for its outcome
    (with stop_job False, cancel only stops watching: CancelledError, the job goes on).

    Progress goes to on_progress as a local job reports it: byte counts from the studio's CLI on the server
    (marked lines in the log, not passed to on_log), and each other log line as the indeterminate step.

    Once the outcome is here, the job's folder on the server is cleaned (forget_jobs), unless forget is False.
    A dropped connection raises StudioError naming the job and how to read its outcome back: the job itself
    goes on running on the server.
    """
    requested = False
    counting = False  # a byte count is under way: log lines do not replace it with an indeterminate step
    held: list[str] = []  # the tool's "error: …" lines: the outcome says them, unless it says something else

    def logged(line: str) -> None:
        nonlocal counting
        report = on_progress if not requested else None  # once stopping, a progress callback must not cancel again
        if line.startswith("error: ") and on_log is not None:
            held.append(line)
            return
        count = parse_progress(line)
        if count is not None:
            counting = count[1] > 0 and count[0] < count[1]
            if report is not None:
                report(*count)
            return
        if on_log is not None:
            on_log(line)
        if report is not None and not counting:
            report(0, 0, line)

    while True:
        watch = CancelToken()
        outcome: JobOutcome | None = None
        try:
            # Following a log lasts as long as the job (signs of life keep it from falling silent): no total limit.
            stream = server.stream("jobs", ["follow", job.id, str(offset)], watch if requested else cancel, total=None)
            with contextlib.closing(stream) as records:  # ended here, even when left at the result
                for record in records:
                    if "log" in record:
                        offset = int(record["offset"])
                        logged(str(record["log"]))
                    elif "result" in record:
                        outcome = JobOutcome.from_json(job, str(record["state"]), record["result"])
                        break
                    elif "error" in record:
                        raise StudioError(str(record["error"]))
            if outcome is not None:
                log.log(
                    logging.INFO if outcome.state == "done" else logging.WARNING,
                    "%s: job %s ended %s%s",
                    job.host,
                    job.id,
                    outcome.state,
                    f": {outcome.error}" if outcome.error else "",
                )
                error = outcome.error or ""
                for line in held:
                    if on_log is not None and line[len("error: ") :] not in error:
                        on_log(line)
                if forget:
                    forget_quietly(server, [job])
                return outcome
        except CancelledError:
            if requested or not stop_job:
                raise
            request_cancel(server, job)
            requested = True  # follow on to the job's own outcome: cancelled, or finished first
            continue
        except StudioError as exc:
            raise StudioError(
                f"{exc.message} The job goes on on {job.host}; read its outcome with: {job.read_back}"
            ) from None
        raise StudioError(f"{job.host} stopped answering about job {job.id}; read its outcome with: {job.read_back}")


def request_cancel(server: Server, job: RemoteJob) -> None:
    """Ask a job to stop: its runner polls for this file and leaves the artifact unchanged."""
    script = 'touch "${RBLN_STUDIO_JOBS_DIR:-$HOME/.rbln-studio/jobs}/$1/cancel"'  # $1: the id, quoted
    result = server.run(["sh", "-c", script, "sh", job.id], timeout=30)
    if result.returncode != 0:
        raise StudioError(f"Cannot ask job {job.id} on {job.host} to stop: {result.stderr.strip()}")


def forget_jobs(server: Server, jobs: Sequence[RemoteJob], cancel: CancelToken | None = None) -> list[str]:
    """Clean job folders on the server: the named jobs (their outcome has been read back) and any job that ended
    unread more than UNREAD_JOBS_KEPT_DAYS ago; never a running one. Returns the ids of the folders removed."""
    max_age = str(UNREAD_JOBS_KEPT_DAYS * 24 * 3600)
    records = server.run_program("jobs", ["forget", max_age, *(j.id for j in jobs)], cancel)
    return [str(r["forgotten"]) for r in records if "forgotten" in r]


def forget_quietly(server: Server, jobs: Sequence[RemoteJob]) -> None:
    """forget_jobs, for a caller that already has the outcomes: a failure leaves the folders to the age rule."""
    with contextlib.suppress(StudioError):
        forget_jobs(server, jobs)


def job_outcomes(server: Server, cancel: CancelToken | None = None) -> list[JobOutcome]:
    """Every job on the server and its outcome so far (read-only)."""
    return [outcome for outcome, _spec in list_jobs(server, cancel)]


def list_jobs(server: Server, cancel: CancelToken | None = None) -> list[tuple[JobOutcome, dict[str, Any]]]:
    """Every job on the server with its spec and outcome so far (read-only)."""
    out = []
    for record in server.stream("jobs", ["list"], cancel):
        job = RemoteJob(server.host, str(record["job"]))
        out.append((JobOutcome.from_json(job, str(record["state"]), record["result"]), dict(record["spec"])))
    return out


def resize_remote(
    server: Server,
    request: ResizeRequest,
    on_log: LogFn | None = None,
    cancel: CancelToken | None = None,
    on_progress: ProgressCallback | None = None,
) -> JobOutcome:
    """Start and follow a resize; StudioError when it failed, CancelledError when it was cancelled."""
    job, warnings = start_resize(server, request, cancel)
    started = f"Job {job.id} started on {server.host} (it goes on if the connection drops)"
    if on_log is not None:
        on_log(started)
    if on_progress is not None:
        on_progress(0, 0, started)
    outcome = follow(server, job, on_log, cancel, on_progress=on_progress)
    if outcome.cancelled:
        raise CancelledError(outcome.error or "Cancelled", unchanged=not outcome.error)
    if not outcome.ok:
        said = f"{outcome.error or 'The job failed.'} (job {job.id} on {job.host})"
        raise StudioError(said, remedy=outcome.remedy, unchanged=outcome.remedy is not None)
    merged = [*warnings, *(w for w in outcome.warnings if w not in warnings)]
    return JobOutcome(**{**outcome.__dict__, "warnings": merged})


def parse_job_id(host: str, text: str) -> RemoteJob:
    if not JOB_ID.match(text):
        raise StudioError(f"{text!r} is not a job id; `{jobs_command(host)}` lists them.")
    return RemoteJob(host, text)


@dataclass(frozen=True)
class RemoteResizeResult(ResizeResult):
    """A resize done on a server, with the job that did it (its log and result stay there); `path` is there."""

    host: str = ""
    job: str = ""

    @property
    def where(self) -> Location:
        return ServerFolder(self.host, self.path.as_posix())

    @classmethod
    def on(cls, folder: ServerFolder, previous: int, target: int, warnings: list[str], job: str) -> RemoteResizeResult:
        return cls(Path(folder.path), previous, target, warnings, host=folder.host, job=job)
