"""The demo workspace: clear messages when its folder cannot be used; a damaged demo artifact is rebuilt, while
what the user made there (their own folders, a demo artifact they changed that is still valid) is left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rbln_artifact_studio.core.demo import DEMO_ARTIFACTS, build_demo
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import summarize
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.status import Status


def test_a_damaged_demo_artifact_is_rebuilt_and_the_users_things_are_not(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    build_demo(demo)
    first, second = (demo / DEMO_ARTIFACTS[0].name), (demo / DEMO_ARTIFACTS[2].name)
    config = first / "rbln_config.json"
    config.write_bytes(config.read_bytes()[:100])  # truncated
    assert summarize(first).status is Status.INVALID
    resize_in_place(second, 6)  # the user's own change to a demo artifact: still valid, kept
    mine = demo / "my-notes"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")

    written = build_demo(demo)

    assert written == [first]
    assert summarize(first).status is not Status.INVALID
    assert json.loads(config.read_text())  # whole again
    assert summarize(second).kvcache_num_blocks == 6
    assert (mine / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in demo.iterdir() if p.name.startswith(".")) == []  # nothing hidden left behind
    assert build_demo(demo) == []


def test_a_demo_folder_that_is_a_file_is_said_plainly(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    demo.write_text("not a folder")
    with pytest.raises(StudioError) as caught:
        build_demo(demo)
    assert caught.value.message.startswith(f"The demo workspace {demo} is a file, not a folder. Move or delete it")
    assert demo.read_text() == "not a folder"


def test_a_file_where_a_demo_artifact_goes_is_said_and_kept(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    demo.mkdir()
    blocker = demo / DEMO_ARTIFACTS[1].name
    blocker.write_text("the user's file")
    with pytest.raises(StudioError, match="is a file where a demo artifact goes"):
        build_demo(demo)
    assert blocker.read_text() == "the user's file"


def test_a_demo_folder_in_a_place_that_cannot_be_written_is_said(tmp_path: Path) -> None:
    parent = tmp_path / "a-file"
    parent.write_text("x")
    with pytest.raises(StudioError) as caught:
        build_demo(parent / "demo")
    assert "building the demo workspace in" in caught.value.message
