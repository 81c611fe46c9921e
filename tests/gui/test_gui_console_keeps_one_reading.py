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


def _alive(ids: set[int]) -> int:
    """How many ConsoleRow objects of these ids are still alive (an id's address reused is a live row anyway)."""
    gc.collect()
    return sum(isinstance(o, ConsoleRow) and id(o) in ids for o in gc.get_objects())


def test_a_refresh_lets_the_last_ones_rows_go(qtbot: QtBot, console: FleetConsole) -> None:
    with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
        console.refresh()
    first = {id(r) for r in console.model.rows}
    assert first
    for _ in range(3):
        with qtbot.waitSignals([console.refreshed, console.historyShown], timeout=WAIT):
            console.refresh()
    first -= {id(r) for r in console.model.rows}  # an address the newest rows took again
    assert _alive(first) == 0  # the first refresh's rows are gone, not held by a job that ended
