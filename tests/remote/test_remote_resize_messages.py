"""A remote resize of a simulator artifact: checked with the tables the server sent, and a failure said once."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbln_artifact_studio.core.storage.lock import ArtifactLock
from remote.conftest import Run, url


@pytest.mark.usefixtures("studio_on_server")
def test_growing_a_simulator_artifact_needs_no_unknown_tables_warning(remote_cli: Run, ca25_artifact: Path) -> None:
    inspected = remote_cli("inspect", url(ca25_artifact))
    assert "DRAM per chiplet" in inspected.stdout  # the breakdown is known through the server
    done = remote_cli("set-kvcache-num-blocks", url(ca25_artifact), "20")
    assert done.returncode == 0, done.stderr
    assert "allocation tables are unknown" not in done.stderr


@pytest.mark.usefixtures("studio_on_server")
def test_a_failed_job_says_its_error_once(remote_cli: Run, ca25_artifact: Path) -> None:
    with ArtifactLock(ca25_artifact, "a test holding it"):  # the job on the server finds it locked
        done = remote_cli("set-kvcache-num-blocks", url(ca25_artifact), "20")
    assert done.returncode == 1
    assert done.stderr.count("a test holding it") == 1, done.stderr
