"""Parse a helper program's answer as it arrives: JSON lines, a line with "blob": N followed by N raw bytes.

Read by the thread that uses the records, not by a reader thread handing them over: a reader thread would wait
for the interpreter lock at every read while that thread checks rows, and the answer would arrive in trickles.
"""

from __future__ import annotations

import json
import os
import select
from typing import Any

READ_SIZE = 1 << 20


class RecordReader:
    """The records of one answer on a pipe, each as soon as it is whole."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.start = 0  # where the first record not yet handed out begins in buffer
        self.pending: dict[str, Any] | None = None  # a record parsed whose blob has not all arrived
        self.ended = False

    def next(self, timeout: float) -> dict[str, Any] | None:
        """The next record; None when none became whole within timeout (see ended for the answer's end).

        Raises ValueError for a line that is not a JSON object (the program's answer is not the studio's)."""
        while True:
            record = self._parse()
            if record is not None or self.ended:
                return record
            if not select.select([self.fd], [], [], timeout)[0]:
                return None
            data = os.read(self.fd, READ_SIZE)
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
            while end == self.start:  # blank lines
                self.start += 1
                end = self.buffer.find(b"\n", self.start)
            if end < 0:
                return None
            record = json.loads(self.buffer[self.start : end])
            if not isinstance(record, dict):
                raise ValueError(f"a line that is not a JSON object: {record!r:.80}")
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
