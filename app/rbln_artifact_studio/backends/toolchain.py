"""Find the real toolchain: optimum-rbln-cli, the Python it runs in, and whether rebel imports there (cached)."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from rbln_artifact_studio.backends.process import ProcessTimeout, run_streamed
from rbln_artifact_studio.backends.settings import (
    ENV_OPTIMUM_CLI,
    ENV_TOOLCHAIN_PYTHON,
    ToolchainSettings,
    current_settings,
)
from rbln_artifact_studio.core.errors import CancelledError, StudioError
from rbln_artifact_studio.core.model import upstream
from rbln_artifact_studio.core.progress import CancelToken

CLI_NAME = "optimum-rbln-cli"
PROBE_SCRIPT = Path(__file__).with_name("rebel_probe.py")
_PIP_SH_EXEC = re.compile(r"^'''exec' (\S+)")
_VERSION = re.compile(r"(\d+\.\d+[\w.+-]*)")

T = TypeVar("T")


@dataclass(frozen=True)
class Located:
    """Paths only (no process run): the CLI and the interpreter, each with where it was found, or why not."""

    cli: Path | None
    cli_origin: str
    python: Path | None
    python_origin: str
    settings: ToolchainSettings


@dataclass(frozen=True)
class ToolStatus:
    available: bool
    detail: str
    version: str | None = None
    path: Path | None = None


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def python_of_environment(value: str) -> Path:
    """A configured interpreter: an executable file, or an environment folder holding bin/python."""
    path = Path(value).expanduser()
    if path.is_dir():
        for name in ("bin/python", "bin/python3", "Scripts/python.exe"):
            if _executable(path / name):
                return path / name
    return path


def interpreter_of(script: Path) -> Path | None:
    """The Python a console script runs in, from its shebang (also pip's `#!/bin/sh` + `'''exec'` form)."""
    try:
        with open(script, "rb") as f:
            head = f.read(1024).decode("utf-8", errors="replace").splitlines()[:3]
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    for line in head[1:]:
        match = _PIP_SH_EXEC.match(line)
        if match:
            return Path(match.group(1))
    words = head[0][2:].split()
    if not words:
        return None
    program = words[0]
    if Path(program).name == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        found = shutil.which(rest[0]) if rest else None
        if found is None:
            return None
        program = found
    if not Path(program).name.startswith("python"):
        return None  # a wrapper (pyenv shim, shell script): the interpreter is not knowable from here
    return Path(program)


def locate(settings: ToolchainSettings | None = None) -> Located:
    """Where optimum-rbln-cli and its Python are; configured values win over PATH and the shebang, and the
    environment variables over configured values."""
    settings = current_settings(settings)
    python: Path | None = None
    python_origin = ""
    if settings.toolchain_python:
        python = python_of_environment(settings.toolchain_python)
        python_origin = f"configured ({ENV_TOOLCHAIN_PYTHON} or the app's settings)"
    cli: Path | None = None
    if settings.optimum_cli:
        cli = Path(settings.optimum_cli).expanduser()
        cli_origin = f"configured ({ENV_OPTIMUM_CLI} or the app's settings)"
    elif python is not None and _executable(python.parent / CLI_NAME):
        cli, cli_origin = python.parent / CLI_NAME, "beside the configured Python"
    else:
        found = shutil.which(CLI_NAME)
        cli = Path(found) if found else None
        cli_origin = "on PATH" if found else "not found on PATH"
    if python is None and cli is not None:
        python = interpreter_of(cli)
        python_origin = "from the optimum-rbln-cli script's first line"
        if python is None and _executable(cli.parent / "python"):
            python, python_origin = cli.parent / "python", "beside optimum-rbln-cli"
    return Located(cli, cli_origin, python, python_origin, settings)


# ---- the checks that run a process, cached per process and per configuration --------------------------

_cache: dict[tuple[object, ...], object] = {}
_checking: dict[tuple[object, ...], threading.Lock] = {}  # one per key: a check runs once, others wait for it
_cache_lock = threading.Lock()  # guards the two dicts; never held while a check runs
_generation = 0  # bumped by clear_cache(): a check that started before it does not store its answer
WAIT_SLICE = 0.1  # seconds between cancel checks while another thread runs the same check


def _key(kind: str, located: Located) -> tuple[object, ...]:
    # A changed PATH or PYTHONPATH can change the answer, so they are part of the key.
    return (kind, located, os.environ.get("PATH"), os.environ.get("PYTHONPATH"))


def _cached(key: tuple[object, ...], compute: Callable[[], T], cancel: CancelToken | None = None) -> T:
    with _cache_lock:
        if key in _cache:
            return cast(T, _cache[key])  # stored by compute() of this key
        checking = _checking.setdefault(key, threading.Lock())
    while not checking.acquire(timeout=WAIT_SLICE):  # another thread runs this check: wait, but stay cancellable
        if cancel is not None:
            cancel.raise_if_cancelled()
    try:
        with _cache_lock:
            if key in _cache:
                return cast(T, _cache[key])
            generation = _generation
        value = compute()
        with _cache_lock:
            if generation == _generation:
                _cache[key] = value
        return value
    finally:
        checking.release()


def clear_cache() -> None:
    """Forget earlier detection results (the GUI's "detect again" button; tests), the version found among them."""
    global _generation
    with _cache_lock:
        _cache.clear()
        _generation += 1
    upstream.note_installed_version(None)  # until a detection finds one again: it was a result like the others


def tool_env() -> dict[str, str]:
    """The environment the tools run in: ours, with unbuffered UTF-8 output so lines arrive as they are written."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def _check_optimum(located: Located, cancel: CancelToken | None = None) -> ToolStatus:
    cli = located.cli
    if cli is None:
        return ToolStatus(
            False,
            f"{CLI_NAME} not found on PATH; install optimum-rbln, or set {ENV_OPTIMUM_CLI} "
            f"(or {ENV_TOOLCHAIN_PYTHON} to the Python environment that has it).",
        )
    if not _executable(cli):
        return ToolStatus(False, f"{cli} ({located.cli_origin}) is not an executable file.", path=cli)
    try:
        finished = run_streamed(
            [str(cli), "--version"], timeout=located.settings.check_timeout, grace=1.0, env=tool_env(), cancel=cancel
        )
    except CancelledError:
        raise  # not an answer about the tool: nothing is cached
    except ProcessTimeout:
        return ToolStatus(
            False, f"{cli} did not answer --version within {located.settings.check_timeout:g} s.", path=cli
        )
    except StudioError as exc:
        return ToolStatus(False, str(exc), path=cli)
    if finished.returncode != 0:
        reason = finished.error_text() or finished.describe_exit(CLI_NAME)
        return ToolStatus(False, f"{cli} --version failed: {reason}", path=cli)
    text = next((line for line in finished.tail if CLI_NAME in line), finished.tail[-1] if finished.tail else "")
    match = _VERSION.search(text)
    python = f"; runs in {located.python}" if located.python else ""
    version = match.group(1) if match else None
    upstream.note_installed_version(version)  # configs newer than this are flagged (DESIGN 11, version skew)
    return ToolStatus(True, f"{cli} ({located.cli_origin}){python}", version, cli)


def run_probe(
    python: Path, args: list[str], timeout: float, cancel: CancelToken | None = None
) -> tuple[int, dict[str, object]]:
    """Run the rebel helper in `python`; returns its exit status and the JSON it wrote."""
    with tempfile.TemporaryDirectory(prefix="rbln-studio-probe-") as tmp:
        out = Path(tmp) / "result.json"
        finished = run_streamed(
            [str(python), str(PROBE_SCRIPT), "--out", str(out), *args],
            timeout=timeout,
            grace=2.0,
            env=tool_env(),
            what="the rebel inspection helper",
            cancel=cancel,
        )
        try:
            data = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            reason = finished.error_text() or finished.describe_exit("the rebel inspection helper")
            raise StudioError(f"The rebel inspection helper failed in {python}: {reason}") from None
    if not isinstance(data, dict):
        raise StudioError(f"The rebel inspection helper wrote {type(data).__name__}, not an object.")
    return finished.returncode, data


def _check_rebel(located: Located, cancel: CancelToken | None = None) -> ToolStatus:
    python = located.python
    if python is None:
        where = (
            f"the interpreter of {located.cli} is not known (not a Python shebang)"
            if located.cli
            else "no optimum-rbln installation was found"
        )
        return ToolStatus(False, f"{where}; set {ENV_TOOLCHAIN_PYTHON} to the Python that has rebel-compiler.")
    if not _executable(python):
        return ToolStatus(False, f"{python} ({located.python_origin}) is not an executable file.", path=python)
    try:
        status, data = run_probe(python, ["--check"], located.settings.check_timeout, cancel)
    except CancelledError:
        raise
    except StudioError as exc:
        return ToolStatus(False, str(exc), path=python)
    if status != 0 or "rebel_version" not in data:
        return ToolStatus(False, str(data.get("error", f"the check exited with status {status}")), path=python)
    version = str(data["rebel_version"])
    return ToolStatus(True, f"reads real .rbln files with rebel in {python} ({located.python_origin})", version, python)


def optimum_status(located: Located | None = None, cancel: CancelToken | None = None) -> ToolStatus:
    """Whether optimum-rbln-cli runs (`--version`), cached; a cancelled check raises CancelledError."""
    located = located or locate()
    return _cached(_key("optimum", located), lambda: _check_optimum(located, cancel), cancel)


def rebel_status(located: Located | None = None, cancel: CancelToken | None = None) -> ToolStatus:
    """Whether `import rebel` works in the toolchain's Python, cached; a cancelled check raises CancelledError."""
    located = located or locate()
    return _cached(_key("rebel", located), lambda: _check_rebel(located, cancel), cancel)
