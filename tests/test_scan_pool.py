"""A scan over two processes: the same rows in the same order as one process, workers really used and stopped."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def _fleet(template: Path, root: Path, count: int) -> Path:
    """count copies of an artifact in folders of 50, every 7th one broken in a different way."""
    for i in range(count):
        folder = root / f"team-{i // 50}" / f"a-{i:04d}"
        shutil.copytree(template, folder)
        if i % 7 == 3:
            (folder / "rbln_config.json").write_text('{"batch_size": "eight"')  # cut short: invalid JSON
        elif i % 7 == 5:
            (folder / "prefill.rbln").unlink()  # a promised graph is missing
    return root


@pytest.mark.parametrize("fmt", [["--json"], []])
def test_two_processes_print_exactly_what_one_prints(
    cr13_artifact: Path, tmp_path: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]], fmt: list[str]
) -> None:
    root = _fleet(cr13_artifact, tmp_path / "fleet", 300)
    one = run_cli("scan", root, *fmt, "--no-cache", "--jobs", "1")
    two = run_cli("scan", root, *fmt, "--no-cache", "--jobs", "2")
    assert one.returncode == two.returncode == 3, two.stderr  # 3: some artifacts are invalid
    assert two.stdout == one.stdout  # same rows, same order, nothing printed twice by a forked worker
    if fmt:
        rows = json.loads(two.stdout)
        assert len(rows) == 300
        assert sum(r["status"] == "invalid" for r in rows) == sum(i % 7 in (3, 5) for i in range(300))


def test_cached_rows_and_worker_rows_interleave_in_path_order(
    cr13_artifact: Path, tmp_path: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    root = _fleet(cr13_artifact, tmp_path / "fleet", 250)
    env = {"RBLN_STUDIO_CACHE_DIR": str(tmp_path / "cache")}
    run_cli("scan", root, "--json", env=env)
    for i in range(0, 250, 3):  # every third folder changes: a mix of cached rows and rows read by the workers
        os.utime(root / f"team-{i // 50}" / f"a-{i:04d}" / "config.json")
    fresh = run_cli("scan", root, "--json", "--no-cache", "--jobs", "1")  # after the change: its Modified too
    mixed = run_cli("scan", root, "--json", "--jobs", "2", env=env)
    assert mixed.returncode == 3, mixed.stderr
    assert mixed.stdout == fresh.stdout


def _held_to_permissions() -> bool:
    """Whether unreadable files can be made: not as root, unless a user namespace is at hand (unshare -U)."""
    if os.geteuid() != 0:
        return True
    unshare = shutil.which("unshare")
    return unshare is not None and subprocess.run([unshare, "-U", "true"], capture_output=True).returncode == 0


def _mixed_fleet(cr13: Path, ca25: Path, root: Path) -> Path:
    """A fleet as users have them: two devices' artifacts, every model kind, broken configs, missing and unreadable
    graphs, unreadable and empty folders, a link to an artifact; more than a worker's first batches."""
    from kind_fixtures import EXPECTED_KINDS, materialize

    for i in range(160):
        folder = root / f"team-{i // 40}" / f"a-{i:03d}"
        shutil.copytree(cr13 if i % 3 else ca25, folder)
        if i % 11 == 3:
            (folder / "rbln_config.json").write_text('{"batch_size": "eight"')  # cut short: invalid JSON
        elif i % 11 == 5:
            (folder / "prefill.rbln").unlink()  # a promised graph is missing
        elif i % 11 == 7:
            (folder / "prefill.rbln").chmod(0o200)  # a graph that cannot be read
        elif i % 11 == 9:
            folder.chmod(0)  # a folder that cannot be listed: its row comes from the walk, between workers' rows
        if i % 40 == 20:
            for name in EXPECTED_KINDS:
                materialize(name, root / f"team-{i // 40}" / f"kind-{i:03d}-{name}")
            (root / f"team-{i // 40}" / f"link-{i:03d}").symlink_to(folder)
            (root / f"team-{i // 40}" / f"empty-{i:03d}").mkdir()
            (root / f"team-{i // 40}" / f"loop-{i:03d}").symlink_to(root)  # never walked twice
    return root


def test_any_number_of_processes_prints_the_same_mixed_fleet(
    cr13_artifact: Path, ca25_artifact: Path, tmp_path: Path
) -> None:
    """The rows, their order and the JSON text are the same whatever --jobs (the default too), and so is stderr."""
    from conftest import cli_command, cli_env

    if not _held_to_permissions():
        pytest.skip("root reads every file here: needs `unshare -U` (a user namespace)")
    root = _mixed_fleet(cr13_artifact, ca25_artifact, tmp_path / "fleet")
    prefix = ["unshare", "-U"] if os.geteuid() == 0 else []
    try:
        runs = [
            subprocess.run(
                [*prefix, *cli_command(), "scan", str(root), "--json", "--no-cache", *jobs],
                capture_output=True,
                text=True,
                env=cli_env(),
                timeout=300,
            )
            for jobs in (["--jobs", "1"], ["--jobs", "2"], ["--jobs", "3"], [])
        ]
    finally:
        for folder in root.glob("team-*/a-*"):
            folder.chmod(0o755)  # for pytest to remove it
    one = runs[0]
    rows = json.loads(one.stdout)
    assert one.returncode == 3, one.stderr  # 3: some artifacts are invalid
    assert {row["kind"] for row in rows} >= {"decoder-only", "encoder-decoder", "multimodal", "encoder-only"}
    problems = [" ".join(row["problems"]) for row in rows]
    assert any("cannot be read" in p for p in problems) and any("Cannot list" in p for p in problems), problems
    for other in runs[1:]:
        assert (other.returncode, other.stdout, other.stderr) == (one.returncode, one.stdout, one.stderr)


def test_jobs_must_be_a_positive_number(
    run_cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    result = run_cli("scan", tmp_path, "--jobs", "0")
    assert result.returncode == 2
    assert "--jobs: expected a whole number of 1 or more, got '0'" in result.stderr


PIDS = """
import json, os, sys, threading
from rbln_artifact_studio.core.fleet.scan_pool import Done, ordered_map, can_fork_workers

def whose(task):
    return (task, os.getpid())

if sys.argv[1] == "thread":  # a second thread: forking is unsafe, everything must run here
    threading.Thread(target=threading.Event().wait, args=(5,), daemon=True).start()
items = [Done(("done", -1)) if i % 10 == 0 else i for i in range(400)]
results = list(ordered_map(whose, items, 2))
abandoned = ordered_map(whose, range(400), 2)
for _ in zip(range(200), abandoned):
    pass
abandoned.close()  # a cancelled scan: the generator is closed half-way
try:
    os.waitpid(-1, os.WNOHANG)
    left = 1  # a worker still running, or ended and never reaped
except ChildProcessError:  # no child at all: every worker ended and was reaped
    left = 0
print(json.dumps({"results": results, "me": os.getpid(), "left": left}))
"""


def _pids_run(mode: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", PIDS, mode], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_work_is_shared_with_a_worker_in_order_and_the_worker_stops() -> None:
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    data = _pids_run("single")
    results = data["results"]
    assert [r[0] for r in results] == [None if i % 10 == 0 else i for i in range(400)]
    pids = {r[1][1] for r in results if r[0] is not None}
    assert data["me"] in pids and len(pids) == 2  # both processes did part of the work
    assert data["left"] == 0


def test_a_process_with_threads_does_all_the_work_itself() -> None:
    data = _pids_run("thread")
    assert {r[1][1] for r in data["results"] if r[0] is not None} == {data["me"]}
    assert data["left"] == 0


@pytest.mark.parametrize(("running", "expected"), [(1, 2), (2, 1), (3, 1), (9, 1)])
def test_by_default_a_scan_uses_the_cpus_idle_now_not_a_minute_ago(
    monkeypatch: pytest.MonkeyPatch, running: int, expected: int
) -> None:
    """On an idle 2-CPU laptop, a scan run again within a minute read in one process: the 1-minute load average
    still counted the first scan. What runs now decides (the reading injected: the test's own load cannot sway it)."""
    from rbln_artifact_studio.core.fleet import scan_pool

    monkeypatch.setattr(scan_pool, "available_cpus", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.8, 0.9, 0.4))  # the last scans' trace, nothing running now
    assert scan_pool.idle_cpus(lambda: running) == expected  # running counts the scan itself


@pytest.mark.parametrize(("load", "expected"), [(0.0, 2), (0.6, 1), (1.4, 1), (7.0, 1)])
def test_without_a_count_of_running_threads_the_load_average_decides(
    monkeypatch: pytest.MonkeyPatch, load: float, expected: int
) -> None:
    from rbln_artifact_studio.core.fleet import scan_pool

    monkeypatch.setattr(scan_pool, "available_cpus", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert scan_pool.idle_cpus(lambda: None) == expected


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="no /proc/loadavg")
def test_the_count_of_running_threads_includes_the_reader() -> None:
    from rbln_artifact_studio.core.fleet.scan_pool import running_now

    count = running_now()
    assert count is not None and count >= 1


RAISES = """
import os, time
from rbln_artifact_studio.core.fleet.scan_pool import ordered_map

parent, late = os.getpid(), []

def compute(task):
    if task >= 300:
        if os.getpid() != parent:
            late.append(task)
            if len(late) == 2:  # a worker's second late task: after a result of the same batch
                raise ValueError(f"task {task} in a worker")
        else:
            time.sleep(0.01)  # here the same tasks succeed, slowly: a worker soon takes a batch of them
    return task

seen = []
try:
    for task, result in ordered_map(compute, range(400), 2):
        seen.append(result)
except ValueError as exc:
    print(len(seen), seen == list(range(len(seen))), exc)
"""


def test_what_a_worker_raises_is_raised_in_order_after_the_results_before_it() -> None:
    """Every result before the failed task, those of its own batch too, then the worker's exception."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    out = subprocess.run([sys.executable, "-c", RAISES], capture_output=True, text=True, timeout=60, check=True)
    count, in_order, message = out.stdout.strip().split(" ", 2)
    assert int(count) > 300 and in_order == "True", out.stdout + out.stderr
    assert message == f"task {count} in a worker"
    assert out.stderr == ""


LARGE = """
from rbln_artifact_studio.core.fleet.scan_pool import ordered_map

def compute(task):
    return task[0] + "!" * 100_000  # answers far larger than a pipe holds

tasks = [(str(i), "?" * 100_000) for i in range(200)]
results = [result for _, result in ordered_map(compute, tasks, 2)]
print(results == [f"{i}" + "!" * 100_000 for i in range(200)])
"""


def test_batches_and_answers_larger_than_a_pipe_pass_both_ways() -> None:
    """A worker blocked writing a large answer while this process was blocked writing it the next large batch:
    neither would ever go on (a server's records, a pipeline's listing)."""
    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    out = subprocess.run([sys.executable, "-c", LARGE], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout == "True\n"


WORKER_HELD = """
import os, sys, time
from rbln_artifact_studio.core.fleet import scan_pool, verify
held_dir, release = sys.argv[1], sys.argv[2]
scan_pool.idle_cpus = lambda: 2  # two processes, whatever else this machine runs
parent, real = os.getpid(), verify._checked

def checked(row, inspector):
    if os.getpid() != parent and not os.listdir(held_dir):  # a worker's first check: busy until released
        open(os.path.join(held_dir, str(os.getpid())), "w").close()
        while not os.path.exists(release):
            time.sleep(0.01)
    return real(row, inspector)

verify._checked = checked
from rbln_artifact_studio.gui.models.folder_scan import main
sys.exit(main())
"""


def test_a_cancelled_desktop_scan_stops_its_workers(
    cr13_artifact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window's scan process checks in workers too; cancelled while a worker checks, it ends them all."""
    import time

    from rbln_artifact_studio.gui.models import folder_scan

    fleet = tmp_path / "fleet"
    for i in range(80):  # more than the scan process checks before it starts a worker
        shutil.copytree(cr13_artifact, fleet / f"a-{i:02d}")
    held, release = tmp_path / "held", tmp_path / "release"
    held.mkdir()
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, "-c", WORKER_HELD, str(held), str(release)])
    process = folder_scan.ScanProcess(folder_scan.ScanRequest(str(fleet), [str(fleet)], opening=True))
    deadline = time.monotonic() + 60
    while not any(held.iterdir()) and process.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = [int(p.name) for p in held.iterdir()]
    assert workers, "no worker started"
    os.kill(process.pid, signal.SIGTERM)  # the cancel (ScanProcess.stop), while the worker is busy
    release.touch()
    process.close()
    assert process.process.returncode == 0  # it stopped by itself, its cache saved
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # gone, and reaped


STOPPED_MID_TASK = """
import os, sys, time
from rbln_artifact_studio.core.fleet.scan_pool import ordered_map
from rbln_artifact_studio.core.stop_signals import terminate_raises

parent, marker = os.getpid(), sys.argv[1]

def compute(task):
    if os.getpid() != parent:  # a worker: busy with its batch when the parent stops
        open(marker, "a").close()
        time.sleep(60)
    return task

def items():
    i = 0
    while not os.path.exists(marker):
        yield i
        i += 1
    raise KeyboardInterrupt  # Ctrl-C, or the CLI's SIGTERM, while a worker reads

try:
    with terminate_raises():  # as the CLI runs every command
        for _ in ordered_map(compute, items(), 2):
            pass
except KeyboardInterrupt:
    print("stopped")
"""


def test_workers_stopped_mid_task_print_no_traceback(tmp_path: Path) -> None:
    """Issue 34: `scan --json --no-cache --jobs 2` printed "Process ForkPoolWorker-1 ... Terminated: SIGTERM" and
    a traceback: the workers inherited the CLI's SIGTERM handler, and the parent ends them with SIGTERM."""
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_MID_TASK, str(tmp_path / "busy")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert (done.stdout, done.stderr) == ("stopped\n", "")


def test_a_json_scan_stopped_mid_stream_ends_its_array_saying_so(cr13_artifact: Path, tmp_path: Path) -> None:
    """SIGTERM while `scan --json` streams (the reader is slow: the scan waits on the pipe): stdout is still one
    JSON array, its last element says the run is incomplete and why; no traceback; 143 as a shell reports it."""
    from conftest import cli_command, cli_env

    root = tmp_path / "fleet"
    for i in range(250):  # about 250 kB of rows: more than a pipe holds, so the scan is mid-stream when stopped
        shutil.copytree(cr13_artifact, root / f"{i:03d}-{'x' * 200}")
    proc = subprocess.Popen(
        [*cli_command(), "scan", str(root), "--json", "--no-cache", "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    assert proc.stdout is not None
    first = os.read(proc.stdout.fileno(), 100)  # rows are coming (read below the file object: communicate does)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    rows = json.loads(first + out)
    assert rows[-1] == {"incomplete": True, "error": "cancelled"}
    assert 0 < len(rows) - 1 < 250 and all("path" in row for row in rows[:-1])
    assert (proc.returncode, err.decode()) == (143, "cancelled: Nothing was changed.\n")
