"""The GUI thread stays responsive while a scan of thousands of artifacts and a large copy run: the scan's work is
done in its own process, and the window's thread spends a small part of that CPU time showing the rows.

CPU time, not a wall-clock threshold: it barely moves with the machine's load. How long the GUI thread stalls is
measured by benchmarks/bench_gui_stall.py and bench_gui_fleet.py (rows 6 and 6b of docs/performance.md).
"""

from __future__ import annotations

import os
import resource
import shutil
import time
from pathlib import Path

from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.backends.settings import ToolchainSettings
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.operations.resize_request import ResizeRequest
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.gui.models import operations
from rbln_artifact_studio.gui.window.main_window import MainWindow

ARTIFACTS = 3000
PAYLOAD = 256 << 20
GUI_SHARE = 0.35  # the GUI thread's CPU time over the scan process's, at most (measured: see the test)


class Heartbeat:
    """A 10 ms timer on the GUI thread; records every gap between two ticks."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.last = 0.0
        self.gaps: list[float] = []

    def start(self) -> None:
        self.last = time.monotonic()
        self.timer.start()

    def tick(self) -> None:
        now = time.monotonic()
        self.gaps.append(now - self.last)
        self.last = now

    def describe(self) -> str:
        gaps = sorted(self.gaps)
        return f"{len(gaps)} ticks, longest gaps {[round(g * 1000) for g in gaps[-5:]]} ms"


def _many_artifacts(root: Path, tiny_model: Path) -> Path:
    request = CompileRequest(
        str(tiny_model), npu="RBLN-CA25", batch_size=2, max_seq_len=4096, kvcache_partition_len=1024
    )
    template = write_artifact(plan_compile(request), root / "template")
    for i in range(ARTIFACTS - 1):
        shutil.copytree(template, root / f"group-{i // 100:02d}" / f"tiny-{i:04d}", copy_function=os.link)
    return template


def _payload(path: Path) -> None:
    """PAYLOAD bytes that are not all zeros, so the copy has real work to do."""
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(PAYLOAD >> 20):
            f.write(block)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # ended and reaped: the scan process once its job ends
    return usage.ru_utime + usage.ru_stime


def test_gui_thread_keeps_beating_during_a_big_scan_and_a_large_copy(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, tiny_model: Path
) -> None:
    root = tmp_path / "fleet"
    template = _many_artifacts(root, tiny_model)
    big = tmp_path / "big"
    shutil.copytree(template, big / "tiny-big")
    _payload(big / "tiny-big" / "extra-weights.bin")

    beat = Heartbeat()
    beat.start()
    started = time.monotonic()
    gui_cpu, scan_cpu = time.thread_time(), _children_cpu()  # this is the GUI thread
    choice = ResizeRequest(LocalFolder(big / "tiny-big"), 6, output=LocalFolder(big / "tiny-big-kv6"))
    marks: dict[str, float] = {}

    def start_copy_with_the_first_rows() -> None:  # so the copy competes with the rest of the scan, by construction
        if "first rows" not in marks:
            marks["first rows"] = time.monotonic()
            copy = operations.resize(window.jobs, choice, ToolchainSettings())
            copy.succeeded.connect(lambda *_: marks.setdefault("copy done", time.monotonic()))

    window.model.rowsInserted.connect(start_copy_with_the_first_rows)
    window.workspace.scanFinished.connect(lambda *_: marks.setdefault("scan done", time.monotonic()))
    with qtbot.waitSignal(window.workspace.scanFinished, timeout=300_000):
        window.open_folder(root)
    qtbot.waitUntil(lambda: "copy done" in marks, timeout=300_000)
    gui_cpu, scan_cpu = time.thread_time() - gui_cpu, _children_cpu() - scan_cpu
    elapsed = time.monotonic() - started
    beat.timer.stop()

    assert window.model.rowCount() == ARTIFACTS
    assert all(window.model.summary(r).status.value == "ok" for r in range(ARTIFACTS))  # every verdict arrived
    assert (big / "tiny-big-kv6" / "extra-weights.bin").stat().st_size == PAYLOAD
    assert marks["first rows"] < marks["scan done"], "the scan ended with its first rows: nothing competed"
    share = gui_cpu / scan_cpu if scan_cpu else float("inf")
    # The margin, shown by pytest -rP; the heartbeat is for reading only (its gaps depend on the machine's load).
    print(
        f"GUI thread {gui_cpu:.2f} s of CPU, scan process {scan_cpu:.2f} s ({share:.2f}) in {elapsed:.1f} s; "
        f"heartbeat: {beat.describe()}"
    )
    assert share < GUI_SHARE, (
        f"the GUI thread used {gui_cpu:.2f} s of CPU against the scan process's {scan_cpu:.2f} s: "
        "the scan's work is being done in the window's process"
    )
