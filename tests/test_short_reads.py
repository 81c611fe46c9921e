"""A file system that returns a read short of what was asked mid-file (FUSE, network file systems may): the config
readers read on to the end instead of taking the first piece for the whole file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rbln_artifact_studio.core.portable.files import read_small
from rbln_artifact_studio.core.storage.jsonfile import read_bytes

PIECE = 1000  # bytes a read returns at most, as such a file system might


@pytest.fixture
def short_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: real(fd, min(n, PIECE)))


def test_a_config_read_in_short_pieces_is_read_whole(short_reads: None, tmp_path: Path) -> None:
    config = tmp_path / "rbln_config.json"
    data = b'{"kvcache_num_blocks": 21, "pad": "' + b"x" * 10_000 + b'"}'
    config.write_bytes(data)
    assert read_small(str(config), 1 << 20) == data
    assert read_bytes(config) == data


def test_a_file_read_whole_at_once_takes_no_read_past_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan reads two configs an artifact: one read each when the file is all there (its fstat size)."""
    config = tmp_path / "rbln_config.json"
    config.write_bytes(b'{"kvcache_num_blocks": 21}')
    real, calls = os.read, []

    def counted(fd: int, n: int) -> bytes:
        calls.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counted)
    assert read_small(str(config), 1 << 20) == config.read_bytes()
    assert read_bytes(config) == config.read_bytes()
    assert len(calls) == 2
