"""The programs as a server gets them: assembled with the portable modules they import (core/portable/), standard
library only, in the grammar and the interpreter of the oldest Python promised (server.MIN_PYTHON), answering there
as here; and the lock they bundle is the studio's own, so a writer here and one there exclude each other."""

from __future__ import annotations

import ast
import glob
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
from fleet.layouts import build_fleet

from rbln_artifact_studio.core.errors import ArtifactLockedError
from rbln_artifact_studio.core.portable.lock import LOCK_NAME
from rbln_artifact_studio.core.storage.lock import ArtifactLock
from rbln_artifact_studio.remote import server
from rbln_artifact_studio.remote.records import RecordReader
from rbln_artifact_studio.remote.scan import RULES

PIECES = {"prelude", "bundle"}  # put before programs, not run on their own
PROGRAMS = sorted(p.stem for p in server.PROGRAMS.glob("*.py") if p.stem != "__init__" and p.stem not in PIECES)
OLDEST = f"{server.MIN_PYTHON[0]}.{server.MIN_PYTHON[1]}"


def oldest_python() -> str:
    """A python of the oldest version promised on this machine (pyenv's, or on PATH); skips the test without one."""
    pyenv = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found = [*sorted(glob.glob(f"{pyenv}/versions/{OLDEST}.*/bin/python{OLDEST}")), shutil.which(f"python{OLDEST}")]
    for python in filter(None, found):
        version = subprocess.run([python, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True)
        if version.stdout.decode().strip() == str(server.MIN_PYTHON):  # not a pyenv shim with nothing behind it
            return python
    pytest.skip(f"no Python {OLDEST} here to run the programs in (pyenv install {OLDEST})")


def sent(name: str) -> dict[str, str]:
    """What a server compiles for a program: the program as sent, and each module sent with it, by name."""
    main = (server.PROGRAMS / f"{name}.py").read_text()
    return {name: server.program_source(name).decode(), **server.bundled_modules(main)}


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_assembled_program_parses_in_the_oldest_python_promised(program: str) -> None:
    for name, source in sent(program).items():
        ast.parse(source, filename=name, feature_version=server.MIN_PYTHON)  # no walrus, no newer syntax


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_assembled_program_imports_only_the_standard_library_and_what_is_sent(program: str) -> None:
    sources = sent(program)
    for name, source in sources.items():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and node.module, f"{name}: a relative import finds nothing on a server"
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                assert module in sources or module.split(".")[0] in sys.stdlib_module_names, f"{name}: {module}"


def test_the_scan_and_the_job_are_sent_with_the_walk_and_the_write_primitives() -> None:
    portable = server.PORTABLE
    assert f"{portable}.walk" in sent("scan") and f"{portable}.files" in sent("scan")
    assert {f"{portable}.{m}" for m in ("lock", "exchange", "files")} <= sent("job").keys()
    assert sent("jobs").keys() == {"jobs"}  # a program that needs none goes as it is


def run_as_sent(python: str, program: str, args: list[str], tmp_path: Path) -> list[dict[str, Any]]:
    """Run a program as a server does (BOOT, the program on stdin, held open), in a python that sees only its
    standard library (-I -S); its answer as the studio parses it."""
    code = server.program_source(program)
    answer, errors = tmp_path / f"{program}.answer", tmp_path / f"{program}.err"
    with open(answer, "wb") as out, open(errors, "wb") as err:
        command = [python, "-I", "-S", "-c", server.BOOT, str(len(code)), *args]
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=tmp_path)
        assert proc.stdin is not None
        proc.stdin.write(code)
        proc.stdin.flush()
        status = proc.wait(60)  # it ends by itself once it has answered; stdin closed first would end it early
        proc.stdin.close()
    assert status == 0, errors.read_text()
    fd = os.open(answer, os.O_RDONLY)
    try:
        reader = RecordReader(fd)
        records = []
        while (record := reader.next(5)) is not None:
            records.append(record)
    finally:
        os.close(fd)
    return records


def inflated(record: dict[str, Any]) -> dict[str, Any]:
    """A record with its blob's zlib streams decompressed (their compressed sizes differ with zlib's version)."""
    blob, parts = record.get("blob_data", b""), []
    while blob:
        stream = zlib.decompressobj()
        parts.append(stream.decompress(blob))
        blob = stream.unused_data
    return {k: v for k, v in record.items() if k not in ("blob", "blob_data", "cz")} | {"parts": parts}


def test_the_scan_answers_in_the_oldest_python_as_in_this_one(tmp_path: Path) -> None:
    fleet = build_fleet(tmp_path / "base")
    (tmp_path / "plain").mkdir()
    (fleet.root / "to-plain").symlink_to(tmp_path / "plain")  # a link to a folder outside that is no artifact
    oldest = [inflated(r) for r in run_as_sent(oldest_python(), "scan", [str(fleet.root), RULES], tmp_path)]
    here = [inflated(r) for r in run_as_sent(sys.executable, "scan", [str(fleet.root), RULES], tmp_path)]
    assert oldest == here
    rows = [r for r in here if "a" in r]
    assert len(rows) >= 5 and any("lt" in r for r in rows), "the fleet's artifacts, a linked one among them"
    assert any(r.get("parts") and r["parts"][0].startswith(b"{") for r in rows), "configs sent in the blob"
    assert any(r.get("f", "").endswith("selfloop") for r in here), "a link to itself: a failed row"
    assert any("to-plain links to" in r.get("i", "") for r in here), "a link out of the root: reported"
    assert here[-1] == {"end": len([r for r in here if "a" in r or "f" in r]), "parts": []}


# A writer's part of a job, in a program of its own: the lock module the job bundles, held until told.
HOLD = """
import sys
from rbln_artifact_studio.core.portable.lock import FolderLock, LockHeld
try:
    with FolderLock(sys.argv[1], "resize in place (remote job)"):
        sys.stdout.write("locked\\n")
        sys.stdout.flush()
        sys.stdin.readline()
except LockHeld as exc:
    sys.stdout.write("held by " + exc.holder + "\\n")
"""


def start_holder(python: str, folder: Path) -> subprocess.Popen[str]:
    command = [python, "-I", "-S", "-c", server.assemble(HOLD), str(folder)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


@pytest.mark.parametrize("interpreter", ["oldest", "this"])
def test_a_servers_lock_and_a_local_one_exclude_each_other(interpreter: str, tmp_path: Path) -> None:
    python = oldest_python() if interpreter == "oldest" else sys.executable
    with start_holder(python, tmp_path) as holder:
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline() == "locked\n"
            with pytest.raises(ArtifactLockedError, match=rf"process {holder.pid} on .*resize in place \(remote job\)"):
                ArtifactLock(tmp_path, "local resize").acquire()
        finally:
            holder.stdin.write("\n")
            holder.stdin.close()
            assert holder.wait(30) == 0
    assert not (tmp_path / LOCK_NAME).exists(), "the server's writer removed its lock file"
    with ArtifactLock(tmp_path, "local resize"):
        second = start_holder(python, tmp_path)
        out, _ = second.communicate(timeout=30)
    assert out.startswith(f"held by process {os.getpid()} on ") and "(local resize, since " in out
    assert not (tmp_path / LOCK_NAME).exists()


# The atomic exchange and the folder flush a job ends with, in the oldest Python.
SWAP = """
import os, sys
from rbln_artifact_studio.core.portable.exchange import exchange
from rbln_artifact_studio.core.portable.files import fsync_dir, read_small
new, old = sys.argv[1], sys.argv[2]
exchange(new, old)
fsync_dir(os.path.dirname(old))
sys.stdout.write(read_small(os.path.join(old, "rbln_config.json"), 100).decode())
"""


def test_the_exchange_and_the_flush_run_in_the_oldest_python(tmp_path: Path) -> None:
    new, old = tmp_path / ".staging", tmp_path / "art"
    for folder, text in ((new, "new"), (old, "old")):
        folder.mkdir()
        (folder / "rbln_config.json").write_text(text)
    command = [oldest_python(), "-I", "-S", "-c", server.assemble(SWAP), str(new), str(old)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "new" and (new / "rbln_config.json").read_text() == "old"
