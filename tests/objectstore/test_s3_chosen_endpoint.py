"""The endpoint and profile chosen in Open Bucket reach the store, in this process and in the children it starts,
without being written into the environment (setenv while Qt's threads start crashed the app)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.gui.models.folder_scan import Finished, Logged, ScanProcess, ScanRequest
from rbln_artifact_studio.objectstore.client import ENV_TIMEOUT, Unreachable, endpoint, environment, use
from rbln_artifact_studio.objectstore.store import Bucket

PROFILE = "studio"

# A scan process that lists the bucket named in argv through the objectstore layer, as a scan of a bucket would.
_READS_THE_BUCKET = """
import sys
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.objectstore.store import Bucket

def scan_folders(request, send, cancel, processes=1):
    name = sys.argv[1]
    keys = [o.key for o in Bucket(name).listing(BucketPrefix(name, ""))]
    send(folder_scan.Logged(" ".join(keys)))
    return len(keys)

folder_scan.scan_folders = scan_folders
sys.exit(folder_scan.main())
"""


def only_the_choice_reaches(bucket: BucketFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint and no key in the environment; the keys in a profile of ~/.aws that names no endpoint: the store
    is reached only through the endpoint and profile chosen in the dialog. One object in the bucket."""
    store = bucket.store
    (tmp_path / "aws-config").write_text(f"[profile {PROFILE}]\nregion = us-east-1\n")
    (tmp_path / "aws-credentials").write_text(
        f"[{PROFILE}]\naws_access_key_id = {store.access_key}\naws_secret_access_key = {store.secret_key}\n"
    )
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    bucket.client.put_object(Bucket=bucket.name, Key="fleet/probe", Body=b"x")


def test_the_chosen_endpoint_and_profile_are_read_through_and_the_environment_is_left_alone(
    bucket: BucketFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_the_choice_reaches(bucket, tmp_path, monkeypatch)
    before = dict(os.environ)
    use(bucket.store.endpoint, PROFILE)
    assert dict(os.environ) == before
    assert endpoint().url == bucket.store.endpoint
    reader = Bucket(bucket.name)
    assert [o.key for o in reader.listing(BucketPrefix(bucket.name, "fleet"))] == ["fleet/probe"]  # obstore
    probe = reader.head("fleet/probe")  # boto3
    assert probe is not None and probe.size == 1


def test_a_scan_process_reaches_the_chosen_endpoint_the_window_never_exported(
    bucket: BucketFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_the_choice_reaches(bucket, tmp_path, monkeypatch)
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, "-c", _READS_THE_BUCKET, bucket.name])
    use(bucket.store.endpoint, PROFILE)
    assert "AWS_ENDPOINT_URL" not in os.environ and "AWS_PROFILE" not in os.environ
    process = ScanProcess(ScanRequest(str(tmp_path), [str(tmp_path)]))
    messages = list(process.messages(CancelToken()))
    assert Logged("fleet/probe") in messages and messages[-1] == Finished(1)


def test_empty_choices_return_to_the_chains_own_endpoint_and_profile(bucket: BucketFixture) -> None:
    use("http://127.0.0.1:9", "")
    assert endpoint().url == "http://127.0.0.1:9"  # the choice wins over AWS_ENDPOINT_URL
    use("", "no-such-profile")
    with pytest.raises(StudioError, match=r"no-such-profile.*Open Bucket"):
        endpoint()
    use("", "")
    assert os.environ["AWS_ENDPOINT_URL"] == bucket.store.endpoint
    assert endpoint().url == bucket.store.endpoint
    assert Bucket(bucket.name).listing(BucketPrefix(bucket.name, "")) == []


# Lists a bucket through the objectstore layer and prints the error, as a scan process that cannot reach it would.
_SAYS_WHY = """
import sys
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.objectstore.store import Bucket

try:
    Bucket(sys.argv[1]).listing(BucketPrefix(sys.argv[1], ""))
except StudioError as exc:
    print(exc)
"""


def test_an_endpoint_typed_in_open_bucket_that_does_not_answer_is_blamed_on_the_field(
    bucket: BucketFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_TIMEOUT, "2")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens here once the socket is closed
    use(dead, "")
    with pytest.raises(Unreachable) as err:
        Bucket(bucket.name).listing(BucketPrefix(bucket.name, ""))
    assert f"at {dead}" in str(err.value) and "the Endpoint field of Open Bucket names it" in str(err.value)
    assert "AWS_ENDPOINT_URL" not in str(err.value)  # the user never set it to this

    child = subprocess.run(  # a scan process the window starts: same wording
        [sys.executable, "-c", _SAYS_WHY, bucket.name], env=environment(), capture_output=True, text=True, timeout=120
    )
    assert "the Endpoint field of Open Bucket names it" in child.stdout, child.stderr

    use("", "")  # the chain's own endpoint: the variable is what to check
    monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
    with pytest.raises(Unreachable, match=r"that AWS_ENDPOINT_URL \(or endpoint_url in ~/.aws/config\) names it"):
        Bucket(bucket.name).listing(BucketPrefix(bucket.name, ""))
    child = subprocess.run(
        [sys.executable, "-c", _SAYS_WHY, bucket.name], env=environment(), capture_output=True, text=True, timeout=120
    )
    assert "that AWS_ENDPOINT_URL (or endpoint_url" in child.stdout, child.stderr
