"""An in-place resize keeps the owner, group and mode of the files it replaces, or refuses before writing."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.operations.resize import resize_in_place

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="giving files to other users needs root")

OTHER, THIRD = 2345, 3456  # uids and gids no login of this machine has


def _state(folder: Path) -> dict[str, tuple[str, int, int, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_uid, p.stat().st_gid, p.stat().st_mode)
        for p in sorted(folder.iterdir())
    }


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own is root's alone), removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="owner-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_resize_as_root_keeps_another_users_config_owner_group_and_mode(
    cr13_artifact: Path, run_cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    config = cr13_artifact / "rbln_config.json"
    os.chown(config, OTHER, THIRD)
    config.chmod(0o640)
    done = run_cli("set-kvcache-num-blocks", cr13_artifact, 20)
    assert done.returncode == 0, done.stderr
    st = config.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (OTHER, THIRD, 0o640)
    assert '"kvcache_num_blocks": 20' in config.read_text()


def test_a_login_that_cannot_keep_the_owner_is_refused_before_writing(cr13_artifact: Path, open_folder: Path) -> None:
    """uid OTHER may write the folder and (by its group) the config of uid THIRD, but a config it writes would be
    its own: the resize is refused, nothing written."""
    folder = Path(shutil.copytree(cr13_artifact, open_folder / "qwen"))
    for path in [folder, *folder.iterdir()]:
        os.chown(path, OTHER, OTHER)
    config = folder / "rbln_config.json"
    os.chown(config, THIRD, OTHER)
    config.chmod(0o664)
    before = _state(folder)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: that login
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(OTHER)
            os.setuid(OTHER)
            try:
                resize_in_place(folder, 20)
                message = "resized"
            except StudioError as exc:
                from rbln_artifact_studio.cli.flags import FLAGS

                message = exc.one_line(FLAGS)  # as the CLI says it
            os.write(write, message.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        message = answer.read().decode()
    os.waitpid(pid, 0)
    assert message == (
        f"{config} belongs to user {THIRD}, and a file this login writes would belong to it instead. Resize it as "
        "its owner (or as root), or to a copy (--output-dir). Nothing was changed."
    )
    assert _state(folder) == before
