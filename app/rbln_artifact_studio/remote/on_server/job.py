"""The detached job runner on the server: resize an artifact, keeping the old or the new one, never a mix.

Run as `python3 runner.py JOBDIR` by launch.py in its own session; its output is JOBDIR/log. Reads
JOBDIR/spec.json, writes JOBDIR/result.json (atomically) when done, and stops early when JOBDIR/cancel appears.
Real artifacts: the server's optimum-rbln-cli writes the resized artifact into a staging folder beside it, which
then takes the artifact's place by one atomic exchange (renameat2; refused where the file system cannot); to a
copy, it writes into a staging folder renamed into place. Simulator artifacts: the server's rbln-studio-cli, which
stages by itself. The artifact is locked, swapped and flushed by the studio's own code (core/portable/, sent with
this program), so a resize here and one started on a laptop exclude each other.
"""

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from rbln_artifact_studio.core.portable.exchange import UNSUPPORTED, exchange
from rbln_artifact_studio.core.portable.files import fsync_dir
from rbln_artifact_studio.core.portable.lock import LOCK_NAME, FolderLock, LockContended, LockHeld
from rbln_artifact_studio.core.portable.staging import staging_path

FOLDER = sys.argv[1]
with open(os.path.join(FOLDER, "spec.json"), encoding="utf-8") as _f:
    SPEC = json.load(_f)
MARKER = SPEC["incomplete_marker"]
PARTIAL = SPEC["partial_tag"]
CANCEL = os.path.join(FOLDER, "cancel")
PROGRESS_PREFIX = SPEC.get("progress_prefix") or "\0"


class Cancelled(Exception):
    pass


UNCHANGED = "Nothing was changed."  # core/errors.py NOTHING_CHANGED: the one closing every refusal uses


class Failed(Exception):
    logged = False  # the log already shows why (the tool's own output): not written there again
    remedy = None  # type: tuple[str, str] | None  # (words with {option}, option): each front end names it (core/errors.py)


class ToolFailed(Failed):
    logged = True


def say(text):
    sys.stdout.write(text.rstrip("\n") + "\n")
    sys.stdout.flush()


def write_result(data):
    tmp = os.path.join(FOLDER, ".result.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(FOLDER, "result.json"))


@contextlib.contextmanager
def artifact_lock(folder, purpose):
    """The studio's own artifact lock (core/portable/lock.py): a resize here and one on a laptop exclude each other."""
    lock = FolderLock(folder, purpose)
    try:
        lock.acquire()
    except LockHeld as exc:
        raise Failed(f"{folder} is being changed by {exc.holder}. {UNCHANGED}") from None
    except LockContended:
        raise Failed(f"{folder} is contended by other writers. {UNCHANGED}") from None
    try:
        yield
    finally:
        lock.release()


def run_tool(argv, capture=False, interrupt=signal.SIGTERM, env=None):
    """Run a tool with its output streamed to the log; stop it when the cancel file appears."""
    say("$ " + " ".join(shlex.quote(a) for a in argv))  # pasted into a shell, it runs just this (no shlex.join: 3.6)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if capture else subprocess.STDOUT,
        start_new_session=True,
        env=env,
    )
    lines, captured = [], []  # type: list[str], list[str]

    def pump(stream, sink, echo):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if not line.startswith(PROGRESS_PREFIX):  # a byte count: for the log only, never a message
                sink.append(line)
            if echo:
                say(line)

    threads = [threading.Thread(target=pump, args=(proc.stdout, captured if capture else lines, not capture))]
    if capture:
        threads.append(threading.Thread(target=pump, args=(proc.stderr, lines, True)))
    for t in threads:
        t.daemon = True
        t.start()
    while proc.poll() is None:
        if os.path.exists(CANCEL):
            os.killpg(proc.pid, interrupt)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            raise Cancelled()
        time.sleep(0.05)
    for t in threads:
        t.join(5)
    return proc.returncode, lines, captured


def tool_failure(status, lines, state):
    tail = [line for line in lines if line.strip()][-3:]
    if tail and tail[-1].startswith("error: "):  # the studio's CLI said it in one line: that line is the reason
        return ToolFailed(f"{state}: {tail[-1][len('error: ') :]}")  # its own closing ends it
    return ToolFailed(
        f"{state}: {os.path.basename(SPEC['tool'])} failed (status {status}): {' '.join(tail)}. {UNCHANGED}"
    )


def warnings_of(lines):
    return [line.split("WARNING:", 1)[1].strip() for line in lines if "WARNING:" in line]


def staging_for(final):
    return staging_path(final, PARTIAL)


CANNOT_EXCHANGE = (
    "the server's file system cannot exchange two folders atomically (renameat2), so an in-place resize could "
    "leave a moment without the artifact"
)
TO_A_COPY = ("Resize to a copy instead ({option}).", "output")  # core/errors.py TO_A_COPY, as data in result.json


def swap(new, old):
    """Put `new` where `old` is and `old` where `new` was, in one atomic step (core/portable/exchange.py)."""
    try:
        exchange(new, old)
    except OSError as exc:
        if exc.errno in UNSUPPORTED:
            failed = Failed(CANNOT_EXCHANGE)
            failed.remedy = TO_A_COPY  # the closing is the client's (unchanged: the staging is removed)
            raise failed from None
        raise


def blocks_of(folder):
    with open(os.path.join(folder, "rbln_config.json"), encoding="utf-8") as f:
        return json.load(f)["kvcache_num_blocks"]


def operation():
    if SPEC.get("target") is not None:
        return ["--set-kvcache-num-blocks", str(SPEC["target"])]
    return ["--set-memory-budget", str(SPEC["budget"])]


def drop_internal(folder):
    for name in (LOCK_NAME, MARKER):
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))


def real_in_place(art):
    previous = blocks_of(art)
    with artifact_lock(art, "resize in place (remote job)"):
        staging = staging_for(art)
        try:
            # The tool writes the resized artifact into a hidden staging folder beside it; the artifact is only read.
            status, lines, _ = run_tool([SPEC["tool"], *operation(), "--model-id", art, "--output-dir", staging])
            if status != 0:
                raise tool_failure(status, lines, f"Resizing {art} in place")
            new = blocks_of(staging)
            drop_internal(staging)
            fsync_dir(staging)
            old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
            try:
                swap(staging, art)  # the staging path now holds the old artifact
                fsync_dir(os.path.dirname(os.path.abspath(art)))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return {"path": art, "previous": previous, "kvcache_num_blocks": new, "warnings": warnings_of(lines)}


def real_to_copy(art, output):
    previous = blocks_of(art)
    staging = staging_for(output)
    try:
        status, lines, _ = run_tool([SPEC["tool"], *operation(), "--model-id", art, "--output-dir", staging])
        if status != 0:
            raise tool_failure(status, lines, f"Writing {output}")
        drop_internal(staging)
        new = blocks_of(staging)
        fsync_dir(staging)
        if os.path.isdir(output) and not os.listdir(output):
            os.rmdir(output)
        os.rename(staging, output)
        fsync_dir(os.path.dirname(os.path.abspath(output)))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"path": output, "previous": previous, "kvcache_num_blocks": new, "warnings": warnings_of(lines)}


def simulated(art, output):
    if SPEC.get("target") is not None:
        argv = [SPEC["tool"], "set-kvcache-num-blocks", art, str(SPEC["target"]), "--json"]
    else:
        argv = [SPEC["tool"], "set-memory-budget", art, str(SPEC["budget"]), "--json"]
    if output:
        argv += ["--output-dir", output]
    # The studio's CLI writes its byte counts as marked lines on stderr: into the log, back to who follows.
    env = dict(os.environ, **{SPEC["progress_env"]: "1"}) if SPEC.get("progress_env") else None
    status, lines, captured = run_tool(argv, capture=True, interrupt=signal.SIGINT, env=env)
    if status != 0:
        raise tool_failure(status, lines, "The studio's resize on the server")
    data = json.loads("\n".join(captured))
    return {
        "path": data["path"],
        "previous": data["previous_kvcache_num_blocks"],
        "kvcache_num_blocks": data["kvcache_num_blocks"],
        "warnings": data["warnings"],
    }


def main():
    art, output = SPEC["artifact"], SPEC.get("output_dir")
    try:
        if SPEC["kind"] == "sim":
            outcome = simulated(art, output)
        elif output:
            outcome = real_to_copy(art, output)
        else:
            outcome = real_in_place(art)
        result = {"ok": True, **outcome}
        say(f"Set kvcache_num_blocks to {outcome['kvcache_num_blocks']} for artifact at {outcome['path']}")
    except Cancelled:
        result = {"ok": False, "cancelled": True, "error": f"Cancelled. {UNCHANGED}"}
        say(result["error"])
    except Failed as exc:
        result = {"ok": False, "error": str(exc), **({"remedy": list(exc.remedy)} if exc.remedy else {})}
        if not exc.logged:
            say(str(exc))
    except Exception as exc:
        # Unforeseen: its type and text, for the client to put in words (remote/server_said.py).
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "unexpected": True}
        say(result["error"])
    write_result(result)


main()
