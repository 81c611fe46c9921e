"""Start a write job on the server, detached from this connection: a job folder, the runner, a new session.

Arguments: the job's JSON spec and the runner's source. The job folder ($RBLN_STUDIO_JOBS_DIR, else
~/.rbln-studio/jobs/<id>) receives spec.json, runner.py and, as the job runs, log and result.json. The runner
is started in its own session with its output in the log, so a dropped connection does not stop it.
Writes {"job": id, "dir": folder, "pid": pid}, or {"refused": reason} when the server cannot do the job.
"""

import json
import os
import shutil
import subprocess
import sys
import time

SPEC = json.loads(sys.argv[1])
RUNNER = sys.argv[2]
TOOLS = {
    "real": (
        "optimum-rbln-cli",
        "it was compiled by the real compiler and its resize runs the server's optimum-rbln-cli",
    ),
    "sim": (
        "rbln-studio-cli",
        "it is a simulator artifact, and only the studio's own engine resizes those "
        "(install rbln-artifact-studio on the server to resize it there)",
    ),
}


def home_relative(path):
    """A server folder below the login folder (~/x), made whole before the job uses it."""
    return os.path.expanduser(path) if path and (path == "~" or path.startswith("~/")) else path


def main():
    SPEC["artifact"], SPEC["output_dir"] = home_relative(SPEC["artifact"]), home_relative(SPEC.get("output_dir"))
    tool, why = TOOLS[SPEC["kind"]]
    found = shutil.which(tool)
    if found is None:
        return {"refused": f"{tool} is not on the server's PATH, and {why}. Nothing was changed."}
    output = SPEC.get("output_dir")
    if output and os.path.lexists(output) and not (os.path.isdir(output) and not os.listdir(output)):
        return {"refused": f"{output} already exists on the server; choose a new folder. Nothing was changed."}
    base = os.environ.get("RBLN_STUDIO_JOBS_DIR") or os.path.join(os.path.expanduser("~"), ".rbln-studio", "jobs")
    os.makedirs(base, mode=0o700, exist_ok=True)
    job_id = time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()
    folder = os.path.join(base, job_id)
    os.mkdir(folder, 0o700)
    SPEC["tool"] = found
    with open(os.path.join(folder, "spec.json"), "w", encoding="utf-8") as f:
        json.dump(SPEC, f)
    with open(os.path.join(folder, "runner.py"), "w", encoding="utf-8") as f:
        f.write(RUNNER)
    with open(os.path.join(folder, "log"), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, os.path.join(folder, "runner.py"), folder],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # setsid: no terminal, no hang-up from the connection
            close_fds=True,
        )
    with open(os.path.join(folder, "pid"), "w") as f:
        f.write(str(proc.pid))
    return {"job": job_id, "dir": folder, "pid": proc.pid}


sys.stdout.write(json.dumps(main()) + "\n")
sys.stdout.flush()
