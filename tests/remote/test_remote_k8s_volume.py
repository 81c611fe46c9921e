"""A Kubernetes volume (the kubelet's atomic writer) on a server: found through its links, a swap told."""

from __future__ import annotations

from pathlib import Path

from k8s_volume import DATA, with_blocks, write_volume

from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.remote.scan import scan_remote
from rbln_artifact_studio.remote.server import Server
from rbln_artifact_studio.remote.transport import SshConnection
from remote.conftest import HOST_ALIAS, SshServer
from remote.pythons import make_python


def test_a_volume_on_a_server_is_scanned_as_here_and_a_swap_told(
    server: SshServer, control_dir: Path, cr13_artifact: Path, tmp_path: Path
) -> None:
    """Over ssh (the server's own walk): the same rows, and a swap while the server walks says which is which."""
    volume = tmp_path / "volume"
    first = write_volume(volume, {n: with_blocks(cr13_artifact, 16, tmp_path / "old" / n) for n in ("a", "b")}).name
    # The next version is written beside it (as the kubelet writes it before the swap); the server's python swaps
    # `..data` to it when its walk reaches the second artifact.
    update = volume / "..2026_12_04_10_00_01.2"
    update.mkdir()
    for n in ("a", "b"):
        with_blocks(cr13_artifact, 17, update / n)
    swap = (
        "_scandir = os.scandir\n"
        "def scandir(path='.'):\n"
        f"    if str(path).endswith('/b') and not os.path.lexists({str(volume / '..data_tmp')!r}):\n"
        f"        os.symlink({update.name!r}, {str(volume / '..data_tmp')!r})\n"
        f"        os.rename({str(volume / '..data_tmp')!r}, {str(volume / DATA)!r})\n"
        "    return _scandir(path)\n"
        "os.scandir = scandir"
    )
    python = make_python(tmp_path, "swapping-python3", swap)
    issues: list[str] = []
    rows = list(
        scan_remote(
            Server(SshConnection(HOST_ALIAS, server.options(control_dir)), str(python)),
            ServerFolder(HOST_ALIAS, str(volume)),
            on_issue=lambda _p, m: issues.append(m),
        )
    )
    assert [(r.name, r.kvcache_num_blocks) for r in rows] == [("a", 16), ("b", 17)]
    assert [r.path for r in rows] == [f"ssh://{HOST_ALIAS}{volume}/a", f"ssh://{HOST_ALIAS}{volume}/b"]
    assert issues == [
        f"{volume} was updated while it was scanned (its ..data moved): rows a from {first}; b from {update.name}; "
        "scan again to see one version."
    ]
