"""The fault-injection seam: write paths name their steps to a hook the tests install; the app reads no fault
variables, so an environment variable left set in a user's shell changes nothing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import PACKAGE_DIR
from harness import ENV_STEP, cli_command

from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.storage import faults
from rbln_artifact_studio.core.storage.jsonfile import read_block_count


def test_an_installed_hook_sees_every_step_of_a_resize_in_order(cr13_artifact: Path) -> None:
    art = cr13_artifact
    seen: list[str] = []
    previous = faults.install(seen.append)
    try:
        resize_in_place(art, read_block_count(art) - 1)
    finally:
        faults.install(previous)
    assert seen[0] == "resize.locked" and seen[-1] == "resize.done"
    assert "resize.config.tmp_written" in seen and "resize.config.renamed" in seen
    assert seen.index("resize.config.tmp_written") < seen.index("resize.config.renamed")


def test_the_app_reads_no_fault_variables(cr13_artifact: Path) -> None:
    assert not [p for p in (PACKAGE_DIR).rglob("*.py") if "RBLN_STUDIO_FAULT" in p.read_text()]
    art = cr13_artifact
    target = read_block_count(art) - 1
    # Without the tests' hook, the variable that kills a hooked CLI at its first step is ignored.
    env = {"PATH": str(Path(cli_command()[0]).parent), ENV_STEP: "resize.locked"}
    out = subprocess.run([*cli_command(), "set-kvcache-num-blocks", str(art), str(target)], env=env, timeout=120)
    assert out.returncode == 0 and read_block_count(art) == target
