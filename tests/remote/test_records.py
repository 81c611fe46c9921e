"""A helper program's answer is parsed as it arrives, however the pipe cuts it; a round trip is made only when needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.scan import ArtifactSummary
from rbln_artifact_studio.core.location import ServerFolder
from rbln_artifact_studio.core.status import Status
from rbln_artifact_studio.remote.local import LocalTransport
from rbln_artifact_studio.remote.records import AnswerError, RecordReader
from rbln_artifact_studio.remote.scan import checked_rows, scan_remote
from rbln_artifact_studio.remote.server import Server

BLOB = b'{"not": "a line"}\n\n' + bytes(range(256)) * 3  # raw bytes that look like lines and hold newlines
ANSWER = b'{"a": "/srv/x", "blob": ' + str(len(BLOB)).encode() + b"}\n" + BLOB + b'\n{"i": "skipped"}\n{"end": 1}\n'


@contextmanager
def piped(data: bytes, chunk: int) -> Iterator[RecordReader]:
    """A reader of data written into a pipe `chunk` bytes at a time by another thread."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb", buffering=0) as out:
            for start in range(0, len(data), chunk):
                out.write(data[start : start + chunk])

    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield RecordReader(read_end)
    finally:
        writer.join()
        os.close(read_end)


def records_of(reader: RecordReader) -> list[dict[str, object]]:
    out = []
    while (record := reader.next(5)) is not None:
        out.append(record)
    assert reader.ended
    return out


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 20])
def test_records_come_whole_however_the_pipe_cuts_them(chunk: int) -> None:
    with piped(ANSWER, chunk) as reader:
        records = records_of(reader)
    assert records == [
        {"a": "/srv/x", "blob": len(BLOB), "blob_data": BLOB},
        {"i": "skipped"},
        {"end": 1},
    ]


def test_a_record_cut_off_by_a_lost_connection_is_dropped() -> None:
    with piped(ANSWER[: ANSWER.index(b'{"end"') + 4], 5) as reader:
        records = records_of(reader)
    assert [sorted(r) for r in records] == [["a", "blob", "blob_data"], ["i"]]
    with piped(ANSWER[:40], 5) as reader:  # cut inside the blob: the record never completes
        assert records_of(reader) == []


@pytest.mark.parametrize("line", [b"Welcome to npu-7!", b"[1, 2]", b'{"a": "x", "blob": -5}', b'{"blob": "9"}'])
def test_text_that_is_not_the_programs_answer_is_refused(line: bytes) -> None:
    with piped(line + b"\n" + ANSWER, 64) as reader, pytest.raises(AnswerError):
        records_of(reader)


def test_a_record_arriving_in_trickles_does_not_hold_the_reader_past_its_timeout() -> None:
    """The caller checks for cancel between two calls: a slow link must not keep it waiting for a whole record.

    The record never completes while the writer runs: a reader that waited for it would return only once the
    writer had given up, so the check is which came first (no wall-clock threshold: load slows both alike)."""
    read_end, write_end = os.pipe()
    stop = threading.Event()
    gave_up = threading.Event()

    def trickle() -> None:
        for byte in b'{"a": "' + b"x" * 10_000:  # 5 ms a byte: ~50 s, far beyond the reader's 0.1 s
            if stop.wait(0.005):
                return
            os.write(write_end, bytes([byte]))
        gave_up.set()

    writer = threading.Thread(target=trickle)
    writer.start()
    try:
        reader = RecordReader(read_end)
        assert reader.next(0.1) is None
        assert not gave_up.is_set(), "the reader waited for the whole trickle instead of its timeout"
    finally:
        stop.set()
        writer.join()
        os.close(read_end)
        os.close(write_end)


def test_next_returns_none_when_nothing_arrived_in_time() -> None:
    read_end, write_end = os.pipe()
    try:
        reader = RecordReader(read_end)
        assert reader.next(0.01) is None and not reader.ended
        os.write(write_end, json.dumps({"end": 0}).encode() + b"\n")
        assert reader.next(5) == {"end": 0}
    finally:
        os.close(read_end)
        os.close(write_end)


class NoServer:
    """A server that must not be asked: every row already has its verdict."""

    host = "npu-7"

    def stream(self, *_args: object) -> Iterator[dict[str, object]]:
        raise AssertionError("a round trip for rows that need none")


def test_rows_with_their_verdict_need_no_second_round_trip() -> None:
    rows = [ArtifactSummary(f"ssh://npu-7/srv/a{i}", f"a{i}", Status.OK) for i in range(2500)]
    assert list(checked_rows(NoServer(), rows, chunk=1000)) == rows  # type: ignore[arg-type]


def test_a_login_banner_in_the_answer_is_named_with_what_to_do(tmp_path: Path) -> None:
    """A server whose shell startup files print text: the studio says so instead of scanning nothing."""

    class Chatty(LocalTransport):
        """This machine as the server, its shell printing a banner before each command, as a login shell may."""

        def start(self, remote_argv: Sequence[str]) -> subprocess.Popen[bytes]:
            return super().start(["sh", "-c", 'echo "Welcome to npu-7"; exec "$@"', "sh", *remote_argv])

    server = Server(Chatty("npu-7"), python=sys.executable)
    with pytest.raises(StudioError, match="cannot read") as caught:
        list(scan_remote(server, ServerFolder("npu-7", str(tmp_path))))
    assert "startup files" in (caught.value.hint or "")
