"""An in-place resize of a kind of place that cannot resize in place (the test HTTP kind) is refused before any
work, with the reason its capabilities give: in the resize dialog (the choice off, Apply off, the reason shown)
and in the CLI (an error, nothing read of the artifact). An invalid artifact there exits 3, as here."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import cli_env
from gui import conftest as gui_fixtures
from gui.widgets import child
from PySide6.QtWidgets import QLabel, QPushButton, QRadioButton
from pytestqt.qtbot import QtBot

from places.http_server import serving
from places.test_registered_place import fleet, plugin
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.gui.dialogs.resize_dialog import ResizeDialog
from rbln_artifact_studio.places import dispatch

__all__ = ["fleet", "plugin"]  # the fixtures, shared with the registered kind's own tests
pytestmark = pytest.mark.qt_log_ignore(gui_fixtures.OFFSCREEN_NOTICE)
REASON = "cannot be resized in place"


@pytest.fixture
def asked() -> list[str]:
    return []


@pytest.fixture
def served(fleet: Path, asked: list[str]) -> Iterator[str]:
    with serving(fleet.parent, asked) as host:
        yield f"http://{host}/fleet"


def test_the_dialog_offers_no_in_place_resize_and_says_why(qtbot: QtBot, plugin: Path, served: str) -> None:
    artifact = dispatch.open_artifact(parse_location(f"{served}/qwen3-8b-cr13"))
    dialog = ResizeDialog(artifact)
    qtbot.addWidget(dialog)
    dialog.show()
    in_place = child(dialog, QRadioButton, "resizeModeInPlace")
    reason = child(dialog, QLabel, "resizeInPlaceRefusal")
    assert not in_place.isEnabled()
    assert reason.isVisible() and REASON in reason.text() and "takes no writes" in reason.text()
    in_place.setChecked(True)  # chosen all the same (a keyboard shortcut, a planner's fix): still refused
    assert not child(dialog, QPushButton, "resizeApplyButton").isEnabled() and dialog.request is None
    assert REASON in child(dialog, QLabel, "resizeMessage").text()
    dialog.reject()


def test_the_cli_refuses_before_reading_the_artifact(
    plugin: Path, served: str, asked: list[str], run_cli, fleet: Path
) -> None:
    env = {"PYTHONPATH": f"{plugin}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    for args in (("set-kvcache-num-blocks", 12), ("set-memory-budget", "0.5")):
        done = run_cli(args[0], f"{served}/qwen3-8b-cr13", args[1], env=env)
        assert done.returncode == 1 and REASON in done.stderr and "takes no writes" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert [path for path in asked if not path.endswith("rbln_config.json")] == []  # no graph, no listing


def test_an_invalid_artifact_exits_3_there_as_here(plugin: Path, served: str, fleet: Path, run_cli) -> None:
    from test_exit_code_rule import DAMAGE

    config = fleet / "qwen3-8b-cr13" / "rbln_config.json"
    config.write_bytes(DAMAGE["truncated"](config.read_bytes()))
    env = {"PYTHONPATH": f"{plugin}{os.pathsep}{cli_env()['PYTHONPATH']}"}
    there = run_cli("inspect", f"{served}/qwen3-8b-cr13", env=env)
    here = run_cli("inspect", fleet / "qwen3-8b-cr13")
    assert here.returncode == there.returncode == 3, there.stderr
    assert there.stderr.startswith("error: ") and f"{served}/qwen3-8b-cr13" in there.stderr, there.stderr
