"""What went wrong is said as it is: a key whose last part is too long to be a folder name here is blamed on its
length, not on "the disk"."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

from objectstore.conftest import BucketFixture

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_a_compile_to_a_key_too_long_is_said_to_be_too_long(bucket: BucketFixture, run_cli: Run) -> None:
    output = bucket.url("k" * 1_100)
    done = run_cli(
        "compile", "--model-id", "Qwen/Qwen3-8B", "-o", output, "--tensor-parallel-size", "4",
        "--kvcache-partition-len", "8192",
    )  # fmt: skip
    assert done.returncode == 1
    assert "disk" not in done.stderr, done.stderr
    assert done.stderr == (
        "error: A name is too long while staging the compile here: a file system takes names of at most 255 bytes "
        f"(a path 4,096). Give a shorter name. {output} was not written.\n"
    )
    assert bucket.objects() == {}
