"""Server groups (@GROUP) kept by the CLI as a user runs it: server-groups, set-server-group, remove-server-group."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def groups(run_cli: Run, tmp_path: Path) -> tuple[Run, Path]:
    """The installed CLI with a config folder of its own, and where its group file goes."""
    config = tmp_path / "config"

    def run(*args: object) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env={"RBLN_STUDIO_CONFIG_DIR": str(config)})

    return run, config / "host_groups.json"


def test_a_group_is_set_listed_replaced_and_removed(groups: tuple[Run, Path]) -> None:
    cli, path = groups
    empty = cli("server-groups")
    assert empty.returncode == 0, empty.stderr
    assert "No server groups yet" in empty.stdout and "set-server-group NAME ssh://HOST" in empty.stdout

    saved = cli("set-server-group", "rack1", "ssh://npu1", "npu2", "ops@10.0.0.5:2222", "ssh://npu1/")
    assert saved.returncode == 0, saved.stderr
    assert "Saved server group @rack1: ssh://npu1 ssh://npu2 ssh://ops@10.0.0.5:2222" in saved.stdout
    assert cli("set-server-group", "@rack2", "npu3").returncode == 0  # @NAME, as the commands that use it say it
    listed = cli("server-groups")
    assert listed.stdout.splitlines() == ["@rack1: ssh://npu1 ssh://npu2 ssh://ops@10.0.0.5:2222", "@rack2: ssh://npu3"]
    as_json = json.loads(cli("server-groups", "--json").stdout)
    assert as_json == {
        "file": str(path),
        "groups": {"rack1": ["ssh://npu1", "ssh://npu2", "ssh://ops@10.0.0.5:2222"], "rack2": ["ssh://npu3"]},
    }

    replaced = cli("set-server-group", "rack1", "ssh://npu4")
    assert replaced.returncode == 0 and "Replaced server group @rack1: ssh://npu4" in replaced.stdout
    removed = cli("remove-server-group", "rack2")
    assert removed.returncode == 0 and "Removed server group @rack2 (it listed ssh://npu3)" in removed.stdout
    assert json.loads(path.read_text())["groups"] == {"rack1": ["ssh://npu4"]}  # the file the commands read


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["set-server-group", "bad name", "npu1"], "'bad name' is not a server group name"),
        (["set-server-group", "rack1", "ssh://npu1/srv/models"], "names a folder on a server; a group lists servers: "),
        (["set-server-group", "rack1", "@rack2"], "@rack2 is a group; a group lists servers"),
        (["set-server-group", "rack1", "s3://models"], "'s3://models' is not a server name"),
        (["remove-server-group", "rack9"], "There is no server group @rack9 (groups: @rack0)"),
        (["devices", "@rack9"], "There is no server group @rack9 (groups: @rack0)"),
    ],
)
def test_a_bad_server_or_an_unknown_group_is_refused_and_nothing_changes(
    groups: tuple[Run, Path], args: list[str], said: str
) -> None:
    cli, path = groups
    assert cli("set-server-group", "rack0", "npu0").returncode == 0
    before = path.read_bytes()
    done = cli(*args)
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr
    assert path.read_bytes() == before


def test_a_broken_group_file_is_named_and_left_as_it_is(groups: tuple[Run, Path]) -> None:
    cli, path = groups
    path.parent.mkdir(parents=True)
    path.write_text('{"groups": {"rack1": "npu1"}}')
    for args in (["server-groups"], ["set-server-group", "rack2", "npu2"]):
        done = cli(*args)
        assert done.returncode == 1 and f"{path} is not a server group file" in done.stderr
    assert path.read_text() == '{"groups": {"rack1": "npu1"}}'
