"""optimum-rbln-cli spellings whose value starts with a dash (`--model-id=-rf`): a folder name, not an option."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from conftest import cli_command, cli_env

from rbln_artifact_studio.core.storage.jsonfile import read_block_count


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli_command(), *args], capture_output=True, text=True, env=cli_env(), cwd=cwd, timeout=120)


def test_model_id_in_equals_form_may_start_with_a_dash(cr13_artifact: Path, tmp_path: Path) -> None:
    shutil.move(cr13_artifact, tmp_path / "-rf")
    got = _run(tmp_path, "--get-kvcache-num-blocks", "--model-id=-rf")
    assert (got.returncode, got.stdout, got.stderr) == (0, "21\n", "")
    done = _run(tmp_path, "--set-kvcache-num-blocks", "20", "--model_id=-rf")
    assert done.returncode == 0, done.stderr
    assert read_block_count(tmp_path / "-rf") == 20
