"""Workers give way while the GUI thread paints the table: they park at their next checkpoint until it is done."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.gui import jobs as jobs_module
from rbln_artifact_studio.gui.artifact_browser import ArtifactBrowser
from rbln_artifact_studio.gui.artifact_model import ArtifactTableModel
from rbln_artifact_studio.gui.jobs import HOLD_LIMIT, JobContext, JobManager, WorkerGate


def test_an_open_gate_costs_nothing_and_a_forgotten_hold_ends_by_itself() -> None:
    gate = WorkerGate()
    started = time.monotonic()
    for _ in range(1000):
        gate.checkpoint()
    assert time.monotonic() - started < 0.05
    gate.hold()  # and never released
    started = time.monotonic()
    gate.checkpoint()
    assert HOLD_LIMIT * 0.5 <= time.monotonic() - started < HOLD_LIMIT + 1.0
    started = time.monotonic()
    gate.checkpoint()  # expired: no second wait
    assert time.monotonic() - started < 0.01


@pytest.mark.parametrize("step", ["checkpoint", "progress"])
def test_a_job_parks_at_its_checkpoints_until_the_gui_releases_it(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    monkeypatch.setattr(jobs_module, "HOLD_LIMIT", 600.0)  # only a release lets it go in this test
    manager = JobManager()
    arrived = threading.Event()

    def work(ctx: JobContext) -> str:
        arrived.set()
        ctx.checkpoint() if step == "checkpoint" else ctx.progress(1, 2, "half")
        return "went on"

    jobs_module.WORKERS.hold()
    try:
        job = manager.submit("wait for the paint", work)
        qtbot.waitUntil(arrived.is_set)
        with qtbot.assertNotEmitted(job.finished, wait=50):
            pass  # parked
    finally:
        jobs_module.WORKERS.release()
    with qtbot.waitSignal(job.succeeded):
        pass
    assert job.result == "went on"


def test_the_table_holds_the_workers_while_it_paints(
    qtbot: QtBot, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = next(iter(scan(workspace)))
    model = ArtifactTableModel()
    model.upsert([replace(first, path=f"/fleet/a{i:04d}", name=f"a{i:04d}") for i in range(200)])
    browser = ArtifactBrowser(model)
    qtbot.addWidget(browser)
    browser.show()
    qtbot.waitExposed(browser)
    held: list[bool] = []

    def hold() -> None:
        held.append(True)
        WorkerGate.hold(jobs_module.WORKERS)

    monkeypatch.setattr(jobs_module.WORKERS, "hold", hold)
    with qtbot.waitSignal(browser.painted):
        browser.view.viewport().update()
    assert held and jobs_module.WORKERS._open.is_set()  # held for the paint, released once it was done


def test_the_switch_interval_is_short_only_while_the_gui_runs() -> None:
    import sys

    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's default
    try:
        JobManager()
        assert sys.getswitchinterval() == pytest.approx(0.005)  # a job manager leaves the process alone
        with jobs_module.gui_switch_interval():
            assert sys.getswitchinterval() == pytest.approx(jobs_module.SWITCH_INTERVAL)
        assert sys.getswitchinterval() == pytest.approx(0.005)
    finally:
        sys.setswitchinterval(before)


def test_the_detail_panel_holds_the_workers_until_it_is_painted(qtbot: QtBot, cr13_artifact: Path) -> None:
    """Showing an artifact makes hundreds of Python-Qt calls: a worker running Python would take the interpreter
    lock at each one and stretch the stall; workers park until the panel has been painted."""
    from rbln_artifact_studio.core.fleet.artifact import open_artifact
    from rbln_artifact_studio.gui.detail_panel import DetailPanel

    panel = DetailPanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    jobs_module.WORKERS.hold()  # the table holds too: the panel's release leaves its hold alone
    panel.show_artifact(open_artifact(cr13_artifact))
    assert not jobs_module.WORKERS.is_open("details")
    qtbot.waitUntil(lambda: jobs_module.WORKERS.is_open("details"))  # released after its paint
    assert not jobs_module.WORKERS._open.is_set()  # the table's hold still stands
    jobs_module.WORKERS.release()
    assert jobs_module.WORKERS._open.is_set()
