"""An in-place resize of a real artifact through optimum-rbln-cli (the fake) is staged and swapped in: a kill at any
named step, or of the tool in the middle of its writes, leaves the old or the new artifact, never a mix."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from fakes.helpers import leftovers, wait_for
from fakes.install import FakeToolchain
from harness import ENV_STEP, ENV_TRACE, cli_command, cli_env

from rbln_artifact_studio.core.storage.fsutil import LOCK_NAME, PARTIAL_TAG

pytest_plugins = ["fakes.plugin"]

# Every step the staged in-place resize passes, in order (docs/crash-safety.md lists them).
STEPS = ["staging.created", "swap.before", "swap.exchanged", "swap.old_removed"]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != LOCK_NAME}


def resize(folder: Path, env: dict[str, str] | None = None, **popen: object) -> subprocess.Popen[str]:
    argv = [*cli_command(), "set-kvcache-num-blocks", str(folder), "12"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(env), **popen)  # type: ignore[call-overload]


@pytest.fixture
def lab(fake_optimum: FakeToolchain, real_artifact: Path, tmp_path: Path) -> tuple[Path, dict, dict]:
    """The template real artifact, its bytes (16 blocks) and an uninterrupted run's bytes (12 blocks)."""
    reference = Path(shutil.copytree(real_artifact, tmp_path / "reference" / "tiny-ca25"))
    out, err = resize(reference).communicate(timeout=60)
    assert "Set kvcache_num_blocks to 12" in out, err
    return real_artifact, snapshot(real_artifact), snapshot(reference)


def _check_then_rerun(folder: Path, old: dict, new: dict) -> None:
    assert snapshot(folder) in (old, new), "the artifact is neither the old nor the new one"
    assert not any(PARTIAL_TAG in name for name in os.listdir(folder))
    proc = resize(folder)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert snapshot(folder) == new and leftovers(folder.parent) == []


def test_the_staged_resize_passes_its_documented_steps(lab: tuple[Path, dict, dict], tmp_path: Path) -> None:
    template, _, new = lab
    folder = Path(shutil.copytree(template, tmp_path / "traced" / "tiny-ca25"))
    trace = tmp_path / "trace"
    proc = resize(folder, {ENV_TRACE: str(trace)})
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert [line.split()[0].split("#")[0] for line in trace.read_text().splitlines()] == STEPS
    assert snapshot(folder) == new
    doc = (Path(__file__).resolve().parents[2] / "docs" / "crash-safety.md").read_text()
    assert all(f"`{step}`" in doc for step in STEPS)


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_each_step_leaves_the_old_or_the_new_artifact(
    lab: tuple[Path, dict, dict], tmp_path: Path, step: str
) -> None:
    template, old, new = lab
    folder = Path(shutil.copytree(template, tmp_path / "work" / "tiny-ca25"))
    proc = resize(folder, {ENV_STEP: step})
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    expected = new if step in ("swap.exchanged", "swap.old_removed") else old
    assert snapshot(folder) == expected
    _check_then_rerun(folder, old, new)


def test_killing_the_tool_in_the_middle_of_its_writes_leaves_the_old_artifact(
    lab: tuple[Path, dict, dict], tmp_path: Path
) -> None:
    template, old, new = lab
    folder = Path(shutil.copytree(template, tmp_path / "work" / "tiny-ca25"))
    proc = resize(folder, {"FAKE_OPTIMUM_DELAY": "0.3"}, start_new_session=True)

    def tool_wrote_a_graph() -> bool:
        staged = [p for p in folder.parent.iterdir() if PARTIAL_TAG in p.name]
        return any((s / "prefill.rbln").exists() or (s / "decoder_batch_2.rbln").exists() for s in staged)

    try:
        wait_for(tool_wrote_a_graph, timeout=30, what="the tool to write its first graph")
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and the tool it runs, mid-write
    finally:
        proc.communicate(timeout=30)
    assert snapshot(folder) == old
    _check_then_rerun(folder, old, new)
