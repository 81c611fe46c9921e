"""One writer per destination folder here (the installed CLI): a compile or a copy into a folder another live writer
is writing is refused before it writes anything, and the first ends whole; a killed writer blocks nobody.

The first writer stops itself (SIGSTOP, the crash tests' fault hook) inside its staging folder; the second runs to
its end; the first is then continued.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from harness import ENV_STEP, cli_command, cli_env, continued, stopped_at

from rbln_artifact_studio.core.fleet.artifact import open_artifact

SHAPE = ("--batch_size", "2", "--max_seq_len", "8192", "--kvcache_partition_len", "4096")


def cli(*args: object, step: str | None = None) -> subprocess.CompletedProcess[str]:
    env = cli_env({ENV_STEP: step} if step else {})
    return subprocess.run([*cli_command(), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


def compile_args(model: Path, output: Path) -> list[object]:
    return ["compile", "--model-id", model, "-o", output, *SHAPE]


def test_two_writers_into_one_folder(tiny_model: Path, cr13_artifact: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "r1"
    with stopped_at("compile.config_written", *compile_args(tiny_model, out)) as first:
        before = sorted(os.listdir(out.parent))
        for second in (
            cli(*compile_args(tiny_model, out)),
            cli("set-kvcache-num-blocks", cr13_artifact, "12", "--output-dir", out),
        ):
            assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
            assert f"{out} is being written by process {first.pid} on " in second.stderr, second.stderr
            assert "(compile, since " in second.stderr  # what holds it
            assert "Nothing was changed." in second.stderr
            assert sorted(os.listdir(out.parent)) == before  # no staging folder of its own: refused before writing
        done = continued(first)
    assert done.returncode == 0, done.stderr
    assert f"Compiled {out} " in done.stdout
    assert open_artifact(out).status.value == "ok"
    assert os.listdir(out.parent) == ["r1"]


def test_a_killed_writer_blocks_nobody(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "r1"
    killed = cli(*compile_args(tiny_model, out), step="compile.config_written")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists()
    again = cli(*compile_args(tiny_model, out))
    assert again.returncode == 0, again.stderr
    assert open_artifact(out).status.value == "ok"
    assert os.listdir(out.parent) == ["r1"]  # the killed run's staging folder and claim are gone
