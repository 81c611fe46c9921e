"""Read back detached jobs on the server: list them, follow one's log until its result is there, clean them.

Arguments: `list`, `follow JOB OFFSET` (OFFSET: log bytes already seen) or `forget MAX_AGE [JOB...]`. Writes JSON
lines: per job {"job", "spec", "state", "result"}; when following, {"log": line}... (and {"alive": true} while
the log is quiet) then {"result": {...}}; when forgetting, {"forgotten": job} per folder removed and {"kept": job}
per named job still running. `list` and `follow` only read; `forget` removes the folders of the named jobs (their outcome was read back) and of any job
that ended more than MAX_AGE seconds ago unread, never a running one.
"""

import contextlib
import json
import os
import re
import shutil
import sys
import time

BASE = os.environ.get("RBLN_STUDIO_JOBS_DIR") or os.path.join(os.path.expanduser("~"), ".rbln-studio", "jobs")
JOB_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{6}$")  # launch.py's ids: nothing else in BASE is ever touched
GONE = ".forgotten-"  # a job folder being removed: renamed first, so a half-removed job is never listed
ALIVE_EVERY = 5  # seconds: a job that logs nothing still shows the client the server answers


def emit(record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def alive(folder):
    try:
        with open(os.path.join(folder, "pid")) as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, ValueError):
        return True  # no pid yet (starting), or not ours to signal: still there
    return True


def state(folder):
    result = load(os.path.join(folder, "result.json"))
    if result is not None:
        return ("done" if result.get("ok") else "failed"), result
    if alive(folder):
        return "running", None
    return "lost", {"ok": False, "error": "The job stopped without a result (it was killed); see its log."}


def job_names():
    names = sorted(os.listdir(BASE)) if os.path.isdir(BASE) else []
    return [name for name in names if JOB_ID.match(name)]


def list_jobs():
    for name in job_names():
        folder = os.path.join(BASE, name)
        spec = load(os.path.join(folder, "spec.json"))
        if spec is None:
            continue
        current, result = state(folder)
        emit({"job": name, "spec": spec, "state": current, "result": result})


def follow(job, offset):
    if "/" in job or job in ("", ".", ".."):
        emit({"error": f"{job!r} is not a job id"})
        return
    folder = os.path.join(BASE, job)
    if not os.path.isdir(folder):
        emit({"error": f"There is no job {job} on this server (a job is cleaned once its outcome was read back)."})
        return
    pending = b""
    said = time.monotonic()
    while True:
        current, result = state(folder)  # before reading the log: a finished job's log is complete
        try:
            with open(os.path.join(folder, "log"), "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except OSError:
            chunk = b""
        start = offset - len(pending)  # where `pending` begins in the log
        offset += len(chunk)
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            start += len(line) + 1
            emit({"log": line.decode("utf-8", "replace"), "offset": start})
            said = time.monotonic()
        if time.monotonic() - said > ALIVE_EVERY:
            emit({"alive": True})
            said = time.monotonic()
        if current != "running":
            if pending:
                emit({"log": pending.decode("utf-8", "replace"), "offset": offset})
            emit({"result": result, "state": current})
            return
        time.sleep(0.1)


def ended_at(folder):
    """When the job last did anything: its newest file (result.json, or the log of one that died)."""
    times = []
    for name in ("result.json", "log", "spec.json", "pid"):
        with contextlib.suppress(OSError):
            times.append(os.stat(os.path.join(folder, name)).st_mtime)
    return max(times) if times else 0.0


def forget(max_age, named):
    now = time.time()
    for name in job_names():
        folder = os.path.join(BASE, name)
        if os.path.islink(folder) or not os.path.isdir(folder):
            continue
        if state(folder)[0] == "running":
            if name in named:
                emit({"kept": name})
            continue
        if name in named or now - ended_at(folder) > max_age:
            gone = os.path.join(BASE, GONE + name)
            os.rename(folder, gone)  # one step: listed whole, or not at all
            shutil.rmtree(gone, ignore_errors=True)
            emit({"forgotten": name})
    for name in os.listdir(BASE) if os.path.isdir(BASE) else []:
        if name.startswith(GONE):  # left by a removal that was cut short
            shutil.rmtree(os.path.join(BASE, name), ignore_errors=True)


if sys.argv[1] == "list":
    list_jobs()
elif sys.argv[1] == "forget":
    forget(float(sys.argv[2]), set(sys.argv[3:]))
else:
    follow(sys.argv[2], int(sys.argv[3]))
