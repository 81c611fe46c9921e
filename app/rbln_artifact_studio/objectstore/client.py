"""The clients of one endpoint, from the AWS chain, and the errors a user can act on.

botocore resolves credentials, profile, region and endpoint exactly as the AWS CLI does (environment,
~/.aws/credentials, ~/.aws/config profiles, AWS_PROFILE, endpoint_url / AWS_ENDPOINT_URL); boto3 does the writes
(conditional PUTs, CopyObject, UploadPartCopy) and obstore the many small reads, fed with botocore's credentials.
Nothing secret is stored or logged here: errors name the access key's first characters at most.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.errors import StudioError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

EXTRA = "pip install 'rbln-artifact-studio[s3]'"
CONNECT_TIMEOUT = 5  # seconds to reach the endpoint
READ_TIMEOUT = 30  # seconds without a byte on an open request
COPY_TIMEOUT = 300  # a server-side copy sends nothing back until its part is copied (a store may move the bytes)
ATTEMPTS = 3  # tries of one request in all (botocore's standard mode: backoff with jitter)
POOL = 64  # connections kept to the endpoint: the scan's reads in flight
CHECK = (
    "Check AWS_ENDPOINT_URL (or endpoint_url in ~/.aws/config), AWS_PROFILE and the keys in ~/.aws/credentials "
    "or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY."
)


class Unreachable(StudioError):
    """The endpoint did not answer (refused, timed out): every further request would fail the same way."""


class ConditionFailed(StudioError):
    """A conditional write found the object changed (If-Match) or present (If-None-Match)."""


def _require_extra() -> None:
    try:
        import boto3  # noqa: F401
        import obstore  # noqa: F401
    except ImportError:
        raise StudioError(f"Bucket locations need the object-storage extra, which is not installed: {EXTRA}") from None


class Endpoint:
    """The clients of the endpoint the AWS chain names (made on first use; thread-safe)."""

    def __init__(self) -> None:
        _require_extra()
        import boto3
        import botocore.exceptions
        from botocore.config import Config

        try:
            self.session = boto3.Session()
        except botocore.exceptions.ProfileNotFound as exc:
            raise StudioError(f"{exc}. Name a profile of ~/.aws/config in AWS_PROFILE, or unset it.") from None

        def config(path_style: bool, read_timeout: int = READ_TIMEOUT) -> Config:
            return Config(
                connect_timeout=CONNECT_TIMEOUT,
                read_timeout=read_timeout,
                max_pool_connections=POOL,
                retries={"max_attempts": ATTEMPTS, "mode": "standard"},
                s3={"addressing_style": "path"} if path_style else None,
            )

        client = self.session.client("s3", config=config(False))
        self.url: str = client.meta.endpoint_url
        self.region: str = client.meta.region_name or "us-east-1"
        self.custom = "amazonaws.com" not in self.url
        if self.custom:  # MinIO, Ceph, SeaweedFS: buckets are paths, not host names
            client = self.session.client("s3", config=config(True))
        self.s3: S3Client = client
        self.copier: S3Client = self.session.client("s3", config=config(self.custom, COPY_TIMEOUT))
        self._readers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def reader(self, bucket: str) -> Any:
        """obstore's store for the bucket (reads), with this session's credentials and the same bounds."""
        with self._lock:
            store = self._readers.get(bucket)
            if store is None:
                from obstore.auth.boto3 import Boto3CredentialProvider
                from obstore.store import S3Store

                self.credentials()  # a clear error before the first read, not obstore's
                store = S3Store(
                    bucket,
                    endpoint=self.url,
                    region=self.region,
                    virtual_hosted_style_request=not self.custom,
                    credential_provider=Boto3CredentialProvider(self.session),
                    client_options={
                        "allow_http": self.url.startswith("http://"),
                        "connect_timeout": timedelta(seconds=CONNECT_TIMEOUT),
                        "timeout": timedelta(seconds=READ_TIMEOUT),
                        "pool_max_idle_per_host": str(POOL),
                    },
                    retry_config={"max_retries": ATTEMPTS - 1, "retry_timeout": timedelta(seconds=READ_TIMEOUT)},
                )
                self._readers[bucket] = store
            return store

    def credentials(self) -> None:
        """Refuse at once when the chain finds no credentials (rather than an anonymous request refused later)."""
        if self.session.get_credentials() is None:
            raise StudioError(
                "No AWS credentials were found for bucket locations: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "or a profile in ~/.aws/credentials (AWS_PROFILE names which)."
            )

    def explain(self, exc: BaseException, what: str, bucket: str) -> StudioError:
        """The error a user can act on for a failed request about `what` (a bucket location's URL) in bucket."""
        return explain(exc, what, bucket, self.url)


_endpoint_lock = threading.Lock()


_CHAIN_VARIABLES = (
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


@functools.cache
def _endpoint(_digest: str) -> Endpoint:
    return Endpoint()


def endpoint() -> Endpoint:
    """The clients for the current environment: a changed variable of the chain (AWS_PROFILE, AWS_ENDPOINT_URL, the
    keys) makes new ones. Keyed by a digest, so no secret is held beyond the environment itself."""
    values = "\0".join(os.environ.get(name, "\1") for name in _CHAIN_VARIABLES)
    with _endpoint_lock:
        return _endpoint(hashlib.sha256(values.encode()).hexdigest())


def use(endpoint_url: str | None, profile: str | None) -> None:
    """Reach buckets through this endpoint and profile from now on (the desktop's Open Bucket dialog): set in the
    environment, where the chain (and every CLI the app starts) reads them; empty values leave the chain's own."""
    for name, value in (("AWS_ENDPOINT_URL", endpoint_url), ("AWS_PROFILE", profile)):
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)


def _code(exc: BaseException) -> tuple[str, int]:
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return code, status


def explain(exc: BaseException, what: str, bucket: str, url: str) -> StudioError:
    """A botocore or obstore failure as a StudioError naming what to check."""
    if isinstance(exc, StudioError):
        return exc
    import botocore.exceptions as bex

    if isinstance(exc, bex.NoCredentialsError | bex.PartialCredentialsError):
        return StudioError(f"No usable AWS credentials for {what}: {exc}. {CHECK}")
    if isinstance(exc, bex.EndpointConnectionError | bex.ConnectTimeoutError | bex.ReadTimeoutError):
        return Unreachable(
            f"Cannot reach the object store at {url} for {what} (after {ATTEMPTS} tries): {exc}. Check that the "
            "store is running and that AWS_ENDPOINT_URL (or endpoint_url in ~/.aws/config) names it."
        )
    if isinstance(exc, bex.ClientError):
        code, status = _code(exc)
        if code in ("PreconditionFailed", "ConditionalRequestConflict") or status == 412:
            return ConditionFailed(f"{what} was changed by another writer meanwhile; nothing of this run replaced it.")
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken"):
            return StudioError(f"The object store at {url} refused the credentials ({code}) for {what}. {CHECK}")
        if code == "NoSuchBucket" or (code in ("404", "NotFound") and what.rstrip("/").count("/") <= 2):
            return StudioError(
                f"There is no bucket {bucket!r} at {url}. Check the bucket name, and AWS_ENDPOINT_URL / the "
                "profile's endpoint_url (another store may hold it)."
            )
        if code in ("NoSuchKey", "404", "NotFound"):
            return StudioError(f"{what} does not exist (it was removed meanwhile?); scan the bucket again.")
        if code in ("AccessDenied", "403", "AllAccessDisabled"):
            return StudioError(
                f"Access to {what} is denied for these credentials ({code}). Check the identity's permissions on "
                f"bucket {bucket!r} (read: s3:GetObject and s3:ListBucket; a resize also s3:PutObject)."
            )
        return StudioError(f"The object store at {url} refused a request for {what}: {code or status} {exc}.")
    if isinstance(exc, bex.BotoCoreError):
        return StudioError(f"A request to the object store at {url} for {what} failed: {exc}. {CHECK}")
    return _explain_obstore(exc, what, bucket, url)


def _explain_obstore(exc: BaseException, what: str, bucket: str, url: str) -> StudioError:
    import obstore.exceptions as oex

    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if isinstance(exc, oex.PreconditionError | oex.AlreadyExistsError):
        return ConditionFailed(f"{what} was changed by another writer meanwhile; nothing of this run replaced it.")
    if isinstance(exc, oex.NotFoundError):
        return StudioError(f"{what} does not exist (it was removed meanwhile?); scan the bucket again.")
    if isinstance(exc, oex.UnauthenticatedError):
        return StudioError(f"The object store at {url} refused the credentials for {what}. {CHECK}")
    if isinstance(exc, oex.PermissionDeniedError):
        return StudioError(f"Access to {what} is denied for these credentials. Check the identity's permissions.")
    if any(word in str(exc).lower() for word in ("connect", "timed out", "timeout", "error sending request")):
        return Unreachable(
            f"Cannot reach the object store at {url} for {what} (after {ATTEMPTS} tries): {text}. Check that the "
            "store is running and that AWS_ENDPOINT_URL (or endpoint_url in ~/.aws/config) names it."
        )
    if isinstance(exc, oex.BaseError | OSError | TimeoutError):
        return StudioError(f"A request to the object store at {url} for {what} failed: {text}. {CHECK}")
    return StudioError(f"A request to the object store at {url} for {what} failed: {text}.")
