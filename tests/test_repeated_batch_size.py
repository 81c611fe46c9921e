"""A config whose batch_size no graph was compiled for (a repeated key: 4, then 2) is invalid, and never resized."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def repeated(run_cli: Run, tmp_path: Path) -> Path:
    folder = tmp_path / "b4"
    done = run_cli(
        "compile", "--model-id", "Qwen/Qwen3-8B", "-o", folder, "--tensor-parallel-size", "4",
        "--batch-size", "4", "--max-seq-len", "40960", "--kvcache-partition-len", "8192",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (folder / "decoder_batch_4.rbln").is_file()
    config = folder / "rbln_config.json"
    text = config.read_text()
    assert text.count('"batch_size": 4,') == 1
    config.write_text(text.replace('"batch_size": 4,', '"batch_size": 4,\n  "batch_size": 2,'))
    return folder


def test_inspect_names_the_batch_no_graph_was_compiled_for(run_cli: Run, repeated: Path) -> None:
    done = run_cli("inspect", repeated, "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 3 and data["status"] == "invalid"
    [problem] = [p["message"] for p in data["problems"] if "batch_size 2" in p["message"]]
    assert "decoder_batch_4.rbln" in problem and "2 times (4, 2)" in problem


def test_no_resize_of_it(run_cli: Run, repeated: Path, tmp_path: Path) -> None:
    before = {p.name: p.read_bytes() for p in repeated.iterdir()}
    for extra in ([], ["--output-dir", tmp_path / "copy"]):
        done = run_cli("set-kvcache-num-blocks", repeated, "4", *extra)
        assert done.returncode == 1 and "batch_size 2" in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in repeated.iterdir()} == before and not (tmp_path / "copy").exists()
