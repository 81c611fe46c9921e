"""Scan batches keep the artifact table sorted, and move only what they must (no relayout for rows appended in order)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, scan
from rbln_artifact_studio.gui.models.artifact_model import COLUMNS, NAME_COLUMN, SORT_ROLE, ArtifactTableModel

from .widgets import present

KV = COLUMNS.index(next(c for c in COLUMNS if c.title == "kvcache_num_blocks"))


@pytest.fixture
def template(workspace: Path) -> ArtifactSummary:
    return next(iter(scan(workspace)))


def _row(template: ArtifactSummary, i: int, name: str | None = None, blocks: int | None = 21) -> ArtifactSummary:
    return replace(template, path=f"/fleet/{i:05d}", name=name or f"a{i:05d}", kvcache_num_blocks=blocks)


def _keys(model: ArtifactTableModel, column: int) -> list[tuple[object, object]]:
    return [
        (model.index(r, column).data(SORT_ROLE), model.index(r, NAME_COLUMN).data(SORT_ROLE))
        for r in range(model.rowCount())
    ]


def test_batches_in_name_order_are_appended_without_a_relayout(template: ArtifactSummary) -> None:
    model = ArtifactTableModel()
    model.sort(NAME_COLUMN)
    relayouts: list[None] = []
    model.layoutChanged.connect(lambda *_: relayouts.append(None))
    for first in range(0, 1000, 250):
        model.upsert([_row(template, i) for i in range(first, first + 250)])
    assert model.rowCount() == 1000 and relayouts == []
    model.upsert([_row(template, 5, blocks=9)])  # resized in place: still in name order
    assert relayouts == []
    model.upsert([_row(template, 2000, name="0-first")])  # sorts before every row: the table is reordered once
    assert len(relayouts) == 1 and model.index(0, NAME_COLUMN).data() == "0-first"
    model.sort(KV)
    model.upsert([_row(template, 700, blocks=1)])  # resized below every other count: moves to the top
    assert model.summary(0).path == "/fleet/00700"


def test_changed_and_removed_rows_are_signalled_as_ranges(template: ArtifactSummary) -> None:
    model = ArtifactTableModel()
    model.sort(NAME_COLUMN)
    model.upsert([_row(template, i) for i in range(100)])
    changed: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append((top.row(), bottom.row())))
    model.rowsRemoved.connect(lambda _parent, first, last: removed.append((first, last)))
    model.upsert([_row(template, i, blocks=12) for i in (10, 11, 12, 40)])
    assert changed == [(10, 12), (40, 40)]
    model.remove_paths([f"/fleet/{i:05d}" for i in (50, 51, 52, 90)])
    assert removed == [(90, 90), (50, 52)]  # from the bottom up, so the row numbers stay valid
    assert model.rowCount() == 96 and model.row_of("/fleet/00053") == 50


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_sequence_of_batches_keeps_the_table_sorted(
    qtmodeltester: ModelTester, template: ArtifactSummary, data: st.DataObject
) -> None:
    model = ArtifactTableModel()
    qtmodeltester.check(model, force_py=True)
    column = data.draw(st.sampled_from([NAME_COLUMN, KV]))
    order = data.draw(st.sampled_from([Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder]))
    model.sort(column, order)
    expected: dict[str, int | None] = {}
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(data.draw(st.integers(1, 8))):
        action = data.draw(st.sampled_from(["upsert", "change", "remove", "sort"]))
        if action == "change":  # rows read again (resized on disk): only existing paths
            ids = [int(p.rsplit("/", 1)[1]) for p in rng.sample(sorted(expected), min(len(expected), 3))]
            batch = [_row(template, i, name=f"n{i % 7}", blocks=rng.choice([None, 3, 9, 21])) for i in ids]
            model.upsert(batch)
            expected.update({s.path: s.kvcache_num_blocks for s in batch})
        elif action == "upsert":
            ids = rng.sample(range(60), rng.randint(1, 20))
            batch = [_row(template, i, name=f"n{i % 7}", blocks=rng.choice([None, 3, 9, 21])) for i in ids]
            model.upsert(batch)
            expected.update({s.path: s.kvcache_num_blocks for s in batch})
        elif action == "remove":
            gone = rng.sample(sorted(expected), min(len(expected), rng.randint(0, 10)))
            model.remove_paths(gone)
            for path in gone:
                del expected[path]
        else:
            column = rng.choice([NAME_COLUMN, KV])
            order = rng.choice([Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder])
            model.sort(column, order)
        keys = _keys(model, column)
        assert keys == sorted(keys, reverse=order == Qt.SortOrder.DescendingOrder)
        assert {p: model.summary(present(model.row_of(p))).kvcache_num_blocks for p in expected} == expected
        assert model.rowCount() == len(expected)


def test_the_view_shows_appended_rows_in_order(qtbot: QtBot, template: ArtifactSummary) -> None:
    from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser

    model = ArtifactTableModel()
    browser = ArtifactBrowser(model)
    qtbot.addWidget(browser)
    model.upsert([_row(template, i) for i in range(0, 300, 2)])
    model.upsert([_row(template, i) for i in range(1, 300, 2)])  # interleaves: the table is reordered
    names = [browser.proxy.index(r, NAME_COLUMN).data() for r in range(browser.proxy.rowCount())]
    assert names == sorted(names) and len(names) == 300
