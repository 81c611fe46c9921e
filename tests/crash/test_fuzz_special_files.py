"""Files that are not files: a named pipe, a device or a folder where a config is expected, and a huge config.

Opening a named pipe for reading waits for a writer that never comes, so a reader that opens one plainly
hangs. Every reader must answer at once instead (badinput.read_everything puts a deadline on each).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from badinput import read_everything, within_deadline
from harness import SHAPE, tiny_model_config, tree_digest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import summarize
from rbln_artifact_studio.core.operations.resize import resize_to_copy
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.core.storage.jsonfile import MAX_JSON_BYTES


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("special")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text(json.dumps(tiny_model_config(1)))
    options = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
    return write_artifact(plan_compile(CompileRequest(model_id=str(root / "model"), **options)), root / "t")  # type: ignore[arg-type]


@pytest.fixture
def artifact(template: Path, tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "scan").mkdir()
    art = Path(shutil.copytree(template, tmp_path / "scan" / "art"))
    yield art
    _release_pipes(tmp_path)


def _release_pipes(root: Path) -> None:
    """Give every named pipe a writer and close it, so a reader still blocked on one gets end-of-file."""
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_fifo():
                with contextlib.suppress(OSError):
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def _replace(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "named pipe":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:  # a config of more than MAX_JSON_BYTES: sparse, so it costs no disk
        with open(path, "wb") as f:
            f.truncate(MAX_JSON_BYTES + 1)


@pytest.mark.parametrize("kind", ["named pipe", "device", "folder", "huge file"])
def test_config_that_is_not_a_file(artifact: Path, kind: str) -> None:
    """Found here: a named pipe at rbln_config.json made get-kvcache-num-blocks and inspect hang forever
    (and /dev/zero would have been read until memory ran out)."""
    _replace(artifact / "rbln_config.json", kind)
    assert read_everything(artifact, scans=False) == []


@pytest.mark.parametrize("name", ["rbln_config.json", "config.json"])
def test_scan_does_not_hang_on_a_named_pipe(artifact: Path, name: str) -> None:
    """Found here: the scan opened a named pipe in place of a config and waited forever."""
    _replace(artifact / name, "named pipe")
    row = within_deadline(lambda: summarize(artifact), seconds=1)
    if name == "rbln_config.json":
        assert row.status.value == "invalid" and "not a regular file" in row.problems[0]
    else:
        assert row.model == "LlamaForCausalLM"  # the model name falls back to the architecture


def test_copy_refuses_a_named_pipe_inside_the_artifact(artifact: Path, tmp_path: Path) -> None:
    """Found here: resize to a copy opened a named pipe inside the artifact to copy it and waited forever,
    holding the artifact's lock. It now stops with a one-line error and leaves nothing behind."""
    (artifact / "tokenizer").mkdir()
    os.mkfifo(artifact / "tokenizer" / "pipe")
    before = tree_digest(artifact)
    copy: Callable[[], object] = lambda: resize_to_copy(artifact, tmp_path / "copy", 3)  # noqa: E731
    with pytest.raises(StudioError, match="not a regular file") as caught:
        within_deadline(copy, seconds=5)
    assert "\n" not in caught.value.one_line()
    assert tree_digest(artifact) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scan"]
