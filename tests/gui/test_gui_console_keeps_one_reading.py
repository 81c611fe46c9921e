"""The Fleet Console keeps one reading of its fleet: the rows of an earlier refresh are let go once the new ones
show (an ended job lingering in the job manager held each refresh's rows, and with 40,000 NPU rows every pass of
the cycle collector over them stalled the window)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from prometheus.conftest import Monitoring
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.fleet_console import ConsoleRow
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


def _rows_alive() -> int:
    gc.collect()
    return sum(isinstance(o, ConsoleRow) for o in gc.get_objects())


def test_a_refresh_lets_the_last_ones_rows_go(qtbot: QtBot, console: FleetConsole) -> None:
    for _ in range(4):
        with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
            console.refresh()
    shown = console.model.rowCount()
    assert shown > 0
    assert _rows_alive() == shown  # not the four refreshes' rows
