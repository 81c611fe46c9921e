"""This machine as a server: the studio's programs run as local subprocesses, no connection in between.

A second Transport beside SSH, and the proof that one is a module: tests run the on-server programs through it
without sshd, and a studio running on the NPU host could read its own folders the same way.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

from rbln_artifact_studio.core.location import check_host
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.remote.transport import wrapped


class LocalTransport:
    """Programs run here, under `host` (the name messages and Locations use); nothing to connect or lose."""

    def __init__(
        self, host: str = "localhost", env: Mapping[str, str] | None = None, answer_timeout: float | None = None
    ) -> None:
        self._host = check_host(host)
        self.env = dict(env) if env is not None else None  # the programs' environment; None: this process's
        self.answer_timeout = answer_timeout

    @property
    def host(self) -> str:
        return self._host

    def limit(self, default: float) -> float:
        return self.answer_timeout if self.answer_timeout is not None else default

    def start(self, remote_argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """The program as a child of this process, in a session of its own (its pid is the group it reports)."""
        pipe = subprocess.PIPE
        return subprocess.Popen(
            wrapped(remote_argv), stdin=pipe, stdout=pipe, stderr=pipe, start_new_session=True, env=self.env
        )

    def failed(self, status: int) -> bool:
        return False  # every status is the program's own: there is no connection to fail

    def raise_for_failure(self, stderr: str) -> None:
        raise AssertionError("a local transport has no failure of its own")  # failed() is never true

    def stop_remote(self, group: int | None) -> None:
        if group is None or group <= 1:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)

    def connect(self, cancel: CancelToken | None = None) -> None:
        return None  # nothing to open

    def close(self) -> None:
        return None  # nothing held open
