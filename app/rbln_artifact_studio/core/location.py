"""Where an artifact lives: a local folder, a folder on an SSH server, a prefix in an object store, or a folder at a
URL of a kind of place registered by its own module; parsed once.

This module and core/schemes.py (the schemes themselves, and is_local for the fast CLI path) are the ones that know
the URL schemes. Everything else takes a Location (or text it parses here), asks its kind through isinstance, and
prints it with str(). A new kind of place is one module (its UrlFolder subclass and its Kind, places/kind.py) plus
its registration: register_scheme here, or an entry point in the
`rbln_artifact_studio.places` group (name: the scheme; value: the module, which defines LOCATION and KIND).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeAlias, TypeVar

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.schemes import S3_ENDPOINT_SCHEMES, S3_SCHEME, SSH_SCHEME, URL
from rbln_artifact_studio.core.schemes import is_local as is_local  # its users ask it here, beside parse_location

if TYPE_CHECKING:
    from pathlib import Path

LOCAL = "local"
"""What the Host column shows for a row on this computer."""

# NamedTuples rather than dataclasses: `get-kvcache-num-blocks` parses its argument here, and dataclasses costs that
# fast path a fifth of its time (see core/errors.py).


class _OwnKind(tuple[Any, ...]):
    """A tuple that compares equal only to one of its own kind (a server's folder is never a bucket's prefix)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self))


# S3's bucket rules (3-63 characters of lowercase letters, digits, dots and hyphens, starting and ending with a letter
# or digit), with underscores too: MinIO, Ceph and SeaweedFS accept them in path-style requests.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]")


def _path(text: str) -> Path:
    """text as a Path: pathlib loads with the first folder here named."""
    # A place's text is parsed before any path is made: the CLI's parser and `get-kvcache-num-blocks -- DIR` (which
    # reads with os alone) load this module, not pathlib.
    # deferred: pathlib (~9 ms), off the CLI's parser path
    from pathlib import Path

    return Path(text)


class _LocalFolderFields(NamedTuple):  # LocalFolder's fields (a NamedTuple takes no second base)
    path: Path


class LocalFolder(_OwnKind, _LocalFolderFields):
    """A folder on this computer."""

    @property
    def name(self) -> str:
        return self.path.name

    def child(self, name: str) -> LocalFolder:
        return LocalFolder(self.path / name)

    def at(self, path: str) -> LocalFolder:
        """Another folder on this computer."""
        return LocalFolder(_path(path))

    @property
    def parent(self) -> LocalFolder:
        return LocalFolder(self.path.parent)

    def __str__(self) -> str:
        return str(self.path)


class _ServerFolderFields(NamedTuple):  # ServerFolder's fields (a NamedTuple takes no second base)
    host: str
    path: str


class ServerFolder(_OwnKind, _ServerFolderFields):
    """A folder on an SSH server: `host` is an ssh_config alias or user@host[:port]; `path` is literal.

    The path is taken byte for byte (no percent-decoding): `ssh://gpu1/srv/my models` names "/srv/my models".
    A path starting with `~/` is relative to the login folder on the server.
    """

    @property
    def url(self) -> str:
        path = self.path if self.path.startswith("/") else "/" + self.path
        return f"{SSH_SCHEME}{self.host}{path}"

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] or self.path

    def child(self, name: str) -> ServerFolder:
        return ServerFolder(self.host, self.path.rstrip("/") + "/" + name)

    def at(self, path: str) -> ServerFolder:
        """Another path on the same server."""
        return ServerFolder(self.host, path)

    @property
    def parent(self) -> ServerFolder:
        head = self.path.rstrip("/").rsplit("/", 1)[0]
        return ServerFolder(self.host, head or "/")

    def __str__(self) -> str:
        return self.url


class _BucketPrefixFields(NamedTuple):  # BucketPrefix's fields (a NamedTuple takes no second base)
    bucket: str
    prefix: str
    profile: str = ""  # a profile of ~/.aws/config naming the store ('' : the AWS chain's own, as AWS_PROFILE says)
    endpoint: str = ""  # the store's URL given with the bucket (Open Bucket's Endpoint field); wins over the profile's


class BucketPrefix(_OwnKind, _BucketPrefixFields):
    """A key prefix in an S3-compatible bucket of one store: `prefix` has no leading or trailing slash ('' is the
    whole bucket). The store is part of the place (two stores' same bucket are two places): `s3://BUCKET/PREFIX`
    is reached through the AWS chain (environment, ~/.aws), `s3://PROFILE@BUCKET/PREFIX` through that profile of
    ~/.aws/config (its endpoint_url, region and keys), and `s3+http://[PROFILE@]HOST:PORT/BUCKET/PREFIX` (or
    s3+https) through the endpoint given with it, as Open Bucket's Endpoint field gives one.
    """

    @property
    def url(self) -> str:
        user = f"{self.profile}@" if self.profile else ""
        if self.endpoint:
            scheme, _, host = self.endpoint.partition("://")
            head = f"s3+{scheme}://{user}{host}/{self.bucket}"
        else:
            head = f"{S3_SCHEME}{user}{self.bucket}"
        return f"{head}/{self.prefix}" if self.prefix else head

    @property
    def name(self) -> str:
        return self.prefix.rsplit("/", 1)[-1] if self.prefix else self.bucket

    @property
    def key_prefix(self) -> str:
        """The prefix as keys below it start: 'fleet/a/' ('' for the whole bucket)."""
        return self.prefix + "/" if self.prefix else ""

    @property
    def store(self) -> tuple[str, str]:
        """Which store: its profile and endpoint URL as given with the bucket ('' each: the AWS chain's own)."""
        return self.profile, self.endpoint

    def child(self, name: str) -> BucketPrefix:
        return self._replace(prefix=f"{self.key_prefix}{name}")

    def at(self, path: str) -> BucketPrefix:
        """Another prefix in the same bucket of the same store ("a/b", with or without slashes around it)."""
        return self._replace(prefix=path.strip("/"))

    @property
    def parent(self) -> BucketPrefix:
        return self._replace(prefix=self.prefix.rsplit("/", 1)[0] if "/" in self.prefix else "")

    def __str__(self) -> str:
        return self.url


class _UrlFolderFields(NamedTuple):  # UrlFolder's fields (a NamedTuple takes no second base)
    host: str
    path: str


class UrlFolder(_OwnKind, _UrlFolderFields):
    """A folder at `SCHEME://HOST/PATH`, for a kind of place registered by its own module: each such kind subclasses
    this with its `scheme` and the `kind_module` whose KIND serves it (places/dispatch.py). `path` starts with /."""

    scheme: ClassVar[str] = ""
    kind_module: ClassVar[str] = ""

    @classmethod
    def parse(cls, text: str) -> UrlFolder:
        """`SCHEME://HOST/PATH` as this kind's Location; StudioError with an example when it is malformed."""
        rest = text[len(cls.scheme) + 3 :]
        host, _, path = rest.partition("/")
        if not host or any(c.isspace() for c in host):
            raise StudioError(f"{text} names no host; write {cls.scheme}://HOST/PATH.")
        parts = [part for part in path.split("/") if part]
        if any(part in (".", "..") for part in parts):
            raise StudioError(f"{text}: a path of . or .. names no folder there; write the folder's own path.")
        return cls(host, "/" + "/".join(parts))

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}{self.path if self.path != '/' else ''}"

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1] or self.host

    def child(self, name: str) -> UrlFolder:
        return type(self)(self.host, self.path.rstrip("/") + "/" + name)

    def at(self, path: str) -> UrlFolder:
        """Another folder of the same host."""
        return type(self)(self.host, "/" + path.strip("/"))

    @property
    def parent(self) -> UrlFolder:
        return type(self)(self.host, self.path.rstrip("/").rsplit("/", 1)[0] or "/")

    def __str__(self) -> str:
        return self.url


Location: TypeAlias = LocalFolder | ServerFolder | BucketPrefix | UrlFolder

_SCHEMES: dict[str, type[UrlFolder]] = {}
"""The kinds of place registered beyond the three built in, by scheme."""
ENTRY_POINT_GROUP = "rbln_artifact_studio.places"


def register_scheme(location: type[UrlFolder]) -> None:
    """Make `location.scheme://` URLs parse as that kind of place (its kind_module serves it)."""
    if not location.scheme or not location.kind_module:
        raise ValueError(f"{location.__name__} names no scheme or no kind module")
    _SCHEMES[location.scheme.lower()] = location


def _registered(scheme: str) -> type[UrlFolder] | None:
    """The kind of place registered for scheme, looking at the installed entry points once, when a URL of an
    unknown scheme is first met (a command on local folders never pays for it)."""
    scheme = scheme.lower()
    if scheme not in _SCHEMES:
        # importlib.metadata reads every installed distribution's metadata: every command parses a place here.
        # deferred: importlib.metadata (~15-30 ms), asked only for a URL of a scheme not registered yet
        from importlib import import_module, metadata

        for entry in metadata.entry_points(group=ENTRY_POINT_GROUP, name=scheme):
            location = getattr(import_module(entry.value), "LOCATION", None)
            if isinstance(location, type) and issubclass(location, UrlFolder):
                register_scheme(location)
    return _SCHEMES.get(scheme)


def check_host(host: str) -> str:
    """A host as the user typed it; refuse what ssh would read as an option or what cannot be a host."""
    if not host or host.startswith("-") or any(c.isspace() or c in "/'\"\\" for c in host):
        raise StudioError(
            f"{host!r} is not a server name; give an alias from ~/.ssh/config or user@host[:port], e.g. npu1 or "
            "ops@10.0.0.5:2222."
        )
    return host


def parse_location(text: str | os.PathLike[str] | Location) -> Location:
    """What a user typed (`/path`, `ssh://HOST/PATH`, `s3://BUCKET/PREFIX`) as a Location; StudioError when malformed."""
    if isinstance(text, LocalFolder | ServerFolder | BucketPrefix | UrlFolder):
        return text
    value = os.fspath(text)
    if value.startswith(SSH_SCHEME):
        return parse_server_folder(value)
    if value.startswith(S3_SCHEME) or value.startswith(S3_ENDPOINT_SCHEMES):
        return parse_bucket_prefix(value)
    url = URL.match(value)
    if url is not None:
        location = _registered(url.group(1))
        if location is None:
            raise StudioError(
                f"{value}: no kind of place here reads {url.group(1)}:// URLs. Give a folder on this computer, "
                "ssh://HOST/PATH or s3://[PROFILE@]BUCKET/PREFIX (a folder whose name holds :// is written ./NAME)."
            )
        return location.parse(value)
    return LocalFolder(_path(value))


def parse_server_folder(text: str) -> ServerFolder:
    """`ssh://HOST/PATH` as a ServerFolder; StudioError with an example when it is malformed."""
    if not text.startswith(SSH_SCHEME):
        raise StudioError(f"{text} is not an ssh:// target; write ssh://HOST/PATH, e.g. ssh://npu1/srv/artifacts.")
    rest = text[len(SSH_SCHEME) :]
    if rest.startswith("["):  # [ipv6]:port
        close = rest.find("]")
        slash = rest.find("/", close if close >= 0 else 0)
    else:
        slash = rest.find("/")
    host, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    check_host(host)
    if path.startswith("/~/") or path == "/~":
        path = path[1:]
    if not path:
        raise StudioError(f"{text} names no folder; write ssh://{host}/PATH, e.g. ssh://{host}/srv/artifacts.")
    return ServerFolder(host, path)


def parse_host(text: str) -> str:
    """`ssh://HOST` (a trailing slash or path allowed) or a bare HOST."""
    if text.startswith(SSH_SCHEME):
        text = text[len(SSH_SCHEME) :].split("/", 1)[0]
    return check_host(text)


def machine_name(node: str) -> str:
    """The machine a node's name names, to tell one node seen by two sources: an ssh host without its user and
    port (ops@npu1:2222), a Prometheus node's hostname label (or its target's host, without the port)."""
    name = node.rpartition("@")[2]
    if name.startswith("["):
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    return name.casefold()


def names_a_server(text: str) -> bool:
    """Whether text names a server and no folder on it (`ssh://HOST`, `ssh://HOST/`): a place to run, not an artifact."""
    return text.startswith(SSH_SCHEME) and "/" not in text[len(SSH_SCHEME) :].rstrip("/")


_PROFILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=,-]*")
"""A profile's name as ~/.aws/config's [profile NAME] holds one (no : or @: a location never holds keys)."""
_EXAMPLE = "write s3://BUCKET/PREFIX or s3://PROFILE@BUCKET/PREFIX, e.g. s3://models/fleet"


def parse_bucket_prefix(text: str) -> BucketPrefix:
    """`s3://[PROFILE@]BUCKET[/PREFIX]` or `s3+http(s)://[PROFILE@]HOST[:PORT]/BUCKET[/PREFIX]` as a BucketPrefix;
    StudioError with an example when it is malformed."""
    endpoint = ""
    if text.startswith(S3_ENDPOINT_SCHEMES):
        scheme, _, rest = text[len("s3+") :].partition("://")
        host, _, rest = rest.partition("/")
        store, _, host = host.rpartition("@")
        if not host or any(c.isspace() for c in host):
            raise StudioError(f"{text} names no store; write s3+{scheme}://HOST:PORT/BUCKET/PREFIX.")
        endpoint = f"{scheme}://{host}"
        bucket, _, prefix = rest.partition("/")
    elif text.startswith(S3_SCHEME):
        authority, _, prefix = text[len(S3_SCHEME) :].partition("/")
        store, _, bucket = authority.rpartition("@")
    else:
        raise StudioError(f"{text} is not an s3:// location; {_EXAMPLE}.")
    if "@" in text.partition("://")[2].partition("/")[0] and not _PROFILE.fullmatch(store):
        # Not echoed: text before @ may be keys someone typed (KEY:SECRET@BUCKET).
        raise StudioError(
            "A bucket location names a profile of ~/.aws/config before @ (letters, digits, _ . + = , -), never "
            f"keys; {_EXAMPLE}. Keys belong in ~/.aws/credentials."
        )
    if not bucket:  # s3://PROFILE@ (a profile chosen, the bucket not yet typed): say what goes where
        head = BucketPrefix("BUCKET", "PREFIX", store, endpoint).url
        raise StudioError(
            f"{text} names no bucket; write {head}, e.g. {head.replace('BUCKET/PREFIX', 'models/fleet')}."
        )
    if not _BUCKET.fullmatch(bucket) or ".." in bucket:
        raise StudioError(
            f"{bucket!r} is not a bucket name: 3 to 63 lowercase letters, digits, dots or hyphens; {_EXAMPLE}."
        )
    parts = [part for part in prefix.split("/") if part]
    if any(part in (".", "..") for part in parts):
        raise StudioError(f"{text}: a prefix of . or .. names no folder in a bucket; write the keys' own prefix.")
    return BucketPrefix(bucket, "/".join(parts), store, endpoint)


def bucket_endpoint(text: str) -> str:
    """An endpoint URL as Open Bucket's field takes it (http(s)://HOST[:PORT], a trailing / dropped), '' for none;
    StudioError saying what to write."""
    value = text.strip().rstrip("/")
    scheme, sep, host = value.partition("://")
    if not value:
        return ""
    if not sep or scheme.lower() not in ("http", "https") or not host or "/" in host or "@" in host:
        raise StudioError(
            f"{value!r} is not an endpoint URL: write http(s)://HOST[:PORT], e.g. http://minio.local:9000 (an "
            "endpoint with a path is named by a profile's endpoint_url in ~/.aws/config)."
        )
    if any(c.isspace() for c in host):
        raise StudioError(f"{value!r} is not an endpoint URL: a host holds no spaces.")
    return f"{scheme.lower()}://{host}"


def host_of(text: str | Location) -> str:
    """Where a row lives, for the Host column: the server of ssh://HOST/PATH, a bucket as its location starts (with
    its store: s3://BUCKET, s3://PROFILE@BUCKET, s3+http://HOST:PORT/BUCKET), '' if local. Always the start of the
    location the CLI prints (str()), so the table, the Jobs and the titles use the same words."""
    location = text if not isinstance(text, str) else None
    if location is None:
        assert isinstance(text, str)
        if is_local(text):
            return ""
        try:
            location = parse_location(text)
        except StudioError:
            return ""
    if isinstance(location, ServerFolder):
        return location.host
    if isinstance(location, BucketPrefix):
        return location.at("").url
    if isinstance(location, UrlFolder):
        return f"{location.scheme}://{location.host}"
    return ""


def server_url(host: str) -> str:
    """A server as a user names it to the commands that take one (`jobs`, `devices`, `plan --on`)."""
    return f"{SSH_SCHEME}{host}"


def parse_beside(text: str | os.PathLike[str], source: Location) -> Location:
    """Where a copy of source goes, as typed: a URL of any kind, or a plain path in source's own place (a path on
    the same server, a prefix in the same bucket, a folder here). Beside a bucket, a path that starts with /, ~ or
    ./ is a folder on this computer (the copy downloaded), any other a prefix in the same bucket."""
    value = os.fspath(text)
    if not is_local(value):
        return parse_location(value)
    if isinstance(source, ServerFolder):
        return source.at(value)
    if isinstance(source, UrlFolder):
        return LocalFolder(_path(value).expanduser())  # its own places are written as URLs
    if isinstance(source, BucketPrefix):
        if value.startswith(("/", "~", "./", "../")) or value in (".", ".."):  # a folder here (keys have no /, ~, .)
            return LocalFolder(_path(value).expanduser())
        return parse_bucket_prefix(f"{source.at('').url}/{value}")  # in the source's store
    return LocalFolder(_path(value))


def same_place(a: Location, b: Location) -> bool:
    """Whether two Locations name the same folder (a local one through its links and `..`)."""
    if isinstance(a, LocalFolder) and isinstance(b, LocalFolder):
        return a.path.resolve() == b.path.resolve()
    return a == b


_Where = TypeVar("_Where", LocalFolder, ServerFolder, BucketPrefix, UrlFolder)


def expect(where: object, kind: type[_Where]) -> _Where:
    """where as the kind of Location a module serving only that kind takes (places/dispatch sends it only those;
    AssertionError: a caller's bug)."""
    assert isinstance(where, kind), where
    return where


def on_host(where: object, host: str) -> ServerFolder | None:
    """where as a folder on host's server, None when it is anywhere else (another server, a bucket, here)."""
    return where if isinstance(where, ServerFolder) and where.host == host else None
