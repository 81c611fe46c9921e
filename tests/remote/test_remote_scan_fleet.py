"""A server's real-fleet layouts (links, hard links, loops, failures, kinds) scan as the local scan sees them.

The server's python3 sees the tree at a path that is an empty folder here (a bind mount in its own mount
namespace), so every row must come from what the server sent: nothing is read locally by accident.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from fleet.layouts import Fleet, build_fleet
from kind_fixtures import materialize, simulated_llava

from rbln_artifact_studio.core.fleet.scan import ArtifactSummary, failed_row, scan
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.remote.scan import checked_rows, scan_remote
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, Run, SshServer, url
from remote.pythons import can_hide_trees, server_only_python

pytestmark = pytest.mark.skipif(not can_hide_trees(), reason="needs `unshare -m` (a mount namespace) to hide trees")


@dataclasses.dataclass(frozen=True)
class Hidden:
    """A tree at `real` here, which the server's python (`python`) sees at `seen_as` (empty here)."""

    real: Path
    seen_as: Path
    python: Path

    def there(self, text: str) -> str:
        """A local path as the server names it."""
        return text.replace(str(self.real), str(self.seen_as))

    def as_url(self, text: str) -> str:
        """A local message as a server scan words it: its paths as ssh:// URLs."""
        return text.replace(str(self.real), url(str(self.seen_as)))


@pytest.fixture
def hidden(tmp_path: Path) -> Hidden:
    real, seen_as = tmp_path / "real", tmp_path / "srv"
    real.mkdir()
    return Hidden(real, seen_as, server_only_python(tmp_path, real, seen_as))


@pytest.fixture
def fleet(hidden: Hidden) -> Fleet:
    return build_fleet(hidden.real / "base")


def remote_scan(
    server: SshServer, control_dir: Path, hidden: Hidden, root: Path
) -> tuple[list[ArtifactSummary], list[str]]:
    issues: list[str] = []
    s = Server(SshConnection(HOST_ALIAS, server.options(control_dir)), python=str(hidden.python))
    found = scan_remote(s, ServerFolder(HOST_ALIAS, hidden.there(str(root))), on_issue=lambda _p, m: issues.append(m))
    rows = list(checked_rows(s, found))  # what scan ssh:// prints: rows checked with what the scan sent, or there
    return rows, issues


def local_scan(root: Path) -> tuple[list[ArtifactSummary], list[str]]:
    issues: list[str] = []
    rows = list(scan(root, use_cache=False, on_issue=lambda _p, m: issues.append(m)))  # with the full check
    return rows, issues


def as_seen_there(hidden: Hidden, rows: list[ArtifactSummary]) -> list[ArtifactSummary]:
    """Local rows as the server scan gives them: paths as ssh:// URLs of the server's path, in messages too.
    (A link's target stays: fleet's links hold the real path, which the server resolves as written.)"""
    return [
        dataclasses.replace(r, path=url(hidden.there(r.path)), problems=[hidden.as_url(p) for p in r.problems])
        for r in rows
    ]


def test_the_tree_is_hidden_here(hidden: Hidden, fleet: Fleet) -> None:
    assert list(hidden.seen_as.iterdir()) == [], "the server's view must not be readable here"


def test_a_real_fleet_scans_on_the_server_as_here(
    server: SshServer, control_dir: Path, hidden: Hidden, fleet: Fleet
) -> None:
    local, local_issues = local_scan(fleet.root)
    remote, remote_issues = remote_scan(server, control_dir, hidden, fleet.root)
    assert [r.path for r in remote] == [url(hidden.there(r.path)) for r in local]
    assert remote == as_seen_there(hidden, local)
    assert remote_issues == [hidden.there(m) for m in local_issues]
    by_name = {r.name: r for r in remote}
    assert sorted(by_name) == sorted(p.name for p in fleet.layouts.values())  # each once; `up -> ..` adds nothing
    assert by_name["linked-out"].display_name == f"linked-out -> {fleet.outside}"  # the link's target (real path)
    assert by_name["selfloop"].status.value == "invalid"
    assert "leads back to itself" in by_name["selfloop"].problems[0]  # the failing entry is a row; the rest is there


def test_links_hidden_and_half_written_folders_as_here(
    server: SshServer, control_dir: Path, hidden: Hidden, fleet: Fleet, ca25_artifact: Path
) -> None:
    os.symlink(".", fleet.root / "here")  # the root itself
    os.symlink("art", fleet.root / "art-link")  # a folder inside, reached by its real path
    plain = fleet.base / "plain-folder"
    plain.mkdir()
    os.symlink("../plain-folder", fleet.root / "to-plain")  # outside, no artifact: reported and skipped
    shutil.copytree(ca25_artifact, fleet.root / ".hidden" / "art")
    shutil.copytree(ca25_artifact, fleet.root / ".art.partial-1-ab")
    marked = shutil.copytree(ca25_artifact, fleet.root / "half-written")
    (marked / INCOMPLETE_MARKER).write_text("{}")
    local, local_issues = local_scan(fleet.root)
    remote, remote_issues = remote_scan(server, control_dir, hidden, fleet.root)
    assert remote == as_seen_there(hidden, local)
    assert remote_issues == [hidden.there(m) for m in local_issues]
    assert any("to-plain links to" in m and "not followed" in m for m in remote_issues), remote_issues
    assert not {"here", "art-link", "to-plain", ".hidden", "half-written"} & {r.name for r in remote}


def test_an_artifact_reached_twice_is_listed_once(
    server: SshServer, control_dir: Path, hidden: Hidden, ca25_artifact: Path
) -> None:
    root = hidden.real / "root"
    shutil.copytree(ca25_artifact, root / "a" / "art")
    os.symlink(root / "a", root / "b")  # the same folder by another name, inside the root
    os.mkdir(root / "c")
    os.symlink("../a/art", root / "c" / "again")
    remote, _ = remote_scan(server, control_dir, hidden, root)
    assert [r.path for r in remote] == [url(hidden.there(str(root / "a" / "art")))]


def test_a_folder_without_permission_is_a_failed_row(
    server: SshServer, control_dir: Path, tmp_path: Path, ca25_artifact: Path
) -> None:
    real, seen_as = tmp_path / "real", tmp_path / "srv"
    real.mkdir()
    hidden = Hidden(real, seen_as, server_only_python(tmp_path, real, seen_as, unprivileged=True))  # root too
    root = real / "root"
    shutil.copytree(ca25_artifact, root / "a-art")
    locked = root / "locked"
    shutil.copytree(ca25_artifact, locked / "inside")
    locked.chmod(0)
    try:
        remote, _ = remote_scan(server, control_dir, hidden, root)
    finally:
        locked.chmod(0o755)
    assert [r.name for r in remote] == ["a-art", "locked"]  # the rest of the listing is there
    there = url(hidden.there(str(locked)))
    assert remote[1] == failed_row(there, OSError(errno.EACCES, os.strerror(errno.EACCES)), "list")  # as locally
    assert remote[1].status.value == "invalid" and "Permission denied" in remote[1].problems[0]


def test_a_diffusers_pipeline_is_one_artifact(
    server: SshServer, control_dir: Path, hidden: Hidden, tmp_path: Path
) -> None:
    root = hidden.real / "kinds"
    materialize("stable_diffusion", root / "sd")
    local, _ = local_scan(root)
    remote, _ = remote_scan(server, control_dir, hidden, root)
    assert (
        [r.path for r in remote] == [url(hidden.there(r.path)) for r in local] == [url(hidden.there(str(root / "sd")))]
    )
    assert remote[0].size_on_disk == local[0].size_on_disk  # its components count towards its size


@pytest.fixture
def kinds(hidden: Hidden) -> Path:
    """A pipeline and a multimodal model (its language model the simulator's) in the hidden tree."""
    root = hidden.real / "kinds"
    materialize("stable_diffusion", root / "sd")
    simulated_llava(root / "llava")
    return root


def test_pipeline_and_multimodal_rows_as_here(
    server: SshServer, control_dir: Path, hidden: Hidden, kinds: Path
) -> None:
    root = kinds
    local, _ = local_scan(root)
    remote, _ = remote_scan(server, control_dir, hidden, root)
    assert remote == as_seen_there(hidden, local)


def test_pipeline_and_multimodal_verdicts_as_here(
    remote_cli: Run, run_cli: Run, server: SshServer, hidden: Hidden, kinds: Path
) -> None:
    root = kinds
    here = json.loads(run_cli("scan", root, "--json", "--no-cache").stdout)
    env = {"RBLN_STUDIO_REMOTE_PYTHON": str(hidden.python)}
    there = json.loads(remote_cli("scan", url(hidden.there(str(root))), "--json", env=env).stdout)
    assert [(r["name"], r["status"], r["kind"]) for r in there] == [(r["name"], r["status"], r["kind"]) for r in here]


def test_the_cli_scan_of_a_server_fleet_equals_the_local_one(
    remote_cli: Run, run_cli: Run, server: SshServer, hidden: Hidden, fleet: Fleet
) -> None:
    here = run_cli("scan", fleet.root, "--json", "--no-cache")
    there = remote_cli(
        "scan", url(hidden.there(str(fleet.root))), "--json", env={"RBLN_STUDIO_REMOTE_PYTHON": str(hidden.python)}
    )
    assert there.returncode == here.returncode, there.stderr
    expected = [
        {
            **row,
            "path": url(hidden.there(row["path"])),
            "problems": [hidden.as_url(p) for p in row["problems"]],
        }
        for row in json.loads(here.stdout)
    ]
    got = json.loads(there.stdout)
    assert [r["path"] for r in got] == [r["path"] for r in expected]
    for row, want in zip(got, expected, strict=True):
        assert row == want, row["name"]


def test_a_server_scan_checked_in_two_processes_prints_what_one_prints(
    remote_cli: Run, server: SshServer, hidden: Hidden, fleet: Fleet
) -> None:
    """--jobs 2 checks the server's artifacts in a forked worker as well (started before the answer is read):
    the same rows in the same order, failed rows and linked artifacts among them."""
    env = {"RBLN_STUDIO_REMOTE_PYTHON": str(hidden.python)}
    target = url(hidden.there(str(fleet.root)))
    one = remote_cli("scan", target, "--json", "--jobs", "1", env=env)
    two = remote_cli("scan", target, "--json", "--jobs", "2", env=env)
    assert two.returncode == one.returncode, two.stderr
    assert two.stdout == one.stdout
    assert len(json.loads(two.stdout)) == len(fleet.layouts)
