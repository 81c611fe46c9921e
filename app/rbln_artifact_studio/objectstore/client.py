"""The clients of each store a bucket location names, and the errors a user can act on.

A store is what a location carries (core/location.BucketPrefix): none, and botocore resolves credentials, profile,
region and endpoint exactly as the AWS CLI does (environment, ~/.aws/credentials, ~/.aws/config profiles,
AWS_PROFILE, endpoint_url / AWS_ENDPOINT_URL); a profile, and that profile of ~/.aws/config decides them (its
endpoint_url, region and keys, the environment's aside; without endpoint_url, the chain's endpoint, as
`aws --profile` has it); an endpoint URL given with the bucket wins over both. Nothing about a store is process-wide: two stores are reached at once. boto3 does the writes
(conditional PUTs, CopyObject, UploadPartCopy) and obstore the many small reads, fed with botocore's credentials.
Nothing secret is stored or logged here: errors name the access key's first characters at most.

Every request is bounded as a whole, not only per connect or per read: one try may take RBLN_STUDIO_S3_TIMEOUT
seconds (30 by default) from connecting to the last byte of the answer (a server-side copy ten times that), and a
request gets ATTEMPTS tries. The tries are ours (the libraries' own retries are off), so an error says how many
were made and how long they took: a store that trickles its answer, or a port that accepts and never answers,
ends a request within ATTEMPTS x the limit plus a few seconds of pauses.
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.numbers import seconds_from_environment
from rbln_artifact_studio.core.shown import redacted

if TYPE_CHECKING:
    from botocore.config import Config
    from mypy_boto3_s3 import S3Client

T = TypeVar("T")

EXTRA = "pip install 'rbln-artifact-studio[s3]'"
ENV_TIMEOUT = "RBLN_STUDIO_S3_TIMEOUT"  # seconds one try of a request may take in all (tests, slow links)
TIMEOUT = 30.0  # its default: from connecting to the answer's last byte
CONNECT_TIMEOUT = 5.0  # seconds to reach the endpoint (at most the try's own limit)
COPY_FACTOR = 10  # a server-side copy sends nothing back until its part is copied (a store may move the bytes)
COPY_TIMEOUT = TIMEOUT * COPY_FACTOR  # a server-side copy's default limit (benchmarks give their boto3 the same)
ATTEMPTS = 3  # tries of one request in all, with a pause of PAUSE, then twice that, between them
PAUSE = 0.5
POOL = 64  # connections kept to the endpoint: the scan's reads in flight
CHECK = (
    "Check AWS_ENDPOINT_URL (or endpoint_url in ~/.aws/config), AWS_PROFILE and the keys in ~/.aws/credentials "
    "or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY."
)


class Unreachable(StudioError):
    """The endpoint did not answer (refused, timed out): every further request would fail the same way."""


class ConditionFailed(StudioError):
    """A conditional write found the object changed (If-Match) or present (If-None-Match)."""


class Vanished(StudioError):
    """The object a listing named is gone (removed or replaced meanwhile)."""


class Truncated(StudioError):
    """The store's answer ended before the bytes it announced (a connection dropped mid-answer)."""


class Stopped(StudioError):
    """The work this request was part of stopped (a cancel, another part's failure); nobody waits for it."""


class Overran(TimeoutError):
    """One try of a request did not end within its limit (the store trickles its answer, or never answers)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the store did not finish answering within {seconds:g} s")


def request_timeout() -> float:
    """Seconds one try of a request may take: RBLN_STUDIO_S3_TIMEOUT, or TIMEOUT."""
    return seconds_from_environment(ENV_TIMEOUT, TIMEOUT)


def within(call: Callable[[], T], seconds: float, stop: threading.Event | None = None) -> T:
    """call() run on a daemon thread, waited for at most seconds (Overran after), or until stop is set (Stopped).
    botocore bounds each socket read, not a whole answer: a store sending one byte every few seconds would hold the
    request without end. A try that overran is left to end on its own; nothing waits for it (a daemon thread never
    holds the process open)."""
    box: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append((True, call()))
        except BaseException as exc:  # handed to the waiting thread
            box.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=run, name="s3-request", daemon=True).start()
    deadline = time.monotonic() + seconds
    while not done.wait(seconds if stop is None else min(0.25, max(0.0, deadline - time.monotonic()))):
        if stop is not None and stop.is_set():
            raise Stopped("stopped")
        if time.monotonic() >= deadline:
            raise Overran(seconds)
    ok, value = box[0]
    if not ok:
        raise value
    return value


def sdk() -> ModuleType:
    """The object-storage libraries (objectstore/sdk.py: boto3, botocore, obstore), loaded with the first bucket
    used; StudioError naming the extra to install when they are not there."""
    try:
        # deferred: boto3, botocore and obstore (~0.15 s), an optional extra that only a bucket location uses
        from rbln_artifact_studio.objectstore import sdk as libraries
    except ImportError:
        raise StudioError(f"Bucket locations need the object-storage extra, which is not installed: {EXTRA}") from None
    return libraries


def _no_profile(profile: str, chain: Any) -> StudioError:
    """A profile that ~/.aws/config does not hold, named where the user named it: the location, or AWS_PROFILE."""
    if profile:
        example = BucketPrefix("BUCKET", "PREFIX", "PROFILE")
        return StudioError(
            f"There is no profile {profile!r} in ~/.aws/config (or the file AWS_CONFIG_FILE names): add [profile "
            f"{profile}] there, or name a profile it holds in {example} (in the desktop, Open Bucket's Profile field)."
        )
    return StudioError(
        f"There is no profile {chain.get_config_variable('profile')!r} in ~/.aws/config, which AWS_PROFILE names: "
        "name a profile of ~/.aws/config in AWS_PROFILE, or unset it."
    )


class Endpoint:
    """The clients of one store: the endpoint the AWS chain names, or the profile and endpoint URL a location gives
    (an endpoint URL wins over the profile's endpoint_url); made on first use; thread-safe."""

    def __init__(self, url: str = "", profile: str = "") -> None:
        libraries = sdk()
        botocore = libraries.botocore
        ConfiguredEndpointProvider, ConstantProvider = libraries.ConfiguredEndpointProvider, libraries.ConstantProvider

        self.profile = profile
        chain = botocore.session.Session(profile=profile or None)
        chosen: str | None = url or None  # None: the chain's own (AWS_ENDPOINT_URL[_S3], endpoint_url, AWS S3)
        own: str | None = None  # the profile's endpoint_url
        try:
            if profile:
                # The profile decides, as `aws --profile` has it: its keys (botocore skips the environment's for a
                # profile given), its region and its endpoint_url, over the environment's (that names the chain's
                # store, another one). A profile without endpoint_url falls to the chain's (AWS_ENDPOINT_URL[_S3]),
                # as `aws --profile` does; with neither, AWS S3.
                scoped = chain.get_scoped_config()
                own = ConfiguredEndpointProvider(chain.full_config, scoped, "s3", environ={}).provide()
                chosen = chosen or own or ConfiguredEndpointProvider({}, {}, "s3", environ=os.environ).provide()
                if scoped.get("region"):  # else the chain's (AWS_DEFAULT_REGION), as for any profile
                    region = ConstantProvider(scoped["region"])
                    chain.get_component("config_store").set_config_provider("region", region)
            self.session = libraries.boto3.Session(botocore_session=chain)
        except botocore.exceptions.ProfileNotFound:
            raise _no_profile(profile, chain) from None
        except botocore.exceptions.BotoCoreError as exc:
            raise StudioError(f"The AWS configuration cannot be read: {exc}. {CHECK}") from None
        if url:  # words for a store that does not answer: where the user named its endpoint
            example = BucketPrefix("BUCKET", "", "", "http://HOST")
            self.named_by = f"the Endpoint field of Open Bucket (the HOST of {example})"
        elif own:
            self.named_by = f"endpoint_url of profile {profile} in ~/.aws/config"
        elif profile and chosen:
            self.named_by = f"AWS_ENDPOINT_URL (profile {profile} has no endpoint_url in ~/.aws/config)"
        else:
            self.named_by = CHAIN_NAMES
        # Words for keys a store refused: where this store's keys come from (a profile's own, or the chain's).
        self.check = (
            f"Check aws_access_key_id and aws_secret_access_key under [{profile}] in ~/.aws/credentials (or the "
            f"file AWS_SHARED_CREDENTIALS_FILE names), and that {self.named_by} names the store they belong to."
            if profile
            else CHECK
        )

        self.timeout = request_timeout()
        self.connect_timeout = min(CONNECT_TIMEOUT, self.timeout)

        # A profile given: the endpoint chosen above (its own, or the chain's), not botocore's own pick (not in its stubs).
        settings: dict[str, Any] = {"ignore_configured_endpoint_urls": True} if profile else {}

        def config(path_style: bool, factor: int = 1) -> Config:
            return libraries.Config(
                **settings,
                connect_timeout=self.connect_timeout,
                read_timeout=self.timeout * factor,
                max_pool_connections=POOL,
                retries={"max_attempts": 1, "mode": "standard"},  # the tries are request()'s, counted
                s3={"addressing_style": "path"} if path_style else None,
            )

        try:
            client = self.session.client("s3", endpoint_url=chosen, config=config(False))
        except botocore.exceptions.ProfileNotFound:  # AWS_PROFILE names a profile that is not there
            raise _no_profile(profile, chain) from None
        self.url: str = client.meta.endpoint_url
        self.shown = redacted(self.url)  # what messages name: a password in endpoint_url never reaches a window
        self.region: str = client.meta.region_name or "us-east-1"
        self.custom = "amazonaws.com" not in self.url
        if self.custom:  # MinIO, Ceph, SeaweedFS: buckets are paths, not host names
            client = self.session.client("s3", endpoint_url=chosen, config=config(True))
        self.s3: S3Client = client
        self.copier: S3Client = self.session.client("s3", endpoint_url=chosen, config=config(self.custom, COPY_FACTOR))
        self._readers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def reader(self, bucket: str) -> Any:
        """obstore's store for the bucket (reads), with this session's credentials and the same bounds."""
        with self._lock:
            store = self._readers.get(bucket)
            if store is None:
                libraries = sdk()
                self.credentials()  # a clear error before the first read, not obstore's
                store = libraries.S3Store(
                    bucket,
                    endpoint=self.url,
                    region=self.region,
                    virtual_hosted_style_request=not self.custom,
                    credential_provider=libraries.Boto3CredentialProvider(self.session),
                    client_options={
                        "allow_http": self.url.startswith("http://"),
                        "connect_timeout": timedelta(seconds=self.connect_timeout),
                        "timeout": timedelta(seconds=self.timeout),  # the whole request, its body included
                        "pool_max_idle_per_host": str(POOL),
                    },
                    retry_config={"max_retries": 0, "retry_timeout": timedelta(seconds=self.timeout)},
                )
                self._readers[bucket] = store
            return store

    def credentials(self) -> None:
        """Refuse at once when the chain finds no credentials (rather than an anonymous request refused later)."""
        if self.session.get_credentials() is None:
            if self.profile:
                raise StudioError(
                    f"No AWS credentials were found for profile {self.profile}: add its aws_access_key_id and "
                    f"aws_secret_access_key under [{self.profile}] in ~/.aws/credentials."
                )
            raise StudioError(
                "No AWS credentials were found for bucket locations: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                "or a profile in ~/.aws/credentials (AWS_PROFILE names which)."
            )

    def explain(self, exc: BaseException, what: str, bucket: str, tries: Tries | None = None) -> StudioError:
        """The error a user can act on for a failed request about `what` (a bucket location's URL) in bucket."""
        return explain(exc, what, bucket, self.shown, tries, self.named_by, self.check)

    def request(
        self,
        call: Callable[[], T],
        what: str,
        bucket: str,
        *,
        factor: float = 1,
        threaded: bool = True,
        stop: threading.Event | None = None,
    ) -> T:
        """call() (one request) tried up to ATTEMPTS times while it fails in a way a new try may cure (no answer,
        a server error, throttling); each try bounded by the timeout x factor, on a thread of its own when the
        client bounds only each read (threaded: botocore); obstore bounds the whole request itself."""
        seconds = self.timeout * factor
        started = time.monotonic()
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return within(call, seconds, stop) if threaded else call()
            except Exception as exc:
                if attempt == ATTEMPTS or not transient(exc):
                    raise self.explain(exc, what, bucket, Tries(attempt, time.monotonic() - started, seconds)) from None
            time.sleep(PAUSE * 2 ** (attempt - 1) * random.uniform(0.5, 1.0))  # jitter: many readers, one store
        raise AssertionError("unreachable")


class Tries:
    """How many tries a request had and how long they took, for a message that says so."""

    def __init__(self, count: int, elapsed: float, limit: float) -> None:
        self.count, self.elapsed, self.limit = count, elapsed, limit

    def __str__(self) -> str:
        tries = "1 try" if self.count == 1 else f"{self.count} tries"
        return f"{tries} in {self.elapsed:.0f} s, each limited to {self.limit:g} s by {ENV_TIMEOUT}"


_TRANSIENT_CODES = frozenset({"SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError"})


def transient(exc: BaseException) -> bool:
    """Whether a new try may cure the failure: no answer in time, a refused or reset connection, a 5xx, throttling."""
    if isinstance(exc, Overran | TimeoutError | ConnectionError):
        return True
    if isinstance(exc, StudioError | FileNotFoundError | ValueError | PermissionError):
        return False
    bex = sdk().botocore.exceptions

    if isinstance(exc, bex.EndpointConnectionError | bex.ConnectTimeoutError | bex.ReadTimeoutError):
        return True
    if isinstance(exc, bex.ConnectionError | bex.HTTPClientError) or _cut(exc):
        return True
    if isinstance(exc, bex.ClientError):
        code, status = _code(exc)
        return status >= 500 or code in _TRANSIENT_CODES
    if isinstance(exc, bex.BotoCoreError):
        return False
    return _unanswered(exc) or _cut(exc) or any(f" {n} " in _first_line(exc) for n in ("500", "502", "503", "504"))


def _cut(exc: BaseException) -> bool:
    """An answer that ended before the bytes it announced: botocore's IncompleteRead, obstore's body error (one that
    is not a timeout)."""
    text = f"{type(exc).__name__} {_first_line(exc)}".lower()
    words = ("incompleteread", "incomplete read", "responsestreaming", "body error", "decoding response body")
    return any(w in text for w in words) and not _unanswered(exc)


def _first_line(exc: BaseException) -> str:
    """The first line of an error's text: obstore appends a debug dump whose field names (retry_timeout) would
    read as a timeout."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _unanswered(exc: BaseException) -> bool:
    """An obstore error that means the store did not answer in time or at all (its debug dump names the kind)."""
    text = _first_line(exc).lower()
    dump = str(exc).lower()
    return any(word in text for word in ("connect", "timed out", "timeout", "error sending request")) or any(
        kind in dump for kind in ("kind: timeout", "timedout", "kind: connect")
    )


_endpoint_lock = threading.Lock()

_CHAIN_VARIABLES = (
    "HOME",  # where ~/.aws is
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    ENV_TIMEOUT,
)


@functools.lru_cache(maxsize=64)  # a few stores at once; those of an old environment or ~/.aws go in time
def _endpoint(_digest: str, url: str, profile: str) -> Endpoint:
    return Endpoint(url, profile)


def _aws_files() -> str:
    """When ~/.aws/config and ~/.aws/credentials (or the files the environment names) last changed: keys fixed there
    while the desktop runs, as an error told the user, are read on the next request, not at the next start."""
    stamps = []
    for variable, name in (("AWS_CONFIG_FILE", "config"), ("AWS_SHARED_CREDENTIALS_FILE", "credentials")):
        path = os.path.expanduser(os.environ.get(variable) or os.path.join("~", ".aws", name))
        try:
            info = os.stat(path)
        except OSError:
            stamps.append("-")
            continue
        stamps.append(f"{info.st_mtime_ns}:{info.st_size}:{info.st_ino}")
    return "\0".join(stamps)


def endpoint(profile: str = "", url: str = "") -> Endpoint:
    """The clients of one store (a location's profile and endpoint URL; '' each for the AWS chain's own), made once
    per store, environment and ~/.aws: a changed variable of the chain (AWS_PROFILE, AWS_ENDPOINT_URL, the keys) or
    a changed ~/.aws file makes new ones. Keyed by a digest, so no secret is held beyond the environment itself."""
    values = "\0".join([*(os.environ.get(name, "\1") for name in _CHAIN_VARIABLES), _aws_files()])
    with _endpoint_lock:
        return _endpoint(hashlib.sha256(values.encode()).hexdigest(), url.strip(), profile.strip())


def _code(exc: BaseException) -> tuple[str, int]:
    response = getattr(exc, "response", None) or {}
    code = str(response.get("Error", {}).get("Code", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return code, status


CHAIN_NAMES = "AWS_ENDPOINT_URL (or endpoint_url in ~/.aws/config)"
"""Where the chain's endpoint is named, for a message that says what to check (Endpoint.named_by: a store's own)."""


_NOT_CONNECTED = (
    (("connectionrefused", "connection refused"), "the connection was refused"),
    (
        ("dns error", "failed to lookup address", "name or service not known", "nodename nor servname"),
        "its host name was not found",
    ),
)


def _plain(exc: BaseException, reason: str) -> str:
    """Why a store was not reached, in a few words where the libraries' text says it among their debug dumps (a
    refused connection, an unknown host); else reason."""
    text = f"{exc} {getattr(exc, 'kwargs', {}).get('error', '')}".lower()
    return next((words for marks, words in _NOT_CONNECTED if any(m in text for m in marks)), reason)


def _unreachable(url: str, what: str, reason: str, tries: Tries | None, named_by: str) -> Unreachable:
    spent = f" ({tries})" if tries is not None else ""
    return Unreachable(
        f"Cannot reach the object store at {url} for {what}: {reason}{spent}. Check that the store is running and "
        f"that {named_by} names it; on a slow link raise {ENV_TIMEOUT} (seconds)."
    )


def truncated(url: str, what: str, tries: Tries | None) -> Truncated:
    spent = f" ({tries})" if tries is not None else ""
    return Truncated(
        f"The object store at {url} cut its answer for {what} short{spent}: the connection dropped before the "
        "bytes it announced had come; nothing of that answer was used. Check the store's health and the link, "
        "then try again."
    )


def vanished(what: str) -> Vanished:
    return Vanished(
        f"{what} was listed but is gone now (removed or replaced by another writer while this run read it); scan again."
    )


def explain(
    exc: BaseException,
    what: str,
    bucket: str,
    url: str,
    tries: Tries | None = None,
    named_by: str = CHAIN_NAMES,
    check: str = CHECK,
) -> StudioError:
    """A botocore or obstore failure as a StudioError naming what to check (named_by: where the store's endpoint
    was named; and, for a store that did not answer, how many tries were made in how long)."""
    if isinstance(exc, StudioError):
        return exc
    if isinstance(exc, Overran):
        return _unreachable(url, what, _plain(exc, str(exc)), tries, named_by)
    bex = sdk().botocore.exceptions

    if isinstance(exc, bex.NoCredentialsError | bex.PartialCredentialsError):
        return StudioError(f"No usable AWS credentials for {what}: {exc}. {check}")
    if isinstance(exc, bex.EndpointConnectionError | bex.ConnectTimeoutError | bex.ReadTimeoutError):
        return _unreachable(url, what, _plain(exc, str(exc)), tries, named_by)
    if isinstance(exc, bex.ClientError):
        code, status = _code(exc)
        if code in ("PreconditionFailed", "ConditionalRequestConflict") or status == 412:
            return ConditionFailed(f"{what} was changed by another writer meanwhile; nothing of this run replaced it.")
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken"):
            return StudioError(f"The object store at {url} refused the credentials ({code}) for {what}. {check}")
        if code == "NoSuchBucket" or (code in ("404", "NotFound") and what.rstrip("/").count("/") <= 2):
            return StudioError(
                f"There is no bucket {bucket!r} at {url}. Check the bucket name, and {named_by} "
                "(another store may hold it)."
            )
        if code in ("NoSuchKey", "404", "NotFound"):
            return vanished(what)
        if code in ("AccessDenied", "403", "AllAccessDisabled"):
            return StudioError(
                f"Access to {what} is denied for these credentials ({code}). Check the identity's permissions on "
                f"bucket {bucket!r} (read: s3:GetObject and s3:ListBucket; a resize also s3:PutObject)."
            )
        if status >= 500 or code in _TRANSIENT_CODES:
            return StudioError(
                f"The object store at {url} failed a request for {what}: {code or status}"
                + (f" ({tries})" if tries else "")
                + "; try again later."
            )
        return StudioError(f"The object store at {url} refused a request for {what}: {code or status} {exc}.")
    if _cut(exc):
        return truncated(url, what, tries)
    if isinstance(exc, bex.BotoCoreError):
        if isinstance(exc, bex.ConnectionError | bex.HTTPClientError):
            return _unreachable(url, what, _plain(exc, str(exc)), tries, named_by)
        return StudioError(f"A request to the object store at {url} for {what} failed: {exc}.")
    return _explain_obstore(exc, what, url, tries, named_by, check)


def _explain_obstore(
    exc: BaseException, what: str, url: str, tries: Tries | None, named_by: str, check: str
) -> StudioError:
    oex = sdk().obstore.exceptions
    text = _first_line(exc)
    if isinstance(exc, oex.PreconditionError | oex.AlreadyExistsError):
        return ConditionFailed(f"{what} was changed by another writer meanwhile; nothing of this run replaced it.")
    if isinstance(exc, oex.NotFoundError | FileNotFoundError):  # obstore raises the built-in one for a 404
        return vanished(what)
    if isinstance(exc, oex.UnauthenticatedError):
        return StudioError(f"The object store at {url} refused the credentials for {what}. {check}")
    if isinstance(exc, oex.PermissionDeniedError):
        return StudioError(f"Access to {what} is denied for these credentials. Check the identity's permissions.")
    if isinstance(exc, TimeoutError | ConnectionError) or _unanswered(exc):
        dump = str(exc).lower()
        if tries is not None and ("kind: timeout" in dump or "timedout" in dump):
            text = str(Overran(tries.limit))  # obstore's words for it are a debug dump
        return _unreachable(url, what, _plain(exc, text), tries, named_by)
    return StudioError(f"A request to the object store at {url} for {what} failed: {text}.")
