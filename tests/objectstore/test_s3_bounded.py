"""Every request to a store is bounded as a whole: an endpoint that trickles its answer, one that never answers, and
one that cuts its answers short each end the command with an error that says what happened, in as many tries as it
says (RBLN_STUDIO_S3_TIMEOUT set short here, so each try ends within a second)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from objectstore.liars import cut_short, silent, trickling
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.objectstore.client import ATTEMPTS
from rbln_artifact_studio.objectstore.store import Bucket, Obj

Run = Callable[..., subprocess.CompletedProcess[str]]
SHORT = {"RBLN_STUDIO_S3_TIMEOUT": "1"}
GUARD = 90  # the test's own bound (the command's is a few seconds): on a hang the test fails, it does not wait


@pytest.fixture
def chain(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[str], None]:
    """Point the AWS chain of this process (and of the CLIs it starts) at an endpoint, with keys and no ~/.aws."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "STUDIOTESTKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "studio-test-secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "aws-credentials"))
    monkeypatch.setenv("RBLN_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    pytest.importorskip("obstore")

    def point(endpoint: str) -> None:
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)

    return point


def test_a_trickling_store_ends_the_scan(chain: Callable[[str], None], run_cli: Run) -> None:
    """200, Content-Length: 100000000, then a byte every half second: the listing gives up, and so does the scan."""
    with trickling(0.5) as liar:
        chain(liar.endpoint)
        scanned = run_cli("scan", "s3://fleet", env=SHORT, timeout=GUARD)
    assert scanned.returncode == 1, scanned.stderr
    assert "did not finish answering within 1 s" in scanned.stderr
    assert f"{ATTEMPTS} tries" in scanned.stderr and "RBLN_STUDIO_S3_TIMEOUT" in scanned.stderr
    assert liar.connections == ATTEMPTS  # no second client asking again behind the first
    assert "Traceback" not in scanned.stderr


def test_a_silent_port_gets_the_tries_the_message_names(chain: Callable[[str], None], run_cli: Run) -> None:
    """A port that accepts and never answers: exactly ATTEMPTS connections, and the message says so."""
    with silent() as liar:
        chain(liar.endpoint)
        got = run_cli("get-kvcache-num-blocks", "s3://fleet/qwen", env=SHORT, timeout=GUARD)
    assert got.returncode == 1, got.stderr
    assert got.stderr.startswith(f"error: Cannot reach the object store at {liar.endpoint} for s3://fleet/qwen")
    assert f"{ATTEMPTS} tries" in got.stderr
    assert liar.connections == ATTEMPTS


def test_a_download_cut_short_names_the_object_not_the_credentials(
    chain: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A store that announces a graph's bytes and drops the connection after ten: the error says the answer was cut
    short and names the object; it does not send the user to check keys."""
    monkeypatch.setenv("RBLN_STUDIO_S3_TIMEOUT", "5")
    with cut_short(size=1_000_000, sent=10) as liar:
        chain(liar.endpoint)
        with pytest.raises(StudioError) as err:
            Bucket("fleet").download(Obj("qwen/prefill.rbln", 1_000_000, '"e"'), tmp_path / "prefill.rbln")
    message = str(err.value)
    assert "s3://fleet/qwen/prefill.rbln" in message and "cut its answer" in message and "short" in message
    assert "credentials" not in message and "AWS_SECRET_ACCESS_KEY" not in message
