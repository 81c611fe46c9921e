"""The endpoint and profile chosen in Open Bucket reach the store through the bucket's location, in this process and
in the children it starts (handed the location), without being written into the environment (setenv while Qt's
threads start crashed the app)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from objectstore.conftest import BucketFixture
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix, parse_bucket_prefix
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.gui.models.folder_scan import Finished, Logged, ScanProcess, ScanRequest
from rbln_artifact_studio.objectstore.client import ENV_TIMEOUT, Unreachable, endpoint
from rbln_artifact_studio.objectstore.store import Bucket

PROFILE = "studio"

# A scan process that lists the bucket location it is handed (its root) through the objectstore layer, as a scan of
# a bucket would.
_READS_THE_BUCKET = """
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.gui.models import folder_scan
from rbln_artifact_studio.objectstore.store import Bucket
import sys

def scan_folders(request, send, cancel, processes=1):
    where = parse_location(request.root)
    keys = [o.key for o in Bucket(where).listing(where)]
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
    where = BucketPrefix(bucket.name, "fleet", PROFILE, bucket.store.endpoint)
    reader = Bucket(where)
    assert dict(os.environ) == before
    assert endpoint(PROFILE, bucket.store.endpoint).url == reader.ep.url == bucket.store.endpoint
    assert [o.key for o in reader.listing(where)] == ["fleet/probe"]  # obstore
    probe = reader.head("fleet/probe")  # boto3
    assert probe is not None and probe.size == 1


def test_a_scan_process_reaches_the_chosen_endpoint_the_window_never_exported(
    bucket: BucketFixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    only_the_choice_reaches(bucket, tmp_path, monkeypatch)
    monkeypatch.setattr(folder_scan, "command", lambda: [sys.executable, "-c", _READS_THE_BUCKET])
    where = BucketPrefix(bucket.name, "", PROFILE, bucket.store.endpoint).url  # its store in it, nowhere else
    assert "AWS_ENDPOINT_URL" not in os.environ and "AWS_PROFILE" not in os.environ
    process = ScanProcess(ScanRequest(where, [where]))
    messages = list(process.messages(CancelToken()))
    assert Logged("fleet/probe") in messages and messages[-1] == Finished(1)


def test_a_store_is_the_locations_and_no_store_is_the_chains_own(bucket: BucketFixture) -> None:
    other = parse_bucket_prefix(f"s3+http://127.0.0.1:9/{bucket.name}")
    assert Bucket(other).ep.url == "http://127.0.0.1:9"  # the location's endpoint wins over AWS_ENDPOINT_URL
    with pytest.raises(StudioError, match=r"no profile 'no-such-profile' in ~/.aws/config.*Open Bucket"):
        Bucket(parse_bucket_prefix(f"s3://no-such-profile@{bucket.name}"))
    assert os.environ["AWS_ENDPOINT_URL"] == bucket.store.endpoint
    assert endpoint().url == bucket.store.endpoint  # nothing above changed the chain's own store
    assert Bucket(bucket.name).listing(BucketPrefix(bucket.name, "")) == []


# Lists the bucket location in argv through the objectstore layer and prints the error, as a scan process that
# cannot reach it would.
_SAYS_WHY = """
import sys
from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import parse_location
from rbln_artifact_studio.objectstore.store import Bucket

try:
    where = parse_location(sys.argv[1])
    Bucket(where).listing(where)
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
    where = BucketPrefix(bucket.name, "", "", dead)  # as Open Bucket's Endpoint field gives it
    with pytest.raises(Unreachable) as err:
        Bucket(where).listing(where)
    field = "the Endpoint field of Open Bucket (the HOST of s3+http://HOST/BUCKET) names it"
    assert f"at {dead}" in str(err.value) and field in str(err.value)
    assert "AWS_ENDPOINT_URL" not in str(err.value)  # the user never set it to this

    child = subprocess.run(  # a scan process the window starts, handed the location: same wording
        [sys.executable, "-c", _SAYS_WHY, where.url], capture_output=True, text=True, timeout=120
    )
    assert field in child.stdout, child.stderr

    chain = BucketPrefix(bucket.name, "")  # the chain's own endpoint: the variable is what to check
    monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
    with pytest.raises(Unreachable, match=r"that AWS_ENDPOINT_URL \(or endpoint_url in ~/.aws/config\) names it"):
        Bucket(chain).listing(chain)
    child = subprocess.run([sys.executable, "-c", _SAYS_WHY, chain.url], capture_output=True, text=True, timeout=120)
    assert "that AWS_ENDPOINT_URL (or endpoint_url" in child.stdout, child.stderr
