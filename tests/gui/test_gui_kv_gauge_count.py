"""The KV gauge names its count in words a user reads: "1 block", not "1 blocks" (issue 26 item 3)."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.presentation import BlockFacts
from rbln_artifact_studio.gui.widgets.kv_gauge import KvGauge


def _count_label(qtbot: QtBot, blocks: int) -> str:
    gauge = KvGauge()
    qtbot.addWidget(gauge)
    gauge.resize(400, 40)
    gauge.set_facts(BlockFacts(blocks, 1, 40, 8192, blocks * 8192, blocks // 5, 2 << 20))
    return gauge.label_rects()[0][0]


def test_one_block_is_singular_and_more_are_plural(qtbot: QtBot) -> None:
    assert _count_label(qtbot, 1) == "1 block"
    assert _count_label(qtbot, 21) == "21 blocks"
