"""Disk full, permission denied and read-only file system at every write of resize in place, resize to a copy
and compile: a one-line StudioError saying what to do, the source unchanged, nothing partial left, the
artifact still opening with the old count, and the same operation succeeding once the fault is gone.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from faultfs import FaultFS, InjectedFault
from harness import SHAPE, artifact_state, tiny_model_config, tree_digest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.operations.resize import resize_in_place, resize_to_copy
from rbln_artifact_studio.core.simulator.compiler import CompilePlan, CompileRequest, plan_compile, write_artifact
from rbln_artifact_studio.core.storage import fsutil

OPS = ("resize_in_place", "resize_copy", "compile")
# What each message must say (the cause, or what to do about it).
ERRNOS = {
    errno.ENOSPC: "free some space",
    errno.EACCES: "permission",
    errno.EROFS: "writable",
}


class Setup:
    """A tiny compiled artifact and what each operation makes of it without faults."""

    def __init__(self, root: Path) -> None:
        self.model = root / "model"
        self.model.mkdir()
        (self.model / "config.json").write_text(json.dumps(tiny_model_config(1)))
        options: dict[str, Any] = {k.lstrip("-"): int(v) for k, v in zip(SHAPE[::2], SHAPE[1::2], strict=True)}
        self.plan: CompilePlan = plan_compile(CompileRequest(model_id=str(self.model), **options))
        self.template = write_artifact(self.plan, root / "template")
        self.old_state = artifact_state(self.template)
        self.old = self.plan.num_blocks
        self.new = self.plan.floor
        ref = root / "ref"
        ref.mkdir()
        shutil.copytree(self.template, ref / "art")
        resize_in_place(ref / "art", self.new)
        self.new_state = artifact_state(ref / "art")
        self.copy_digest = tree_digest(resize_to_copy(self.template, ref / "copy", self.new).path)
        self.template_digest = tree_digest(self.template)
        self.model_digest = tree_digest(self.model)

    def run(self, op: str, work: Path) -> object:
        if op == "resize_in_place":
            return resize_in_place(work / "art", self.new)
        if op == "resize_copy":
            return resize_to_copy(work / "art", work / "out", self.new)
        return write_artifact(self.plan, work / "out")

    def fresh(self, work: Path, op: str) -> Path:
        work.mkdir()
        if op != "compile":
            shutil.copytree(self.template, work / "art")
        return work


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Setup:
    return Setup(tmp_path_factory.mktemp("faults"))


def check_after_fault(setup: Setup, op: str, work: Path, fs: FaultFS, exc: BaseException | None, err: int) -> list[str]:
    """Everything that must hold after the operation met a fault (or absorbed it)."""
    v: list[str] = []
    if exc is not None and not isinstance(exc, StudioError):
        return [f"raised {type(exc).__name__}: {exc}"]
    message = exc.one_line() if isinstance(exc, StudioError) else ""
    if exc is not None:
        if "\n" in message:
            v.append(f"message is not one line: {message!r}")
        if ERRNOS[err].lower() not in message.lower():
            v.append(f"message does not say what happened / what to do: {message!r}")
    final = str(work / ("art/rbln_config.json" if op == "resize_in_place" else "out"))
    committed = final in fs.renamed
    if exc is None:
        committed = True  # the fault was absorbed: the operation must have finished correctly
    if op == "resize_in_place":
        state = artifact_state(work / "art")
        if state != (setup.new_state if committed else setup.old_state):
            v.append(f"artifact is not the {'new' if committed else 'old'} state (committed={committed})")
        if exc is not None and committed and "may not survive a power loss" not in message:
            v.append(f"the message does not say the new count is in place: {message!r}")
        extra = sorted(set(os.listdir(work / "art")) - set(setup.template_digest))
        if extra:
            v.append(f"left in the artifact: {extra}")
    else:
        if op == "resize_copy" and tree_digest(work / "art") != setup.template_digest:
            v.append("the source changed (or keeps a lock file)")
        if op == "compile" and tree_digest(setup.model) != setup.model_digest:
            v.append("the model folder changed")
        out = work / "out"
        if committed:
            if op == "resize_copy" and tree_digest(out) != setup.copy_digest:
                v.append("the published copy is not complete")
            if exc is not None and "may not survive a power loss" not in message:
                v.append(f"the message does not say the output was published: {message!r}")
        elif out.exists():
            v.append("an output folder exists after a failed write")
        extra = sorted(set(os.listdir(work)) - {"art", "out"})
        if extra:
            v.append(f"left beside the output: {extra}")
    if v or committed:
        return v
    try:  # the fault is gone: the same operation now succeeds
        setup.run(op, work)
    except StudioError as again:
        return [f"running again after the fault failed: {again}"]
    if op == "resize_in_place" and artifact_state(work / "art") != setup.new_state:
        v.append("running again did not give the new state")
    if op == "resize_copy" and tree_digest(work / "out") != setup.copy_digest:
        v.append("running again did not give the expected copy")
    return v


def write_points(setup: Setup, op: str, tmp_path: Path) -> list[str]:
    work = setup.fresh(tmp_path / "count", op)
    with FaultFS(work).active() as fs:
        setup.run(op, work)
    return fs.points


@pytest.mark.parametrize("err", list(ERRNOS), ids=[errno.errorcode[e] for e in ERRNOS])
@pytest.mark.parametrize("op", OPS)
def test_fault_at_every_write(setup: Setup, op: str, err: int, tmp_path: Path) -> None:
    points = write_points(setup, op, tmp_path)
    assert len(points) >= 5, points  # the injector sees the writes
    assert fault_at_each_point(setup, op, err, tmp_path, points) == []


@pytest.mark.parametrize("err", list(ERRNOS), ids=[errno.errorcode[e] for e in ERRNOS])
def test_fault_at_every_write_of_a_direct_copy(
    setup: Setup, err: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy's O_DIRECT path (chunks of 8 KiB, so the tiny graphs take it): a fault at any of its writes,
    those of its helper thread included, is reported like any other and leaves nothing behind."""
    monkeypatch.setattr(fsutil, "COPY_CHUNK", 8192)
    (tmp_path / "probe").touch()
    fd = fsutil._open_direct(tmp_path / "probe")
    if fd is None:
        pytest.skip(f"{tmp_path}'s file system refuses O_DIRECT")
    os.close(fd)
    points = write_points(setup, "resize_copy", tmp_path)
    assert sum("os.pwrite" in p and ".rbln" in p for p in points) >= 2 * 135168 // 8192, points  # chunk by chunk
    assert fault_at_each_point(setup, "resize_copy", err, tmp_path, points) == []


def fault_at_each_point(setup: Setup, op: str, err: int, tmp_path: Path, points: list[str]) -> list[str]:
    """Run op once per write point, failing from that point on; what went wrong (empty when all held)."""
    failures = []
    for k in range(1, len(points) + 1):
        work = setup.fresh(tmp_path / f"k{k}", op)
        exc: BaseException | None = None
        with FaultFS(work, fail_at=k, err=err).active() as fs:
            try:
                setup.run(op, work)
            except Exception as e:
                exc = e
        if not fs.failed:
            failures.append(f"write {k} ({points[k - 1]}) was never reached")
            continue
        for problem in check_after_fault(setup, op, work, fs, exc, err):
            failures.append(f"fault at write {k} ({fs.points[-1]}): {problem}")
        shutil.rmtree(work)
    return failures


def test_injector_reports_what_it_broke(setup: Setup, tmp_path: Path) -> None:
    """The harness itself: an injected fault reaches the caller as an OSError unless the code handles it."""
    work = tmp_path / "w"
    work.mkdir()
    with FaultFS(work, fail_at=1).active() as fs, pytest.raises(InjectedFault):
        (work / "x").write_text("x")
    assert fs.points == [f"open(w) {work / 'x'} -> ENOSPC"]
    with FaultFS(tmp_path / "elsewhere").active() as fs:
        (work / "y").write_text("y")  # outside the root: untouched and not counted
    assert fs.points == []


def test_flush_failure_after_the_commit_tells_the_truth(setup: Setup, tmp_path: Path) -> None:
    """Found by test_fault_at_every_write: a failed fsync of the folder after the commit rename said "The
    artifact keeps its old count" (or "Nothing was left behind") although the new count was in place."""
    work = setup.fresh(tmp_path / "w", "resize_in_place")
    fsyncs = [i for i, p in enumerate(write_points(setup, "resize_in_place", tmp_path), 1) if "os.fsync" in p]
    with FaultFS(work, fail_at=fsyncs[-1]).active(), pytest.raises(StudioError) as caught:
        setup.run("resize_in_place", work)
    assert caught.value.one_line() == (
        f"{work / 'art'} now records kvcache_num_blocks={setup.new}: {work / 'art' / 'rbln_config.json'} was replaced, "
        "but flushing it to disk failed (No space left on device), so it may not survive a power loss. "
        "Fix the disk (free some space), then run `sync`."
    )
    assert artifact_state(work / "art") == setup.new_state
