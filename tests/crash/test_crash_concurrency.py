"""Two writers, stale locks, and readers racing a writer.

A writer is held inside its lock deterministically: the fault hook stops it (SIGSTOP) at its first step
after locking, the test waits for the stop with waitpid, and continues it with SIGCONT; nothing sleeps.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from harness import ENV_ACTION, ENV_STEP, REPO, Lab, artifact_state, cli_command, cli_env

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact
from rbln_artifact_studio.core.fleet.scan import summarize
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return Lab(tmp_path_factory.mktemp("concurrency")).build()


@contextmanager
def held(args: list[str], step: str) -> Iterator[subprocess.Popen[str]]:
    """Run the CLI until it stops itself at step (holding whatever it holds); continue it on exit."""
    env = cli_env({ENV_STEP: step, ENV_ACTION: "stop"})
    proc = subprocess.Popen([*cli_command(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), f"the writer did not reach {step}: {proc.communicate()}"
    try:
        yield proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.communicate(timeout=60)


def _refused_by(out: subprocess.CompletedProcess[str], holder: subprocess.Popen[str], command: str) -> None:
    assert out.returncode == 1 and out.stdout == "", out
    line = out.stderr.strip()
    assert "\n" not in line
    assert f"is being changed by process {holder.pid} on {socket.gethostname()} ({command}, since " in line
    assert line.endswith("Wait for it to finish, then try again.")


@pytest.mark.parametrize("second", ["in place", "to a copy"])
def test_second_resize_is_told_who_holds_the_artifact(lab: Lab, second: str) -> None:
    work = lab.prepare("resize_in_place")
    art = work / "art"
    extra = ["-o", str(work / "copy")] if second == "to a copy" else []
    with held(lab.command("resize_in_place", work), "resize.locked") as first:
        out = lab.run(["set-kvcache-num-blocks", str(art), str(lab.new), *extra])
        _refused_by(out, first, "resize in place")
        assert artifact_state(art) == lab.old_state and not (work / "copy").exists()
    assert first.returncode == 0  # the first writer proceeds once continued
    assert artifact_state(art) == lab.refs["resize_in_place"].result
    assert not (art / LOCK_NAME).exists()
    assert lab.run(["set-kvcache-num-blocks", str(art), str(lab.old), *extra]).returncode == 0


def test_a_copy_in_progress_keeps_its_source_from_being_resized(lab: Lab) -> None:
    work = lab.prepare("resize_copy")
    art = work / "art"
    with held(lab.command("resize_copy", work), "copy.copied") as copying:
        _refused_by(lab.run(["set-kvcache-num-blocks", str(art), str(lab.new)]), copying, "copy for resize")
    assert copying.returncode == 0
    assert artifact_state(art) == lab.old_state
    assert open_artifact(work / "out").config.kvcache_num_blocks == lab.new


def test_stale_lock_of_a_killed_writer_does_not_block(lab: Lab) -> None:
    work = lab.prepare("resize_in_place")
    art = work / "art"
    env = cli_env({ENV_STEP: "resize.locked"})
    killed = subprocess.Popen([*cli_command(), *lab.command("resize_in_place", work)], env=env)
    assert killed.wait(timeout=60) == -signal.SIGKILL
    holder = json.loads((art / LOCK_NAME).read_text())  # the dead writer's lock file stays behind
    assert holder["pid"] == killed.pid and holder["command"] == "resize in place"
    out = lab.run(["set-kvcache-num-blocks", str(art), str(lab.new)], timeout=30)
    assert out.returncode == 0, out.stderr
    assert not (art / LOCK_NAME).exists()


@pytest.mark.parametrize("content", ["", "not json", '{"pid": 1, "host": "elsewhere", "command": "x", "since": 0}'])
def test_leftover_lock_files_without_a_holder_do_not_block(lab: Lab, content: str) -> None:
    """The flock decides, not what the file says: a lock file nobody holds is taken over at once."""
    work = lab.prepare("resize_in_place")
    (work / "art" / LOCK_NAME).write_text(content)
    out = lab.run(["set-kvcache-num-blocks", str(work / "art"), str(lab.new)], timeout=30)
    assert out.returncode == 0, out.stderr


# ---- readers while a writer resizes -------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import os, sys
    from rbln_artifact_studio.core.operations.resize import resize_in_place
    art, stop, counts = sys.argv[1], sys.argv[2], [int(c) for c in sys.argv[3:]]
    n = 0
    while not os.path.exists(stop):
        resize_in_place(art, counts[n % len(counts)])
        n += 1
    print(n)
    """
)


def race(lab: Lab, seconds: float, changes: int = 0) -> tuple[Counter[str], list[str], int]:
    """Resize in a loop in another process while this one opens and summarizes, for at least `seconds` and
    until `changes` changes of the count were seen (up to a minute on a slow machine); return what was seen."""
    work = lab.prepare("resize_in_place")
    art, stop = work / "art", work / "stop"
    counts = [lab.new, lab.old, lab.new + 2, lab.old]  # revisits counts, so slots are rewritten often
    expected = {}
    for c in set(counts):  # what the headers are at each count
        resize_in_place(art, c)
        expected[c] = open_artifact(art).headers
    resize_in_place(art, lab.old)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(art), str(stop), *map(str, counts)],
        env=cli_env(),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen: Counter[str] = Counter()
    problems: list[str] = []
    start = time.monotonic()
    last, seen_changes = lab.old, 0
    try:
        while time.monotonic() < start + seconds or (seen_changes < changes and time.monotonic() < start + 60):
            try:
                artifact = open_artifact(art)
            except StudioError as exc:
                seen["retried out"] += 1  # honest: it kept changing; not a mixed state
                if "kept changing" not in str(exc):
                    problems.append(f"open failed: {exc}")
                continue
            count = artifact.config.kvcache_num_blocks
            seen[str(count)] += 1
            seen_changes += count != last
            last = count
            if artifact.status is Status.INVALID:
                problems.append(f"invalid at {count}: {[p.message for p in artifact.problems]}")
            elif artifact.headers != expected.get(count):
                problems.append(f"config says {count} but the headers are another state")
            row = summarize(art)
            if row.status is Status.CHECKING and any("kept changing" in p for p in row.problems):
                seen["row retried out"] += 1  # honest, as above: the row says it is busy, not broken
            elif row.status is Status.INVALID or row.kvcache_num_blocks not in expected:
                problems.append(f"scan row: {row.status} {row.kvcache_num_blocks} {row.problems}")
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    return seen, problems, int(out)


def test_readers_never_see_a_mixed_state(lab: Lab) -> None:
    seen, problems, resizes = race(lab, seconds=2, changes=20)
    assert problems == [], (problems[:5], len(problems), resizes, seen)
    assert resizes >= 20 and len([k for k in seen if k.isdigit()]) >= 2, (resizes, seen)


@pytest.mark.slow
def test_readers_never_see_a_mixed_state_long(lab: Lab) -> None:
    """Half a minute of racing (60 s ran 31,000 reads during 4,266 resizes: three counts seen, no mixed state)."""
    seen, problems, resizes = race(lab, seconds=30)
    assert problems == [], (problems[:5], len(problems), resizes, seen)
