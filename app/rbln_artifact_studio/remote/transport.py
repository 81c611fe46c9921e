"""How the studio reaches a server (the Transport interface), and the user's OpenSSH client as one.

A transport starts a program on the server with pipes and says why it could not; the studio's programs, their
answers and their limits are the same over any. SSH: one shared connection per host, quoted commands, checked
host keys. Every command runs as `ssh -o BatchMode=yes -o StrictHostKeyChecking=yes ... -- HOST 'quoted argv'`, so
~/.ssh/config (aliases, ProxyJump, IdentityFile) and the agent apply, no password is ever asked for, and an
unknown or changed host key stops the connection: `check_host_key` shows its fingerprint and only
`accept_host_key`, called on the user's decision, records it.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shlex
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rbln_artifact_studio.core.app_dirs import control_socket_dir
from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.location import check_host, server_url
from rbln_artifact_studio.core.numbers import seconds_from_environment
from rbln_artifact_studio.core.progress import CancelToken
from rbln_artifact_studio.core.storage.fsutil import atomic_write_bytes

SSH_FAILED = 255  # ssh's own exit status: the connection, not the remote command, failed
POLL = 0.05
ENV_TIMEOUT = "RBLN_STUDIO_SSH_TIMEOUT"  # seconds: replaces every remote call's own limit (tests, slow links)
STOP_TIMEOUT = 10  # seconds for the command that stops, on the server, what a call left running
# sshd starts each command in a session of its own, so the shell's pid is the group of everything the command
# starts. The command says it first on stderr: a call that is given up on stops that group on the server too
# (killing the local ssh does not: the shared connection's master keeps the command and its pipes open).
GROUP_MARK = "rbln-studio-group "
_REPORT_GROUP = f'echo "{GROUP_MARK}$$" >&2; exec "$@"'
_HOST_PORT = re.compile(r"^(?:(?P<user>[^@]+)@)?(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<port>\d{1,5})$")


@dataclass(frozen=True)
class SshOptions:
    """How to run ssh: `config_file` replaces ~/.ssh/config (ssh -F); `control_dir` holds the shared sockets."""

    config_file: Path | None = None
    control_dir: Path | None = None
    connect_timeout: int = 15
    persist_seconds: int = 300  # a shared connection outlives its last command this long
    answer_timeout: float | None = None  # replaces each call's own limit on waiting for the server to say something

    def limit(self, default: float) -> float:
        """The seconds a call waits for the server's next word: its own default unless answer_timeout says."""
        return self.answer_timeout if self.answer_timeout is not None else default


def options_from_environment(config_file: Path | None) -> SshOptions:
    """The options a front end uses, with RBLN_STUDIO_SSH_TIMEOUT when it is set."""
    limit = seconds_from_environment(ENV_TIMEOUT, 0.0)
    return SshOptions(config_file=config_file, answer_timeout=limit or None)


def default_control_dir() -> Path:
    """A private folder for connection sockets: short (sockets have ~100 bytes of path), owned by this user."""
    folder = control_socket_dir()
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.stat()
    if st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise StudioError(
            f"{folder} is not private to you (owner {st.st_uid}, mode {st.st_mode & 0o777:o}); "
            "remove it so the studio can make its own."
        )
    return folder


@dataclass(frozen=True)
class RemoteResult:
    returncode: int
    stdout: bytes
    stderr: str


@dataclass(frozen=True)
class HostKeyCheck:
    """What the server offers against what known_hosts records, for the user to decide on."""

    host: str
    known_as: str  # the name known_hosts records it under, e.g. "[10.0.0.5]:2222"
    known_hosts: Path  # where an accepted key is written
    changed: bool  # known_hosts records another key: the server was reinstalled, or someone is in between
    offered: tuple[str, ...]  # ssh-keyscan lines, recorded as they are when accepted
    fingerprints: tuple[str, ...]  # "256 SHA256:... [10.0.0.5]:2222 (ED25519)"
    trusted: bool = False  # known_hosts already records a key the server offers

    def message(self) -> str:
        prints = "\n".join(f"  {f}" for f in self.fingerprints) or "  (the server offered no key)"
        if self.trusted:
            return (
                f"{self.host} ({self.known_as}) is already trusted: {self.known_hosts} records the key it offers."
                f"\n{prints}"
            )
        if self.changed:
            return (
                f"The host key of {self.host} ({self.known_as}) has CHANGED since it was recorded in "
                f"{self.known_hosts}. This happens when the server is reinstalled, or when someone intercepts the "
                f"connection. The server now offers:\n{prints}\nCompare with the fingerprint your administrator "
                f"publishes; if it matches, remove the old key with: ssh-keygen -R {shlex.quote(self.known_as)}"
                f" -f {shlex.quote(str(self.known_hosts))}"
            )
        return (
            f"{self.host} ({self.known_as}) is not in {self.known_hosts}, so its identity cannot be checked. "
            f"It offers:\n{prints}\nCompare with the fingerprint your administrator publishes before trusting it."
        )


class HostKeyError(StudioError):
    """The connection stopped at the host key check; `check` holds the fingerprints to show."""

    def __init__(self, check: HostKeyCheck) -> None:
        super().__init__(
            check.message(),
            hint=None
            if check.changed
            else f"If it is the right one, trust it with: rbln-studio-cli trust-host {server_url(check.host)} "
            "--fingerprint SHA256:... (or `ssh` to it once in a terminal).",
        )
        self.check = check


@dataclass(frozen=True)
class ResolvedHost:
    """What `ssh -G` says a host means after ~/.ssh/config: where it connects and where its key is checked."""

    hostname: str
    port: int
    known_hosts_files: tuple[Path, ...]
    host_key_alias: str | None
    proxied: bool

    @property
    def known_as(self) -> str:
        name = self.host_key_alias or self.hostname
        return name if self.port == 22 else f"[{name}]:{self.port}"


def kill_local(proc: subprocess.Popen[bytes]) -> None:
    """End the local ssh and close our ends of its pipes, without waiting for their end of file: the shared
    connection's master holds the other ends until the server's command ends."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def remote_group(stderr: str) -> int | None:
    """The server-side process group a command reported (GROUP_MARK), if it got that far."""
    for line in stderr.splitlines()[:20]:  # after whatever the login scripts print
        if line.startswith(GROUP_MARK) and line[len(GROUP_MARK) :].strip().isdigit():
            return int(line[len(GROUP_MARK) :])
    return None


def without_mark(stderr: str) -> str:
    """The command's own error output, without the group it reported."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(GROUP_MARK))


class TimedOutError(StudioError):
    """A server did not answer (or finish) within a limit; what the studio started there was stopped."""

    def __init__(self, host: str, limit: float, longer: str | None = None, what: str = "answer") -> None:
        if longer is None:  # silence: the transport's limit; a whole call: the command's own
            longer = f"{ENV_TIMEOUT}=SECONDS" if what == "answer" else "the command's --timeout SECONDS"
        super().__init__(
            f"{host} did not {what} within {limit:g} s; what the studio started there was stopped.",
            hint=f"Check that the server responds (`ssh {host}` in a terminal); a hung tool or file system there is "
            f"the usual cause. A slow link may need a longer limit: {longer}.",
        )
        self.host = host
        self.limit = limit
        self.what = what

    def with_longer(self, longer: str) -> TimedOutError:
        """The same error naming the setting the caller's user has for a longer limit (a command's --timeout)."""
        return TimedOutError(self.host, self.limit, longer, self.what)


def timed_out(host: str, limit: float, what: str = "answer") -> TimedOutError:
    return TimedOutError(host, limit, what=what)


class Transport(Protocol):
    """One way to reach a server (SSH, or a local process); a second one (`kubectl exec` into a pod, `docker exec`
    into a container) is one module that implements this.

    `start` runs a program there with stdin, stdout and stderr as pipes, the local process in a process group of
    its own, the program behind the GROUP_MARK wrapper (`wrapped`), so a call that is given up on can stop it there
    (`stop_remote`). A status for which `failed` is true is the transport's own (it could not reach the server);
    `raise_for_failure` then raises StudioError (or a subclass, such as HostKeyError) saying why in words the user
    can act on. `run_to_end` runs a program to its end over any transport, within a deadline.
    """

    @property
    def host(self) -> str:
        """The server's name, as messages and Locations name it."""
        ...

    def limit(self, default: float) -> float:
        """The seconds a call waits for the server's next word, given the call's own default."""
        ...

    def start(self, remote_argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """The program running there, with pipes (see the class)."""
        ...

    def failed(self, status: int) -> bool:
        """Whether an exit status is the transport's own failure rather than the program's."""
        ...

    def raise_for_failure(self, stderr: str) -> None:
        """Raise StudioError saying why the transport failed, from what it wrote on stderr."""
        ...

    def stop_remote(self, group: int | None) -> None:
        """Stop there the process group a given-up call reported (best effort, bounded)."""
        ...

    def connect(self, cancel: CancelToken | None = None) -> None:
        """Make sure the server can be reached (raises as raise_for_failure does)."""
        ...

    def close(self) -> None:
        """Let go of what the transport holds open for this server."""
        ...


def wrapped(remote_argv: Sequence[str]) -> list[str]:
    """The argv that runs remote_argv after reporting its process group on stderr (GROUP_MARK)."""
    if not remote_argv:
        raise ValueError("no remote command")
    return ["sh", "-c", _REPORT_GROUP, "sh", *remote_argv]


def run_to_end(
    transport: Transport,
    remote_argv: Sequence[str],
    input: bytes = b"",
    timeout: float | None = None,
    cancel: CancelToken | None = None,
) -> RemoteResult:
    """Run to completion over a transport; raise for its own failures, return the program's status.

    Raises CancelledError on a cancel. With a timeout (which the transport's limit may replace), a command still
    running then is stopped, here and on the server, and StudioError says the host did not answer."""
    limit = None if timeout is None else transport.limit(timeout)
    proc = transport.start(remote_argv)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = None if limit is None else time.monotonic() + limit
    chunks: dict[int, list[bytes]] = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    pending = memoryview(input)
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        while selector.get_map():
            for key, _ in selector.select(POLL):
                if key.fd in chunks:
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
                    continue
                try:
                    pending = pending[os.write(key.fd, pending[:65536]) :]
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    selector.unregister(key.fd)
                    proc.stdin.close()
            stopped = cancel is not None and cancel.cancelled
            if stopped or (deadline is not None and time.monotonic() > deadline):
                transport.stop_remote(remote_group(b"".join(chunks[proc.stderr.fileno()]).decode("utf-8", "replace")))
                kill_local(proc)
                if stopped:
                    raise CancelledError("Cancelled; the command on the server was stopped.")
                assert limit is not None
                raise timed_out(transport.host, limit)
    out, err = (b"".join(chunks[pipe.fileno()]) for pipe in (proc.stdout, proc.stderr))
    proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()
    result = RemoteResult(proc.returncode, out, without_mark(err.decode("utf-8", "replace")))
    if transport.failed(result.returncode):
        transport.raise_for_failure(result.stderr)
    return result


class SshConnection:
    """Commands on one server through one shared OpenSSH connection (ControlMaster), never through a shell unquoted."""

    def __init__(self, host: str, options: SshOptions | None = None) -> None:
        self.host = check_host(host)
        self.options = options or SshOptions()
        match = _HOST_PORT.match(host)
        self._destination = host
        self._port: str | None = None
        if match and "@" not in match["host"]:
            user = f"{match['user']}@" if match["user"] else ""
            self._destination, self._port = user + match["host"].strip("[]"), match["port"]

    # ---- argv -----------------------------------------------------------------------------------------

    def _common(self) -> list[str]:
        argv = ["ssh"]
        if self.options.config_file is not None:
            argv += ["-F", str(self.options.config_file)]
        if self._port is not None:
            argv += ["-p", self._port]
        return argv

    def base_argv(self) -> list[str]:
        control = self.options.control_dir or default_control_dir()
        return [
            *self._common(),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "ControlMaster=auto",
            "-o",
            f"ControlPath={control}/%C",
            "-o",
            f"ControlPersist={self.options.persist_seconds}",
            "-o",
            f"ConnectTimeout={self.options.connect_timeout}",
            "-o",
            "ServerAliveInterval=15",
            "-T",
        ]

    def argv_for(self, remote_argv: Sequence[str]) -> list[str]:
        """The local ssh command line; the remote command is one string, every argument quoted for sh, run
        after it reports its process group on stderr (GROUP_MARK)."""
        command = f"exec {shlex.join(wrapped(remote_argv))}"
        return [*self.base_argv(), "--", self._destination, command]

    # ---- running --------------------------------------------------------------------------------------

    def start(self, remote_argv: Sequence[str]) -> subprocess.Popen[bytes]:
        """The ssh process running remote_argv, with pipes; its own process group, so a cancel ends it whole."""
        return subprocess.Popen(
            self.argv_for(remote_argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def limit(self, default: float) -> float:
        """The seconds a call waits for the server's next word: options.answer_timeout replaces its own default."""
        return self.options.limit(default)

    def failed(self, status: int) -> bool:
        """Whether an exit status is ssh's own: the connection failed, not the command."""
        return status == SSH_FAILED

    def stop_remote(self, group: int | None) -> None:
        """Stop, on the server, a command given up on and everything it started (best effort, bounded)."""
        if group is None or group <= 1:
            return  # it never started there: nothing to stop
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            subprocess.run(
                [*self.base_argv(), "--", self._destination, f"kill -KILL -- -{group}"],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=STOP_TIMEOUT,
            )

    def connect(self, cancel: CancelToken | None = None) -> None:
        """Open (or reuse) the shared connection; HostKeyError or StudioError say why it cannot be."""
        run_to_end(self, ["true"], timeout=self.options.connect_timeout + 10, cancel=cancel)

    def close(self) -> None:
        """End the shared connection (commands still running on it end too)."""
        with contextlib.suppress(subprocess.TimeoutExpired):  # a master that does not answer goes with its host
            subprocess.run([*self.base_argv(), "-O", "exit", "--", self._destination], capture_output=True, timeout=5)

    # ---- failures and host keys -------------------------------------------------------------------------

    def raise_for_failure(self, stderr: str) -> None:
        """ssh exited 255: say why, in words the user can act on."""
        lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("@@@")]
        if "Host key verification failed" in stderr or ("host key" in stderr.lower() and "known" in stderr.lower()):
            raise HostKeyError(self.check_host_key())
        last = lines[-1] if lines else "ssh exited with status 255"
        if "Permission denied" in stderr:
            raise StudioError(
                f"{self.host} refused the login: {last}",
                hint="The studio never asks for a password: load your key into ssh-agent (ssh-add), or set "
                f"IdentityFile for {self.host} in ~/.ssh/config, and check that `ssh {self.host}` works in a terminal.",
            )
        raise StudioError(
            f"Cannot reach {self.host}: {last}", hint=f"Check that `ssh {self.host}` works in a terminal."
        )

    def resolve(self) -> ResolvedHost:
        """The host after ~/.ssh/config, from `ssh -G` (runs nothing on the network)."""
        done = subprocess.run(
            [*self._common(), "-G", "--", self._destination], capture_output=True, text=True, timeout=15
        )
        if done.returncode != 0:
            raise StudioError(f"ssh cannot read the configuration for {self.host}: {done.stderr.strip()}")
        values: dict[str, str] = {}
        for line in done.stdout.splitlines():
            key, _, value = line.partition(" ")
            values.setdefault(key.lower(), value)
        files = tuple(
            Path(os.path.expanduser(f)) for f in values.get("userknownhostsfile", "~/.ssh/known_hosts").split()
        )
        proxied = values.get("proxyjump", "none") != "none" or values.get("proxycommand", "none") != "none"
        alias = values.get("hostkeyalias")
        return ResolvedHost(values.get("hostname", self.host), int(values.get("port", "22")), files, alias, proxied)

    def check_host_key(self) -> HostKeyCheck:
        """What the server offers (ssh-keyscan) and whether known_hosts records another key for it."""
        resolved = self.resolve()
        if resolved.proxied:
            raise StudioError(
                f"{self.host}'s host key is not known, and it is reached through a proxy, so the studio cannot "
                "fetch its fingerprint for you.",
                hint=f"Run `ssh {self.host}` once in a terminal to check and record its key.",
            )
        scan = subprocess.run(
            ["ssh-keyscan", "-p", str(resolved.port), "-T", "10", "--", resolved.hostname],
            capture_output=True,
            text=True,
            timeout=30,
        )
        offered = [line for line in scan.stdout.splitlines() if line and not line.startswith("#")]
        if resolved.host_key_alias or resolved.port != 22:  # keyscan names [hostname]:port; record the checked name
            offered = [f"{resolved.known_as} {line.split(' ', 1)[1]}" for line in offered]
        fingerprints = subprocess.run(
            ["ssh-keygen", "-l", "-f", "-"], input="\n".join(offered) + "\n", capture_output=True, text=True
        ).stdout.splitlines()
        recorded: set[tuple[str, str]] = set()
        for known in resolved.known_hosts_files:
            if known.exists():
                found = subprocess.run(
                    ["ssh-keygen", "-F", resolved.known_as, "-f", str(known)], capture_output=True, text=True
                )
                if found.returncode == 0:
                    recorded |= {key for line in found.stdout.splitlines() if (key := _host_key(line))}
        trusted = any(_host_key(line) in recorded for line in offered)
        return HostKeyCheck(
            self.host,
            resolved.known_as,
            resolved.known_hosts_files[0],
            bool(recorded) and not trusted,
            tuple(offered),
            tuple(f for f in fingerprints if f.strip()),
            trusted,
        )


def _host_key(line: str) -> tuple[str, str] | None:
    """The (type, base64) key of a known_hosts or ssh-keyscan line, whatever names or marker come before it."""
    if line.startswith("#"):
        return None
    fields = line.split()
    for i, field in enumerate(fields[:-1]):
        if field.startswith(("ssh-", "ecdsa-", "sk-")):
            return field, fields[i + 1]
    return None


def accept_host_key(check: HostKeyCheck) -> None:
    """Record the offered keys in known_hosts: only ever on the user's explicit decision, never for a changed key."""
    if check.changed:
        raise StudioError(
            f"The host key of {check.host} changed; the studio does not replace a recorded key.",
            hint=f"If the new fingerprint is right, run: ssh-keygen -R {shlex.quote(check.known_as)}",
        )
    if not check.offered:
        raise StudioError(f"{check.host} offered no host key", unchanged=True)
    path = check.known_hosts
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    present = set(old.decode("utf-8", "replace").splitlines())
    new = [line for line in check.offered if line not in present]  # trusting twice records the key once
    if new:
        atomic_write_bytes(path, old + "".join(line + "\n" for line in new).encode(), step="known_hosts")
