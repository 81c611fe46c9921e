"""Endpoints that misbehave, on 127.0.0.1, for as long as a `with` block: one that trickles its answers, one that
accepts connections and never answers, one that cuts every answer short. Each counts the connections it took.

Plain threaded sockets (no HTTP library): they answer any request the same way, whatever it asks.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

TRICKLE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\nContent-Type: application/xml\r\n\r\n"


@dataclass
class Liar:
    """A misbehaving endpoint: its URL and the connections it has accepted so far."""

    endpoint: str
    connections: int = 0
    stop: threading.Event = field(default_factory=threading.Event)


def _request_head(conn: socket.socket, stop: threading.Event) -> bytes:
    data = b""
    conn.settimeout(0.2)
    while b"\r\n\r\n" not in data and not stop.is_set():
        try:
            got = conn.recv(65536)
        except TimeoutError:
            continue
        if not got:
            break
        data += got
    return data


@contextlib.contextmanager
def _serving(answer: Callable[[socket.socket, Liar], None] | None) -> Iterator[Liar]:
    """A listening socket whose connections get answer() on a thread each (None: accepted, never read)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    liar = Liar(f"http://127.0.0.1:{server.getsockname()[1]}")
    held: list[socket.socket] = []
    threads: list[threading.Thread] = []

    def accept() -> None:
        while not liar.stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            liar.connections += 1
            held.append(conn)
            if answer is not None:
                thread = threading.Thread(target=answer, args=(conn, liar), daemon=True)
                threads.append(thread)
                thread.start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield liar
    finally:
        liar.stop.set()
        acceptor.join(5)
        for thread in threads:
            thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def trickling(every: float = 0.5) -> contextlib.AbstractContextManager[Liar]:
    """Every request answered 200 with Content-Length: 100000000, then one byte every `every` seconds."""

    def answer(conn: socket.socket, liar: Liar) -> None:
        with contextlib.suppress(OSError):
            if _request_head(conn, liar.stop):
                conn.sendall(TRICKLE_HEAD)
                while not liar.stop.wait(every):
                    conn.sendall(b" ")

    return _serving(answer)


def silent() -> contextlib.AbstractContextManager[Liar]:
    """Connections accepted, requests never read nor answered."""
    return _serving(None)


def cut_short(size: int, sent: int) -> contextlib.AbstractContextManager[Liar]:
    """Every GET answered as for an object of `size` bytes (206 and the range asked, when one is), then only `sent`
    bytes and a closed connection: a store, or a link, that drops mid-answer."""

    def answer(conn: socket.socket, liar: Liar) -> None:
        with contextlib.suppress(OSError):
            request = _request_head(conn, liar.stop).decode("latin-1").lower()
            if not request:
                return
            start, end = 0, size - 1
            status = "200 OK"
            for line in request.split("\r\n"):
                if line.startswith("range: bytes="):
                    low, _, high = line.split("=", 1)[1].partition("-")
                    start, end = int(low), min(int(high) if high else size - 1, size - 1)
                    status = "206 Partial Content"
            head = (
                f"HTTP/1.1 {status}\r\nContent-Length: {end - start + 1}\r\n"
                f'Content-Range: bytes {start}-{end}/{size}\r\nETag: "e"\r\n\r\n'
            )
            conn.sendall(head.encode() + b"x" * sent)
            conn.shutdown(socket.SHUT_RDWR)

    return _serving(answer)
