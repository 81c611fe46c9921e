"""A read-only kind of place for tests, written as a third party would: folders served by an HTTP server (a JSON
listing for a folder, Range requests for files). One module plus its registration, and nothing else of the studio
changes: its Location, its FileAccess and an AccessKind."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import ClassVar
from urllib.parse import quote

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.file_access import Entry, FileAccess
from rbln_artifact_studio.core.location import UrlFolder
from rbln_artifact_studio.places.access import AccessKind, read_only

TIMEOUT = 10.0  # every request is bounded: a server that stops answering fails the call, never hangs it


class HttpFolder(UrlFolder):
    """A folder at http://HOST[:PORT]/PATH."""

    scheme: ClassVar[str] = "http"
    kind_module: ClassVar[str] = __name__


class HttpAccess:
    """List, read and read a range over HTTP."""

    def __init__(self, host: str) -> None:
        self.base = f"http://{host}"

    def _get(self, path: str, headers: dict[str, str] | None = None, limit: int | None = None) -> bytes:
        request = urllib.request.Request(self.base + quote(path), headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
                return bytes(answer.read(limit + 1 if limit is not None else -1))
        except urllib.error.HTTPError as exc:
            raise StudioError(f"{self.base}{path}: the server answered {exc.code} {exc.reason}.") from None
        except (urllib.error.URLError, OSError) as exc:
            raise StudioError(f"Cannot reach {self.base}: {getattr(exc, 'reason', exc)}.") from None

    def list(self, path: str) -> list[Entry]:
        data = json.loads(self._get(path.rstrip("/") + "/"))
        return [Entry(e["name"], e["dir"], e["size"]) for e in data]

    def read(self, path: str, limit: int) -> bytes:
        data = self._get(path, limit=limit)
        if len(data) > limit:
            raise StudioError(f"{self.base}{path} is larger than {limit:,} bytes.")
        return data

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        return self._get(path, {"Range": f"bytes={offset}-{offset + length - 1}"})


def _access(where: UrlFolder) -> FileAccess:
    return HttpAccess(where.host)


LOCATION = HttpFolder
KIND = AccessKind(
    read_only("a folder served over HTTP", "an HTTP server serves files and takes no writes."),
    _access,
)
