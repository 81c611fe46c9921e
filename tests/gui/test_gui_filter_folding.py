"""The table's filter folds case the Unicode way (str.casefold), not by locale: İnstruct finds instruct under tr_TR."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale
from pytestqt.qtbot import QtBot

from rbln_artifact_studio.core.display.matching import folded
from rbln_artifact_studio.core.fleet.scan import scan
from rbln_artifact_studio.gui.models.artifact_model import PATH_ROLE, ArtifactTableModel
from rbln_artifact_studio.gui.window.artifact_browser import ArtifactBrowser


@pytest.fixture
def turkish_locale(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """LANG=tr_TR.UTF-8 as far as a running process can take it: the environment and Qt's default locale."""
    monkeypatch.setenv("LANG", "tr_TR.UTF-8")
    before = QLocale()
    QLocale.setDefault(QLocale("tr_TR"))
    yield
    QLocale.setDefault(before)


@pytest.mark.usefixtures("turkish_locale")
@pytest.mark.parametrize("query", ["İnstruct", "instruct", "INSTRUCT", "InStRuCt"])
def test_the_filter_folds_case_whatever_the_locale(qtbot: QtBot, cr13_artifact: Path, query: str) -> None:
    model = ArtifactTableModel()
    browser = ArtifactBrowser(model)
    qtbot.addWidget(browser)
    (row,) = scan(cr13_artifact.parent)
    instruct = replace(row, path=row.path + "-instruct", name="qwen3-8b-instruct-cr13")
    model.upsert([row, instruct])
    browser.filter_edit.insert(query)  # as typed (QTest types ASCII only)
    shown = [browser.proxy.index(r, 0).data(PATH_ROLE) for r in range(browser.proxy.rowCount())]
    assert shown == [instruct.path]


def test_folding_is_unicode_case_folding() -> None:
    assert folded("STRASSE") == folded("Straße")  # casefold, where lower() leaves ß
    assert folded("ΣΊΣΥΦΟΣ") == folded("σίσυφος")
    assert folded("İstanbul") == "istanbul"
    assert folded("café") != folded("cafe")  # accents still count: only the dot İ's folding leaves goes
