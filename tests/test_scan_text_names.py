"""scan's text form: a name's control characters escaped as `ls` does, columns aligned by display width (CJK)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from rbln_artifact_studio.core.fleet.fleet_report import display_width

Run = Callable[..., subprocess.CompletedProcess[str]]
CRAFTED = "evil\nfake  ok"  # printed raw, the second line would pass for a row
WIDE = "모델-한국어"


def test_crafted_and_wide_names(run_cli: Run, cr13_artifact: Path, tmp_path: Path) -> None:
    root = tmp_path / "fleet"
    root.mkdir()
    shutil.copytree(cr13_artifact, root / CRAFTED)
    shutil.copytree(cr13_artifact, root / WIDE)
    shutil.move(cr13_artifact, root / "plain")
    done = run_cli("scan", root, "--no-cache")
    lines = done.stdout.splitlines()
    rows = [line for line in lines[1:] if line.strip() and not line.startswith("    ") and "artifact(s)" not in line]
    assert len(rows) == 3, done.stdout  # no row faked by a newline
    assert any(row.startswith("'evil'$'\\n''fake  ok'") for row in rows), done.stdout
    status_at = {display_width(row[: row.index(" ok ")]) for row in rows}
    assert len(status_at) == 1, f"the Status column starts at one column: {status_at}\n{done.stdout}"
