"""One answer of Prometheus' HTTP API decoded as it arrives: gunzipped and parsed in steps of about a MiB, the
series of each step handed on at once, so the answer's bytes (compressed and not) bound what it may cost, the
deadline is looked at between steps, and a signal is taken between them (no step holds the interpreter long).

Prometheus writes a vector or a matrix as `{"status":…,"data":{"resultType":…,"result":[{"metric":…},…]},
"warnings":[…],"infos":[…]}`, its series joined by `},{"metric":` — bytes no JSON string holds (a string's quote
is escaped), so each step cuts the array where the last of them stands (spaces between allowed) and decodes the
whole series before it with msgspec's typed decoder. What is left at the end (the last series and the answer's tail: warnings, infos) is decoded as an
answer of its own. An answer written otherwise (spaced, keys in another order) is decoded whole at its end,
within the same bounds.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import msgspec

MAX_ANSWER = 256 << 20  # bytes, compressed and decompressed alike: twice the answer of 10,000 nodes' five gauges
MAX_SERIES = 1_000_000  # an answer's series: 25,000 nodes of 8 NPUs, five gauges each
STEP = 1 << 20  # bytes of JSON decoded at a time
_METRIC = b'"metric"'
_SPACE = b" \t\r\n"
_RESULT = re.compile(rb'"result"\s*:\s*\[')

T = TypeVar("T")


class Data(msgspec.Struct, Generic[T]):
    resultType: str = ""
    result: list[T] = msgspec.field(default_factory=list)


class Envelope(msgspec.Struct, Generic[T]):
    """What every answer of the API carries; `data` on success, `errorType`/`error` otherwise."""

    status: str = ""
    data: Data[T] | None = None
    errorType: str = ""
    error: str = ""
    warnings: list[str] = msgspec.field(default_factory=list)
    infos: list[str] = msgspec.field(default_factory=list)


class AnswerTooLarge(Exception):
    """More bytes or series than any answer to the studio's queries has: `what` says which bound."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class NotJson(Exception):
    """The body is no JSON answer of Prometheus' API (an HTML page, a cut answer, another shape)."""


def _last_cut(buffer: bytearray) -> int:
    """Where the last whole series in the buffer ends (just after its `}`), or -1: the last `"metric"` key that
    opens a series (`}`, `,`, `{` before it, whitespace between them allowed), looked for from the end."""
    end = len(buffer)
    while True:
        key = buffer.rfind(_METRIC, 0, end)
        if key < 0:
            return -1
        i = key - 1
        for expected in b"{,}":
            while i >= 0 and buffer[i] in _SPACE:
                i -= 1
            if i < 0 or buffer[i] != expected:
                break
            i -= 1
        else:
            return i + 2
        end = key


class AnswerStream(Generic[T]):
    """Feed it the body's bytes as they arrive (`feed`), then `finish` for the answer's envelope; each step's
    series go to `take` as they are decoded (never kept here). `check` is called between steps: it raises to
    stop (the caller's deadline). kind: `"vector"`/`"matrix"` cut into steps; anything else decoded whole."""

    def __init__(
        self, item: type[T], take: Callable[[list[T]], None], check: Callable[[], None], split: bool = True
    ) -> None:
        self._items: msgspec.json.Decoder[list[T]] = msgspec.json.Decoder(list[item])  # type: ignore[valid-type]  # a type made at run time
        self._whole: msgspec.json.Decoder[Envelope[T]] = msgspec.json.Decoder(Envelope[item])  # type: ignore[valid-type]  # a type made at run time
        self._take = take
        self._check = check
        self._split = split
        self._inflate: Any = None
        self._buffer = bytearray()
        self._head: bytes | None = None  # the answer up to its result array, once seen
        self.received = 0  # bytes as sent (compressed, when gzip'd)
        self.decoded = 0  # bytes of JSON
        self.series = 0

    def gzip(self) -> None:
        """The body is gzip'd (its Content-Encoding): gunzip it in steps, each bounded."""
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, chunk: bytes) -> None:
        self.received += len(chunk)
        if self.received > MAX_ANSWER:
            raise AnswerTooLarge(f"more than {MAX_ANSWER >> 20} MiB")
        if self._inflate is None:
            self._json(chunk)
            return
        try:
            out = self._inflate.decompress(chunk, STEP)
            self._json(out)
            while self._inflate.unconsumed_tail:
                self._check()
                self._json(self._inflate.decompress(self._inflate.unconsumed_tail, STEP))
        except zlib.error:
            raise NotJson("a gzip body that does not decompress") from None

    def _json(self, data: bytes) -> None:
        if not data:
            return
        self.decoded += len(data)
        if self.decoded > MAX_ANSWER:
            raise AnswerTooLarge(f"more than {MAX_ANSWER >> 20} MiB of JSON")
        buffer = self._buffer
        buffer += data
        if not self._split:
            return
        if self._head is None:
            found = _RESULT.search(buffer, max(len(buffer) - len(data) - 64, 0))  # only where it may have arrived
            if found is None:
                return
            self._head = bytes(buffer[: found.end()])
            del buffer[: found.end()]
        if len(buffer) < STEP:
            return
        cut = _last_cut(buffer)
        if cut < 0:
            return
        self._check()
        try:
            items = self._items.decode(b"".join((b"[", buffer[:cut], b"]")))
        except msgspec.DecodeError as exc:
            raise NotJson(str(exc)) from None
        del buffer[: buffer.index(b"{", cut)]  # what is left starts with the next series' `{"metric":`
        self._hand(items)

    def _hand(self, items: list[T]) -> None:
        self.series += len(items)
        if self.series > MAX_SERIES:
            raise AnswerTooLarge(f"more than {MAX_SERIES:,} series")
        if items:
            self._take(items)

    def finish(self) -> Envelope[T]:
        """The answer's envelope (its result handed to `take` already, not in it); NotJson for no answer."""
        if self._inflate is not None and not self._inflate.eof:
            raise NotJson("a gzip body cut short")
        self._check()
        rest = bytes(self._buffer) if self._head is None else self._head + self._buffer
        self._buffer = bytearray()
        if not rest.lstrip().startswith(b"{"):
            raise NotJson("no JSON object")
        try:
            envelope = self._whole.decode(rest)
        except msgspec.DecodeError as exc:
            raise NotJson(str(exc)) from None
        if envelope.data is not None:
            self._hand(envelope.data.result)
            envelope.data.result = []
        return envelope
