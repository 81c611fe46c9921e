"""Read back detached jobs on the server: list them, or follow one's log until its result is there. Read-only.

Arguments: `list`, or `follow JOB OFFSET` (OFFSET: log bytes already seen). Writes JSON lines: per job
{"job", "spec", "state", "result"}; when following, {"log": line}... then {"result": {...}}.
"""

import json
import os
import sys
import time

BASE = os.environ.get("RBLN_STUDIO_JOBS_DIR") or os.path.join(os.path.expanduser("~"), ".rbln-studio", "jobs")


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


def list_jobs():
    names = sorted(os.listdir(BASE)) if os.path.isdir(BASE) else []
    for name in names:
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
        emit({"error": f"There is no job {job} on this server."})
        return
    pending = b""
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
        if current != "running":
            if pending:
                emit({"log": pending.decode("utf-8", "replace"), "offset": offset})
            emit({"result": result, "state": current})
            return
        time.sleep(0.1)


if sys.argv[1] == "list":
    list_jobs()
else:
    follow(sys.argv[2], int(sys.argv[3]))
