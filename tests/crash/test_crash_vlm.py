"""SIGKILL a multimodal model's resize (in place, through the real CLI) at every named step.

A VLM records its language model's count twice: language_model/rbln_config.json (the commit point: optimum-rbln
loads it, and it picks the containers' slot) and the nested section of the VLM's own rbln_config.json, written
just before it. After a kill at any step the language model holds the old or the new count everywhere it
matters (its file and every container), the VLM opens and is not invalid, the nested copy either agrees or is
flagged, and running the resize again brings both files to the new count.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from harness import ENV_STEP, ENV_TRACE, REPO, artifact_state, cli_command, cli_env
from kind_fixtures import simulated_llava

from rbln_artifact_studio.core.fleet.artifact import Status, open_artifact

STEPS = [
    "resize.locked#1",
    "container.half_header_written#1",
    "resize.header_written.0#1",
    "container.half_header_written#2",
    "resize.header_written.1#1",
    "resize.parent_config.tmp_written#1",
    "resize.parent_config.renamed#1",
    "resize.config.tmp_written#1",
    "resize.config.renamed#1",
    "resize.done#1",
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    vlm = simulated_llava(tmp_path_factory.mktemp("vlm") / "llava")
    artifact = open_artifact(vlm)
    return vlm, artifact.config.kvcache_num_blocks, artifact.config.num_min_blocks


def _counts(vlm: Path) -> tuple[int, int]:
    sub = json.loads((vlm / "language_model" / "rbln_config.json").read_text())["kvcache_num_blocks"]
    nested = json.loads((vlm / "rbln_config.json").read_text())["language_model"]["kvcache_num_blocks"]
    return sub, nested


def _resize(vlm: Path, target: int, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [*cli_command(), "set-kvcache-num-blocks", str(vlm), str(target)]
    return subprocess.run(argv, capture_output=True, text=True, env=cli_env(env), timeout=120)


def test_a_vlm_resize_passes_its_documented_steps(template: tuple[Path, int, int], tmp_path: Path) -> None:
    source, _, new = template
    vlm = Path(shutil.copytree(source, tmp_path / "llava"))
    trace = tmp_path / "trace"
    assert _resize(vlm, new, {ENV_TRACE: str(trace)}).returncode == 0
    assert [line.split()[0] for line in trace.read_text().splitlines()] == STEPS
    doc = (REPO / "docs" / "crash-safety.md").read_text()
    assert "`resize.parent_config.tmp_written`" in doc and "`resize.parent_config.renamed`" in doc


@pytest.mark.parametrize("step", STEPS)
def test_kill_a_vlm_resize_at_every_step(template: tuple[Path, int, int], tmp_path: Path, step: str) -> None:
    source, old, new = template
    vlm = Path(shutil.copytree(source, tmp_path / "llava"))
    out = _resize(vlm, new, {ENV_STEP: step})
    assert out.returncode == -signal.SIGKILL, out.stderr

    sub, nested = _counts(vlm)
    assert sub in (old, new) and nested in (old, new)
    state = artifact_state(vlm / "language_model")  # the file and every container's current slot agree
    assert state["count"] == sub
    artifact = open_artifact(vlm)
    assert artifact.status is not Status.INVALID, artifact.problems
    assert artifact.config.kvcache_num_blocks == sub
    flagged = any("Resize again to bring them in step" in p.message for p in artifact.problems)
    assert flagged == (sub != nested)

    again = _resize(vlm, new)
    assert again.returncode == 0, again.stderr
    assert _counts(vlm) == (new, new)
    assert open_artifact(vlm).status is Status.OK
