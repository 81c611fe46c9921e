"""Every legal output name works: 231-255 bytes leave no room for the staging suffix, which is shortened instead."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rbln_artifact_studio.core.storage.fsutil import PARTIAL_TAG, hidden_sibling_name, is_internal_name
from rbln_artifact_studio.core.storage.jsonfile import read_block_count

Run = Callable[..., subprocess.CompletedProcess[str]]
NAMES = ["a" * 235, "b" * 255, "모델" * 42]  # the last: 252 bytes of 3-byte characters
IDS = ["235-bytes", "255-bytes", "252-bytes-korean"]


@pytest.mark.parametrize("name", NAMES, ids=IDS)
def test_resize_to_a_copy_with_a_long_name(run_cli: Run, cr13_artifact: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done = run_cli("set-kvcache-num-blocks", cr13_artifact, "20", "--output-dir", out / name)
    assert done.returncode == 0, done.stderr
    assert read_block_count(out / name) == 20
    assert [p.name for p in out.iterdir()] == [name], "nothing of the staging left"


def test_compile_to_a_255_byte_name(run_cli: Run, tmp_path: Path) -> None:
    target = tmp_path / ("c" * 255)
    done = run_cli(
        "compile",
        "--model-id",
        "Qwen/Qwen3-8B",
        "-o",
        target,
        "--tensor-parallel-size",
        "4",
        "--kvcache-partition-len",
        "8192",
    )
    assert done.returncode == 0, done.stderr
    assert read_block_count(target) > 0 and [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize("name", ["x", *NAMES], ids=["short", *IDS])
def test_staging_names_fit_and_stay_recognisable(name: str) -> None:
    staged = hidden_sibling_name(name, PARTIAL_TAG)
    assert len(staged.encode()) <= 255 and is_internal_name(staged)
    assert staged.startswith("." + name[:8]) and staged != hidden_sibling_name(name + "z", PARTIAL_TAG)
