"""The Fleet Console keeps one reading of its fleet: the rows of an earlier refresh are let go once the new ones
show (an ended job lingering in the job manager held each refresh's rows, and with 40,000 NPU rows every pass of
the cycle collector over them stalled the window)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
from prometheus.conftest import Monitoring
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.gui.models.jobs import JobManager
from rbln_artifact_studio.gui.window.fleet_console import FleetConsole

WAIT = 90_000


@pytest.fixture
def console(qtbot: QtBot, monitoring: Monitoring) -> Iterator[FleetConsole]:
    jobs = JobManager()
    c = FleetConsole(jobs, lambda: [], lambda: None, [monitoring.url], period=0, timeout=30)
    qtbot.addWidget(c)
    c.show()
    yield c
    jobs.cancel_all()
    jobs.wait()


def test_a_refresh_lets_the_last_ones_rows_go(qtbot: QtBot, console: FleetConsole) -> None:
    with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
        console.refresh()
    first = weakref.ref(console.model.rows)
    assert len(console.model.rows)
    for _ in range(3):
        with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
            console.refresh()
    qtbot.waitUntil(lambda: not console.jobs.active(), timeout=WAIT)  # the rows are let go of in a worker
    gc.collect()
    assert first() is None  # the first refresh's rows are gone, not held by a job that ended
