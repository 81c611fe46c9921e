"""The Fleet Console's worker side: its sources read into rows, each NPU's last hour carried on, "where does this
fit?" answered, the names its source field offers. Qt-free, and each function runs in a worker job: what it hands
the GUI thread is finished, for the window only to show (docs/performance.md row 15)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rbln_artifact_studio.core.display.fleet_console import (
    HOUR,
    HistoryKeeper,
    MemoryHistory,
    Rows,
    full_collections_held,
    let_go,
)
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.host_groups import GROUP_PREFIX, load_groups
from rbln_artifact_studio.core.planning.placement import Placement, placement_text
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.places.fleet_sources import (
    HISTORY_READERS,
    NodeReading,
    ReadOptions,
    Source,
    parse_source,
    place_on_sources,
    read_history,
    read_sources,
    rows_of,
)
from rbln_artifact_studio.remote.ssh_config import config_hosts


@dataclass(frozen=True)
class Reading:
    """A read of every source, finished: the rows, the last hour with this read's samples, the state line."""

    rows: Rows
    history: MemoryHistory
    state: str


@dataclass(frozen=True)
class Placed:
    """The answer to "Where does this fit?" and its title line."""

    placement: Placement
    title: str


@dataclass(frozen=True)
class ConsoleReader:
    """How the console's jobs read its sources: settings taken on the GUI thread when the job was asked for.

    prepare: called in each job's worker first (the window's ssh options given to remote/); http_config: promtool's
    HTTP config file for the Prometheus sources (empty: none)."""

    timeout: float
    http_config: str
    prepare: Callable[[], None]
    keeper: HistoryKeeper

    def options(self, cancel: CancelToken) -> ReadOptions:
        self.prepare()
        return ReadOptions(self.timeout, cancel, http_config=self.http_config)

    def read(self, texts: list[str], cancel: CancelToken, show: Callable[[Reading | MemoryHistory], None]) -> None:
        """Every source's nodes as rows, the SSH servers' NPUs sampled into the history, handed to show (which
        returns once the window has shown and painted them); then the last hour of the sources that keep their
        own (Prometheus' range query), handed to show likewise. One job does both, one after the other: the
        window paints what changed while no worker of the console competes with it for the interpreter."""
        sources = parse_sources(texts)
        with full_collections_held():
            readings = read_sources(sources, self.options(cancel))
            rows = rows_of(readings)
            state = _state(texts, readings)
            let_go(readings)  # here, a slice at a time, not in one go as the function returns
            sampled = {s.name for s in sources if s.kind not in HISTORY_READERS}
            keys = [r.key for r in rows]
            history = self.keeper.next(lambda h: h.sampled((r for r in rows if r.source in sampled), keys))
            kept = Rows(rows)
            let_go(rows)
        show(Reading(kept, history, state))
        if len(sampled) == len(sources):
            return
        with full_collections_held():
            series = read_history(sources, HOUR, self.options(cancel))
            history = self.keeper.next(lambda h: h.with_series(series))
            points = list(series.values())
            series.clear()
            let_go(points)  # the range query's lists, a slice at a time
        show(history)

    def place(self, texts: list[str], artifact: Artifact, cancel: CancelToken) -> Placed:
        with full_collections_held():
            placement = place_on_sources(artifact, parse_sources(texts), self.options(cancel))
        return Placed(placement, placement_text(placement).splitlines()[0])


def parse_sources(texts: list[str]) -> list[Source]:
    out = []
    for text in texts:
        try:
            out.append(parse_source(text))
        except StudioError:
            continue  # a remembered source that no longer parses (an edited settings file): left out
    return list(dict.fromkeys(out))


def _state(texts: list[str], readings: list[NodeReading]) -> str:
    failed = sum(r.status is None for r in readings)
    npus = sum(len(r.status.devices) for r in readings if r.status is not None)
    flagged = sum(d.flagged for r in readings for d in r.drifts)
    return (
        f"{len(texts)} source(s): {len(readings)} node(s), {npus} NPU(s), {failed} not read, "
        f"{flagged} context(s) past their drift threshold"
    )


def source_names(config: str) -> list[str]:
    """What the source field offers: the ssh config's hosts, then the server groups."""
    names = config_hosts(Path(config) if config else None)
    with contextlib.suppress(StudioError):  # a broken groups file: named when a group is read
        names += [GROUP_PREFIX + g for g in load_groups().groups]
    return names
