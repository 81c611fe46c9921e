"""One writer per output prefix: the incomplete marker object as a claim that names its owner.

A copy or compile into a prefix creates `.rbln-studio-incomplete` there with If-None-Match before it writes anything
else; the marker holds its owner (host, process, the process's start, a random token), when it started and what it
is (a compile, a resize to a copy). A second writer's create fails, and it is refused naming the first, unless that
owner is provably gone: a process of this host that no longer runs (or a claim of this very process that ended),
whose marker is then taken over with If-Match of the ETag read, so of two writers finding one dead owner only one
clears what it left. A marker of another host is never taken for dead. A writer's own clean-up deletes only the keys
it wrote, and only while the marker still holds its token.

A store that ignores If-None-Match lets a create replace another's marker: every claim is read back after it is
written, so of two writers the one whose marker was replaced stops before writing; two that start within the same
instant (between one's listing and its marker) can still both write there, which such a store cannot prevent.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass

from rbln_artifact_studio.core.errors import NOTHING_CHANGED, StudioError
from rbln_artifact_studio.core.location import BucketPrefix
from rbln_artifact_studio.core.portable.staging import pid_alive
from rbln_artifact_studio.core.progress import Progress
from rbln_artifact_studio.core.storage.fsutil import INCOMPLETE_MARKER
from rbln_artifact_studio.objectstore.client import ConditionFailed, Unreachable, Vanished
from rbln_artifact_studio.objectstore.store import Bucket

_live: set[str] = set()  # the tokens of the claims this process holds now
_live_lock = threading.Lock()
_TRIES = 4  # a marker that vanished or was taken over between our reads: look again


def _started(pid: int) -> str:
    """When the process started (clock ticks since boot, /proc), "" where that cannot be read: a pid reused by a
    new process is then told apart from the writer that had it."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError, ValueError):
        return ""


@dataclass(frozen=True)
class Owner:
    """Who holds an output prefix: read from its marker object."""

    host: str
    pid: int
    token: str
    since: float
    what: str
    started: str = ""

    @classmethod
    def this(cls, what: str, token: str) -> Owner:
        return cls(socket.gethostname(), os.getpid(), token, time.time(), what, _started(os.getpid()))

    @classmethod
    def parse(cls, data: bytes) -> Owner | None:
        """The owner a marker names; None for one that names none (an earlier version's, or unreadable)."""
        try:
            raw = json.loads(data)
            return cls(
                str(raw["host"]),
                int(raw["pid"]),
                str(raw["token"]),
                float(raw.get("since", 0)),
                str(raw.get("what") or "write"),
                str(raw.get("started", "")),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    def encode(self, **more: object) -> bytes:
        return json.dumps(
            {"host": self.host, "pid": self.pid, "token": self.token, "since": self.since, "what": self.what}
            | {"started": self.started, **more}
        ).encode()

    def here(self) -> bool:
        return self.host == socket.gethostname()

    def gone(self) -> bool:
        """Provably gone: a process of this host that no longer runs (or runs as a new process under its pid), or a
        claim of this process that has ended. Another host's writer is never taken for gone."""
        if not self.here():
            return False
        if self.pid == os.getpid():
            with _live_lock:
                return self.token not in _live
        if not pid_alive(self.pid):
            return True
        return bool(self.started) and _started(self.pid) not in ("", self.started)

    def describe(self) -> str:
        """ "a compile (process 12 on npu-7, since 2026-12-07 13:02:11)"."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"a {self.what} (process {self.pid} on {self.host}, since {since})"


def read_owner(bucket: Bucket, prefix: BucketPrefix) -> tuple[Owner | None, str] | None:
    """The owner the prefix's marker names (None when it names none) and the marker's ETag; None when there is no
    marker."""
    key = prefix.key_prefix + INCOMPLETE_MARKER
    head = bucket.head(key)
    if head is None:
        return None
    try:
        data = bucket.read(key, if_match=head.etag)
    except Vanished:
        return None
    except ConditionFailed:  # replaced between the two reads: the caller looks again
        return read_owner(bucket, prefix)
    return Owner.parse(data), head.etag


def held_by(prefix: BucketPrefix, owner: Owner) -> str:
    """The refusal of a write into a prefix a live (or, on another host, possibly live) writer holds."""
    marker = prefix.at(INCOMPLETE_MARKER).url
    if owner.here():
        return (
            f"{prefix} is being written by {owner.describe()}. Try again when it is done, or choose another prefix. "
            f"{NOTHING_CHANGED}"
        )
    return (
        f"{prefix} is being written by {owner.describe()}, or was left incomplete by it if that run stopped. If "
        f"that run is gone, delete everything below {prefix} (its marker is {marker}) and try again. {NOTHING_CHANGED}"
    )


def describe_incomplete(prefix: BucketPrefix, found: tuple[Owner | None, str] | None) -> str:
    """Why the prefix is no artifact, from what its marker says."""
    owner = found[0] if found else None
    removed = (
        "run it again, which removes what it left and the multipart uploads it began first, or delete the prefix "
        "(and abort its uploads: aws s3api list-multipart-uploads lists them)."
    )
    if owner is None:
        return f"{prefix} is an incomplete copy (a write into it stopped before it finished): {removed}"
    if owner.gone():
        return f"{prefix} is incomplete: {owner.describe()} stopped before it finished; {removed}"
    if owner.here():
        return f"{prefix} is being written by {owner.describe()}; it is incomplete until that run finishes."
    return (
        f"{prefix} is incomplete: being written by {owner.describe()}, or left by it if that run stopped; when it "
        f"is gone, {removed}"
    )


class Claim:
    """This run's hold on an output prefix: its marker object, and the keys it wrote there."""

    def __init__(self, bucket: Bucket, output: BucketPrefix, what: str, **facts: object) -> None:
        self.bucket, self.output = bucket, output
        self.marker = output.key_prefix + INCOMPLETE_MARKER
        self.owner = Owner.this(what, os.urandom(16).hex())
        self.body = self.owner.encode(**facts)
        self.written: set[str] = set()

    def take(self, progress: Progress) -> None:
        """Create the marker (If-None-Match), or take over a gone owner's (If-Match) and clear what it left; refused
        naming a live owner, or when anything but a marker is below the prefix. Nothing else is written before."""
        with _live_lock:
            _live.add(self.owner.token)  # before the create: this process's own check must see the claim as live
        try:
            self._take(progress)
        except BaseException:
            self.end()
            raise

    def _take(self, progress: Progress) -> None:
        for _ in range(_TRIES):
            try:
                self.bucket.put(self.marker, self.body, create=True)
            except ConditionFailed:
                found = read_owner(self.bucket, self.output)
                if found is None:
                    continue  # its writer finished (or gave up) meanwhile: the listing below says which
                owner, etag = found
                if owner is not None and not owner.gone():
                    raise StudioError(held_by(self.output, owner)) from None
                try:
                    self.bucket.put(self.marker, self.body, if_match=etag)
                except ConditionFailed:
                    continue  # another writer took it over first: read again
                self._clear(owner, progress)
            self._confirm()
            return
        raise StudioError(f"{self.output} is contended by other writers. Try again", unchanged=True)

    def _clear(self, owner: Owner | None, progress: Progress) -> None:
        """What a gone owner left below the prefix: its unfinished multipart uploads, then its objects."""
        who = owner.describe() if owner is not None else "a run that stopped"
        progress.say(f"{self.output} holds what {who} left unfinished; removing it first")
        try:
            stale = {key for key, _ in self.bucket.uploads(self.output)}
        except Unreachable:
            raise
        except StudioError:
            stale = set()  # a store or identity without ListMultipartUploads: nothing this run can abort
        aborted = self.bucket.abort_uploads(self.output, stale) if stale else 0
        if aborted:
            progress.say(f"{self.output}: aborted {aborted} unfinished upload(s) it left")
        self.bucket.delete([o.key for o in self.bucket.listing(self.output) if o.key != self.marker])

    def _confirm(self) -> None:
        """The marker read back holds this claim (a store ignoring If-None-Match may have let another replace it),
        and nothing but the marker is below the prefix (an artifact finished between the caller's listing and the
        create)."""
        found = read_owner(self.bucket, self.output)
        owner = found[0] if found else None
        if owner is None or owner.token != self.owner.token:
            if owner is not None:
                raise StudioError(held_by(self.output, owner))
            raise StudioError(f"{self.output} is contended by other writers. Try again", unchanged=True)
        if any(o.key != self.marker for o in self.bucket.listing(self.output)):
            self.release()
            raise StudioError(f"The output {self.output} is not empty; choose a new prefix", unchanged=True)

    def ours(self) -> bool:
        """The marker still holds this claim's token."""
        found = read_owner(self.bucket, self.output)
        return found is not None and found[0] is not None and found[0].token == self.owner.token

    def release(self) -> bool:
        """Remove the marker (the prefix is then whole, or empty), only while it is this claim's; whether it was."""
        try:
            if not self.ours():
                return False
            self.bucket.delete([self.marker])
            return True
        finally:
            self.end()

    def end(self) -> None:
        """This process no longer holds the claim (its marker, if left, is then taken for a gone writer's)."""
        with _live_lock:
            _live.discard(self.owner.token)
