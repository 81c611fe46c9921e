"""A folder holding .rbln-studio-incomplete is being written (or was cut short): inspect says so, writes refuse it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.core.storage.jsonfile import read_block_count

Run = Callable[..., subprocess.CompletedProcess[str]]


def _mark(folder: Path) -> None:
    marker = {"pid": os.getpid(), "host": socket.gethostname(), "target": str(folder.parent / "c1")}
    (folder / INCOMPLETE_MARKER).write_text(json.dumps(marker))


def test_inspect_says_a_marked_folder_is_incomplete(run_cli: Run, cr13_artifact: Path) -> None:
    _mark(cr13_artifact)
    done = run_cli("inspect", cr13_artifact, "--json")
    data = json.loads(done.stdout)
    assert data["status"] == "invalid" and done.returncode == 3
    assert any("is incomplete" in p["message"] and str(os.getpid()) in p["message"] for p in data["problems"])
    text = run_cli("inspect", cr13_artifact)
    assert "incomplete" in text.stdout


def test_writes_refuse_a_marked_folder(run_cli: Run, cr13_artifact: Path, tmp_path: Path) -> None:
    _mark(cr13_artifact)
    before = {p.name: p.read_bytes() for p in cr13_artifact.iterdir()}
    in_place = run_cli("set-kvcache-num-blocks", cr13_artifact, "20")
    assert in_place.returncode == 1 and "is incomplete" in in_place.stderr, in_place.stderr
    copy = run_cli("set-kvcache-num-blocks", cr13_artifact, "20", "--output-dir", tmp_path / "copy")
    assert copy.returncode == 1 and "is incomplete" in copy.stderr and not (tmp_path / "copy").exists()
    assert {p.name: p.read_bytes() for p in cr13_artifact.iterdir()} == before
    assert read_block_count(cr13_artifact) == 21
