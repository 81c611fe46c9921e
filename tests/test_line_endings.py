"""A rewrite of rbln_config.json keeps the file's line endings (CRLF stays CRLF): only the changed values differ."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_crlf_config_keeps_crlf_on_resize(run_cli: Run, cr13_artifact: Path) -> None:
    config = cr13_artifact / "rbln_config.json"
    lf = config.read_bytes()
    assert b"\r" not in lf
    config.write_bytes(lf.replace(b"\n", b"\r\n"))
    done = run_cli("set-kvcache-num-blocks", cr13_artifact, "20")
    assert done.returncode == 0, done.stderr
    after = config.read_bytes()
    assert after.count(b"\n") == after.count(b"\r\n") == lf.count(b"\n"), "every line ends in CRLF, none added"
    before_lines, after_lines = lf.split(b"\n"), after.split(b"\r\n")
    changed = [(a, b) for a, b in zip(before_lines, after_lines, strict=True) if a != b]
    assert changed and all(b"20" in b for _, b in changed), changed
