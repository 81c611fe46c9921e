"""Parse a helper program's answer as it arrives: JSON lines, a line with "blob": N followed by N raw bytes.

Read by the thread that uses the records, not by a reader thread handing them over: a reader thread would wait
for the interpreter lock at every read while that thread checks rows, and the answer would arrive in trickles.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

READ_SIZE = 1 << 20


class AnswerError(ValueError):
    """The answer holds something that is not the program's (text a login script printed, a damaged line)."""


class RecordReader:
    """The records of one answer on a pipe, each as soon as it is whole."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.poll = select.poll()  # not select(): that fails for descriptors past 1023
        self.poll.register(fd, select.POLLIN)
        self.buffer = bytearray()
        self.start = 0  # where the first record not yet handed out begins in buffer
        self.pending: dict[str, Any] | None = None  # a record parsed whose blob has not all arrived
        self.ended = False

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next record; None when none became whole within timeout seconds (see ended for the answer's end),
        however much of one arrives meanwhile. Raises AnswerError for what is not the program's answer."""
        deadline = time.monotonic() + timeout
        while True:
            record = self._parse()
            if record is not None or self.ended:
                return record
            left = deadline - time.monotonic()
            if left <= 0 or not self.poll.poll(left * 1000):
                return None
            try:
                data = os.read(self.fd, READ_SIZE)
            except OSError:
                data = b""  # the pipe broke: the program's exit status says why
            if not data:
                self.ended = True  # a record cut off at the end is dropped: the exit status says why
                continue
            if self.start:  # keep the buffer to what is not yet handed out
                del self.buffer[: self.start]
                self.start = 0
            self.buffer += data

    def _parse(self) -> dict[str, Any] | None:
        if self.pending is None:
            end = self.buffer.find(b"\n", self.start)
            while end >= 0 and not self.buffer[self.start : end].strip():  # blank lines
                self.start = end + 1
                end = self.buffer.find(b"\n", self.start)
            if end < 0:
                return None
            line = bytes(self.buffer[self.start : end])
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                raise AnswerError(f"a line that is not JSON: {line[:80]!r}") from None
            blob = record.get("blob", 0) if isinstance(record, dict) else None
            if not isinstance(blob, int) or blob < 0:
                raise AnswerError(f"a line that is not one of the program's records: {line[:80]!r}")
            self.start = end + 1
            self.pending = record
        blob = int(self.pending.get("blob", 0))
        if len(self.buffer) - self.start < blob:
            return None
        record, self.pending = self.pending, None
        if "blob" in record:
            record["blob_data"] = bytes(self.buffer[self.start : self.start + blob])
            self.start += blob
        return record
